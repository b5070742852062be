//! Opaque access tokens, checked by asking the authorization server (RFC 7662); its answers are
//! kept a little while, so that a client's calls do not each cost a round trip.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::TokenError;
use super::fetch::Fetcher;
use super::jwt::Expected;

/// How long an answer is kept at most: a token revoked meanwhile is taken that long.
const KEEP_FOR: Duration = Duration::from_secs(30);

/// The most answers kept; past it, the expired ones go, and if that is not enough, all of them.
const MAX_KEPT: usize = 10_000;

/// The most introspection requests under way at once: a flood of made-up tokens waits its turn
/// instead of becoming a flood of requests to the authorization server.
const MAX_ASKING: usize = 16;

/// Answers of the introspection endpoint, by the SHA-256 of the token: the tokens themselves are
/// not kept.
pub(crate) struct Introspector {
    kept: Mutex<Cached>,
    asking: tokio::sync::Semaphore,
}

/// The claims of each token asked about, and until when they are kept.
type Cached = HashMap<[u8; 32], (Map<String, Value>, Instant)>;

impl Introspector {
    pub(crate) fn new() -> Introspector {
        Introspector {
            kept: Mutex::new(HashMap::new()),
            asking: tokio::sync::Semaphore::new(MAX_ASKING),
        }
    }

    /// Asks `endpoint`, as `client`, about `token`, and returns its claims if it is active, of
    /// the issuer, for this server and within its times.
    pub(crate) async fn verify(
        &self,
        token: &str,
        expected: &Expected<'_>,
        fetcher: &Fetcher,
        endpoint: &str,
        client: (&str, &str),
    ) -> Result<Map<String, Value>, TokenError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some(claims) = self.kept(&key) {
            return Ok(claims);
        }
        // The semaphore is never closed.
        let _asking = self.asking.acquire().await;
        let answer = fetcher
            .post_form(
                endpoint,
                client,
                &[("token", token), ("token_type_hint", "access_token")],
            )
            .await
            .map_err(|why| {
                TokenError::Unavailable(format!("cannot introspect the token: {why}"))
            })?;
        let Value::Object(claims) = answer else {
            unreachable!("the fetcher returns objects only")
        };
        check(&claims, expected, now())?;
        let until = Instant::now()
            + claims
                .get("exp")
                .and_then(Value::as_u64)
                .map_or(KEEP_FOR, |exp| {
                    Duration::from_secs(exp.saturating_sub(now())).min(KEEP_FOR)
                });
        self.keep(key, claims.clone(), until);
        Ok(claims)
    }

    fn kept(&self, key: &[u8; 32]) -> Option<Map<String, Value>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        kept.get(key)
            .filter(|(_, until)| Instant::now() < *until)
            .map(|(claims, _)| claims.clone())
    }

    fn keep(&self, key: [u8; 32], claims: Map<String, Value>, until: Instant) {
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= MAX_KEPT {
            let now = Instant::now();
            kept.retain(|_, (_, until)| now < *until);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(key, (claims, until));
    }
}

/// Seconds since the epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Whether an introspection answer is of a token this server takes: active (RFC 7662), of the
/// issuer when it names one, for this server (`aud` must be there: a token for any resource
/// would do otherwise), and within its times.
fn check(claims: &Map<String, Value>, expected: &Expected<'_>, now: u64) -> Result<(), TokenError> {
    let invalid = |why: String| Err(TokenError::Invalid(why));
    if claims.get("active") != Some(&Value::Bool(true)) {
        return invalid(
            "the access token is not active: it expired, was revoked, or was never issued"
                .to_owned(),
        );
    }
    if let Some(iss) = claims.get("iss").and_then(Value::as_str)
        && iss != expected.issuer
    {
        return invalid(format!(
            "the access token is not from this server's authorization server: its issuer \
             (`iss`) is `{iss}`, and must be `{}`",
            expected.issuer
        ));
    }
    let audiences: Vec<&str> = match claims.get("aud") {
        Some(Value::String(aud)) => vec![aud.as_str()],
        Some(Value::Array(auds)) => auds.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    if !audiences
        .iter()
        .any(|a| expected.audiences.iter().any(|e| e == a))
    {
        return invalid(format!(
            "the access token is not for this server: its audience (`aud`) must hold `{}`",
            expected.named_audiences.join("` or `")
        ));
    }
    if let Some(kind) = claims.get("token_type").and_then(Value::as_str)
        && !kind.eq_ignore_ascii_case("bearer")
        && !kind.eq_ignore_ascii_case("access_token")
    {
        return invalid(format!(
            "the token is a `{kind}` token, not a bearer access token"
        ));
    }
    let leeway = expected.leeway.as_secs();
    let time = |name: &str| claims.get(name).and_then(Value::as_u64);
    if time("exp").is_some_and(|exp| exp.saturating_add(leeway) <= now) {
        return invalid("the access token has expired".to_owned());
    }
    if time("nbf").is_some_and(|nbf| nbf > now.saturating_add(leeway)) {
        return invalid("the access token is not valid yet (`nbf`)".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn checked(answer: Value) -> Result<(), String> {
        let audiences = ["https://notes.example/mcp".to_owned()];
        let expected = Expected {
            issuer: "https://as.example",
            audiences: &audiences,
            named_audiences: &audiences,
            leeway: Duration::from_secs(30),
        };
        let Value::Object(claims) = answer else {
            unreachable!()
        };
        check(&claims, &expected, 1_000_000).map_err(|err| err.to_string())
    }

    #[test]
    fn an_active_token_for_this_server_is_taken() {
        let answer = json!({
            "active": true, "iss": "https://as.example", "aud": ["other", "https://notes.example/mcp"],
            "exp": 1_000_010, "token_type": "Bearer", "scope": "notes"
        });
        assert_eq!(checked(answer), Ok(()));
    }

    #[test]
    fn inactive_foreign_or_expired_tokens_are_refused_saying_why() {
        let aud = "https://notes.example/mcp";
        assert_eq!(
            checked(json!({"active": false})).unwrap_err(),
            "the access token is not active: it expired, was revoked, or was never issued"
        );
        assert_eq!(
            checked(json!({"active": true})).unwrap_err(),
            "the access token is not for this server: its audience (`aud`) must hold \
             `https://notes.example/mcp`"
        );
        assert_eq!(
            checked(json!({"active": true, "aud": aud, "iss": "https://evil.example"}))
                .unwrap_err(),
            "the access token is not from this server's authorization server: its issuer \
             (`iss`) is `https://evil.example`, and must be `https://as.example`"
        );
        // One issuer, written one way: a trailing slash makes another.
        assert_eq!(
            checked(json!({"active": true, "aud": aud, "iss": "https://as.example/"})).unwrap_err(),
            "the access token is not from this server's authorization server: its issuer \
             (`iss`) is `https://as.example/`, and must be `https://as.example`"
        );
        assert_eq!(
            checked(json!({"active": true, "aud": aud, "iss": "https://as.example"})),
            Ok(())
        );
        assert_eq!(
            checked(json!({"active": true, "aud": aud, "exp": 999_970})).unwrap_err(),
            "the access token has expired"
        );
        assert_eq!(
            checked(json!({"active": true, "aud": aud, "exp": 999_971})),
            Ok(())
        );
        assert_eq!(
            checked(json!({"active": true, "aud": aud, "token_type": "refresh_token"}))
                .unwrap_err(),
            "the token is a `refresh_token` token, not a bearer access token"
        );
    }
}

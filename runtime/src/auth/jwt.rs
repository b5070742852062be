//! Access tokens as JWTs (RFC 9068): checked against the issuer's published keys, which are
//! fetched once, kept, and fetched again when a token names a key the server does not know.
//!
//! The policy, for an issuer that rotates its keys and for tokens with made-up key ids:
//!
//! - A token whose key (`kid`) is not among those kept makes the server fetch the keys again
//!   at once, unless the last fetch began less than `refetch_after` ago (5 seconds by
//!   default); then the token waits for that interval to end, and is checked against the keys
//!   fetched then. Tokens that wait together wait for one fetch, and a token is refused as
//!   signed by an unknown key only once the keys were fetched after it came. So a key the
//!   issuer starts to sign with is taken at its first token, at worst after a few seconds, and
//!   made-up key ids cost the issuer one fetch per interval, however many come.
//! - Keys older than [`KEYS_KEPT_FOR`] (10 minutes) are fetched again by the next token that
//!   uses them, while other tokens go on with them: a key the issuer withdrew stops being
//!   taken within that time.
//! - A fetch that fails keeps the keys fetched before. Without any, tokens are answered with
//!   the failure (`503`) until the interval has passed, instead of each waiting on an issuer
//!   that does not answer.

use std::str::FromStr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

// tokio's clock, which tests can stop and advance.
use tokio::time::Instant;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, AlgorithmFamily, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::TokenError;
use super::fetch::Fetcher;

/// The algorithms a token may be signed with: asymmetric ones, whose keys the issuer publishes.
/// Never `none`, and never a shared secret (`HS*`), which a published key set cannot hold.
const ALGORITHMS: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// Keys older than this are fetched again when next used, so that a key the issuer withdrew
/// stops being taken.
const KEYS_KEPT_FOR: Duration = Duration::from_secs(600);

/// The issuer's signing keys, as last fetched.
pub(crate) struct Keys {
    set: RwLock<Option<Arc<KeySet>>>,
    /// A token with a key the server does not know makes it fetch the keys again, at most this
    /// often (a token that comes sooner waits): tokens with made-up key ids cannot make it
    /// hammer the issuer.
    refetch_after: Duration,
    /// Held while the keys are fetched, so that one fetch serves every request waiting; holds
    /// the last attempt.
    fetching: tokio::sync::Mutex<Option<Attempt>>,
}

/// When the keys were last asked for (the fetch's start), and why they could not be had, if
/// they could not.
struct Attempt {
    at: Instant,
    failed: Option<String>,
}

/// Why the keys are to be fetched again.
#[derive(Clone, Copy)]
enum Refetch {
    /// They are old: fetched if the last attempt is not recent, else not.
    Stale,
    /// A token that came at this instant names a key not kept: checked against keys fetched
    /// after it came, waiting for the interval's end if need be.
    Unknown { came: Instant },
}

struct KeySet {
    keys: Vec<SigningKey>,
    fetched: Instant,
}

struct SigningKey {
    id: Option<String>,
    /// The one algorithm the key is for, when the key set says.
    algorithm: Option<Algorithm>,
    decoding: DecodingKey,
}

/// What looking a token's key up found.
enum Lookup {
    /// The key, fresh or kept past [`KEYS_KEPT_FOR`].
    Found {
        set: Arc<KeySet>,
        at: usize,
        stale: bool,
    },
    /// A key of the token's `kid`, but for another algorithm.
    OtherAlgorithm,
    Missing,
}

/// What a token must be, besides signed by one of the keys.
pub(crate) struct Expected<'a> {
    /// The issuer, exactly as `iss` must write it.
    pub(crate) issuer: &'a str,
    /// Every audience taken (the resource with and without a trailing slash, say).
    pub(crate) audiences: &'a [String],
    /// The audiences a refusal names.
    pub(crate) named_audiences: &'a [String],
    pub(crate) leeway: Duration,
}

impl Keys {
    pub(crate) fn new(refetch_after: Duration) -> Keys {
        Keys {
            set: RwLock::new(None),
            refetch_after,
            fetching: tokio::sync::Mutex::new(None),
        }
    }

    /// Checks `token` and returns its claims. `jwks_uri` finds where the keys are, when they
    /// must be fetched.
    pub(crate) async fn verify<F, Fut>(
        &self,
        token: &str,
        expected: &Expected<'_>,
        fetcher: &Fetcher,
        jwks_uri: F,
    ) -> Result<Map<String, Value>, TokenError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<String, String>>,
    {
        let invalid = |why: String| Err(TokenError::Invalid(why));
        let Ok(header) = jsonwebtoken::decode_header(token) else {
            return invalid("the access token is not a JWT this server can read".to_owned());
        };
        if !ALGORITHMS.contains(&header.alg) {
            return invalid(format!(
                "the access token is signed with {:?}, which this server does not take: it takes \
                 RS, PS, ES and EdDSA signatures by the issuer's published keys",
                header.alg
            ));
        }
        let typ = header.typ.as_deref().map(str::to_ascii_lowercase);
        let access_typ = matches!(typ.as_deref(), Some("at+jwt" | "application/at+jwt"));
        if !access_typ && !matches!(typ.as_deref(), None | Some("jwt")) {
            return invalid(format!(
                "the token's type is `{}`: this server takes access tokens (`at+jwt`) only",
                header.typ.unwrap_or_default()
            ));
        }
        let kid = header.kid.as_deref();
        let (set, at) = match self.find(kid, header.alg) {
            Lookup::Found { set, at, stale } => {
                // Old keys are fetched again by one request, while the others go on with them:
                // an issuer that cannot be reached then holds up nobody but that one.
                if stale && let Ok(last) = self.fetching.try_lock() {
                    let _ = self.refresh(last, Refetch::Stale, fetcher, jwks_uri).await;
                }
                (set, at)
            }
            Lookup::OtherAlgorithm | Lookup::Missing => {
                let came = Instant::now();
                let last = self.fetching.lock().await;
                // A fetch under way as the token came may have brought its key.
                if !matches!(self.find(kid, header.alg), Lookup::Found { .. }) {
                    self.refresh(last, Refetch::Unknown { came }, fetcher, jwks_uri)
                        .await?;
                }
                match self.find(kid, header.alg) {
                    Lookup::Found { set, at, .. } => (set, at),
                    Lookup::OtherAlgorithm => {
                        return invalid(format!(
                            "the access token is signed with {:?} by key `{}`, which the issuer \
                             publishes for another algorithm",
                            header.alg,
                            kid.unwrap_or_default()
                        ));
                    }
                    Lookup::Missing => {
                        return invalid(match kid {
                            Some(kid) => format!(
                                "the access token is signed with key `{kid}`, which the issuer \
                                 does not publish"
                            ),
                            None => "the access token names no key (`kid`), and the issuer \
                                     publishes no single key for its algorithm"
                                .to_owned(),
                        });
                    }
                }
            }
        };
        let mut validation = Validation::new(header.alg);
        validation.leeway = expected.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
        validation.set_issuer(&[expected.issuer]);
        validation.set_audience(expected.audiences);
        let claims =
            jsonwebtoken::decode::<Map<String, Value>>(token, &set.keys[at].decoding, &validation)
                .map(|data| data.claims)
                .map_err(|err| TokenError::Invalid(refusal(err.kind(), expected)))?;
        // Without `at+jwt` an ID token of the same issuer and audience (Entra's, whose
        // audience is the application) would pass for an access token: what only ID tokens
        // carry gives it away.
        if !access_typ
            && (["nonce", "at_hash", "c_hash"]
                .iter()
                .any(|c| claims.contains_key(*c))
                || claims.get("typ").and_then(Value::as_str) == Some("ID"))
        {
            return invalid("the token is an ID token, not an access token".to_owned());
        }
        Ok(claims)
    }

    /// The key that signed a token of this `kid` and algorithm, among those kept.
    fn find(&self, kid: Option<&str>, alg: Algorithm) -> Lookup {
        let Some(set) = self.set.read().unwrap_or_else(|e| e.into_inner()).clone() else {
            return Lookup::Missing;
        };
        match set.position(kid, alg) {
            Ok(at) => Lookup::Found {
                stale: set.fetched.elapsed() > KEYS_KEPT_FOR,
                set,
                at,
            },
            Err(lookup) => lookup,
        }
    }

    /// Fetches the keys, as the [policy](self) says: at once, after waiting for the interval's
    /// end, or not (what the last attempt found stands: its failure too, when no keys are
    /// kept, so that requests fail at once instead of each waiting on an issuer that does not
    /// answer). The lock on the last attempt is held throughout, so that one fetch serves
    /// every token waiting.
    async fn refresh<F, Fut>(
        &self,
        mut last: tokio::sync::MutexGuard<'_, Option<Attempt>>,
        why: Refetch,
        fetcher: &Fetcher,
        jwks_uri: F,
    ) -> Result<(), TokenError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<String, String>>,
    {
        let have_keys = self.set.read().unwrap_or_else(|e| e.into_inner()).is_some();
        if let Some(attempt) = &*last {
            let stands = match (&attempt.failed, have_keys) {
                (Some(why), false) => Err(TokenError::Unavailable(why.clone())),
                _ => Ok(()),
            };
            let since = attempt.at.elapsed();
            match why {
                Refetch::Stale if since < self.refetch_after => return stands,
                Refetch::Stale => {}
                // Fetched since the token came: those keys answer it.
                Refetch::Unknown { came } if attempt.at > came => return stands,
                Refetch::Unknown { .. } if since < self.refetch_after => {
                    // Without keys, a failed fetch answers until it may be tried again.
                    stands?;
                    tokio::time::sleep(self.refetch_after - since).await;
                }
                Refetch::Unknown { .. } => {}
            }
        }
        let started = Instant::now();
        let fetched = async {
            let uri = jwks_uri().await?;
            let document = fetcher.get_json(&uri).await?;
            KeySet::read(&document).map_err(|why| format!("the key set at {uri} {why}"))
        };
        let fetched = fetched
            .await
            .map_err(|why| format!("cannot fetch the issuer's signing keys: {why}"));
        *last = Some(Attempt {
            at: started,
            failed: fetched.as_ref().err().cloned(),
        });
        match fetched {
            Ok(set) => {
                tracing::debug!(keys = set.keys.len(), "fetched the issuer's signing keys");
                *self.set.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(set));
                Ok(())
            }
            // Keys kept from before still check the tokens they signed.
            Err(why) if have_keys => {
                tracing::warn!("{why}; the keys fetched before are kept");
                Ok(())
            }
            Err(why) => Err(TokenError::Unavailable(why)),
        }
    }
}

impl KeySet {
    /// The signing keys of a JWK Set; keys for encryption, of other kinds, or unreadable are
    /// passed over (a set may hold keys for other uses).
    fn read(document: &Value) -> Result<KeySet, String> {
        let Some(entries) = document.get("keys").and_then(Value::as_array) else {
            return Err("has no `keys` list".to_owned());
        };
        let keys: Vec<SigningKey> = entries
            .iter()
            .filter_map(|entry| serde_json::from_value::<Jwk>(entry.clone()).ok())
            .filter(|jwk| !matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)))
            .filter_map(|jwk| {
                let decoding = DecodingKey::from_jwk(&jwk).ok()?;
                (decoding.family() != AlgorithmFamily::Hmac).then(|| SigningKey {
                    id: jwk.common.key_id.clone(),
                    algorithm: jwk
                        .common
                        .key_algorithm
                        .and_then(|a| Algorithm::from_str(&a.to_string()).ok()),
                    decoding,
                })
            })
            .collect();
        if keys.is_empty() {
            return Err("holds no signing key this server can use".to_owned());
        }
        Ok(KeySet {
            keys,
            fetched: Instant::now(),
        })
    }

    /// Where the key of this `kid` for `alg` is; without a `kid`, only a key set with one key
    /// for the algorithm says which.
    fn position(&self, kid: Option<&str>, alg: Algorithm) -> Result<usize, Lookup> {
        let fits = |key: &SigningKey| {
            key.decoding.family() == alg.family() && key.algorithm.is_none_or(|a| a == alg)
        };
        match kid {
            Some(kid) => {
                let mut named = self
                    .keys
                    .iter()
                    .enumerate()
                    .filter(|(_, key)| key.id.as_deref() == Some(kid));
                let mut any = false;
                for (at, key) in named.by_ref() {
                    any = true;
                    if fits(key) {
                        return Ok(at);
                    }
                }
                Err(if any {
                    Lookup::OtherAlgorithm
                } else {
                    Lookup::Missing
                })
            }
            None => {
                let mut fitting = self.keys.iter().enumerate().filter(|(_, key)| fits(key));
                match (fitting.next(), fitting.next()) {
                    (Some((at, _)), None) => Ok(at),
                    _ => Err(Lookup::Missing),
                }
            }
        }
    }
}

/// Why a well-formed, well-signed token is refused, in words its holder can act on.
fn refusal(kind: &ErrorKind, expected: &Expected<'_>) -> String {
    match kind {
        ErrorKind::ExpiredSignature => "the access token has expired".to_owned(),
        ErrorKind::ImmatureSignature => "the access token is not valid yet (`nbf`)".to_owned(),
        ErrorKind::InvalidAudience => format!(
            "the access token is not for this server: its audience (`aud`) must hold {}",
            quoted(expected.named_audiences)
        ),
        ErrorKind::InvalidIssuer => format!(
            "the access token is not from this server's authorization server: its issuer \
             (`iss`) must be `{}`",
            expected.issuer
        ),
        ErrorKind::MissingRequiredClaim(claim) => {
            format!("the access token has no `{claim}` claim")
        }
        ErrorKind::InvalidSignature => "the access token's signature does not verify".to_owned(),
        ErrorKind::InvalidClaimFormat(claim) => {
            format!("the access token's `{claim}` claim is malformed")
        }
        _ => "the access token cannot be read".to_owned(),
    }
}

fn quoted(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("`{v}`")).collect();
    quoted.join(" or ")
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use base64::Engine as _;
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use jsonwebtoken::{EncodingKey, Header};
    use serde_json::json;

    use super::*;

    /// The Ed25519 key of RFC 8037, appendix A: its private part as PKCS #8, its public `x`.
    const SEED: &str = "nWGxne_9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A";
    const X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";

    fn signed(typ: Option<&str>, claims: Value) -> String {
        signed_by("k1", typ, claims)
    }

    /// A token signed with the RFC's key, naming it `kid`.
    fn signed_by(kid: &str, typ: Option<&str>, claims: Value) -> String {
        let mut der = vec![
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22,
            0x04, 0x20,
        ];
        der.extend(URL_SAFE_NO_PAD.decode(SEED).unwrap());
        let mut header = Header::new(Algorithm::EdDSA);
        header.typ = typ.map(str::to_owned);
        header.kid = Some(kid.to_owned());
        jsonwebtoken::encode(&header, &claims, &EncodingKey::from_ed_der(&der)).unwrap()
    }

    /// The default least time between two fetches.
    const REFETCH_AFTER: Duration = crate::auth::oauth::DEFAULT_REFETCH_AFTER;

    /// Keys holding the RFC's key as `k1`, fetched `age` ago.
    fn keys(age: Duration) -> Keys {
        let keys = Keys::new(REFETCH_AFTER);
        let document = json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": X, "kid": "k1"}]});
        let mut set = KeySet::read(&document).unwrap();
        set.fetched = Instant::now().checked_sub(age).unwrap_or_else(Instant::now);
        *keys.set.write().unwrap() = Some(Arc::new(set));
        keys
    }

    async fn verify(keys: &Keys, token: &str, asked: &AtomicUsize) -> Result<Value, String> {
        let audiences = ["https://notes.example/mcp".to_owned()];
        let expected = Expected {
            issuer: "https://as.example",
            audiences: &audiences,
            named_audiences: &audiences,
            leeway: Duration::from_secs(30),
        };
        // The issuer cannot be reached: every fetch fails, and is counted.
        let jwks_uri = || async {
            asked.fetch_add(1, Ordering::Relaxed);
            Err::<String, _>("the issuer did not answer".to_owned())
        };
        keys.verify(token, &expected, &Fetcher::new().unwrap(), jwks_uri)
            .await
            .map(Value::Object)
            .map_err(|err| err.to_string())
    }

    fn claims(extra: Value) -> Value {
        let mut claims = json!({
            "iss": "https://as.example", "aud": "https://notes.example/mcp", "sub": "alice",
            "exp": 4_000_000_000u64, "scope": "notes:read",
        });
        claims
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        claims
    }

    #[tokio::test]
    async fn an_access_token_is_taken_and_an_id_token_refused() {
        let (keys, asked) = (keys(Duration::ZERO), AtomicUsize::new(0));
        let good = signed(Some("at+jwt"), claims(json!({})));
        assert_eq!(verify(&keys, &good, &asked).await.unwrap()["sub"], "alice");
        // `JWT`, or no type, is taken too, unless the claims are an ID token's.
        let plain = signed(Some("JWT"), claims(json!({})));
        assert!(verify(&keys, &plain, &asked).await.is_ok());
        for id_token in [
            signed(Some("JWT"), claims(json!({"nonce": "n-0S6_WzA2Mj"}))),
            signed(None, claims(json!({"at_hash": "77QmUPtjPfzWtF2AnpK9RQ"}))),
            signed(None, claims(json!({"typ": "ID"}))),
        ] {
            assert_eq!(
                verify(&keys, &id_token, &asked).await.unwrap_err(),
                "the token is an ID token, not an access token"
            );
        }
        let nameless = signed(Some("at+jwt"), {
            let mut c = claims(json!({}));
            c.as_object_mut().unwrap().remove("sub");
            c
        });
        assert_eq!(
            verify(&keys, &nameless, &asked).await.unwrap_err(),
            "the access token has no `sub` claim"
        );
        assert_eq!(asked.load(Ordering::Relaxed), 0, "no fetch for a key kept");
    }

    #[tokio::test]
    async fn old_keys_serve_while_the_issuer_cannot_be_reached() {
        let (keys, asked) = (keys(Duration::from_secs(7200)), AtomicUsize::new(0));
        let good = signed(Some("at+jwt"), claims(json!({})));
        assert!(verify(&keys, &good, &asked).await.is_ok());
        assert_eq!(
            asked.load(Ordering::Relaxed),
            1,
            "old keys are asked for again"
        );
        assert!(verify(&keys, &good, &asked).await.is_ok());
        assert_eq!(asked.load(Ordering::Relaxed), 1, "and not again at once");
    }

    #[tokio::test]
    async fn without_keys_a_failed_fetch_answers_until_it_may_be_tried_again() {
        let (keys, asked) = (Keys::new(REFETCH_AFTER), AtomicUsize::new(0));
        let good = signed(Some("at+jwt"), claims(json!({})));
        for _ in 0..3 {
            assert_eq!(
                verify(&keys, &good, &asked).await.unwrap_err(),
                "cannot fetch the issuer's signing keys: the issuer did not answer"
            );
        }
        assert_eq!(
            asked.load(Ordering::Relaxed),
            1,
            "one fetch for three requests"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_token_of_an_unknown_key_is_checked_against_keys_fetched_after_it_came() {
        let (keys, asked) = (keys(Duration::ZERO), AtomicUsize::new(0));
        let refused = |kid: &str| {
            format!(
                "the access token is signed with key `{kid}`, which the issuer does not publish"
            )
        };
        // The first unknown key: the keys are fetched at once (the issuer does not answer, so
        // those kept stand, without `k2`).
        let start = Instant::now();
        let k2 = signed_by("k2", Some("at+jwt"), claims(json!({})));
        assert_eq!(verify(&keys, &k2, &asked).await.unwrap_err(), refused("k2"));
        assert_eq!(
            (asked.load(Ordering::Relaxed), start.elapsed()),
            (1, Duration::ZERO)
        );
        // Two more, a second later: they wait until the interval since that fetch has passed,
        // and one fetch then answers both.
        tokio::time::advance(Duration::from_secs(1)).await;
        let k3 = signed_by("k3", Some("at+jwt"), claims(json!({})));
        let (two, three) = tokio::join!(verify(&keys, &k2, &asked), verify(&keys, &k3, &asked));
        assert_eq!(two.unwrap_err(), refused("k2"));
        assert_eq!(three.unwrap_err(), refused("k3"));
        assert_eq!(
            (asked.load(Ordering::Relaxed), start.elapsed()),
            (2, REFETCH_AFTER)
        );
        // A known key is checked at once, without a fetch, meanwhile and after.
        let k1 = signed(Some("at+jwt"), claims(json!({})));
        assert!(verify(&keys, &k1, &asked).await.is_ok());
        assert_eq!(
            (asked.load(Ordering::Relaxed), start.elapsed()),
            (2, REFETCH_AFTER)
        );
        // Once the interval has passed, an unknown key is fetched for at once again.
        tokio::time::advance(REFETCH_AFTER).await;
        let later = Instant::now();
        assert_eq!(verify(&keys, &k3, &asked).await.unwrap_err(), refused("k3"));
        assert_eq!(
            (asked.load(Ordering::Relaxed), later.elapsed()),
            (3, Duration::ZERO)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn keys_ten_minutes_old_are_fetched_again() {
        let (fresh, asked) = (keys(Duration::from_secs(599)), AtomicUsize::new(0));
        let good = signed(Some("at+jwt"), claims(json!({})));
        assert!(verify(&fresh, &good, &asked).await.is_ok());
        assert_eq!(asked.load(Ordering::Relaxed), 0);
        let old = keys(Duration::from_secs(601));
        assert!(verify(&old, &good, &asked).await.is_ok());
        assert_eq!(asked.load(Ordering::Relaxed), 1);
    }
}

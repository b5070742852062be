//! Who a request comes from, as its access token says.

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

/// Who a request comes from, as its access token says: the token's issuer, its subject (the
/// user, or for a machine's own token often the client), the client it was issued to, the
/// scopes it grants and every claim it carries.
///
/// A tool reads it through [`Context::principal`](crate::Context::principal); it is there when
/// the server checks access tokens (`http::Http::oauth`, with the `oauth` feature) and the request came
/// over HTTP. A test builds one with [`Principal::new`] and calls tools as it with
/// [`Server::test_client_as`](crate::Server::test_client_as).
///
/// ```
/// use toolwright::auth::Principal;
///
/// let alice = Principal::new("https://auth.example.com")
///     .with_subject("alice")
///     .with_scopes(["notes:read", "notes:write"]);
/// assert!(alice.has_scope("notes:write"));
/// assert_eq!(alice.subject(), Some("alice"));
/// ```
#[derive(Clone, PartialEq)]
pub struct Principal {
    issuer: String,
    subject: Option<String>,
    client_id: Option<String>,
    scopes: Vec<String>,
    claims: Map<String, Value>,
    /// The SHA-256 of the token it was read from, when it was: what names a principal whose
    /// token names nobody.
    token: Option<[u8; 32]>,
}

/// Whom a principal is, for what belongs to it (an HTTP session): its subject, else its client,
/// else the very token, so that two tokens that name nobody never share.
#[cfg(feature = "http")]
#[derive(Clone, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub(crate) enum Owner {
    Subject(String, String),
    Client(String, String),
    Token([u8; 32]),
    /// A principal made by hand, not read from a token ([`Principal::new`]), naming nobody.
    Nobody,
}

impl Principal {
    /// A principal of this issuer, with no subject, client, scope or claim yet.
    pub fn new(issuer: impl Into<String>) -> Principal {
        Principal {
            issuer: issuer.into(),
            subject: None,
            client_id: None,
            scopes: Vec::new(),
            claims: Map::new(),
            token: None,
        }
    }

    /// With this subject (the token's `sub`).
    #[must_use]
    pub fn with_subject(mut self, subject: impl Into<String>) -> Principal {
        self.subject = Some(subject.into());
        self
    }

    /// With this client (the token's `client_id`).
    #[must_use]
    pub fn with_client_id(mut self, client_id: impl Into<String>) -> Principal {
        self.client_id = Some(client_id.into());
        self
    }

    /// With these scopes, in place of those it had.
    #[must_use]
    pub fn with_scopes<S: Into<String>>(
        mut self,
        scopes: impl IntoIterator<Item = S>,
    ) -> Principal {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// With this claim besides the others (a claim of the same name is replaced).
    #[must_use]
    pub fn with_claim(mut self, name: impl Into<String>, value: impl Into<Value>) -> Principal {
        self.claims.insert(name.into(), value.into());
        self
    }

    #[cfg(feature = "oauth")]
    /// Reads what a token's claims (a JWT's payload, or an introspection response) say of who
    /// it is for: `sub`; the client from `client_id`, else `azp`; the scopes from `scope`
    /// (space-separated) or `scp` (a list, or space-separated). `token` is the token's SHA-256.
    pub(crate) fn from_claims(
        issuer: &str,
        claims: Map<String, Value>,
        token: [u8; 32],
    ) -> Principal {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(str::to_owned);
        let scopes = match claims.get("scope").or_else(|| claims.get("scp")) {
            Some(Value::String(scopes)) => scopes.split_whitespace().map(str::to_owned).collect(),
            Some(Value::Array(scopes)) => scopes
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        };
        Principal {
            issuer: issuer.to_owned(),
            subject: text("sub"),
            client_id: text("client_id").or_else(|| text("azp")),
            scopes,
            claims,
            token: Some(token),
        }
    }

    /// The authorization server that issued the token (`iss`).
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// Whom the token is about (`sub`): a user, or for a client acting on its own behalf (the
    /// client credentials grant) usually the client. `None` when the token names nobody.
    pub fn subject(&self) -> Option<&str> {
        self.subject.as_deref()
    }

    /// The client the token was issued to (`client_id`, or `azp`).
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The scopes the token grants.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// Whether the token grants `scope`.
    pub fn has_scope(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope)
    }

    /// Every claim the token carries: a JWT's payload, or what introspection answered.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// One claim, by name (`email`, `tenant`, ...).
    pub fn claim(&self, name: &str) -> Option<&Value> {
        self.claims.get(name)
    }

    /// When the token expires (`exp`), if it says.
    pub fn expires_at(&self) -> Option<SystemTime> {
        let seconds = self.claims.get("exp")?.as_u64()?;
        UNIX_EPOCH.checked_add(Duration::from_secs(seconds))
    }

    /// Who owns what this principal opens (a session): whom its token names, with the issuer,
    /// or the token itself when it names nobody. A later request must come from the same.
    #[cfg(feature = "http")]
    pub(crate) fn owner(&self) -> Owner {
        match (&self.subject, &self.client_id, self.token) {
            (Some(subject), _, _) => Owner::Subject(self.issuer.clone(), subject.clone()),
            (None, Some(client), _) => Owner::Client(self.issuer.clone(), client.clone()),
            (None, None, Some(token)) => Owner::Token(token),
            (None, None, None) => Owner::Nobody,
        }
    }

    /// Who owns what this principal creates (a task), as text: the same rule as a session's
    /// owner, written so that no two principals share one.
    pub(crate) fn owner_key(&self) -> String {
        match (&self.subject, &self.client_id, self.token) {
            (Some(subject), _, _) => format!("subject\0{}\0{subject}", self.issuer),
            (None, Some(client), _) => format!("client\0{}\0{client}", self.issuer),
            (None, None, Some(token)) => {
                let hex: String = token.iter().map(|b| format!("{b:02x}")).collect();
                format!("token\0{hex}")
            }
            (None, None, None) => format!("nobody\0{}", self.issuer),
        }
    }
}

/// The claims are left out: they may hold what a log should not.
impl fmt::Debug for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Principal")
            .field("issuer", &self.issuer)
            .field("subject", &self.subject)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    #[cfg(feature = "oauth")]
    use serde_json::json;

    use super::*;

    #[cfg(feature = "oauth")]
    fn claims(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[cfg(feature = "oauth")]
    #[test]
    fn a_token_s_claims_name_its_subject_client_and_scopes() {
        let principal = Principal::from_claims(
            "https://as.example",
            claims(json!({
                "sub": "alice", "client_id": "agent", "scope": "notes:read  notes:write",
                "exp": 2_000_000_000u64, "tenant": "acme"
            })),
            [1; 32],
        );
        assert_eq!(principal.subject(), Some("alice"));
        assert_eq!(principal.client_id(), Some("agent"));
        assert_eq!(principal.scopes(), ["notes:read", "notes:write"]);
        assert!(principal.has_scope("notes:write") && !principal.has_scope("notes"));
        assert_eq!(principal.claim("tenant"), Some(&json!("acme")));
        assert_eq!(
            principal.expires_at(),
            Some(UNIX_EPOCH + Duration::from_secs(2_000_000_000))
        );
    }

    #[cfg(feature = "oauth")]
    #[test]
    fn scp_lists_and_azp_are_read_too() {
        let principal = Principal::from_claims(
            "https://as.example",
            claims(json!({"azp": "agent", "scp": ["a", "b"]})),
            [1; 32],
        );
        assert_eq!(principal.client_id(), Some("agent"));
        assert_eq!(principal.scopes(), ["a", "b"]);
        assert_eq!(principal.subject(), None);
    }

    #[cfg(feature = "oauth")]
    #[test]
    fn owners_are_subjects_else_clients_else_the_token_and_never_mix() {
        let read = |value: Value, token: u8| {
            Principal::from_claims("https://as.example", claims(value), [token; 32]).owner()
        };
        let issuer = "https://as.example".to_owned();
        assert_eq!(
            read(json!({"sub": "x", "client_id": "agent"}), 1),
            Owner::Subject(issuer.clone(), "x".into())
        );
        // A client named `x` is not the user `x`.
        assert_eq!(
            read(json!({"client_id": "x"}), 1),
            Owner::Client(issuer, "x".into())
        );
        assert_ne!(
            read(json!({"sub": "x"}), 1),
            read(json!({"client_id": "x"}), 1)
        );
        // Two tokens that name nobody are two owners.
        assert_eq!(read(json!({"scope": "a"}), 1), Owner::Token([1; 32]));
        assert_ne!(
            read(json!({"scope": "a"}), 1),
            read(json!({"scope": "a"}), 2)
        );
    }

    #[test]
    fn debug_leaves_the_claims_out() {
        let principal = Principal::new("https://as.example").with_claim("email", "a@example.com");
        assert!(!format!("{principal:?}").contains("a@example.com"));
    }
}

//! Access tokens as JWTs (RFC 9068): checked against the issuer's published keys, which are
//! fetched once, kept, and fetched again when a token names a key the server does not know.

use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

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
const KEYS_KEPT_FOR: Duration = Duration::from_secs(3600);

/// The issuer's signing keys, as last fetched.
pub(crate) struct Keys {
    set: RwLock<Option<Arc<KeySet>>>,
    /// A token with a key the server does not know makes it fetch the keys again, at most this
    /// often: tokens with made-up key ids cannot make it hammer the issuer.
    refetch_after: Duration,
    /// Held while the keys are fetched, so that one fetch serves every request waiting; holds
    /// when they were last asked for.
    fetching: tokio::sync::Mutex<Option<Instant>>,
}

struct KeySet {
    keys: Vec<Key>,
    fetched: Instant,
}

struct Key {
    id: Option<String>,
    /// The one algorithm the key is for, when the key set says.
    algorithm: Option<String>,
    decoding: DecodingKey,
}

/// What a token must be, besides signed by one of the keys.
pub(crate) struct Expected<'a> {
    pub(crate) issuers: &'a [String],
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
        let header = jsonwebtoken::decode_header(token).map_err(|_| {
            TokenError::Invalid("the access token is not a JWT this server can read".to_owned())
        })?;
        if !ALGORITHMS.contains(&header.alg) {
            return Err(TokenError::Invalid(format!(
                "the access token is signed with {:?}, which this server does not take: it takes \
                 RS, PS, ES and EdDSA signatures by the issuer's published keys",
                header.alg
            )));
        }
        if let Some(typ) = &header.typ
            && !["at+jwt", "application/at+jwt", "jwt"].contains(&typ.to_ascii_lowercase().as_str())
        {
            return Err(TokenError::Invalid(format!(
                "the token's type is `{typ}`: this server takes access tokens (`at+jwt`) only"
            )));
        }
        let kid = header.kid.as_deref();
        let (set, at) = match self.find(kid, header.alg, true) {
            Some(found) => found,
            None => {
                self.refresh(fetcher, jwks_uri).await?;
                // Kept keys, even old, when the issuer could not be asked again.
                self.find(kid, header.alg, false).ok_or_else(|| {
                    TokenError::Invalid(match kid {
                        Some(kid) => format!(
                            "the access token is signed with key `{kid}`, which the issuer does \
                             not publish"
                        ),
                        None => "the access token names no key (`kid`), and the issuer publishes \
                                 no single key for its algorithm"
                            .to_owned(),
                    })
                })?
            }
        };
        let mut validation = Validation::new(header.alg);
        validation.leeway = expected.leeway.as_secs();
        validation.validate_nbf = true;
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.set_issuer(expected.issuers);
        validation.set_audience(expected.audiences);
        jsonwebtoken::decode::<Map<String, Value>>(token, &set.keys[at].decoding, &validation)
            .map(|data| data.claims)
            .map_err(|err| TokenError::Invalid(refusal(err.kind(), expected).to_owned()))
    }

    /// The key that signed a token of this `kid` and algorithm, among those kept; when `fresh`,
    /// only if they are not too old.
    fn find(&self, kid: Option<&str>, alg: Algorithm, fresh: bool) -> Option<(Arc<KeySet>, usize)> {
        let set = self.set.read().unwrap_or_else(|e| e.into_inner()).clone()?;
        if fresh && set.fetched.elapsed() > KEYS_KEPT_FOR {
            return None;
        }
        let at = set.position(kid, alg)?;
        Some((set, at))
    }

    /// Fetches the keys, unless another request just did (or is doing so, which this one waits
    /// for).
    async fn refresh<F, Fut>(&self, fetcher: &Fetcher, jwks_uri: F) -> Result<(), TokenError>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = Result<String, String>>,
    {
        let mut last = self.fetching.lock().await;
        let have_keys = self.set.read().unwrap_or_else(|e| e.into_inner()).is_some();
        if have_keys && last.is_some_and(|at| at.elapsed() < self.refetch_after) {
            return Ok(());
        }
        *last = Some(Instant::now());
        let fetched = async {
            let uri = jwks_uri().await?;
            let document = fetcher.get_json(&uri).await?;
            KeySet::read(&document).map_err(|why| format!("the key set at {uri} {why}"))
        };
        match fetched.await {
            Ok(set) => {
                tracing::debug!(keys = set.keys.len(), "fetched the issuer's signing keys");
                *self.set.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(set));
                Ok(())
            }
            // Keys kept from before still check the tokens they signed.
            Err(why) if have_keys => {
                tracing::warn!("cannot fetch the issuer's signing keys again: {why}");
                Ok(())
            }
            Err(why) => Err(TokenError::Unavailable(format!(
                "cannot fetch the issuer's signing keys: {why}"
            ))),
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
        let keys: Vec<Key> = entries
            .iter()
            .filter_map(|entry| serde_json::from_value::<Jwk>(entry.clone()).ok())
            .filter(|jwk| !matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)))
            .filter_map(|jwk| {
                let decoding = DecodingKey::from_jwk(&jwk).ok()?;
                (decoding.family() != AlgorithmFamily::Hmac).then(|| Key {
                    id: jwk.common.key_id.clone(),
                    algorithm: jwk.common.key_algorithm.map(|a| format!("{a:?}")),
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

    fn position(&self, kid: Option<&str>, alg: Algorithm) -> Option<usize> {
        let name = format!("{alg:?}");
        let fits = |key: &Key| {
            key.decoding.family() == alg.family()
                && key.algorithm.as_ref().is_none_or(|a| *a == name)
        };
        match kid {
            Some(kid) => self
                .keys
                .iter()
                .position(|key| key.id.as_deref() == Some(kid) && fits(key)),
            // Without a `kid`, only a key set with one key for the algorithm says which.
            None => {
                let mut fitting = self.keys.iter().enumerate().filter(|(_, key)| fits(key));
                match (fitting.next(), fitting.next()) {
                    (Some((at, _)), None) => Some(at),
                    _ => None,
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
             (`iss`) must be {}",
            quoted(&expected.issuers[..1])
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

//! Who may call: anyone who reaches the server, the holders of one shared bearer token, or the
//! holders of OAuth access tokens issued for it. The token is checked before a request's body is
//! read; the scopes the request needs (its tool's), once it is.

use std::sync::Arc;

use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
use sha2::{Digest, Sha256};

use super::response::Rejection;
use crate::auth::Principal;
#[cfg(feature = "oauth")]
use crate::auth::{TokenError, Verifier};

/// How the endpoint checks who calls.
pub(super) enum Authorization {
    /// Anyone who reaches it may call (the `Host` and `Origin` checks still apply).
    Open,
    /// The SHA-256 of the one bearer token every request must carry.
    Token([u8; 32]),
    /// OAuth access tokens, checked by the verifier.
    #[cfg(feature = "oauth")]
    OAuth(Arc<Verifier>),
}

impl Authorization {
    pub(super) fn token(token: &str) -> Authorization {
        Authorization::Token(digest(token.as_bytes()))
    }

    /// Checks the request's bearer token: `Ok(None)` when it needs none or names nobody (the
    /// shared token), the principal it names under OAuth.
    pub(super) async fn authenticate(
        &self,
        headers: &HeaderMap,
    ) -> Result<Option<Arc<Principal>>, Rejection> {
        match self {
            Authorization::Open => Ok(None),
            Authorization::Token(expected) => match bearer(headers) {
                None => Err(unauthorized(
                    "this server requires `Authorization: Bearer <token>`",
                    "Bearer".to_owned(),
                )),
                Some(token) if same_digest(expected, &digest(token.as_bytes())) => Ok(None),
                Some(_) => Err(unauthorized(
                    "the bearer token is not valid",
                    r#"Bearer error="invalid_token""#.to_owned(),
                )),
            },
            #[cfg(feature = "oauth")]
            Authorization::OAuth(verifier) => {
                let required: Vec<&str> = verifier
                    .required_scopes()
                    .iter()
                    .map(String::as_str)
                    .collect();
                let Some(token) = bearer(headers) else {
                    return Err(unauthorized(
                        "this server requires an OAuth access token, `Authorization: Bearer \
                         <token>`: the `resource_metadata` of the `WWW-Authenticate` header names \
                         the authorization server that issues them",
                        verifier.challenge(None, &required),
                    ));
                };
                let principal = match verifier.verify(token).await {
                    Ok(principal) => principal,
                    Err(TokenError::Invalid(why)) => {
                        return Err(unauthorized(
                            &why,
                            verifier.challenge(Some(("invalid_token", &why)), &required),
                        ));
                    }
                    Err(TokenError::Unavailable(why)) => {
                        tracing::warn!("cannot check an access token: {why}");
                        return Err(Rejection::new(
                            StatusCode::SERVICE_UNAVAILABLE,
                            format!("the access token cannot be checked now: {why}"),
                        )
                        .with_header("retry-after", "5"));
                    }
                };
                self.authorize(&principal, &[], "this server")?;
                Ok(Some(Arc::new(principal)))
            }
        }
    }

    /// Checks that the principal holds the scopes every request needs and `needed` (a tool's),
    /// or refuses the request `403`, naming what `what` needs, with every scope it needs in the
    /// challenge, which a client asks its user for.
    #[cfg_attr(not(feature = "oauth"), allow(unused_variables, clippy::unused_self))]
    pub(super) fn authorize(
        &self,
        principal: &Principal,
        needed: &[&str],
        what: &str,
    ) -> Result<(), Rejection> {
        #[cfg(feature = "oauth")]
        if let Authorization::OAuth(verifier) = self {
            let mut scopes: Vec<&str> = verifier
                .required_scopes()
                .iter()
                .map(String::as_str)
                .collect();
            for scope in needed {
                if !scopes.contains(scope) {
                    scopes.push(scope);
                }
            }
            let missing: Vec<&str> = scopes
                .iter()
                .copied()
                .filter(|scope| !principal.has_scope(scope))
                .collect();
            if !missing.is_empty() {
                let why = format!(
                    "the access token lacks {} `{}`, which {what} needs",
                    if missing.len() == 1 {
                        "scope"
                    } else {
                        "scopes"
                    },
                    missing.join("`, `")
                );
                let challenge = verifier.challenge(Some(("insufficient_scope", &why)), &scopes);
                return Err(Rejection::new(StatusCode::FORBIDDEN, why)
                    .with_header("www-authenticate", &challenge));
            }
        }
        Ok(())
    }

    /// Where the protected resource metadata is served, and the document, under OAuth.
    #[cfg(feature = "oauth")]
    pub(super) fn metadata(&self) -> Option<(&[String], &[u8])> {
        match self {
            Authorization::OAuth(verifier) => {
                Some((verifier.metadata_paths(), verifier.metadata_document()))
            }
            _ => None,
        }
    }
}

fn unauthorized(message: &str, challenge: String) -> Rejection {
    Rejection::new(StatusCode::UNAUTHORIZED, message).with_header("www-authenticate", &challenge)
}

/// The token of the request's one `Authorization: Bearer <token>` header (the scheme in any
/// case), if it has one.
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let mut values = headers.get_all(AUTHORIZATION).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return None;
    };
    let (scheme, token) = value.to_str().ok()?.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

fn digest(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// Compares every byte, so the time taken does not tell how much of a guess was right; comparing
/// digests keeps the token's length out of it too.
fn same_digest(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let difference = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(difference) == 0
}

//! Who may call: anyone who reaches the server, the holders of one shared bearer token, or the
//! holders of OAuth access tokens issued for it. The token is checked before a request's body is
//! read; the scopes the request needs (its tool's), once it is.

use std::net::SocketAddr;
use std::sync::Arc;

#[cfg(feature = "oauth")]
use axum::http::Method;
use axum::http::header::AUTHORIZATION;
use axum::http::{HeaderMap, StatusCode};
#[cfg(feature = "oauth")]
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use super::Http;
use super::response::Rejection;
use crate::auth::Principal;
#[cfg(feature = "oauth")]
use crate::auth::{TokenError, Verifier};
use crate::server::{Error, Started};

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
    /// What the transport's settings ask for of `server`, which listens at `bound`. Fails for
    /// settings that cannot be served: OAuth that is not safe, or both kinds of token.
    pub(super) fn configured(
        http: &Http,
        server: &Started,
        bound: SocketAddr,
    ) -> Result<Authorization, Error> {
        let token = http.token.as_deref().map(|t| digest(t.as_bytes()));
        let authorization = token.map_or(Authorization::Open, Authorization::Token);
        #[cfg(feature = "oauth")]
        let authorization = match (http.oauth.clone(), authorization) {
            (None, authorization) => authorization,
            (Some(_), Authorization::Token(_)) => {
                return Err(Error::OAuth(
                    "both a shared bearer token and OAuth are set: a server checks one kind of \
                     token, so keep one (`--token` or `--oauth-issuer`)"
                        .to_owned(),
                ));
            }
            (Some(oauth), _) => {
                let scopes = server.tool_scopes();
                let verifier =
                    Verifier::new(oauth, bound, server.name(), &scopes).map_err(Error::OAuth)?;
                tracing::info!(
                    issuer = verifier.issuer(),
                    resource = verifier.resource(),
                    "every request needs an OAuth access token of the issuer for the resource"
                );
                Authorization::OAuth(Arc::new(verifier))
            }
        };
        #[cfg(not(feature = "oauth"))]
        let _ = (server, bound);
        Ok(authorization)
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
                    // Why stays in the log: it names the authorization server's inner
                    // addresses, which a caller without a valid token has no business knowing.
                    Err(TokenError::Unavailable(why)) => {
                        tracing::warn!("cannot check an access token: {why}");
                        return Err(Rejection::new(
                            StatusCode::SERVICE_UNAVAILABLE,
                            "the access token cannot be checked now: the authorization server \
                             cannot be reached; try again shortly",
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
                // With the scopes the token has, so that a client which asks for what the
                // challenge names does not lose them (and then the calls they allow).
                for scope in principal.scopes() {
                    if !scopes.contains(&scope.as_str()) {
                        scopes.push(scope);
                    }
                }
                let challenge = verifier.challenge(Some(("insufficient_scope", &why)), &scopes);
                return Err(Rejection::new(StatusCode::FORBIDDEN, why)
                    .with_header("www-authenticate", &challenge));
            }
        }
        Ok(())
    }

    /// Under OAuth, `router` with the protected resource metadata (RFC 9728) at its paths, to
    /// anyone, web pages of any origin included: it is what a client reads to learn where to get
    /// a token.
    #[cfg(feature = "oauth")]
    pub(super) fn route_metadata<S: Clone + Send + Sync + 'static>(
        &self,
        router: axum::Router<S>,
    ) -> axum::Router<S> {
        let Authorization::OAuth(verifier) = self else {
            return router;
        };
        verifier
            .metadata_paths()
            .iter()
            .fold(router, |router, path| {
                let verifier = Arc::clone(verifier);
                router.route(
                    path,
                    axum::routing::any(move |method| metadata(method, verifier)),
                )
            })
    }
}

/// The metadata document, or the preflight of a web page that will read it (for the
/// `MCP-Protocol-Version` header clients send with it). The document names the issuer as the
/// issuer's own metadata does, fetched first if need be; while it cannot be, as configured,
/// and clients are told not to keep that.
#[cfg(feature = "oauth")]
async fn metadata(method: Method, verifier: Arc<Verifier>) -> Response {
    use axum::http::header::{
        ACCESS_CONTROL_ALLOW_HEADERS, ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN,
        CACHE_CONTROL, CONTENT_TYPE,
    };
    let cors = [
        (ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
        (ACCESS_CONTROL_ALLOW_METHODS, "GET, OPTIONS"),
        (ACCESS_CONTROL_ALLOW_HEADERS, "mcp-protocol-version"),
    ];
    match method {
        Method::GET | Method::HEAD => {
            let (document, settled) = verifier.metadata_document().await;
            let cache = if settled {
                "public, max-age=300"
            } else {
                "no-cache"
            };
            let headers = [(CONTENT_TYPE, "application/json"), (CACHE_CONTROL, cache)];
            let document = axum::body::Bytes::copy_from_slice(document);
            (StatusCode::OK, cors, headers, document).into_response()
        }
        Method::OPTIONS => (StatusCode::NO_CONTENT, cors).into_response(),
        _ => Rejection::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "the protected resource metadata is read with GET",
        )
        .with_header("allow", "GET, OPTIONS")
        .into_response(),
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

//! The [`OAuth`] settings made ready to serve: URLs checked, the protected resource metadata
//! written once, and each request's token checked into a [`Principal`].

use std::net::SocketAddr;

use serde_json::json;
use url::Url;

use super::discovery::{IssuerMetadata, discover};
use super::fetch::Fetcher;
use super::introspection::Introspector;
use super::jwt::{Expected, Keys};
use super::oauth::OAuth;
use super::{Principal, TokenError};
use crate::rules::{SCOPE_RULE, is_scope};

/// The well-known path of protected resource metadata (RFC 9728).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Checks the access tokens of an HTTP server.
pub(crate) struct Verifier {
    /// The issuer as configured, and as tokens may write it (with or without a trailing slash).
    issuers: Vec<String>,
    issuer: Url,
    audiences: Vec<String>,
    /// The audiences a refusal names: those configured, else the resource.
    named_audiences: Vec<String>,
    required_scopes: Vec<String>,
    leeway: std::time::Duration,
    /// Where the metadata is, for the challenges, and the paths it is served at.
    metadata_url: String,
    metadata_paths: Vec<String>,
    /// The protected resource metadata, serialised once.
    document: Vec<u8>,
    method: Method,
    fetcher: Fetcher,
    /// The issuer's metadata, fetched when first needed; a failed fetch is tried again by the
    /// next request that needs it.
    issuer_metadata: tokio::sync::OnceCell<IssuerMetadata>,
}

enum Method {
    Jwt {
        keys: Keys,
        jwks_uri: Option<String>,
    },
    Introspection {
        introspector: Introspector,
        client_id: String,
        client_secret: String,
        endpoint: Option<String>,
    },
}

impl Verifier {
    /// Checks the settings: `bound` is where the server listens (the resource's URL by default),
    /// `name` names it in its metadata, `tool_scopes` are the scopes its tools ask for.
    pub(crate) fn new(
        config: OAuth,
        bound: SocketAddr,
        name: &str,
        tool_scopes: &[&str],
    ) -> Result<Verifier, String> {
        let issuer = fetchable(&config.issuer, "the issuer")?;
        let resource = match &config.resource {
            Some(resource) => fetchable(resource, "the resource")?,
            None if bound.ip().is_loopback() => {
                Url::parse(&format!("http://{bound}/mcp")).expect("an address makes a URL")
            }
            None => {
                return Err(format!(
                    "the server listens on {bound}, which other machines reach by a name or \
                     address of their own: set the resource, the URL clients reach the server \
                     by (`--oauth-resource`, or `OAuth::resource`)"
                ));
            }
        };
        if resource.fragment().is_some() {
            return Err(format!(
                "the resource `{resource}` has a fragment, which RFC 8707 forbids"
            ));
        }
        for url in config.jwks_uri.iter() {
            fetchable(url, "the JWKS URI")?;
        }
        for scope in &config.required_scopes {
            if !is_scope(scope) {
                return Err(format!("`{scope}` is not a scope: {SCOPE_RULE}"));
            }
        }
        let method = match config.introspection {
            None => Method::Jwt {
                keys: Keys::new(config.refetch_after),
                jwks_uri: config.jwks_uri,
            },
            Some(introspection) => {
                if introspection.client_id.is_empty() {
                    return Err("an introspection endpoint is given without the client to \
                                introspect as: give its id and secret too (`--oauth-client-id` \
                                and `TOOLWRIGHT_OAUTH_CLIENT_SECRET`, or `OAuth::introspect`)"
                        .to_owned());
                }
                for url in introspection.endpoint.iter() {
                    fetchable(url, "the introspection endpoint")?;
                }
                Method::Introspection {
                    introspector: Introspector::new(),
                    client_id: introspection.client_id,
                    client_secret: introspection.client_secret,
                    endpoint: introspection.endpoint,
                }
            }
        };
        // As given: clients send it back verbatim as the token request's `resource`, and the
        // authorization server copies it into `aud`.
        let resource_text = config
            .resource
            .clone()
            .unwrap_or_else(|| resource.as_str().to_owned());
        let (audiences, named_audiences) = if config.audiences.is_empty() {
            // `.../mcp` and `.../mcp/` are one resource; a client may write either.
            let bare = resource_text.trim_end_matches('/').to_owned();
            (
                vec![bare.clone(), format!("{bare}/")],
                vec![resource_text.clone()],
            )
        } else {
            (config.audiences.clone(), config.audiences)
        };
        let path = resource.path().trim_end_matches('/');
        let metadata_url = format!(
            "{}{METADATA_PATH}{path}",
            resource.origin().ascii_serialization()
        );
        // A segment that opens with `:` or `*` reads as a capture to the router: such a path
        // is served by a proxy's rewrite, if at all.
        let routable = !path.split('/').any(|s| s.starts_with([':', '*']));
        let mut metadata_paths = Vec::new();
        for extra in [
            routable.then(|| format!("{METADATA_PATH}{path}")),
            Some(format!("{METADATA_PATH}/mcp")),
            Some(METADATA_PATH.to_owned()),
        ]
        .into_iter()
        .flatten()
        {
            if !metadata_paths.contains(&extra) {
                metadata_paths.push(extra);
            }
        }
        let mut scopes: Vec<&str> = config.required_scopes.iter().map(String::as_str).collect();
        scopes.extend(tool_scopes);
        scopes.sort_unstable();
        scopes.dedup();
        let mut document = json!({
            "resource": resource_text,
            "authorization_servers": [config.issuer],
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        });
        if !scopes.is_empty() {
            document["scopes_supported"] = json!(scopes);
        }
        let issuers = vec![
            config.issuer.clone(),
            config.issuer.trim_end_matches('/').to_owned(),
            format!("{}/", config.issuer.trim_end_matches('/')),
        ];
        Ok(Verifier {
            issuers,
            issuer,
            audiences,
            named_audiences,
            required_scopes: config.required_scopes,
            leeway: config.leeway,
            metadata_url,
            metadata_paths,
            document: serde_json::to_vec(&document).expect("JSON serialises"),
            method,
            fetcher: Fetcher::new()?,
            issuer_metadata: tokio::sync::OnceCell::new(),
        })
    }

    /// The paths the protected resource metadata is served at: the one its resource URL
    /// derives, and the root one, which clients try when the other is not found.
    pub(crate) fn metadata_paths(&self) -> &[String] {
        &self.metadata_paths
    }

    /// The protected resource metadata (RFC 9728), as JSON.
    pub(crate) fn metadata_document(&self) -> &[u8] {
        &self.document
    }

    /// The scopes every request needs.
    pub(crate) fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// Checks a bearer token: whom it names, or why it is refused.
    pub(crate) async fn verify(&self, token: &str) -> Result<Principal, TokenError> {
        let expected = Expected {
            issuers: &self.issuers,
            audiences: &self.audiences,
            named_audiences: &self.named_audiences,
            leeway: self.leeway,
        };
        let claims = match &self.method {
            Method::Jwt { keys, jwks_uri } => {
                let jwks_uri = || async {
                    if let Some(uri) = jwks_uri {
                        return Ok(uri.clone());
                    }
                    let metadata = self.issuer_metadata().await?;
                    let uri = metadata.jwks_uri.clone().ok_or_else(|| {
                        format!("the metadata of {} names no `jwks_uri`", self.issuers[0])
                    })?;
                    fetchable(&uri, "the issuer's `jwks_uri`").map(|_| uri)
                };
                keys.verify(token, &expected, &self.fetcher, jwks_uri)
                    .await?
            }
            Method::Introspection {
                introspector,
                client_id,
                client_secret,
                endpoint,
            } => {
                let endpoint = match endpoint {
                    Some(endpoint) => endpoint.clone(),
                    None => self
                        .issuer_metadata()
                        .await
                        .and_then(|metadata| {
                            metadata.introspection_endpoint.clone().ok_or_else(|| {
                                format!(
                                    "the metadata of {} names no `introspection_endpoint`",
                                    self.issuers[0]
                                )
                            })
                        })
                        .and_then(|uri| {
                            fetchable(&uri, "the issuer's `introspection_endpoint`").map(|_| uri)
                        })
                        .map_err(TokenError::Unavailable)?,
                };
                let client = (client_id.as_str(), client_secret.as_str());
                introspector
                    .verify(token, &expected, &self.fetcher, &endpoint, client)
                    .await?
            }
        };
        Ok(Principal::from_claims(&self.issuers[0], claims))
    }

    async fn issuer_metadata(&self) -> Result<&IssuerMetadata, String> {
        self.issuer_metadata
            .get_or_try_init(|| discover(&self.fetcher, &self.issuer))
            .await
    }

    /// The value of `WWW-Authenticate` for a refused request: where the metadata is, the scopes
    /// the request needs (if any), and the error, if the token was there.
    pub(crate) fn challenge(&self, error: Option<(&str, &str)>, scopes: &[&str]) -> String {
        let mut challenge = format!(r#"Bearer resource_metadata="{}""#, self.metadata_url);
        if !scopes.is_empty() {
            challenge.push_str(&format!(r#", scope="{}""#, scopes.join(" ")));
        }
        if let Some((error, description)) = error {
            challenge.push_str(&format!(
                r#", error="{error}", error_description="{}""#,
                quotable(description)
            ));
        }
        challenge
    }
}

/// A URL the server may fetch from or name: `https`, or `http` on this machine only, where no
/// one else can read or change what passes.
fn fetchable(url: &str, what: &str) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|err| format!("{what} `{url}` is not a URL: {err}"))?;
    let local = matches!(parsed.host(), Some(url::Host::Domain("localhost")))
        || matches!(parsed.host(), Some(url::Host::Ipv4(ip)) if ip.is_loopback())
        || matches!(parsed.host(), Some(url::Host::Ipv6(ip)) if ip.is_loopback());
    match parsed.scheme() {
        "https" => Ok(parsed),
        "http" if local => Ok(parsed),
        "http" => Err(format!(
            "{what} `{url}` is plain `http`: tokens and keys must travel over `https` (plain \
             `http` only on this machine: localhost, 127.0.0.1, [::1])"
        )),
        scheme => Err(format!("{what} `{url}` is a `{scheme}` URL, not `https`")),
    }
}

/// Text made fit for a quoted string of a header: printable ASCII without `"` and `\`.
fn quotable(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '"' => '\'',
            ' '..='~' if c != '\\' => c,
            _ => '?',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verifier(config: OAuth, bound: &str) -> Result<Verifier, String> {
        Verifier::new(
            config,
            bound.parse().unwrap(),
            "notes",
            &["notes:write", "notes:read"],
        )
    }

    #[test]
    fn the_metadata_names_the_resource_the_issuer_and_every_scope() {
        let verifier = verifier(
            OAuth::new("https://as.example").require_scope("notes:read"),
            "127.0.0.1:8080",
        )
        .unwrap();
        let document: serde_json::Value =
            serde_json::from_slice(verifier.metadata_document()).unwrap();
        assert_eq!(
            document,
            json!({
                "resource": "http://127.0.0.1:8080/mcp",
                "authorization_servers": ["https://as.example"],
                "bearer_methods_supported": ["header"],
                "resource_name": "notes",
                "scopes_supported": ["notes:read", "notes:write"],
            })
        );
        assert_eq!(
            verifier.metadata_paths(),
            [
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
        assert_eq!(
            verifier.challenge(
                Some(("invalid_token", "the \"token\" expired")),
                &["a", "b"]
            ),
            "Bearer resource_metadata=\"http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp\", \
             scope=\"a b\", error=\"invalid_token\", error_description=\"the 'token' expired\""
        );
    }

    #[test]
    fn a_resource_behind_a_proxy_derives_its_metadata_path() {
        let verifier = verifier(
            OAuth::new("https://as.example").resource("https://tools.example.com/notes/mcp"),
            "0.0.0.0:8080",
        )
        .unwrap();
        assert_eq!(
            verifier.challenge(None, &[]),
            "Bearer resource_metadata=\"https://tools.example.com/.well-known/oauth-protected-resource/notes/mcp\""
        );
        assert_eq!(
            verifier.metadata_paths(),
            [
                "/.well-known/oauth-protected-resource/notes/mcp",
                "/.well-known/oauth-protected-resource/mcp",
                "/.well-known/oauth-protected-resource"
            ]
        );
    }

    #[test]
    fn settings_that_cannot_be_safe_are_refused_saying_what_to_do() {
        let err = |config, bound| verifier(config, bound).err().unwrap();
        assert_eq!(
            err(OAuth::new("http://as.example"), "127.0.0.1:1"),
            "the issuer `http://as.example` is plain `http`: tokens and keys must travel over \
             `https` (plain `http` only on this machine: localhost, 127.0.0.1, [::1])"
        );
        assert!(verifier(OAuth::new("http://localhost:9000"), "127.0.0.1:1").is_ok());
        assert_eq!(
            err(OAuth::new("https://as.example"), "0.0.0.0:8080"),
            "the server listens on 0.0.0.0:8080, which other machines reach by a name or address \
             of their own: set the resource, the URL clients reach the server by \
             (`--oauth-resource`, or `OAuth::resource`)"
        );
        assert_eq!(
            err(
                OAuth::new("https://as.example").require_scope("two words"),
                "127.0.0.1:1"
            ),
            "`two words` is not a scope: a scope is 1 or more printable ASCII characters other \
             than space, `\"` and `\\` (RFC 6749, section 3.3)"
        );
        assert!(
            err(
                OAuth::new("https://as.example").introspection_endpoint("https://as.example/i"),
                "127.0.0.1:1"
            )
            .starts_with("an introspection endpoint is given without the client")
        );
    }
}

//! The [`OAuth`] settings made ready to serve: URLs checked, the protected resource metadata
//! written once, and each request's token checked into a [`Principal`].

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use serde_json::{Value, json};
use url::Url;

use super::discovery::{IssuerMetadata, discover};
use super::fetch::Fetcher;
use super::introspection::Introspector;
use super::jwt::{Expected, Keys};
use super::oauth::OAuth;
use super::{Principal, TokenError};
use toolwright_rules::{SCOPE_RULE, is_scope};

/// The well-known path of protected resource metadata (RFC 9728).
const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// Checks the access tokens of an HTTP server.
///
/// The issuer identifier is one exact string (RFC 8414 section 2, RFC 9068 section 4: `iss`
/// is compared as written), and the one the authorization server's own metadata states as
/// `issuer` is the one its tokens carry. So once that metadata is fetched, its `issuer` is
/// what the server publishes in its protected resource metadata (`authorization_servers`,
/// which clients compare with the metadata they fetch), what every token's `iss` must equal,
/// and what a refusal names; the issuer configured may differ from it by a trailing slash
/// only (`https://as.example` and `https://as.example/`), since URL parsers add one to a bare
/// origin and authorization servers write either. Where the metadata is not needed (the keys
/// or the introspection endpoint given), the issuer is taken as configured, exactly.
pub(crate) struct Verifier {
    /// The issuer as configured.
    configured_issuer: String,
    /// The issuer as its metadata writes it, once fetched.
    discovered_issuer: OnceLock<String>,
    /// Whether the issuer's metadata is fetched, and so decides the issuer's form.
    discovers: bool,
    issuer: Url,
    audiences: Vec<String>,
    /// The audiences a refusal names: those configured, else the resource.
    named_audiences: Vec<String>,
    /// The resource, as the metadata names it, and its host name.
    resource: String,
    resource_host: String,
    required_scopes: Vec<String>,
    leeway: Duration,
    /// Where the metadata is, for the challenges, and the paths it is served at.
    metadata_url: String,
    metadata_paths: Vec<String>,
    /// The protected resource metadata, but for its `authorization_servers`; serialised once
    /// with the issuer as configured, and once with the issuer as its metadata writes it.
    metadata: Value,
    configured_document: Vec<u8>,
    discovered_document: OnceLock<Vec<u8>>,
    method: Verification,
    fetcher: Fetcher,
    /// The issuer's metadata, fetched when first needed; a failed fetch is tried again by a
    /// request that needs it once `refetch_after` has passed.
    issuer_metadata: tokio::sync::Mutex<Discovery>,
    refetch_after: Duration,
}

/// The issuer's metadata once found, or the last failure to find it.
#[derive(Default)]
struct Discovery {
    found: Option<Arc<IssuerMetadata>>,
    failed: Option<(Instant, String)>,
}

enum Verification {
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
        for url in config.introspection_endpoint.iter() {
            fetchable(url, "the introspection endpoint")?;
        }
        let method = match (config.introspection, config.introspection_endpoint) {
            (None, Some(_)) => {
                return Err("an introspection endpoint is given without the client to \
                            introspect as: give its id, and its secret (`--oauth-introspect` and \
                            `TOOLWRIGHT_OAUTH_CLIENT_SECRET`, or `OAuth::introspect`)"
                    .to_owned());
            }
            (None, None) => Verification::Jwt {
                keys: Keys::new(config.refetch_after),
                jwks_uri: config.jwks_uri,
            },
            (Some(introspection), endpoint) => Verification::Introspection {
                introspector: Introspector::new(),
                client_id: introspection.client_id,
                client_secret: introspection.client_secret,
                endpoint,
            },
        };
        // As given, in the metadata: clients send it back as the token request's `resource`,
        // and the authorization server copies that into `aud`.
        let resource_text = config
            .resource
            .clone()
            .unwrap_or_else(|| resource.as_str().to_owned());
        let (audiences, named_audiences) = if config.audiences.is_empty() {
            // One resource, however a client writes it: with a trailing slash or not, or as a
            // URL parser writes it back (the host in lowercase, no default port).
            let mut audiences = Vec::new();
            for form in [resource_text.as_str(), resource.as_str()] {
                let bare = form.trim_end_matches('/');
                for audience in [bare.to_owned(), format!("{bare}/")] {
                    if !audiences.contains(&audience) {
                        audiences.push(audience);
                    }
                }
            }
            (audiences, vec![resource_text.clone()])
        } else {
            (config.audiences.clone(), config.audiences)
        };
        let path = resource.path().trim_end_matches('/');
        let metadata_url = format!(
            "{}{METADATA_PATH}{path}",
            resource.origin().ascii_serialization()
        );
        // The router refuses (panics on) a path with a segment that opens with `:` or `*`, the
        // capture syntax of its former versions: such a path is left to a proxy's rewrite.
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
        let mut metadata = json!({
            "resource": resource_text,
            "bearer_methods_supported": ["header"],
            "resource_name": name,
        });
        if !scopes.is_empty() {
            metadata["scopes_supported"] = json!(scopes);
        }
        let discovers = match &method {
            Verification::Jwt { jwks_uri, .. } => jwks_uri.is_none(),
            Verification::Introspection { endpoint, .. } => endpoint.is_none(),
        };
        Ok(Verifier {
            configured_document: document(&metadata, &config.issuer),
            configured_issuer: config.issuer,
            discovered_issuer: OnceLock::new(),
            discovers,
            issuer,
            audiences,
            named_audiences,
            resource_host: resource.host_str().unwrap_or_default().to_owned(),
            resource: resource_text.clone(),
            required_scopes: config.required_scopes,
            leeway: config.leeway,
            metadata_url,
            metadata_paths,
            metadata,
            discovered_document: OnceLock::new(),
            method,
            fetcher: Fetcher::new()?,
            issuer_metadata: tokio::sync::Mutex::default(),
            refetch_after: config.refetch_after,
        })
    }

    /// The paths the protected resource metadata is served at: the one its resource URL
    /// derives, and the root one, which clients try when the other is not found.
    pub(crate) fn metadata_paths(&self) -> &[String] {
        &self.metadata_paths
    }

    /// The protected resource metadata (RFC 9728), as JSON, naming the issuer as its own
    /// metadata writes it; and whether that is settled. While the issuer's metadata cannot be
    /// fetched (asked again at most every `refetch_after`), the issuer is named as configured,
    /// not settled: clients should not keep the document.
    pub(crate) async fn metadata_document(&self) -> (&[u8], bool) {
        if !self.discovers {
            return (&self.configured_document, true);
        }
        match self.issuer_metadata().await {
            Ok(_) => (self.discovered_document(), true),
            Err(why) => {
                tracing::debug!(
                    "the protected resource metadata names the issuer as configured: {why}"
                );
                (&self.configured_document, false)
            }
        }
    }

    /// The protected resource metadata once the issuer's metadata is fetched.
    fn discovered_document(&self) -> &[u8] {
        self.discovered_document
            .get_or_init(|| document(&self.metadata, self.issuer()))
    }

    /// The scopes every request needs.
    pub(crate) fn required_scopes(&self) -> &[String] {
        &self.required_scopes
    }

    /// The issuer: as its metadata writes it once fetched, else as configured.
    pub(crate) fn issuer(&self) -> &String {
        self.discovered_issuer
            .get()
            .unwrap_or(&self.configured_issuer)
    }

    /// The resource, as the metadata names it.
    pub(crate) fn resource(&self) -> &str {
        &self.resource
    }

    /// The host name of the resource, which requests name in their `Host` header when a proxy
    /// passes them on as they came.
    pub(crate) fn resource_host(&self) -> &str {
        &self.resource_host
    }

    /// Checks a bearer token: whom it names, or why it is refused.
    pub(crate) async fn verify(&self, token: &str) -> Result<Principal, TokenError> {
        // Read before anyone is asked about it: what no authorization server issues costs the
        // server nothing, and the authorization server nothing either.
        if token.len() > MAX_TOKEN || !is_b64token(token) {
            return Err(TokenError::Invalid(format!(
                "the bearer token is malformed: a token is at most {MAX_TOKEN} of `A-Z a-z 0-9 - \
                 . _ ~ + /`, then `=` (RFC 6750)"
            )));
        }
        // The issuer's form is its metadata's: fetched before the first token is checked.
        if self.discovers && self.discovered_issuer.get().is_none() {
            self.issuer_metadata().await.map_err(|why| {
                TokenError::Unavailable(match self.method {
                    Verification::Jwt { .. } => {
                        format!("cannot fetch the issuer's signing keys: {why}")
                    }
                    Verification::Introspection { .. } => why,
                })
            })?;
        }
        let expected = Expected {
            issuer: self.issuer(),
            audiences: &self.audiences,
            named_audiences: &self.named_audiences,
            leeway: self.leeway,
        };
        let claims = match &self.method {
            Verification::Jwt { keys, jwks_uri } => {
                let jwks_uri = || async {
                    if let Some(uri) = jwks_uri {
                        return Ok(uri.clone());
                    }
                    let metadata = self.issuer_metadata().await?;
                    let uri = metadata.jwks_uri.clone().ok_or_else(|| {
                        format!("the metadata of {} names no `jwks_uri`", self.issuer())
                    })?;
                    fetchable(&uri, "the issuer's `jwks_uri`").map(|_| uri)
                };
                keys.verify(token, &expected, &self.fetcher, jwks_uri)
                    .await?
            }
            Verification::Introspection {
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
                                    self.issuer()
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
        let digest = Sha256::digest(token.as_bytes()).into();
        Ok(Principal::from_claims(self.issuer(), claims, digest))
    }

    /// The issuer's metadata, fetched once found; while it cannot be, the last failure answers
    /// until `refetch_after` has passed, so that requests do not each wait on an issuer that
    /// does not answer.
    async fn issuer_metadata(&self) -> Result<Arc<IssuerMetadata>, String> {
        let mut discovery = self.issuer_metadata.lock().await;
        if let Some(found) = &discovery.found {
            return Ok(Arc::clone(found));
        }
        if let Some((at, why)) = &discovery.failed
            && at.elapsed() < self.refetch_after
        {
            return Err(why.clone());
        }
        match discover(&self.fetcher, &self.issuer).await {
            Ok(found) => {
                if found.issuer != self.configured_issuer {
                    tracing::info!(
                        configured = self.configured_issuer,
                        "the issuer is `{}`, as its metadata writes it",
                        found.issuer
                    );
                }
                let _ = self.discovered_issuer.set(found.issuer.clone());
                let found = Arc::new(found);
                discovery.found = Some(Arc::clone(&found));
                Ok(found)
            }
            Err(why) => {
                discovery.failed = Some((Instant::now(), why.clone()));
                Err(why)
            }
        }
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

/// The protected resource metadata naming `issuer`, as JSON.
fn document(metadata: &Value, issuer: &str) -> Vec<u8> {
    let mut document = metadata.clone();
    document["authorization_servers"] = json!([issuer]);
    serde_json::to_vec(&document).expect("JSON serialises")
}

/// The longest bearer token read: JWTs of a few KiB are common, more is no token.
const MAX_TOKEN: usize = 16 * 1024;

/// Whether a bearer token is RFC 6750's `b64token`: `1*( ALPHA / DIGIT / "-" / "." / "_" / "~" /
/// "+" / "/" ) *"="`.
fn is_b64token(token: &str) -> bool {
    let body = token.trim_end_matches('=');
    !body.is_empty()
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-._~+/".contains(&b))
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

    #[tokio::test]
    async fn the_metadata_names_the_resource_the_issuer_and_every_scope() {
        // With its keys given, the issuer's metadata is not fetched: the issuer is named as
        // configured, exactly, and that is settled.
        let verifier = verifier(
            OAuth::new("https://as.example/")
                .jwks_uri("https://as.example/jwks")
                .require_scope("notes:read"),
            "127.0.0.1:8080",
        )
        .unwrap();
        let (document, settled) = verifier.metadata_document().await;
        assert!(settled);
        let document: serde_json::Value = serde_json::from_slice(document).unwrap();
        assert_eq!(
            document,
            json!({
                "resource": "http://127.0.0.1:8080/mcp",
                "authorization_servers": ["https://as.example/"],
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

    #[test]
    fn bearer_tokens_are_b64tokens() {
        assert!(is_b64token("eyJhbGciOiJSUzI1NiJ9.e30.c2ln"));
        assert!(is_b64token("a+b/c~d_e-f=="));
        for malformed in ["", "==", "a b", "a,b", "tok\u{e9}n", "a=b"] {
            assert!(!is_b64token(malformed), "{malformed}");
        }
    }
}

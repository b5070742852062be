//! What the server learns of the authorization server from its metadata (RFC 8414, or OpenID
//! Connect Discovery): where its keys are, and where it introspects tokens.

use serde_json::Value;
use url::Url;

use super::fetch::Fetcher;

/// What the server needs of the authorization server's metadata.
#[derive(Debug, Default)]
pub(crate) struct IssuerMetadata {
    /// The issuer identifier as the authorization server writes it, which its tokens' `iss`
    /// must be, exactly.
    pub(crate) issuer: String,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection_endpoint: Option<String>,
}

/// Where an issuer's metadata may be, in the order MCP clients look: RFC 8414's well-known path
/// (inserted before the issuer's path), then OpenID Connect's (inserted, then appended).
pub(crate) fn metadata_urls(issuer: &Url) -> Vec<String> {
    let origin = issuer.origin().ascii_serialization();
    let path = issuer.path().trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// Fetches the issuer's metadata from the first of its well-known URLs that has it, and checks
/// that it is the issuer's own (its `issuer` is the one configured, as RFC 8414 section 3.3
/// requires, so that a document served elsewhere cannot name other keys).
pub(crate) async fn discover(fetcher: &Fetcher, issuer: &Url) -> Result<IssuerMetadata, String> {
    let named = issuer.as_str().trim_end_matches('/');
    let mut tried = Vec::new();
    for url in metadata_urls(issuer) {
        let document = match fetcher.get_json(&url).await {
            Ok(document) => document,
            Err(why) => {
                tried.push(why);
                continue;
            }
        };
        let says = document.get("issuer").and_then(Value::as_str);
        let Some(says) = says.filter(|says| same_issuer(says, named)) else {
            return Err(format!(
                "the metadata at {url} is of issuer {}, not `{named}`",
                says.map_or_else(|| "(none)".to_owned(), |n| format!("`{n}`"))
            ));
        };
        let text = |name: &str| {
            document
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        return Ok(IssuerMetadata {
            issuer: says.to_owned(),
            jwks_uri: text("jwks_uri"),
            introspection_endpoint: text("introspection_endpoint"),
        });
    }
    Err(format!(
        "no authorization server metadata for {named}: {}",
        tried.join("; ")
    ))
}

/// Whether two issuer identifiers are the same, but for a trailing slash (which a URL parser
/// adds to a bare origin, and authorization servers write or not): the one configured may be
/// written either way, and the metadata's decides.
pub(crate) fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_urls_are_inserted_before_the_issuer_s_path_then_appended() {
        let root = Url::parse("https://as.example.com").unwrap();
        assert_eq!(
            metadata_urls(&root),
            [
                "https://as.example.com/.well-known/oauth-authorization-server",
                "https://as.example.com/.well-known/openid-configuration",
            ]
        );
        let tenant = Url::parse("https://as.example.com:8443/tenants/acme/").unwrap();
        assert_eq!(
            metadata_urls(&tenant),
            [
                "https://as.example.com:8443/.well-known/oauth-authorization-server/tenants/acme",
                "https://as.example.com:8443/.well-known/openid-configuration/tenants/acme",
                "https://as.example.com:8443/tenants/acme/.well-known/openid-configuration",
            ]
        );
    }
}

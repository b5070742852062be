//! What a request must show before its body is read: a `Host` and an `Origin` of this machine
//! (against DNS rebinding and foreign web pages), and headers
//! that say the client speaks this transport.

use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};

use axum::http::Uri;
use axum::http::header::{ACCEPT, CONTENT_TYPE, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderName, StatusCode};

use super::Http;
use super::response::Rejection;
use crate::protocol::{HANDSHAKE_VERSIONS, STATELESS_VERSIONS};

/// The header that names the protocol version after `initialize`.
pub(super) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");

/// The version a client that sends no `MCP-Protocol-Version` header is taken to speak: the
/// transport's first one, whose clients did not send the header.
const VERSION_WITHOUT_HEADER: &str = "2025-03-26";

/// The host names every server answers to, whatever address it is bound to.
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// The checks every request to the endpoint goes through, set up once for the bound address.
pub(super) struct Access {
    /// Host names allowed besides the loopback ones: lowercase, without a port.
    hosts: Vec<String>,
    /// Bound to every interface: a `Host` that is an IP address is allowed too. A DNS rebinding
    /// attack needs a name of the attacker's, so an address is no sign of one.
    any_address: bool,
    /// Origins allowed besides those whose host is allowed: `scheme://host[:port]`, lowercase.
    origins: Vec<String>,
}

impl Access {
    pub(super) fn new(bound: SocketAddr, config: &Http) -> Access {
        let mut hosts: Vec<String> = config
            .hosts
            .iter()
            .filter_map(|host| host_name(host))
            .collect();
        let ip = bound.ip();
        if !ip.is_unspecified() {
            let own = match bound {
                SocketAddr::V4(v4) => v4.ip().to_string(),
                SocketAddr::V6(v6) => format!("[{}]", v6.ip()),
            };
            if !LOOPBACK_HOSTS.contains(&own.as_str()) {
                hosts.push(own);
            }
        }
        Access {
            hosts,
            any_address: ip.is_unspecified(),
            origins: config.origins.iter().map(|o| normalize_origin(o)).collect(),
        }
    }

    /// Answers to this host name too: an OAuth resource's, which a proxy passes on.
    #[cfg(feature = "oauth")]
    pub(super) fn allow_host(&mut self, host: &str) {
        if let Some(host) = host_name(host)
            && !self.named_host(&host)
        {
            self.hosts.push(host);
        }
    }

    /// Host, then Origin, before the token (see `authorization`): a page of a foreign site
    /// learns nothing about the token from the answer. The host is named once: by exactly one `Host` header and, in a
    /// request line of absolute form (`POST http://host/mcp`), by the same authority.
    pub(super) fn check(&self, headers: &HeaderMap, uri: &Uri) -> Result<(), Rejection> {
        let mut hosts = headers.get_all(HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return Err(Rejection::new(
                StatusCode::BAD_REQUEST,
                "the request must have exactly one `Host` header, naming the server",
            ));
        };
        let host = host.to_str().ok();
        if let Some(authority) = uri.authority()
            && host.and_then(host_name) != host_name(authority.as_str())
        {
            return Err(Rejection::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "the request line names `{authority}` and the `Host` header {}: they must \
                     name the same host",
                    host.map_or_else(|| "something unreadable".to_owned(), |h| format!("`{h}`"))
                ),
            ));
        }
        if !host
            .and_then(host_name)
            .is_some_and(|h| self.host_allowed(&h))
        {
            return Err(Rejection::new(
                StatusCode::FORBIDDEN,
                format!(
                    "host {} is not allowed: this server answers to localhost, 127.0.0.1 and [::1]{}",
                    host.map_or_else(|| "(none)".to_owned(), |h| format!("`{h}`")),
                    match (self.hosts.is_empty(), self.any_address) {
                        (true, false) => String::new(),
                        (true, true) => " and any address".to_owned(),
                        (false, false) => format!(" and {}", self.hosts.join(", ")),
                        (false, true) => format!(", {} and any address", self.hosts.join(", ")),
                    },
                ),
            ));
        }
        if let Some(origin) = headers.get(ORIGIN) {
            let origin = origin.to_str().unwrap_or("");
            if !self.origin_allowed(origin) {
                return Err(Rejection::new(
                    StatusCode::FORBIDDEN,
                    format!("origin `{origin}` is not allowed"),
                ));
            }
        }
        Ok(())
    }

    fn host_allowed(&self, host: &str) -> bool {
        self.named_host(host) || (self.any_address && is_address(host))
    }

    fn named_host(&self, host: &str) -> bool {
        LOOPBACK_HOSTS.contains(&host) || self.hosts.iter().any(|h| h == host)
    }

    /// An origin is allowed when it is listed, or when its host is one this server answers to by
    /// name: a page of this machine. Listening on every interface does not let in pages of every
    /// address, which would be any site on the network.
    fn origin_allowed(&self, origin: &str) -> bool {
        let origin = normalize_origin(origin);
        if self.origins.contains(&origin) {
            return true;
        }
        let Some((scheme, authority)) = origin.split_once("://") else {
            return false;
        };
        matches!(scheme, "http" | "https")
            && !authority.contains('/')
            && host_name(authority).is_some_and(|h| self.named_host(&h))
    }
}

/// The `Accept` header must list both kinds of answer a request may get (wildcards count).
pub(super) fn check_accept(headers: &HeaderMap) -> Result<(), Rejection> {
    let ranges: Vec<String> = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(essence)
        .collect();
    let accepts = |kind: &str, family: &str| {
        ranges
            .iter()
            .any(|r| r == kind || r == family || r == "*/*")
    };
    if accepts("application/json", "application/*") && accepts("text/event-stream", "text/*") {
        Ok(())
    } else {
        Err(Rejection::new(
            StatusCode::NOT_ACCEPTABLE,
            "the `Accept` header must list `application/json` and `text/event-stream`",
        ))
    }
}

/// A GET resumes a stream of events, so its `Accept` must list them (wildcards count).
pub(super) fn check_accept_events(headers: &HeaderMap) -> Result<(), Rejection> {
    let accepts = headers
        .get_all(ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(essence)
        .any(|r| r == "text/event-stream" || r == "text/*" || r == "*/*");
    if accepts {
        Ok(())
    } else {
        Err(Rejection::new(
            StatusCode::NOT_ACCEPTABLE,
            "the `Accept` header must list `text/event-stream`",
        ))
    }
}

/// A POST body is one JSON-RPC message, so it is JSON.
pub(super) fn check_content_type(headers: &HeaderMap) -> Result<(), Rejection> {
    let kind = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(essence);
    if kind.as_deref() == Some("application/json") {
        Ok(())
    } else {
        Err(Rejection::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the body must be `Content-Type: application/json`",
        ))
    }
}

/// The protocol version the request says it speaks: one this server supports, or the version
/// that predates the header when there is none.
pub(super) fn protocol_version(headers: &HeaderMap) -> Result<&'static str, Rejection> {
    let Some(value) = headers.get(PROTOCOL_VERSION) else {
        return Ok(VERSION_WITHOUT_HEADER);
    };
    let value = value.to_str().unwrap_or("").trim();
    HANDSHAKE_VERSIONS
        .into_iter()
        .find(|v| *v == value)
        .ok_or_else(|| {
            Rejection::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "unsupported `MCP-Protocol-Version: {value}`: this endpoint speaks {} with \
                     sessions, and {} on requests that carry it in `_meta`",
                    HANDSHAKE_VERSIONS.join(", "),
                    STATELESS_VERSIONS.join(", "),
                ),
            )
        })
}

/// A media type without its parameters, lowercase.
fn essence(media_type: &str) -> String {
    media_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// The host of a `Host` header or of an origin, lowercase and without its port: `[::1]:8080` is
/// `[::1]`, `LocalHost.:80` is `localhost`. `None` when it is no host at all.
fn host_name(authority: &str) -> Option<String> {
    let authority = authority.trim().to_ascii_lowercase();
    if authority.contains(['@', '/', ' ']) {
        return None;
    }
    let (host, port) = if authority.starts_with('[') {
        let end = authority.find(']')?;
        let (host, rest) = authority.split_at(end + 1);
        match rest {
            "" => (host, None),
            _ => (host, Some(rest.strip_prefix(':')?)),
        }
    } else {
        match authority.split_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority.as_str(), None),
        }
    };
    if port.is_some_and(|p| p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit())) {
        return None;
    }
    let host = host.strip_suffix('.').unwrap_or(host);
    (!host.is_empty()).then(|| host.to_owned())
}

fn is_address(host: &str) -> bool {
    host.parse::<Ipv4Addr>().is_ok()
        || host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .is_some_and(|h| h.parse::<Ipv6Addr>().is_ok())
}

fn normalize_origin(origin: &str) -> String {
    origin.trim().trim_end_matches('/').to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;

    use super::*;

    fn bound_to(bound: &str, config: Http) -> Access {
        Access::new(bound.parse().unwrap(), &config)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    fn status(access: &Access, pairs: &[(&'static str, &str)]) -> Option<StatusCode> {
        let origin_form = Uri::from_static("/mcp");
        access
            .check(&headers(pairs), &origin_form)
            .err()
            .map(|r| r.status)
    }

    #[test]
    fn host_names_lose_their_port_and_case() {
        assert_eq!(host_name("LocalHost:8080").as_deref(), Some("localhost"));
        assert_eq!(host_name("localhost.").as_deref(), Some("localhost"));
        assert_eq!(host_name("[::1]:80").as_deref(), Some("[::1]"));
        assert_eq!(host_name("[::1]").as_deref(), Some("[::1]"));
        assert_eq!(host_name("127.0.0.1").as_deref(), Some("127.0.0.1"));
        for bad in [
            "",
            ":80",
            "[::1",
            "[::1]x",
            "a:b",
            "a:",
            "user@localhost",
            "a/b",
        ] {
            assert_eq!(host_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn loopback_hosts_pass_and_others_are_forbidden() {
        let access = bound_to("127.0.0.1:8080", Http::default());
        for host in ["localhost", "localhost:1", "127.0.0.1:8080", "[::1]:9"] {
            assert_eq!(status(&access, &[("host", host)]), None, "{host}");
        }
        for host in [
            "evil.example.com",
            "evil.example.com:8080",
            "10.0.0.1",
            "localhost.evil",
        ] {
            assert_eq!(
                status(&access, &[("host", host)]),
                Some(StatusCode::FORBIDDEN),
                "{host}"
            );
        }
        assert_eq!(status(&access, &[]), Some(StatusCode::BAD_REQUEST));
    }

    #[test]
    fn the_host_is_named_once() {
        let access = bound_to("127.0.0.1:8080", Http::default());
        // A second `Host` header, whatever it says, is refused before either is looked at.
        for second in ["evil.example.com", "localhost"] {
            assert_eq!(
                status(&access, &[("host", "localhost"), ("host", second)]),
                Some(StatusCode::BAD_REQUEST),
                "{second}"
            );
        }
        let absolute = |target: &'static str, host: &str| {
            access
                .check(&headers(&[("host", host)]), &Uri::from_static(target))
                .err()
                .map(|r| (r.status, r.message))
        };
        assert_eq!(
            absolute("http://localhost:8080/mcp", "localhost:8080"),
            None
        );
        assert_eq!(
            absolute("http://evil.example.com/mcp", "localhost"),
            Some((
                StatusCode::BAD_REQUEST,
                "the request line names `evil.example.com` and the `Host` header `localhost`: \
                 they must name the same host"
                    .to_owned()
            ))
        );
    }

    #[test]
    fn the_bound_address_and_listed_hosts_pass() {
        let config = Http {
            hosts: vec!["Notes.Example:443".into()],
            ..Http::default()
        };
        let access = bound_to("192.168.1.5:8080", config.clone());
        assert_eq!(status(&access, &[("host", "192.168.1.5:8080")]), None);
        assert_eq!(status(&access, &[("host", "notes.example")]), None);
        assert_eq!(
            status(&access, &[("host", "192.168.1.6")]),
            Some(StatusCode::FORBIDDEN)
        );
        // On every interface, any address passes but a name still has to be listed.
        let access = bound_to("0.0.0.0:8080", config);
        assert_eq!(status(&access, &[("host", "192.168.1.6:8080")]), None);
        assert_eq!(status(&access, &[("host", "[fe80::1]:8080")]), None);
        assert_eq!(
            status(&access, &[("host", "evil.example.com")]),
            Some(StatusCode::FORBIDDEN)
        );
    }

    #[test]
    fn origins_of_this_machine_or_listed_pass() {
        let config = Http {
            origins: vec!["https://App.Example/".into()],
            ..Http::default()
        };
        let access = bound_to("0.0.0.0:8080", config);
        let with_origin = |origin| status(&access, &[("host", "localhost"), ("origin", origin)]);
        for origin in [
            "http://localhost:6274",
            "https://127.0.0.1",
            "http://[::1]:3000",
            "https://app.example",
        ] {
            assert_eq!(with_origin(origin), None, "{origin}");
        }
        for origin in [
            "http://evil.example.com",
            "null",
            "http://192.168.1.7",
            "file://localhost",
            "https://app.example:8443",
        ] {
            assert_eq!(with_origin(origin), Some(StatusCode::FORBIDDEN), "{origin}");
        }
    }

    #[test]
    fn accept_needs_both_kinds() {
        let ok = |value: &str| check_accept(&headers(&[("accept", value)])).is_ok();
        assert!(ok("application/json, text/event-stream"));
        assert!(ok("text/event-stream;q=0.9, Application/JSON"));
        assert!(ok("*/*"));
        assert!(ok("application/*, text/*"));
        assert!(!ok("application/json"));
        assert!(!ok("text/event-stream"));
        assert!(check_accept(&HeaderMap::new()).is_err());
        assert!(
            check_accept(&headers(&[
                ("accept", "application/json"),
                ("accept", "text/event-stream")
            ]))
            .is_ok()
        );
    }

    #[test]
    fn protocol_versions_are_checked() {
        let version = |value| protocol_version(&headers(&[("mcp-protocol-version", value)]));
        assert_eq!(version("2025-11-25").unwrap(), "2025-11-25");
        assert_eq!(version("2024-11-05").unwrap(), "2024-11-05");
        assert_eq!(protocol_version(&HeaderMap::new()).unwrap(), "2025-03-26");
        for bad in ["invalid-protocol-version", "2000-01-01", "2099-01-01", ""] {
            assert_eq!(version(bad).unwrap_err().status, StatusCode::BAD_REQUEST);
        }
    }
}

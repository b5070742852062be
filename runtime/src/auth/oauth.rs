//! How the server checks access tokens, as its author sets it: [`OAuth`].

use std::fmt;
use std::time::Duration;

/// The leeway on a token's `exp` and `nbf` by default, for clocks a little apart.
pub(crate) const DEFAULT_LEEWAY: Duration = Duration::from_secs(30);

/// The least time between two fetches of the issuer's keys that tokens cause, by default.
pub(crate) const DEFAULT_REFETCH_AFTER: Duration = Duration::from_secs(5);

/// The server as an OAuth 2.1 resource server, as the MCP authorization specification makes a
/// server reached over HTTP: every request carries an access token that an authorization server
/// issued for this server, and the server checks it. Given to
/// [`Http::oauth`](crate::http::Http::oauth); over stdio, which has no tokens, it does nothing.
///
/// A token is checked as a JWT by default (RFC 9068): signed with a key the issuer publishes
/// (its `jwks_uri`, found from its metadata, RFC 8414, or given with
/// [`jwks_uri`](OAuth::jwks_uri)) by an asymmetric algorithm (RS, PS, ES or EdDSA; never `none`
/// or a shared secret), issued by [the issuer](OAuth::new) (`iss`), for this server (`aud`
/// holds [the resource](OAuth::resource), RFC 8707), unexpired and already valid (`exp`, `nbf`,
/// with 30 seconds of [leeway](OAuth::leeway)), and of no other kind than an access token
/// (`typ`, when given, `at+jwt` or `JWT`). The keys are fetched once and kept, and fetched
/// again when they are 10 minutes old, so that a key the issuer withdrew stops being taken. A
/// token signed with a key the server does not know makes it fetch them again at once, unless
/// it did so in the last 5 seconds ([`refetch_keys_after`](OAuth::refetch_keys_after)): then
/// the token waits for those seconds to pass and is checked against the keys fetched then, one
/// fetch for every token waiting. So the issuer's key rotation needs no restart and refuses no
/// token signed with its new key, and tokens with made-up key ids cost the issuer one fetch
/// every 5 seconds at most. An opaque token is checked by introspection (RFC 7662) instead,
/// with [`introspect`](OAuth::introspect).
///
/// The issuer is one exact string, as RFC 8414 and RFC 9068 have it: the one the authorization
/// server's metadata states as its `issuer`. Given here with or without a trailing slash, it
/// is published in the protected resource metadata, required of every token's `iss` and named
/// in refusals as that metadata writes it, once fetched; without the metadata (the keys given
/// with [`jwks_uri`](OAuth::jwks_uri), or the [introspection
/// endpoint](OAuth::introspection_endpoint)), exactly as given here.
///
/// The server publishes its protected resource metadata (RFC 9728) at the well-known path of
/// its resource URL (`/.well-known/oauth-protected-resource/mcp`, and at the root path too),
/// naming the issuer and the scopes its tools ask for. A request without a valid token is
/// answered `401` with `WWW-Authenticate: Bearer resource_metadata="..."`, from which an MCP
/// client finds the authorization server and gets a token; a request whose token lacks a
/// [required scope](OAuth::require_scope) or a scope of the tool it calls
/// (`#[mcp_tool(scopes = [...])]`) is answered `403` with `error="insufficient_scope"` and the
/// scopes it needs. A tool reads who called it with
/// [`Context::principal`](crate::Context::principal).
///
/// ```no_run
/// use toolwright::auth::OAuth;
/// use toolwright::http::Http;
///
/// fn main() -> std::process::ExitCode {
///     let oauth = OAuth::new("https://auth.example.com")
///         .resource("https://notes.example.com/mcp")
///         .require_scope("notes");
///     toolwright::server!().run_http("0.0.0.0:8080", Http::new().oauth(oauth))
/// }
/// ```
///
/// The same from the command line of any server binary: `--oauth-issuer`, `--oauth-resource`,
/// `--oauth-scope` and the others (`--help` lists them), or the `TOOLWRIGHT_OAUTH_*`
/// environment variables.
#[derive(Clone)]
pub struct OAuth {
    pub(crate) issuer: String,
    pub(crate) resource: Option<String>,
    pub(crate) audiences: Vec<String>,
    pub(crate) jwks_uri: Option<String>,
    pub(crate) introspection: Option<Introspection>,
    pub(crate) introspection_endpoint: Option<String>,
    pub(crate) required_scopes: Vec<String>,
    pub(crate) leeway: Duration,
    pub(crate) refetch_after: Duration,
}

/// The client the server authenticates as to introspect opaque tokens.
#[derive(Clone)]
pub(crate) struct Introspection {
    pub(crate) client_id: String,
    pub(crate) client_secret: String,
}

impl OAuth {
    /// Tokens issued by this authorization server (its issuer identifier, an `https` URL;
    /// `http` only on this machine: `localhost`, `127.0.0.1`, `[::1]`), checked as JWTs.
    pub fn new(issuer: impl Into<String>) -> OAuth {
        OAuth {
            issuer: issuer.into(),
            resource: None,
            audiences: Vec::new(),
            jwks_uri: None,
            introspection: None,
            introspection_endpoint: None,
            required_scopes: Vec::new(),
            leeway: DEFAULT_LEEWAY,
            refetch_after: DEFAULT_REFETCH_AFTER,
        }
    }

    /// This server's canonical URL, as clients reach it (`https://notes.example.com/mcp`): the
    /// resource its tokens must be issued for, and what its metadata names. By default the URL
    /// it listens at (`http://127.0.0.1:PORT/mcp`), which serves clients on this machine that
    /// connect by that URL (`localhost` is another origin to a client's resource check); a
    /// server that listens on another address, or behind a proxy, must say. Requests naming the
    /// resource's host (its `Host` header) are answered, as those naming this machine are.
    #[must_use]
    pub fn resource(mut self, url: impl Into<String>) -> OAuth {
        self.resource = Some(url.into());
        self
    }

    /// Takes tokens whose audience (`aud`) holds this value instead of the resource URL, for an
    /// authorization server that names resources otherwise (`api://notes`). Repeatable: any of
    /// the audiences given will do.
    #[must_use]
    pub fn audience(mut self, audience: impl Into<String>) -> OAuth {
        self.audiences.push(audience.into());
        self
    }

    /// Where the issuer publishes its signing keys (a JWK Set), when its metadata does not say
    /// or should not be fetched.
    #[must_use]
    pub fn jwks_uri(mut self, url: impl Into<String>) -> OAuth {
        self.jwks_uri = Some(url.into());
        self
    }

    /// Checks tokens by introspection (RFC 7662) instead of as JWTs: for opaque tokens, or to
    /// see a revoked token refused at once. The server authenticates to the introspection
    /// endpoint (from the issuer's metadata, or
    /// [`introspection_endpoint`](OAuth::introspection_endpoint)) as this client, with HTTP
    /// Basic. An answer is kept for 30 seconds at most (and never past the token's `exp`), so a
    /// revoked token may be taken that long.
    #[must_use]
    pub fn introspect(
        mut self,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> OAuth {
        self.introspection = Some(Introspection {
            client_id: client_id.into(),
            client_secret: client_secret.into(),
        });
        self
    }

    /// Where to introspect tokens, when the issuer's metadata does not say; with
    /// [`introspect`](OAuth::introspect) only.
    #[must_use]
    pub fn introspection_endpoint(mut self, url: impl Into<String>) -> OAuth {
        self.introspection_endpoint = Some(url.into());
        self
    }

    /// A scope every request needs, whatever it asks for; repeatable. A token without it is
    /// answered `403` with `error="insufficient_scope"`, and the `401` that sends a client for
    /// a token names it, so the client asks for it.
    #[must_use]
    pub fn require_scope(mut self, scope: impl Into<String>) -> OAuth {
        self.required_scopes.push(scope.into());
        self
    }

    /// The least time between two fetches of the issuer's signing keys that tokens cause (5
    /// seconds by default): a token signed with a key the server does not know (after the
    /// issuer rotated its keys) makes the server fetch them again at once, or, when it did so
    /// more recently than this, once this time has passed since; the token waits for that
    /// fetch, as do the others that come meanwhile, and is refused only if the keys fetched
    /// then do not hold its key. So tokens with made-up key ids cost the issuer one fetch per
    /// interval, and each waits that long at most. A failed fetch is not tried again sooner
    /// either: without keys, tokens are answered with its failure (`503`) meanwhile; the same
    /// bound holds for the issuer's metadata. Keys are fetched again when they are 10 minutes
    /// old in any case, so that a withdrawn key stops being taken once the issuer answers.
    #[must_use]
    pub fn refetch_keys_after(mut self, interval: Duration) -> OAuth {
        self.refetch_after = interval;
        self
    }

    /// How far apart the server's and the issuer's clocks may be: a token this much past its
    /// `exp`, or this much before its `nbf`, is still taken. 30 seconds by default.
    #[must_use]
    pub fn leeway(mut self, leeway: Duration) -> OAuth {
        self.leeway = leeway;
        self
    }
}

/// The introspection secret is left out.
impl fmt::Debug for OAuth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuth")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("audiences", &self.audiences)
            .field("jwks_uri", &self.jwks_uri)
            .field(
                "introspection",
                &self.introspection.as_ref().map(|i| &i.client_id),
            )
            .field("introspection_endpoint", &self.introspection_endpoint)
            .field("required_scopes", &self.required_scopes)
            .field("leeway", &self.leeway)
            .field("refetch_after", &self.refetch_after)
            .finish()
    }
}

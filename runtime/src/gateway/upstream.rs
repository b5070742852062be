//! A server to mount: where it is, and how it is spoken to.

use std::ffi::OsString;
use std::time::Duration;

use crate::client::{Endpoint, Versions};

/// How long a mounted tool's call may run unless the upstream says otherwise.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// A server to mount: a command the gateway starts, or a URL it reaches, with how long its
/// calls may run and which protocol era to speak to it.
///
/// ```
/// use std::time::Duration;
/// use toolwright::client::Endpoint;
/// use toolwright::gateway::Upstream;
///
/// let files = Upstream::command("npx", ["-y", "@modelcontextprotocol/server-filesystem", "/srv"]);
/// let search = Upstream::new(Endpoint::url("https://search.example.com/mcp").bearer("a-token"))
///     .timeout(Some(Duration::from_secs(10)));
/// # let _ = (files, search);
/// ```
#[derive(Clone, Debug)]
pub struct Upstream {
    pub(crate) endpoint: Endpoint,
    pub(crate) timeout: Option<Duration>,
    pub(crate) versions: Versions,
    /// Only these of its tools, when given.
    pub(crate) only: Option<Vec<String>>,
    /// None of these.
    pub(crate) hidden: Vec<String>,
    /// What becomes of a tool the lock does not know.
    pub(crate) new_tools: NewTools,
    /// The OAuth scopes each of its tools needs.
    pub(crate) scopes: Vec<String>,
}

/// What a gateway with a [`Lock`](super::Lock) does with a tool a mounted server lists that the
/// lock does not pin: one added since it was written, or every tool of a server mounted since.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum NewTools {
    /// Held back, as a changed tool is, until a person approves it.
    #[default]
    Hold,
    /// Served at once (and pinned at the next approval).
    Admit,
}

impl Upstream {
    /// The server at `endpoint`, its calls limited to 60 s each, its era settled as the
    /// client settles it ([`Versions::Auto`]).
    pub fn new(endpoint: Endpoint) -> Upstream {
        Upstream {
            endpoint,
            timeout: Some(DEFAULT_TIMEOUT),
            versions: Versions::Auto,
            only: None,
            hidden: Vec::new(),
            new_tools: NewTools::Hold,
            scopes: Vec::new(),
        }
    }

    /// A server the gateway starts, `program` with `args`, spoken to on stdio.
    pub fn command<I, S>(program: impl Into<OsString>, args: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Upstream::new(Endpoint::command(program, args))
    }

    /// A server at `url`, spoken to over Streamable HTTP.
    pub fn url(url: impl Into<String>) -> Upstream {
        Upstream::new(Endpoint::url(url))
    }

    /// How long each call of its tools may run (60 s by default); `None`: as long as the
    /// server's own limit allows ([`Server::call_timeout`](crate::Server::call_timeout)).
    pub fn timeout(mut self, limit: Option<Duration>) -> Upstream {
        self.timeout = limit;
        self
    }

    /// Which protocol era to speak to it ([`Versions::Auto`] by default).
    pub fn versions(mut self, versions: Versions) -> Upstream {
        self.versions = versions;
        self
    }
}

impl Upstream {
    /// Serves only these of its tools, by their names on the server. A name it does not list
    /// is warned of as it is mounted.
    pub fn only<I, S>(mut self, tools: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.only = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    /// Serves all its tools but these, by their names on the server.
    pub fn hide<I, S>(mut self, tools: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.hidden.extend(tools.into_iter().map(Into::into));
        self
    }

    /// What becomes of a tool the lock does not pin ([`NewTools::Hold`] by default).
    pub fn new_tools(mut self, new_tools: NewTools) -> Upstream {
        self.new_tools = new_tools;
        self
    }

    /// The OAuth scopes a caller's access token must grant to call any of its tools, as
    /// `#[mcp_tool(scopes = [...])]` asks them of a tool of the server's own: over HTTP with
    /// OAuth, a token without one is refused `403` naming it.
    pub fn scopes<I, S>(mut self, scopes: I) -> Upstream
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// Whether it serves its tool `name`.
    pub(crate) fn serves(&self, name: &str) -> bool {
        self.only
            .as_ref()
            .is_none_or(|only| only.iter().any(|n| n == name))
            && !self.hidden.iter().any(|n| n == name)
    }

    /// The tools named in `only` and `hide` that the server does not list.
    pub(crate) fn unknown<'a>(&'a self, listed: &[&str]) -> Vec<&'a str> {
        self.only
            .iter()
            .flatten()
            .chain(&self.hidden)
            .map(String::as_str)
            .filter(|name| !listed.contains(name))
            .collect()
    }
}

impl From<Endpoint> for Upstream {
    fn from(endpoint: Endpoint) -> Upstream {
        Upstream::new(endpoint)
    }
}

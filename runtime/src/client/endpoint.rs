//! Where a server is: a command the client starts and speaks to on its standard input and
//! output, or a URL it speaks Streamable HTTP to.

use std::ffi::OsString;
use std::path::PathBuf;

/// A server to connect to: a command to start (stdio), or a URL (Streamable HTTP).
///
/// ```
/// use toolwright::client::Endpoint;
///
/// let time = Endpoint::command("uvx", ["mcp-server-time"]).env("TZ", "UTC");
/// let notes = Endpoint::url("https://notes.example.com/mcp").bearer("a-token");
/// # let _ = (time, notes);
/// ```
#[derive(Clone, Debug)]
pub struct Endpoint {
    pub(crate) kind: Kind,
}

#[derive(Clone, Debug)]
pub(crate) enum Kind {
    Command(Command),
    Url(Url),
}

/// A server started as a child process.
#[derive(Clone, Debug)]
pub(crate) struct Command {
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) dir: Option<PathBuf>,
}

/// A server spoken to over Streamable HTTP.
#[derive(Clone, Debug)]
pub(crate) struct Url {
    pub(crate) url: String,
    pub(crate) headers: Vec<(String, String)>,
}

impl Endpoint {
    /// A server the client starts, `program` with `args`, and speaks to over its standard input
    /// and output. It inherits the client's environment, with [`env`](Endpoint::env) added;
    /// its standard error is logged through `tracing` (target `toolwright::client`), a line
    /// an event, at level INFO.
    pub fn command<I, S>(program: impl Into<OsString>, args: I) -> Endpoint
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        Endpoint {
            kind: Kind::Command(Command {
                program: program.into(),
                args: args.into_iter().map(Into::into).collect(),
                env: Vec::new(),
                dir: None,
            }),
        }
    }

    /// A server at `url`, spoken to over Streamable HTTP.
    pub fn url(url: impl Into<String>) -> Endpoint {
        Endpoint {
            kind: Kind::Url(Url {
                url: url.into(),
                headers: Vec::new(),
            }),
        }
    }

    /// Sets a variable in a command's environment. Ignored for a URL.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Endpoint {
        if let Kind::Command(command) = &mut self.kind {
            command.env.push((key.into(), value.into()));
        }
        self
    }

    /// Starts a command in `dir`. Ignored for a URL.
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> Endpoint {
        if let Kind::Command(command) = &mut self.kind {
            command.dir = Some(dir.into());
        }
        self
    }

    /// Sends a header with every HTTP request. Ignored for a command.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Endpoint {
        if let Kind::Url(url) = &mut self.kind {
            url.headers.push((name.into(), value.into()));
        }
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request. Ignored for a command.
    pub fn bearer(self, token: impl AsRef<str>) -> Endpoint {
        let value = format!("Bearer {}", token.as_ref());
        self.header("authorization", value)
    }
}

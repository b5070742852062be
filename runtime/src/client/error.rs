//! What can go wrong talking to a server, each case naming the server.

use std::time::Duration;

use crate::answers::RpcError;

/// A request that did not get its answer. Every variant names the server, as the client was
/// told to call it ([`Builder::name`](super::Builder::name)), so that a message read among
/// many servers' says whose it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The server answered with a JSON-RPC error.
    #[error("`{server}` refused `{method}`: {error}")]
    Rpc {
        /// The server's name.
        server: String,
        /// The method refused.
        method: String,
        /// What the server said.
        #[source]
        error: RpcError,
    },
    /// The server could not be started or reached.
    #[error("`{server}` could not be reached: {reason}")]
    Connect {
        /// The server's name.
        server: String,
        /// Why, in words.
        reason: String,
    },
    /// The connection ended before the answer came: the process exited, or the HTTP
    /// exchange broke off.
    #[error("`{server}` closed the connection before answering `{method}`: {reason}")]
    Closed {
        /// The server's name.
        server: String,
        /// The method left unanswered.
        method: String,
        /// How the connection ended.
        reason: String,
    },
    /// No answer within the request's time limit. The request was cancelled.
    #[error("`{server}` did not answer `{method}` within {}", humantime::format_duration(*.limit))]
    Timeout {
        /// The server's name.
        server: String,
        /// The method.
        method: String,
        /// The time limit.
        limit: Duration,
    },
    /// The server broke the protocol: an answer that is not what the method returns, a
    /// version the client does not speak, an HTTP status no MCP server sends.
    #[error("`{server}` broke the protocol answering `{method}`: {reason}")]
    Protocol {
        /// The server's name.
        server: String,
        /// The method.
        method: String,
        /// What was wrong, in words.
        reason: String,
    },
}

impl Error {
    /// The JSON-RPC error the server answered with, if that is what this is.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            Error::Rpc { error, .. } => Some(error),
            _ => None,
        }
    }
}

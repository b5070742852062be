//! What carries a connection's messages, as the client's side of it sees: each transport sends
//! what it is given and hands what the server sends to the peer, as [`Inbound`]s.

use tokio::sync::mpsc;

use futures_util::future::BoxFuture;

/// A message for the server, with what a transport must know of it without reading it again.
#[derive(Debug)]
pub(crate) struct Outgoing {
    /// The message, serialised.
    pub(crate) bytes: Vec<u8>,
    pub(crate) kind: OutgoingKind,
}

#[derive(Debug)]
pub(crate) enum OutgoingKind {
    /// A request of ours, awaited under `id`: over HTTP, its answer comes on the response.
    Request {
        id: i64,
        method: String,
        /// The tool, prompt or resource it names (2026-07-28's `Mcp-Name` header).
        name: Option<String>,
    },
    /// A notification.
    Notification { method: String },
    /// An answer to the server's request.
    Response,
}

/// What a transport hands to the peer.
#[derive(Debug)]
pub(crate) enum Inbound {
    /// A message from the server; over HTTP, `related` is the request of ours on whose
    /// response it came.
    Message {
        bytes: Vec<u8>,
        related: Option<i64>,
    },
    /// The request `id` cannot be answered: its HTTP exchange failed.
    Failed { id: i64, reason: Failure },
    /// The connection is over: the process exited, or the client closed it.
    Ended(String),
}

/// How a request's exchange failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The exchange broke off.
    Closed(String),
    /// The server answered in a way no MCP server does.
    Protocol(String),
}

/// The sending half of a transport.
pub(crate) trait Link: Send + Sync + 'static {
    /// Sends `message`; `Err` says why it could not be.
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), String>>;

    /// Stops waiting for the answer to request `id`, which is being cancelled: over HTTP in
    /// 2026-07-28, where closing its stream is what cancels it.
    fn abandon(&self, id: i64);

    /// The protocol version settled on, and whether it is of the stateless era: what an HTTP
    /// transport names in its headers from now on.
    fn settled(&self, version: &'static str, stateless: bool);

    /// Ends the connection: the process is stopped, the HTTP session deleted.
    fn close(&self) -> BoxFuture<'_, ()>;
}

/// Where a transport's tasks put what they receive.
pub(crate) type Inbox = mpsc::UnboundedSender<Inbound>;

//! The server as a transport sees it, and all a transport knows of it: one parsed message of a
//! session in, what to send out. Transports frame bytes and manage connections; what a message
//! means is the [`Service`]'s business.

use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;

use super::session::Session;
use crate::handler::BoxFuture;
use crate::protocol::jsonrpc::{Incoming, SharedResult};
#[cfg(feature = "http")]
use crate::registry::Mirrored;

/// Handles the messages of a connection's [`Session`]. The dispatcher is the one implementation;
/// transports hold it as `Arc<dyn Service>`.
pub(crate) trait Service: Send + Sync + 'static {
    /// Handles one message from the client; what a call sends while it runs goes to `sink`.
    fn handle(&self, session: &Arc<Session>, message: Incoming, sink: &Sink) -> Step;

    /// The arguments of tool `name` that a client of protocol 2026-07-28 mirrors in HTTP
    /// headers (`Mcp-Param-*`), for the transport to check against the body; none for a tool
    /// the server does not serve.
    #[cfg(feature = "http")]
    fn mirrored(&self, name: &str) -> &[Mirrored];

    /// The transport is stopping: the streams that wait for changes (`subscriptions/listen`)
    /// end, with their answer.
    fn stop(&self);
}

/// Where the messages a call sends while it runs (progress, log messages, requests to the
/// client) go: the connection's writer on stdio, the request's own stream over HTTP. An empty
/// message is none: it asks the transport to end the call's event stream there
/// ([`Context::close_sse_stream`](crate::Context::close_sse_stream)).
pub(crate) type Sink = UnboundedSender<Vec<u8>>;

/// What to do with one message.
pub(crate) enum Step {
    /// Send this now.
    Reply(Vec<u8>),
    /// Send this now: a response around bytes shared with other responses (the tool list).
    Shared(SharedResult),
    /// Nothing to send (a notification, a response to a request of ours).
    Nothing,
    /// A tool call: run it alongside other messages; it yields its response, or nothing when
    /// the client cancelled it.
    Call(BoxFuture<Option<Vec<u8>>>),
    /// A stream that only waits for changes to tell (`subscriptions/listen`): run it as a call,
    /// but outside the ceiling on calls under way, which it would hold for as long as it is
    /// open.
    Stream(BoxFuture<Option<Vec<u8>>>),
}

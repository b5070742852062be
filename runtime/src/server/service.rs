//! The server as a transport sees it, and all a transport knows of it: one parsed message of a
//! session in, what to send out. Transports frame bytes and manage connections; what a message
//! means is the [`Service`]'s business.

use std::sync::Arc;

#[cfg(feature = "http")]
use serde_json::Value;

use super::session::Session;
use crate::auth::Principal;
use crate::handler::BoxFuture;
use crate::protocol::jsonrpc::{Incoming, SharedResult};
#[cfg(feature = "http")]
use crate::registry::Mirrored;
use crate::sink::Answer;
pub(crate) use crate::sink::Sink;

/// Handles the messages of a connection's [`Session`]. The dispatcher is the one implementation;
/// transports hold it as `Arc<dyn Service>`.
pub(crate) trait Service: Send + Sync + 'static {
    /// Handles one message from the client; what a call sends while it runs goes to `sink`:
    /// the connection's writer on stdio, the request's own stream over HTTP.
    fn handle(&self, session: &Arc<Session>, message: Incoming, sink: &Sink) -> Step {
        self.handle_as(session, message, sink, None)
    }

    /// Handles one message that `principal` sent, as its access token says: what a tool,
    /// prompt or resource it runs sees in its context.
    fn handle_as(
        &self,
        session: &Arc<Session>,
        message: Incoming,
        sink: &Sink,
        principal: Option<Arc<Principal>>,
    ) -> Step;

    /// The scopes a request needs besides those every request needs, and the tool that needs
    /// them: a `tools/call`'s, of the tool it runs (the tool `call_tool` names, in the
    /// progressive catalog). `None` for a tool without scopes, or one the server does not serve,
    /// which is answered as unknown.
    #[cfg(feature = "http")]
    fn scopes(&self, method: &str, params: &Value) -> Option<(String, &'static [&'static str])>;

    /// Every scope a tool asks for, for the server's metadata.
    #[cfg(feature = "oauth")]
    fn tool_scopes(&self) -> Vec<&'static str>;

    /// The arguments of tool `name` that a client of protocol 2026-07-28 mirrors in HTTP
    /// headers (`Mcp-Param-*`), for the transport to check against the body; none for a tool
    /// the server does not serve.
    #[cfg(feature = "http")]
    fn mirrored(&self, name: &str) -> &[Mirrored];

    /// The transport is stopping: the streams that wait for changes (`subscriptions/listen`)
    /// end, with their answer.
    fn stop(&self);
}

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
    Call(BoxFuture<Option<Answer>>),
    /// A stream that only waits for changes to tell (`subscriptions/listen`): run it as a call,
    /// but outside the ceiling on calls under way, which it would hold for as long as it is
    /// open.
    Stream(BoxFuture<Option<Answer>>),
}

//! A server started, as a transport sees it: one parsed message of a session in, the [`Step`]
//! to take out. Transports frame bytes and manage connections; what a message means is the
//! dispatcher's business, which they never see.

use std::fmt;
use std::sync::Arc;

#[cfg(feature = "http")]
use serde_json::Value;

use super::dispatch::Dispatcher;
use super::limits::Limits;
use super::session::Session;
use super::step::Step;
use crate::context::Who;
use crate::protocol::jsonrpc::Incoming;
#[cfg(feature = "http")]
use crate::registry::Mirrored;
use crate::sink::Sink;

/// A [`Server`](crate::Server) started by [`Server::start`](crate::Server::start): its state
/// built, its tools gathered and checked, its unchanging answers serialised. A transport serves
/// it: [`Stdio::serve`](crate::stdio::Stdio::serve), or with the `http` feature
/// `http::Http::bind`. Cloning it is cheap, and every clone is the same server.
#[derive(Clone)]
pub struct Started {
    dispatcher: Arc<Dispatcher>,
    limits: Limits,
}

impl fmt::Debug for Started {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Started")
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Started {
    pub(super) fn new(dispatcher: Dispatcher, limits: Limits) -> Started {
        Started {
            dispatcher: Arc::new(dispatcher),
            limits,
        }
    }

    /// The limits every transport applies.
    pub(crate) fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Handles one message from the client; what a call sends while it runs goes to `sink`:
    /// the connection's writer on stdio, the request's own stream over HTTP.
    pub(crate) fn handle(&self, session: &Arc<Session>, message: Incoming, sink: &Sink) -> Step {
        self.dispatcher
            .handle(session, message, sink, Who::default())
    }

    /// Handles one message that `who` sent: the principal its access token names, the address
    /// it came from, as a tool, prompt or resource it runs sees them in its context.
    pub(crate) fn handle_as(
        &self,
        session: &Arc<Session>,
        message: Incoming,
        sink: &Sink,
        who: Who,
    ) -> Step {
        self.dispatcher.handle(session, message, sink, who)
    }

    /// The name the server introduces itself with.
    #[cfg(feature = "oauth")]
    pub(crate) fn name(&self) -> &str {
        self.dispatcher.name()
    }

    /// The scopes a request needs besides those every request needs, and the tool that needs
    /// them: a `tools/call`'s, of the tool it runs (the tool `call_tool` names, in the
    /// progressive catalog). `None` for a tool without scopes, or one the server does not serve,
    /// which is answered as unknown.
    #[cfg(feature = "http")]
    pub(crate) fn scopes(
        &self,
        method: &str,
        params: &Value,
    ) -> Option<(String, &'static [&'static str])> {
        self.dispatcher.scopes(method, params)
    }

    /// Every scope a tool asks for, for the server's metadata.
    #[cfg(feature = "oauth")]
    pub(crate) fn tool_scopes(&self) -> Vec<&'static str> {
        self.dispatcher.tool_scopes()
    }

    /// The arguments of tool `name` that a client of protocol 2026-07-28 mirrors in HTTP
    /// headers (`Mcp-Param-*`), for the transport to check against the body; none for a tool
    /// the server does not serve.
    #[cfg(feature = "http")]
    pub(crate) fn mirrored(&self, name: &str) -> &[Mirrored] {
        self.dispatcher.mirrored(name)
    }

    /// The transport is stopping: the streams that wait for changes (`subscriptions/listen`)
    /// end, with their answer.
    pub(crate) fn stop(&self) {
        self.dispatcher.stop();
    }
}

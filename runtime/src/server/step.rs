//! What dispatch says to do with one message, for the transport that carries it: send a reply
//! now (its kind readable without parsing it), nothing, or run a call alongside other messages.

use crate::handler::BoxFuture;
use crate::protocol::jsonrpc::Reply;
use crate::sink::Answer;

/// What to do with one message.
pub(crate) enum Step {
    /// Send this now.
    Reply(Reply),
    /// Nothing to send (a notification, a response to a request of ours).
    Nothing,
    /// A call: run it alongside other messages; it yields its answer, or nothing when the
    /// client cancelled it.
    Call(BoxFuture<Option<Answer>>),
    /// A stream that only waits for changes to tell (`subscriptions/listen`): run it as a call,
    /// but outside the ceiling on calls under way, which it would hold for as long as it is
    /// open.
    Stream(BoxFuture<Option<Answer>>),
}

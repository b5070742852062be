//! The way out of a connection: what calls send while they run and the answers they end with,
//! in order, and how much of it waits to be written.
//!
//! A [`Sink`] takes messages; the transport takes them from the [`Outbox`] as its output is ready.
//! An [`Answer`] travels with the registration of its call, so that a cancellation read while it
//! waits to be written still stops it: the outbox drops it instead of handing it out.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, ready};

use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

use crate::protocol::jsonrpc::Reply;

/// Where the messages of a connection, or of one request's stream, go.
#[derive(Clone, Debug)]
pub(crate) struct Sink {
    messages: UnboundedSender<Outgoing>,
    backlog: Arc<Backlog>,
}

/// The taking end of a [`Sink`].
#[derive(Debug)]
pub(crate) struct Outbox {
    messages: UnboundedReceiver<Outgoing>,
    backlog: Arc<Backlog>,
    /// What the last poll took from the channel, kept for its allocation.
    taken: Vec<Outgoing>,
}

/// Nobody takes the messages any more: the connection or the stream is gone.
#[derive(Debug)]
pub(crate) struct Gone;

#[derive(Debug)]
enum Outgoing {
    Message(Vec<u8>),
    Answer(Answer),
}

/// A new sink and the outbox its messages reach.
pub(crate) fn channel() -> (Sink, Outbox) {
    let (messages, taken) = mpsc::unbounded_channel();
    let backlog = Arc::new(Backlog::default());
    let sink = Sink {
        messages,
        backlog: Arc::clone(&backlog),
    };
    (
        sink,
        Outbox {
            messages: taken,
            backlog,
            taken: Vec::new(),
        },
    )
}

impl Sink {
    /// Sends a message. An empty one is none: it asks the transport to end the call's event
    /// stream there ([`Context::close_sse_stream`](crate::Context::close_sse_stream)).
    pub(crate) fn send(&self, message: Vec<u8>) -> Result<(), Gone> {
        self.backlog.add(message.len());
        self.messages
            .send(Outgoing::Message(message))
            .map_err(|_| Gone)
    }

    /// Sends a call's answer, after what the call sent before it.
    pub(crate) fn answer(&self, answer: Answer) -> Result<(), Gone> {
        self.backlog.add(answer.reply.len());
        self.messages
            .send(Outgoing::Answer(answer))
            .map_err(|_| Gone)
    }
}

impl Outbox {
    /// The next message, once there is one; `None` once every sink is gone. An answer whose
    /// call was cancelled in the meantime is dropped here, never handed out.
    #[cfg(any(feature = "http", test))]
    pub(crate) async fn recv(&mut self) -> Option<Vec<u8>> {
        loop {
            let outgoing = self.messages.recv().await?;
            if let Some(message) = Outbox::take(&self.backlog, outgoing) {
                return Some(message);
            }
        }
    }

    /// The next message if one is there already.
    pub(crate) fn try_recv(&mut self) -> Option<Vec<u8>> {
        loop {
            let outgoing = self.messages.try_recv().ok()?;
            if let Some(message) = Outbox::take(&self.backlog, outgoing) {
                return Some(message);
            }
        }
    }

    /// Up to `limit` messages into `into`, if some are there; 0 once every sink is gone.
    pub(crate) fn poll_recv_many(
        &mut self,
        cx: &mut Context<'_>,
        into: &mut Vec<Vec<u8>>,
        limit: usize,
    ) -> Poll<usize> {
        loop {
            let received = ready!(self.messages.poll_recv_many(cx, &mut self.taken, limit));
            if received == 0 {
                return Poll::Ready(0);
            }
            let before = into.len();
            let backlog = &self.backlog;
            into.extend(
                self.taken
                    .drain(..)
                    .filter_map(|o| Outbox::take(backlog, o)),
            );
            if into.len() > before {
                return Poll::Ready(into.len() - before);
            }
        }
    }

    /// How much waits in it.
    pub(crate) fn backlog(&self) -> &Backlog {
        &self.backlog
    }

    fn take(backlog: &Backlog, outgoing: Outgoing) -> Option<Vec<u8>> {
        match outgoing {
            Outgoing::Message(message) => {
                backlog.remove(message.len());
                Some(message)
            }
            Outgoing::Answer(answer) => {
                backlog.remove(answer.reply.len());
                answer.take().map(Reply::into_bytes)
            }
        }
    }
}

/// A call's answer, and the call it answers: until the answer is taken to be written, the call
/// stays registered under its request id, so that a `notifications/cancelled` for it is heard.
pub(crate) struct Answer {
    reply: Reply,
    call: Option<Box<dyn Cancellable>>,
}

/// The registration of a call the client can cancel; dropping it ends the call.
pub(crate) trait Cancellable: Send + 'static {
    /// The client cancelled the call.
    fn is_cancelled(&self) -> bool;
}

impl fmt::Debug for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Answer")
            .field("bytes", &self.reply.len())
            .field("cancellable", &self.call.is_some())
            .finish()
    }
}

impl Answer {
    /// The answer of a registered call.
    pub(crate) fn of(call: impl Cancellable, reply: Reply) -> Answer {
        Answer {
            reply,
            call: Some(Box::new(call)),
        }
    }

    /// What the answer says.
    #[cfg(feature = "otel")]
    pub(crate) fn kind(&self) -> crate::protocol::jsonrpc::ReplyKind {
        self.reply.kind()
    }

    /// How many bytes the answer has.
    pub(crate) fn len(&self) -> usize {
        self.reply.len()
    }

    /// The answer, unless its call was cancelled: the client asked for no answer. The call
    /// ends here.
    pub(crate) fn take(self) -> Option<Reply> {
        match &self.call {
            Some(call) if call.is_cancelled() => None,
            _ => Some(self.reply),
        }
    }
}

/// How many bytes were sent to a sink and not yet taken; a transport that stops reading while
/// it is high keeps its memory bounded when the client does not read.
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
}

impl Backlog {
    /// Above this, a transport reads nothing more until its client reads.
    pub(crate) const HIGH: usize = 1024 * 1024;

    /// How many bytes wait.
    pub(crate) fn bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    pub(crate) fn add(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn remove(&self, bytes: usize) {
        self.bytes.fetch_sub(bytes, Ordering::Release);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::future::poll_fn;

    use super::*;
    use crate::protocol::jsonrpc::Id;

    /// A call the client has cancelled.
    pub(crate) struct Cancelled;

    impl Cancellable for Cancelled {
        fn is_cancelled(&self) -> bool {
            true
        }
    }

    /// A call under way.
    pub(crate) struct Running;

    impl Cancellable for Running {
        fn is_cancelled(&self) -> bool {
            false
        }
    }

    /// The answer of a call, a result holding `text`.
    pub(crate) fn answer(call: impl Cancellable, text: &str) -> Answer {
        Answer::of(call, Reply::result(&Id::Null, &text))
    }

    /// The bytes of [`answer`]'s reply.
    pub(crate) fn answered(text: &str) -> Vec<u8> {
        Reply::result(&Id::Null, &text).into_bytes()
    }

    #[tokio::test]
    async fn messages_come_out_in_order_and_the_backlog_follows() {
        let (sink, mut outbox) = channel();
        sink.send(b"one".to_vec()).unwrap();
        sink.answer(answer(Running, "two")).unwrap();
        assert_eq!(outbox.backlog().bytes(), 3 + answered("two").len());
        let mut taken = Vec::new();
        let received = poll_fn(|cx| outbox.poll_recv_many(cx, &mut taken, 8)).await;
        assert_eq!(received, 2);
        assert_eq!(taken, [b"one".to_vec(), answered("two")]);
        assert_eq!(outbox.backlog().bytes(), 0);
        drop(sink);
        assert_eq!(outbox.recv().await, None);
    }

    #[tokio::test]
    async fn a_cancelled_answer_is_dropped_and_leaves_the_backlog() {
        let (sink, mut outbox) = channel();
        sink.answer(answer(Cancelled, "late")).unwrap();
        sink.send(b"next".to_vec()).unwrap();
        let mut taken = Vec::new();
        let received = poll_fn(|cx| outbox.poll_recv_many(cx, &mut taken, 8)).await;
        assert_eq!((received, taken), (1, vec![b"next".to_vec()]));
        assert_eq!(outbox.backlog().bytes(), 0);
    }
}

//! The way out of a connection: what calls send while they run and the answers they end with,
//! in order, and how much of it waits to be written.
//!
//! A [`Sink`] takes messages; the transport takes them from the [`Outbox`] as its output is ready.
//! An [`Answer`] travels with the registration of its call, so that a cancellation read while it
//! waits to be written still stops it: the outbox drops it instead of handing it out.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Notify;
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};

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
        self.backlog.add(answer.bytes.len());
        self.messages
            .send(Outgoing::Answer(answer))
            .map_err(|_| Gone)
    }

    /// How much waits to be written.
    pub(crate) fn backlog(&self) -> &Arc<Backlog> {
        &self.backlog
    }
}

impl Outbox {
    /// The next message, once there is one; `None` once every sink is gone. An answer whose
    /// call was cancelled in the meantime is dropped here, never handed out.
    #[cfg(any(feature = "http", test))]
    pub(crate) async fn recv(&mut self) -> Option<Vec<u8>> {
        loop {
            let outgoing = self.messages.recv().await?;
            if let Some(message) = self.take(outgoing) {
                return Some(message);
            }
        }
    }

    /// The next message if one is there already.
    pub(crate) fn try_recv(&mut self) -> Option<Vec<u8>> {
        loop {
            let outgoing = self.messages.try_recv().ok()?;
            if let Some(message) = self.take(outgoing) {
                return Some(message);
            }
        }
    }

    /// Up to `limit` messages into `into`, waiting for the first; 0 once every sink is gone.
    pub(crate) async fn recv_many(&mut self, into: &mut Vec<Vec<u8>>, limit: usize) -> usize {
        let mut batch = Vec::with_capacity(limit.min(64));
        loop {
            if self.messages.recv_many(&mut batch, limit).await == 0 {
                return 0;
            }
            let before = into.len();
            into.extend(batch.drain(..).filter_map(|outgoing| self.take(outgoing)));
            if into.len() > before {
                return into.len() - before;
            }
        }
    }

    fn take(&self, outgoing: Outgoing) -> Option<Vec<u8>> {
        match outgoing {
            Outgoing::Message(message) => {
                self.backlog.remove(message.len());
                Some(message)
            }
            Outgoing::Answer(answer) => {
                self.backlog.remove(answer.bytes.len());
                answer.take()
            }
        }
    }
}

/// A call's answer, and the call it answers: until the answer is taken to be written, the call
/// stays registered under its request id, so that a `notifications/cancelled` for it is heard.
pub(crate) struct Answer {
    bytes: Vec<u8>,
    call: Option<Box<dyn Call>>,
}

/// The registration of a call the client can cancel; dropping it ends the call.
pub(crate) trait Call: Send + 'static {
    /// The client cancelled the call.
    fn is_cancelled(&self) -> bool;
}

impl fmt::Debug for Answer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Answer")
            .field("bytes", &self.bytes.len())
            .field("cancellable", &self.call.is_some())
            .finish()
    }
}

impl Answer {
    /// An answer to no call the client can cancel.
    #[cfg(test)]
    pub(crate) fn new(bytes: Vec<u8>) -> Answer {
        Answer { bytes, call: None }
    }

    /// The answer of a registered call.
    pub(crate) fn of(call: impl Call, bytes: Vec<u8>) -> Answer {
        Answer {
            bytes,
            call: Some(Box::new(call)),
        }
    }

    /// The answer's bytes, unless its call was cancelled: the client asked for no answer. The
    /// call ends here.
    pub(crate) fn take(self) -> Option<Vec<u8>> {
        match &self.call {
            Some(call) if call.is_cancelled() => None,
            _ => Some(self.bytes),
        }
    }
}

/// How many bytes were sent to a sink and not yet taken; a transport that stops reading while
/// it is high keeps its memory bounded when the client does not read.
#[derive(Debug, Default)]
pub(crate) struct Backlog {
    bytes: AtomicUsize,
    drained: Notify,
}

impl Backlog {
    /// Above this, [`Backlog::below`] waits.
    pub(crate) const HIGH: usize = 1024 * 1024;

    pub(crate) fn add(&self, bytes: usize) {
        self.bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn remove(&self, bytes: usize) {
        let before = self.bytes.fetch_sub(bytes, Ordering::Release);
        if before > Backlog::HIGH && before - bytes <= Backlog::HIGH {
            self.drained.notify_waiters();
        }
    }

    /// Completes once no more than [`Backlog::HIGH`] bytes wait.
    pub(crate) async fn below_high(&self) {
        loop {
            let drained = self.drained.notified();
            let mut drained = std::pin::pin!(drained);
            drained.as_mut().enable();
            if self.bytes.load(Ordering::Acquire) <= Backlog::HIGH {
                return;
            }
            drained.await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn messages_come_out_in_order_and_the_backlog_follows() {
        let (sink, mut outbox) = channel();
        sink.send(b"one".to_vec()).unwrap();
        sink.answer(Answer::new(b"two".to_vec())).unwrap();
        assert_eq!(sink.backlog().bytes.load(Ordering::Relaxed), 6);
        let mut taken = Vec::new();
        assert_eq!(outbox.recv_many(&mut taken, 8).await, 2);
        assert_eq!(taken, [b"one".to_vec(), b"two".to_vec()]);
        assert_eq!(sink.backlog().bytes.load(Ordering::Relaxed), 0);
        drop(sink);
        assert_eq!(outbox.recv().await, None);
    }

    #[tokio::test]
    async fn a_full_backlog_waits_until_it_is_taken() {
        let (sink, mut outbox) = channel();
        sink.send(vec![b'x'; Backlog::HIGH + 1]).unwrap();
        let backlog = Arc::clone(sink.backlog());
        let waiting = tokio::spawn(async move { backlog.below_high().await });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        outbox.recv().await.unwrap();
        waiting.await.unwrap();
    }
}

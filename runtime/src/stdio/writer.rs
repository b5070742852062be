//! The connection's output: messages written, each on its own line, as far as the output takes
//! them without waiting.

use std::collections::VecDeque;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::AsyncWrite;

use crate::protocol::jsonrpc::{Body, Reply, SharedResult};
use crate::sink::{Answer, Backlog, Outbox};

/// How many queued messages one write gathers at most.
const WRITE_BATCH: usize = 256;

/// The most one write system call hands the kernel. A pipe wakes its reader when a write ends,
/// so a large message written in pieces is read while the rest is being written, instead of
/// after all of it.
const WRITE_CHUNK: usize = 64 * 1024;

/// What a shared result adds to what waits to be written: its own bytes, not those it shares.
fn shared_size(reply: &SharedResult) -> usize {
    let [head, _, tail] = reply.parts();
    head.len() + tail.len()
}

/// Writes messages, each on its own line, as far as the output takes them without waiting.
/// What calls running as tasks sent comes first, from the outbox, and what the connection's task
/// queued only once the outbox is empty, so that a call's messages precede its answer. Whatever is queued when the output is ready goes out in one write, so pipelined
/// answers share a system call; a shared result is written from its own bytes. An answer whose
/// call was cancelled before it is taken here is not written.
pub(super) struct Writer<W> {
    output: W,
    outbox: Outbox,
    /// Whether the outbox may still give messages: some sink is left.
    outbox_open: bool,
    /// Replies and answers made on the connection's task, after the outbox's messages.
    queue: VecDeque<Queued>,
    /// Bytes in `queue`, as the backlog counts them.
    queued: usize,
    /// What is being written, and how much of it is.
    current: Option<(Writing, usize)>,
    /// Messages taken from the outbox.
    taken: Vec<Vec<u8>>,
    /// A buffer for batches, kept between them.
    spare: Vec<u8>,
    /// Written and not yet flushed.
    unflushed: bool,
    /// Writing failed: everything is dropped from then on, and the error (unless the client
    /// closed its end) is what the connection returns.
    failed: Option<io::Result<()>>,
}

/// A message waiting in the queue.
enum Queued {
    Bytes(Vec<u8>),
    /// A call's answer, not written if the call is cancelled before it is taken here.
    Answer(Answer),
    Shared(SharedResult),
}

/// What is being written.
enum Writing {
    /// Messages, each with its newline.
    Bytes(Vec<u8>),
    /// A shared result, its newline after it.
    Shared(SharedResult),
}

impl<W: AsyncWrite + Unpin> Writer<W> {
    pub(super) fn new(outbox: Outbox, output: W) -> Writer<W> {
        Writer {
            output,
            outbox,
            outbox_open: true,
            queue: VecDeque::new(),
            queued: 0,
            current: None,
            taken: Vec::with_capacity(WRITE_BATCH),
            spare: Vec::new(),
            unflushed: false,
            failed: None,
        }
    }

    /// Queues a reply of the connection's task.
    pub(super) fn push(&mut self, reply: Reply) {
        if self.failed.is_some() {
            return;
        }
        match reply.into_body() {
            Body::Owned(message) => {
                self.queued += message.len();
                self.queue.push_back(Queued::Bytes(message));
            }
            Body::Shared(reply) => {
                self.queued += shared_size(&reply);
                self.queue.push_back(Queued::Shared(reply));
            }
        }
    }

    pub(super) fn push_answer(&mut self, answer: Answer) {
        if self.failed.is_none() {
            self.queued += answer.len();
            self.queue.push_back(Queued::Answer(answer));
        }
    }

    /// Whether more than [`Backlog::HIGH`] bytes wait, the rest of the message being written
    /// included: then nothing more is read.
    pub(super) fn is_full(&self) -> bool {
        let writing = match &self.current {
            Some((Writing::Bytes(bytes), at)) => bytes.len() - at,
            Some((Writing::Shared(reply), _)) => shared_size(reply),
            None => 0,
        };
        self.queued + writing + self.outbox.backlog().bytes() > Backlog::HIGH
    }

    /// Writes until everything queued is written and flushed (`Ready`) or the output takes no
    /// more (`Pending`, woken when it does). Woken, too, when the outbox gets a message.
    pub(super) fn poll_write(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            if self.failed.is_some() {
                self.discard(cx);
                return Poll::Ready(());
            }
            if self.current.is_none() && !self.next(cx) {
                if self.unflushed {
                    match Pin::new(&mut self.output).poll_flush(cx) {
                        Poll::Ready(Ok(())) => self.unflushed = false,
                        Poll::Ready(Err(err)) => {
                            self.fail(err);
                            continue;
                        }
                        Poll::Pending => return Poll::Pending,
                    }
                }
                return Poll::Ready(());
            }
            let (queued, at) = self.current.as_mut().expect("a message is being written");
            let chunk = match queued {
                Writing::Bytes(bytes) => &bytes[*at..],
                Writing::Shared(reply) => {
                    let [head, body, tail] = reply.parts();
                    let mut at = *at;
                    let mut piece: &[u8] = b"\n";
                    for part in [head, body, tail] {
                        if at < part.len() {
                            piece = &part[at..];
                            break;
                        }
                        at -= part.len();
                    }
                    piece
                }
            };
            let chunk = &chunk[..chunk.len().min(WRITE_CHUNK)];
            match Pin::new(&mut self.output).poll_write(cx, chunk) {
                Poll::Ready(Ok(0)) => self.fail(io::ErrorKind::WriteZero.into()),
                Poll::Ready(Ok(written)) => {
                    self.unflushed = true;
                    *at += written;
                    let done = match queued {
                        Writing::Bytes(bytes) => *at == bytes.len(),
                        Writing::Shared(reply) => {
                            *at == reply.parts().iter().map(|p| p.len()).sum::<usize>() + 1
                        }
                    };
                    if done && let Some((Writing::Bytes(mut bytes), _)) = self.current.take() {
                        // A batch's buffer is kept for the next one; a lone large message's
                        // is not.
                        if bytes.capacity() <= WRITE_CHUNK {
                            bytes.clear();
                            self.spare = bytes;
                        }
                    }
                }
                Poll::Ready(Err(err)) => self.fail(err),
                Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Takes the next write: what the outbox holds, then, once it is seen empty, the queued
    /// messages that follow, in one buffer; or a shared result alone. `false` when nothing
    /// waits.
    fn next(&mut self, cx: &mut Context<'_>) -> bool {
        let drained = self.take_outbox(cx);
        while drained && self.taken.len() < WRITE_BATCH {
            let message = match self.queue.front() {
                Some(Queued::Bytes(_) | Queued::Answer(_)) => match self.queue.pop_front() {
                    Some(Queued::Bytes(message)) => {
                        self.queued -= message.len();
                        Some(message)
                    }
                    Some(Queued::Answer(answer)) => {
                        self.queued -= answer.len();
                        answer.take().map(Reply::into_bytes)
                    }
                    _ => unreachable!("the front is bytes or an answer"),
                },
                _ => break,
            };
            self.taken.extend(message);
        }
        match self.taken.len() {
            0 => {
                if !drained || !matches!(self.queue.front(), Some(Queued::Shared(_))) {
                    return false;
                }
                let Some(Queued::Shared(reply)) = self.queue.pop_front() else {
                    unreachable!("the front is a shared result");
                };
                self.queued -= shared_size(&reply);
                self.current = Some((Writing::Shared(reply), 0));
            }
            1 => {
                // A lone message is written from its own buffer: a large one is not copied.
                let mut message = self.taken.pop().expect("one message");
                message.push(b'\n');
                self.current = Some((Writing::Bytes(message), 0));
            }
            _ => {
                let mut batch = std::mem::take(&mut self.spare);
                for message in self.taken.drain(..) {
                    batch.extend_from_slice(&message);
                    batch.push(b'\n');
                }
                self.current = Some((Writing::Bytes(batch), 0));
            }
        }
        true
    }

    /// Takes what the outbox holds, a batch at most: whether it was seen empty (or closed).
    fn take_outbox(&mut self, cx: &mut Context<'_>) -> bool {
        while self.outbox_open {
            if self.taken.len() >= WRITE_BATCH {
                return false;
            }
            let room = WRITE_BATCH - self.taken.len();
            match self.outbox.poll_recv_many(cx, &mut self.taken, room) {
                Poll::Ready(0) => self.outbox_open = false,
                // A tool's request to end its event stream (`Context::close_sse_stream`):
                // stdio has none.
                Poll::Ready(_) => self.taken.retain(|message| !message.is_empty()),
                // Refused because the task has used up its budget, it says nothing of the
                // outbox; the task is woken to try again.
                Poll::Pending => return tokio::task::coop::has_budget_remaining(),
            }
        }
        true
    }

    /// Writes everything until every sink is gone, then shuts the output down.
    pub(super) fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.poll_write(cx));
        if self.outbox_open && self.failed.is_none() {
            // Woken by the outbox.
            return Poll::Pending;
        }
        if let Some(failed) = self.failed.take() {
            return Poll::Ready(failed);
        }
        match ready!(Pin::new(&mut self.output).poll_shutdown(cx)) {
            Err(err) if err.kind() != io::ErrorKind::BrokenPipe => Poll::Ready(Err(err)),
            _ => Poll::Ready(Ok(())),
        }
    }

    fn fail(&mut self, err: io::Error) {
        // The client went away: nobody is left to answer, which is no failure of ours.
        self.failed = Some(if err.kind() == io::ErrorKind::BrokenPipe {
            tracing::info!("the client closed the connection");
            Ok(())
        } else {
            Err(err)
        });
        self.discard_queued();
    }

    /// Drops what waits, once writing has failed, so that nothing accumulates.
    fn discard(&mut self, cx: &mut Context<'_>) {
        while self.outbox_open {
            match self.outbox.poll_recv_many(cx, &mut self.taken, WRITE_BATCH) {
                Poll::Ready(0) => self.outbox_open = false,
                Poll::Ready(_) => self.taken.clear(),
                Poll::Pending => break,
            }
        }
    }

    fn discard_queued(&mut self) {
        self.queue.clear();
        self.queued = 0;
        self.current = None;
        self.taken.clear();
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;

    use bytes::Bytes;

    use super::*;
    use crate::protocol::jsonrpc::Id;
    use crate::sink::tests::{Cancelled, Running, answer, answered};
    use crate::sink::{self};

    /// A reply of the connection's task, a result holding `text`.
    fn reply(text: &str) -> Reply {
        Reply::result(&Id::Null, &text)
    }

    /// The line a reply or answer holding `text` is written as.
    fn line(text: &str) -> String {
        String::from_utf8(answered(text)).unwrap()
    }

    #[tokio::test]
    async fn what_calls_sent_goes_first_then_replies_each_on_its_line() {
        let (sink, outbox) = sink::channel();
        let mut writer = Writer::new(outbox, Vec::new());
        writer.push(reply("reply"));
        writer.push(Reply::shared(SharedResult::new(
            &Id::Number(7.into()),
            Bytes::from_static(b"{}"),
        )));
        writer.push(reply("last"));
        sink.send(b"progress".to_vec()).unwrap();
        sink.answer(answer(Running, "answer")).unwrap();
        sink.send(Vec::new()).unwrap();
        drop(sink);
        poll_fn(|cx| writer.poll_close(cx)).await.unwrap();
        assert_eq!(
            String::from_utf8(writer.output).unwrap(),
            format!(
                "progress\n{}\n{}\n{{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{}}}}\n{}\n",
                line("answer"),
                line("reply"),
                line("last")
            )
        );
    }

    #[tokio::test]
    async fn a_call_s_messages_precede_its_answer_past_a_batch() {
        let (sink, outbox) = sink::channel();
        let mut writer = Writer::new(outbox, Vec::new());
        for n in 0..WRITE_BATCH + 44 {
            sink.send(format!("{n}").into_bytes()).unwrap();
        }
        writer.push_answer(answer(Running, "answer"));
        drop(sink);
        poll_fn(|cx| writer.poll_close(cx)).await.unwrap();
        let text = String::from_utf8(writer.output).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), WRITE_BATCH + 45);
        assert_eq!(lines[WRITE_BATCH + 43..], ["299", &line("answer")]);
    }

    #[tokio::test]
    async fn a_cancelled_answer_is_not_written() {
        let (sink, outbox) = sink::channel();
        let mut writer = Writer::new(outbox, Vec::new());
        writer.push_answer(answer(Cancelled, "late"));
        writer.push(reply("next"));
        drop(sink);
        poll_fn(|cx| writer.poll_close(cx)).await.unwrap();
        assert_eq!(
            String::from_utf8(writer.output).unwrap(),
            line("next") + "\n"
        );
    }

    #[tokio::test]
    async fn a_message_after_an_empty_one_wakes_the_writer() {
        let (sink, outbox) = sink::channel();
        let mut writer = Writer::new(outbox, Vec::new());
        // An empty message ends a call's event stream, which stdio does not have.
        sink.send(Vec::new()).unwrap();
        assert!(
            poll_fn(|cx| Poll::Ready(writer.poll_write(cx)))
                .await
                .is_ready()
        );
        tokio::spawn(async move {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
            sink.send(b"later".to_vec()).unwrap();
        });
        let closed = poll_fn(|cx| writer.poll_close(cx));
        tokio::time::timeout(std::time::Duration::from_secs(5), closed)
            .await
            .expect("the writer is woken by the message")
            .unwrap();
        assert_eq!(writer.output, b"later\n");
    }

    #[tokio::test]
    async fn a_full_queue_stops_reading_until_it_is_written() {
        let (_sink, outbox) = sink::channel();
        let (output, mut client) = tokio::io::duplex(1024);
        let mut writer = Writer::new(outbox, output);
        let large = "x".repeat(2 * Backlog::HIGH);
        let size = line(&large).len();
        writer.push(reply(&large));
        assert!(writer.is_full());
        // The client reads nothing: the output takes 1 KiB and waits.
        assert!(
            poll_fn(|cx| Poll::Ready(writer.poll_write(cx)))
                .await
                .is_pending()
        );
        assert!(writer.is_full());
        let reading = tokio::spawn(async move {
            let mut all = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut client, &mut all)
                .await
                .unwrap();
            all.len()
        });
        poll_fn(|cx| writer.poll_write(cx)).await;
        assert!(!writer.is_full());
        drop(writer);
        assert_eq!(reading.await.unwrap(), size + 1);
    }
}

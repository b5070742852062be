//! The stdio transport: newline-delimited messages on any reader and writer.
//!
//! On standard input and output, pipes and sockets (what MCP clients spawn servers with) are read
//! and written on tokio's reactor like network sockets, so no message waits for a thread hand-off;
//! terminals and files go through tokio's `stdin()` and `stdout()`, which use blocking threads.

use std::future::{Future, poll_fn};
use std::io;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder};

use super::limits::Limits;
use super::service::{Service, Step};
use super::session::Session;
use crate::protocol::jsonrpc::{self, INVALID_REQUEST, Id, SharedResult};
use crate::sink::{self, Backlog, Outbox};

/// How much of the input is read at a time, at least.
const READ_BUFFER: usize = 64 * 1024;

/// How many calls may wait for a place under the ceiling on calls under way. Past them, the
/// next message is not read until one starts: a client sending faster than the calls run
/// waits, instead of the server holding all it sent.
const QUEUED_CALLS: usize = 1024;

/// How many queued messages one write gathers at most.
const WRITE_BATCH: usize = 256;

/// The most one write system call hands the kernel. A pipe wakes its reader when a write ends,
/// so a large message written in pieces is read while the rest is being written, instead of
/// after all of it.
const WRITE_CHUNK: usize = 64 * 1024;

/// Serves standard input and output until the input ends.
///
/// The connection runs as a task of its own, so that it and the calls it starts share a worker
/// thread: under `block_on` (`#[tokio::main]`) it would run on the main thread, and every call
/// and every answer would cross between threads.
pub(super) async fn serve_standard(service: Arc<dyn Service>, limits: Limits) -> io::Result<()> {
    let connection = tokio::spawn(async move {
        #[cfg(unix)]
        if let Some(pipes) = standard::Pipes::open() {
            tracing::debug!("stdin and stdout are pipes or sockets: served on the reactor");
            let standard::Pipes {
                input,
                output,
                restore,
            } = pipes;
            let served = serve(service, input, output, limits).await;
            drop(restore);
            return served;
        }
        serve(service, tokio::io::stdin(), tokio::io::stdout(), limits).await
    });
    match connection.await {
        Ok(served) => served,
        Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
        Err(err) => Err(io::Error::other(err)),
    }
}

/// Serves one connection until the input ends, then gives the calls under way the grace period
/// to finish and send their answers, and stops those still running.
pub(super) async fn serve<R, W>(
    service: Arc<dyn Service>,
    mut input: R,
    output: W,
    limits: Limits,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    // Calls send their messages and answers on `outgoing`, in order; responses to the tool
    // list, whose bytes are shared, go on `shared`. The two need no order between them. What
    // waits to be written is the backlog, counted for both.
    let (outgoing, incoming) = sink::channel();
    let backlog = Arc::clone(outgoing.backlog());
    let (shared, shared_incoming) = mpsc::unbounded_channel::<SharedResult>();
    let writer = tokio::spawn(write_all(
        incoming,
        shared_incoming,
        Arc::clone(&backlog),
        output,
    ));
    // A place for each call that may run and each that may wait to.
    let admitted = Arc::new(Semaphore::new(
        limits.calls.available_permits() + QUEUED_CALLS,
    ));
    let session = Arc::new(Session::new());
    let mut reader = Reader::new(limits.max_message_size, limits.busy_poll);
    let mut calls = JoinSet::new();
    loop {
        // Reap finished calls as we go, so a long session does not keep them all.
        while calls.try_join_next().is_some() {}
        // While the client does not read what it was sent, nothing more is read from it.
        backlog.below_high().await;
        let frame = match reader.next(&mut input).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(err) => {
                tracing::error!(error = %err, "reading the input failed");
                break;
            }
        };
        let step = match frame {
            Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => continue,
            Frame::Line(line) => match jsonrpc::parse(&line) {
                Ok(message) => service.handle(&session, message, &outgoing),
                Err(reply) => Step::Reply(reply),
            },
            Frame::TooLong => {
                let limit = limits.max_message_size;
                tracing::warn!(limit, "message refused: too large");
                Step::Reply(jsonrpc::error(
                    &Id::Null,
                    INVALID_REQUEST,
                    &format!("message refused: it is longer than the limit of {limit} bytes"),
                ))
            }
        };
        match step {
            Step::Reply(bytes) => {
                let _ = outgoing.send(bytes);
            }
            Step::Shared(reply) => {
                backlog.add(shared_size(&reply));
                let _ = shared.send(reply);
            }
            Step::Nothing => {}
            Step::Call(call) => {
                // Neither semaphore is ever closed, so the permits always come.
                let admission = Arc::clone(&admitted).acquire_owned().await;
                let outgoing = outgoing.clone();
                let slots = Arc::clone(&limits.calls);
                calls.spawn(async move {
                    let _admission = admission;
                    let _permit = slots.acquire_owned().await;
                    if let Some(answer) = call.await {
                        let _ = outgoing.answer(answer);
                    }
                });
            }
            Step::Stream(stream) => {
                let outgoing = outgoing.clone();
                calls.spawn(async move {
                    if let Some(answer) = stream.await {
                        let _ = outgoing.answer(answer);
                    }
                });
            }
        }
    }
    // Nobody is left to answer the requests calls sent to the client: they stop waiting, and
    // the streams that wait for changes end.
    session.close();
    service.stop();
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while calls.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            calls = calls.len(),
            grace = ?limits.shutdown_grace,
            "the input closed; calls still running after the grace period are stopped"
        );
        calls.shutdown().await;
    }
    drop(session);
    drop(outgoing);
    drop(shared);
    writer.await.map_err(io::Error::other)?
}

/// What a shared result adds to the backlog: its own bytes, not those it shares.
fn shared_size(reply: &SharedResult) -> usize {
    let [head, _, tail] = reply.parts();
    head.len() + tail.len()
}

/// Writes messages as they come, each on its own line. Whatever is queued when the output is
/// ready goes out in one write, so pipelined answers share a system call; a shared result is
/// written from its own bytes. An answer whose call was cancelled before it is taken here is
/// not written.
async fn write_all<W: AsyncWrite + Unpin>(
    mut incoming: Outbox,
    mut shared: mpsc::UnboundedReceiver<SharedResult>,
    backlog: Arc<Backlog>,
    mut output: W,
) -> io::Result<()> {
    let mut queued = Vec::with_capacity(WRITE_BATCH);
    let mut batch = Vec::new();
    let (mut incoming_open, mut shared_open) = (true, true);
    while incoming_open || shared_open {
        let written = tokio::select! {
            received = incoming.recv_many(&mut queued, WRITE_BATCH), if incoming_open => {
                if received == 0 {
                    incoming_open = false;
                    continue;
                }
                // A tool's request to end its event stream (`Context::close_sse_stream`): stdio
                // has none.
                queued.retain(|message| !message.is_empty());
                if queued.is_empty() {
                    continue;
                }
                let bytes = if let [message] = queued.as_mut_slice() {
                    // A lone message is written from its own buffer: a large one is not copied.
                    message.push(b'\n');
                    message
                } else {
                    batch.clear();
                    for message in &queued {
                        batch.extend_from_slice(message);
                        batch.push(b'\n');
                    }
                    &mut batch
                };
                let written = write_chunked(&mut output, &[bytes]).await;
                queued.clear();
                written
            }
            reply = shared.recv(), if shared_open => {
                let Some(reply) = reply else {
                    shared_open = false;
                    continue;
                };
                let [head, body, tail] = reply.parts();
                let written = write_chunked(&mut output, &[head, body, tail, b"\n"]).await;
                backlog.remove(shared_size(&reply));
                written
            }
        };
        if let Err(err) = written {
            // The client went away: nobody is left to answer, which is no failure of ours.
            if err.kind() == io::ErrorKind::BrokenPipe {
                tracing::info!("the client closed the connection");
                return Ok(());
            }
            return Err(err);
        }
    }
    match output.shutdown().await {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => Err(err),
        _ => Ok(()),
    }
}

/// Writes the pieces of one message in order, no more than [`WRITE_CHUNK`] bytes per system call,
/// and flushes.
async fn write_chunked<W: AsyncWrite + Unpin>(output: &mut W, pieces: &[&[u8]]) -> io::Result<()> {
    for piece in pieces {
        for chunk in piece.chunks(WRITE_CHUNK) {
            output.write_all(chunk).await?;
        }
    }
    output.flush().await
}

/// One message of the input.
#[derive(Debug, PartialEq, Eq)]
enum Frame {
    /// A line, without its line ending (`\n` or `\r\n`).
    Line(Bytes),
    /// A line longer than the limit: refused as soon as the limit is passed, and the rest of it
    /// skipped without being kept.
    TooLong,
}

/// A client whose last message came within this many busy-poll times of the one before is
/// polled for: with the default 50 µs, within 1 ms. Polling then costs at most a twentieth of
/// the time between messages; a client slower than that is never polled for.
const QUICK_CLIENT: u32 = 20;

/// A yield of the CPU that takes this long let another thread run: the CPU the server polls on
/// is shared, with the client or with other work.
const SHARED_CPU: Duration = Duration::from_micros(5);

/// How many waits go without polling once polling found its CPU shared: then polling is tried
/// again, in case the scheduler has moved things since.
const UNPOLLED_WHEN_SHARED: u32 = 64;

/// Splits the input into lines of at most a limit, with tokio-util's delimiter codec: each line
/// is a slice of the buffer it was read into, not a copy.
///
/// Before it waits for more input, it polls for it during the busy-poll time, when the client's
/// last message came quickly (see `Server::busy_poll`).
struct Reader {
    codec: AnyDelimiterCodec,
    buffer: BytesMut,
    busy_poll: Duration,
    /// Whether the last wait for input was shorter than [`QUICK_CLIENT`] busy-poll times.
    quick_client: bool,
    /// How many more waits go without polling, since polling found the CPU shared.
    unpolled: u32,
}

impl Reader {
    fn new(max_message_size: usize, busy_poll: Duration) -> Reader {
        Reader {
            codec: AnyDelimiterCodec::new_with_max_length(
                b"\n".to_vec(),
                b"\n".to_vec(),
                max_message_size,
            ),
            buffer: BytesMut::with_capacity(READ_BUFFER),
            busy_poll,
            quick_client: true,
            unpolled: 0,
        }
    }

    /// The next message, or `None` once the input has ended.
    async fn next<R: AsyncRead + Unpin>(&mut self, input: &mut R) -> io::Result<Option<Frame>> {
        loop {
            if let Some(frame) = frame(self.codec.decode(&mut self.buffer))? {
                return Ok(Some(frame));
            }
            self.buffer.reserve(READ_BUFFER);
            let waiting = Instant::now();
            let read = match self.poll_busily(input, waiting).await {
                Some(read) => read?,
                None => input.read_buf(&mut self.buffer).await?,
            };
            if !self.busy_poll.is_zero() {
                self.quick_client = waiting.elapsed() <= self.busy_poll * QUICK_CLIENT;
            }
            if read == 0 {
                // The last line may lack its newline.
                return frame(self.codec.decode_eof(&mut self.buffer));
            }
        }
    }

    /// Reads what has come by the end of the busy-poll time, without letting the thread sleep
    /// meanwhile: other tasks run between the attempts (the calls, the writer), and the
    /// reactor is asked for readiness without blocking. `None` when nothing came, or when this
    /// client does not keep the pace that polling pays for.
    async fn poll_busily<R: AsyncRead + Unpin>(
        &mut self,
        input: &mut R,
        since: Instant,
    ) -> Option<io::Result<usize>> {
        if !self.quick_client || self.busy_poll.is_zero() {
            return None;
        }
        if self.unpolled > 0 {
            self.unpolled -= 1;
            return None;
        }
        loop {
            let buffer = &mut self.buffer;
            let attempt = poll_fn(|cx| match pin!(input.read_buf(buffer)).poll(cx) {
                Poll::Ready(read) => Poll::Ready(Some(read)),
                Poll::Pending => Poll::Ready(None),
            })
            .await;
            if attempt.is_some() {
                return attempt;
            }
            if since.elapsed() >= self.busy_poll {
                return None;
            }
            // Another thread of this CPU (the client, often) runs now if it can; when one did,
            // the CPU is shared and polling takes its time: sleeping serves such a client best.
            let yielding = Instant::now();
            std::thread::yield_now();
            if yielding.elapsed() >= SHARED_CPU {
                self.unpolled = UNPOLLED_WHEN_SHARED;
                return None;
            }
            tokio::task::yield_now().await;
        }
    }
}

/// What the codec made of the buffer: a line, a line too long, or nothing yet.
fn frame(decoded: Result<Option<Bytes>, AnyDelimiterCodecError>) -> io::Result<Option<Frame>> {
    match decoded {
        Ok(Some(mut line)) => {
            if line.last() == Some(&b'\r') {
                line.truncate(line.len() - 1);
            }
            Ok(Some(Frame::Line(line)))
        }
        Ok(None) => Ok(None),
        Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => Ok(Some(Frame::TooLong)),
        Err(AnyDelimiterCodecError::Io(err)) => Err(err),
    }
}

/// Standard input and output as non-blocking pipes or sockets.
#[cfg(unix)]
mod standard {
    use std::io;
    use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

    use rustix::fs::{FileType, OFlags};
    use tokio::io::{AsyncRead, AsyncWrite};
    use tokio::net::unix::pipe;

    /// The pipe capacity asked for standard output: room for a large `tools/list` answer in one
    /// write, so the client reads it without waiting for the server to be scheduled again. The
    /// kernel's default ceiling for unprivileged processes is this size; when it refuses, the
    /// pipe keeps its capacity.
    #[cfg(any(target_os = "linux", target_os = "android"))]
    const PIPE_CAPACITY: usize = 1024 * 1024;

    /// Standard input and output ready for the reactor.
    pub(super) struct Pipes {
        pub(super) input: Box<dyn AsyncRead + Unpin + Send>,
        pub(super) output: Box<dyn AsyncWrite + Unpin + Send>,
        /// Puts the descriptors back in blocking mode when dropped.
        pub(super) restore: Restore,
    }

    /// Descriptors this process made non-blocking; dropping it makes them blocking again, as the
    /// process found them, for whoever shares them.
    pub(super) struct Restore(Vec<OwnedFd>);

    impl Drop for Restore {
        fn drop(&mut self) {
            for fd in &self.0 {
                let _ = rustix::io::ioctl_fionbio(fd, false);
            }
        }
    }

    impl Pipes {
        /// Standard input and output when both are pipes or sockets that nothing else of this
        /// process writes to; `None` (use tokio's `stdin()` and `stdout()`) otherwise.
        ///
        /// Non-blocking mode belongs to the open file, which standard error may share (`2>&1`):
        /// a log line written to a non-blocking pipe could be lost, so such a setup is left alone.
        pub(super) fn open() -> Option<Pipes> {
            let stdin = io::stdin().as_fd().try_clone_to_owned().ok()?;
            let stdout = io::stdout().as_fd().try_clone_to_owned().ok()?;
            let stderr = identity(io::stderr().as_fd());
            let (input_kind, input_id) = describe(stdin.as_fd())?;
            let (output_kind, output_id) = describe(stdout.as_fd())?;
            if stderr.is_some_and(|(_, err)| err == input_id || err == output_id) {
                return None;
            }
            let mut restore = Vec::new();
            for fd in [&stdin, &stdout] {
                let flags = rustix::fs::fcntl_getfl(fd).ok()?;
                if !flags.contains(OFlags::NONBLOCK) {
                    restore.push(fd.try_clone().ok()?);
                }
            }
            let restore = Restore(restore);
            let input: Box<dyn AsyncRead + Unpin + Send> = match input_kind {
                Kind::Pipe => Box::new(pipe::Receiver::from_owned_fd(stdin).ok()?),
                Kind::Socket => Box::new(socket(stdin)?),
            };
            let output: Box<dyn AsyncWrite + Unpin + Send> = match output_kind {
                Kind::Pipe => {
                    #[cfg(any(target_os = "linux", target_os = "android"))]
                    let _ = rustix::pipe::fcntl_setpipe_size(&stdout, PIPE_CAPACITY);
                    Box::new(pipe::Sender::from_owned_fd(stdout).ok()?)
                }
                Kind::Socket => Box::new(socket(stdout)?),
            };
            Some(Pipes {
                input,
                output,
                restore,
            })
        }
    }

    #[derive(Clone, Copy)]
    enum Kind {
        Pipe,
        Socket,
    }

    /// What a descriptor is, and which file: `None` for anything but a pipe or a socket.
    fn describe(fd: BorrowedFd<'_>) -> Option<(Kind, (u64, u64))> {
        match identity(fd)? {
            (FileType::Fifo, id) => Some((Kind::Pipe, id)),
            (FileType::Socket, id) => Some((Kind::Socket, id)),
            _ => None,
        }
    }

    /// The file type, device and inode of an open descriptor.
    fn identity(fd: BorrowedFd<'_>) -> Option<(FileType, (u64, u64))> {
        let stat = rustix::fs::fstat(fd).ok()?;
        #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
        let id = (stat.st_dev as u64, stat.st_ino as u64);
        Some((FileType::from_raw_mode(stat.st_mode), id))
    }

    /// A stream socket on the reactor; reading and writing it is the same as a pipe's.
    fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
        let stream = std::os::unix::net::UnixStream::from(fd);
        stream.set_nonblocking(true).ok()?;
        tokio::net::UnixStream::from_std(stream).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_are_split_on_newlines_and_bounded() {
        let input = b"{\"a\":1}\r\n0123456789abcdef\nshort\n0123456789\nlast".to_vec();
        // Read a few bytes at a time, as a slow client's messages arrive.
        let mut input = tokio_test_input(&input, 4);
        let mut reader = Reader::new(10, Duration::from_micros(50));
        let mut frames = Vec::new();
        while let Some(frame) = reader.next(&mut input).await.unwrap() {
            frames.push(frame);
        }
        let line = |text: &'static [u8]| Frame::Line(Bytes::from_static(text));
        assert_eq!(
            frames,
            [
                line(b"{\"a\":1}"),
                Frame::TooLong,
                line(b"short"),
                line(b"0123456789"),
                line(b"last"),
            ]
        );
    }

    /// `bytes` as an input that gives at most `chunk` bytes per read.
    fn tokio_test_input(bytes: &[u8], chunk: usize) -> impl AsyncRead + Unpin {
        let (mut writer, reader) = tokio::io::duplex(chunk);
        let bytes = bytes.to_vec();
        tokio::spawn(async move {
            for piece in bytes.chunks(chunk) {
                writer.write_all(piece).await.unwrap();
            }
        });
        reader
    }
}

//! The stdio transport: newline-delimited messages on standard input and output ([`Stdio`]), or
//! on any reader and writer ([`serve`]).
//!
//! On standard input and output, pipes and sockets (what MCP clients spawn servers with) are read
//! and written on tokio's reactor like network sockets, so no message waits for a thread hand-off;
//! terminals and files go through tokio's `stdin()` and `stdout()`, which use blocking threads.
//!
//! A connection is one task that reads, runs each call as far as it goes at once, and writes.
//! A call that completes when first polled (a plain `fn` tool, an `async fn` that does not wait)
//! is answered without a task of its own; one that waits continues as a task, and its answer
//! comes back through the connection's outbox. Between the messages of a quick client the task
//! keeps its thread and reads the pipe directly, since the reactor is only polled when a thread
//! goes back to the runtime. Going back to the runtime for each try, as this transport once did,
//! made tokio wake a second worker each time (a worker that finds work after looking for it
//! wakes another), and a round trip took 15 or 80 µs depending on where the kernel put that
//! worker: see `BENCHMARKS.md`.

use std::future::{Future, poll_fn};
use std::io;
use std::panic::{self, AssertUnwindSafe};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, oneshot};
use tokio::task::JoinSet;

mod reader;
#[cfg(unix)]
mod standard;
mod writer;

use reader::{Frame, Reader};
use writer::Writer;

use crate::handler::{BoxFuture, panic_message};
use crate::protocol::jsonrpc::{self, INVALID_REQUEST, Id, Reply};
use crate::server::{Error, Limits, Session, Started, Step};
use crate::sink::{self, Answer, Sink};

/// The default time the transport polls for the next message before its thread sleeps.
const DEFAULT_BUSY_POLL: Duration = Duration::from_micros(50);

/// How many calls may wait for a place under the ceiling on calls under way. Past them, the
/// next message is not read until one starts: a client sending faster than the calls run
/// waits, instead of the server holding all it sent.
const QUEUED_CALLS: usize = 1024;

/// How many messages a connection handles before it lets the other tasks of its thread run:
/// the calls it made tasks wait for it, and a client that keeps sending would hold the thread.
const MESSAGES_PER_TURN: u32 = 128;

/// How the stdio transport carries a [`Started`] server on standard input and output: MCP
/// clients start a server as a process and speak to it on its pipes.
///
/// ```no_run
/// # async fn run() -> Result<(), toolwright::Error> {
/// use std::time::Duration;
///
/// use toolwright::stdio::Stdio;
///
/// let started = toolwright::server!().start().await?;
/// Stdio::new().busy_poll(Duration::ZERO).serve(started).await
/// # }
/// ```
#[derive(Clone, Debug)]
pub struct Stdio {
    busy_poll: Duration,
}

impl Default for Stdio {
    fn default() -> Stdio {
        Stdio {
            busy_poll: DEFAULT_BUSY_POLL,
        }
    }
}

impl Stdio {
    /// The transport as it is by default.
    #[must_use]
    pub fn new() -> Stdio {
        Stdio::default()
    }

    /// How long the transport polls for the client's next message before its thread sleeps
    /// (default 50 µs; zero: never), so that a quick client's request finds it awake instead
    /// of waking an idle CPU; only while messages come within twenty times this of each other
    /// and its CPU is not shared, so a client that sends now and then costs no CPU (see
    /// `BENCHMARKS.md`). It applies to standard input and output when they are pipes or
    /// sockets, read directly meanwhile; [`serve`] on other readers does not poll.
    #[must_use]
    pub fn busy_poll(mut self, poll: Duration) -> Stdio {
        self.busy_poll = poll;
        self
    }

    /// Serves `server` on standard input and output until the input closes; calls under way
    /// then get the server's shutdown grace to finish and send their answers.
    ///
    /// The connection runs as a task of its own: under `block_on` (`#[tokio::main]`) it would
    /// run on the main thread, and the calls it makes tasks would cross between threads.
    pub async fn serve(self, server: Started) -> Result<(), Error> {
        let busy_poll = self.busy_poll;
        let connection = tokio::spawn(async move {
            #[cfg(unix)]
            if let Some(pipes) = standard::Pipes::open() {
                tracing::debug!("stdin and stdout are pipes or sockets: served on the reactor");
                let standard::Pipes {
                    input,
                    output,
                    restore,
                } = pipes;
                let served = serve_polled(server, input, output, busy_poll).await;
                drop(restore);
                return served;
            }
            serve_polled(
                server,
                tokio::io::stdin(),
                tokio::io::stdout(),
                Duration::ZERO,
            )
            .await
        });
        match connection.await {
            Ok(served) => Ok(served?),
            Err(err) if err.is_panic() => std::panic::resume_unwind(err.into_panic()),
            Err(err) => Err(io::Error::other(err).into()),
        }
    }
}

/// Serves `server` over newline-delimited JSON-RPC on any reader and writer until the reader
/// ends; calls under way then get the server's shutdown grace to finish and send their answers,
/// and those still running are stopped.
///
/// While more than 1 MiB of what the server sends waits because the client does not read it,
/// the server reads nothing more, and it takes no more than its
/// [calls](crate::Server::max_concurrent_calls) and 1,024 waiting ones: its memory stays bounded
/// whatever the client does. An answer whose call the client cancels before it is written is
/// not written. Between messages it waits for the reader without polling it (polling sees input
/// come only on reads that do not wait for the reactor: standard input's pipes and sockets, see
/// [`Stdio::busy_poll`]).
pub async fn serve<R, W>(server: Started, input: R, output: W) -> Result<(), Error>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    Ok(serve_polled(server, input, output, Duration::ZERO).await?)
}

/// [`serve`], polling for a quick client's next message for `busy_poll`.
async fn serve_polled<R, W>(
    server: Started,
    mut input: R,
    output: W,
    busy_poll: Duration,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let limits = server.limits().clone();
    let (outgoing, outbox) = sink::channel();
    let mut connection = Connection {
        server,
        session: Arc::new(Session::new()),
        reader: Reader::new(limits.max_message_size, busy_poll),
        writer: Writer::new(outbox, output),
        outgoing,
        // A place for each call that may run and each that may wait to.
        admitted: Arc::new(Semaphore::new(
            limits.calls.available_permits() + QUEUED_CALLS,
        )),
        caught_up: CaughtUp::new(),
        calls: JoinSet::new(),
        streams: JoinSet::new(),
        limits,
        handled: 0,
    };
    loop {
        let frame = match poll_fn(|cx| connection.poll_frame(cx, &mut input)).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(err) => {
                tracing::error!(error = %err, "reading the input failed");
                break;
            }
        };
        connection.handle(frame).await;
    }
    connection.finish().await
}

/// One connection: what it reads, what it writes, and the calls that run as tasks.
struct Connection<W> {
    server: Started,
    session: Arc<Session>,
    reader: Reader,
    writer: Writer<W>,
    /// Where calls that run as tasks, and the session, send their messages and answers.
    outgoing: Sink,
    /// Places for calls that run as tasks (see [`QUEUED_CALLS`]).
    admitted: Arc<Semaphore>,
    /// Tells a call that waited for its slot when it may start.
    caught_up: CaughtUp,
    /// Calls that did not complete when first polled.
    calls: JoinSet<()>,
    /// The streams of `subscriptions/listen`, which only wait for changes.
    streams: JoinSet<()>,
    limits: Limits,
    /// Messages handled since the connection last let other tasks run.
    handled: u32,
}

impl<W: AsyncWrite + Unpin> Connection<W> {
    /// The next message. Finished calls are reaped; the messages already read are handled
    /// before anything is written, so that their answers go out together; nothing is read
    /// while the client does not read what it was sent. Between the messages of a quick client
    /// the input is polled for during the busy-poll time (see [`Reader`]), unless calls run as
    /// tasks: those need the thread.
    fn poll_frame<R: AsyncRead + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        input: &mut R,
    ) -> Poll<io::Result<Option<Frame>>> {
        loop {
            while let Poll::Ready(Some(_)) = self.calls.poll_join_next(cx) {}
            while let Poll::Ready(Some(_)) = self.streams.poll_join_next(cx) {}
            if !self.calls.is_empty() {
                // Before the input is found empty, so that those answered then asked before.
                self.caught_up.take_asks(cx);
            }
            let was_full = self.writer.is_full();
            if !was_full && let Some(frame) = self.reader.decode() {
                return Poll::Ready(Ok(Some(frame)));
            }
            let _ = self.writer.poll_write(cx);
            if self.writer.is_full() {
                // Woken when the output takes more.
                self.handled = 0;
                return Poll::Pending;
            }
            if was_full {
                // Messages read before the output filled up come first.
                continue;
            }
            match self.reader.poll_fill(cx, input) {
                Poll::Ready(Ok(0)) => return Poll::Ready(Ok(self.reader.decode_eof())),
                Poll::Ready(Ok(_)) => continue,
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                Poll::Pending => {}
            }
            if self.calls.is_empty()
                && tokio::task::coop::has_budget_remaining()
                && self.reader.poll_again()
            {
                continue;
            }
            // Everything the client sent is read and handled, its cancellations with it.
            self.caught_up.answer();
            self.handled = 0;
            return Poll::Pending;
        }
    }

    /// Handles one message; every [`MESSAGES_PER_TURN`] messages, lets the thread's other
    /// tasks run.
    async fn handle(&mut self, frame: Frame) {
        let step = match frame {
            Frame::Line(line) if line.iter().all(u8::is_ascii_whitespace) => Step::Nothing,
            Frame::Line(line) => match jsonrpc::parse(&line) {
                Ok(message) => self.server.handle(&self.session, message, &self.outgoing),
                Err(reply) => Step::Reply(reply),
            },
            Frame::TooLong => {
                let limit = self.limits.max_message_size;
                tracing::warn!(limit, "message refused: too large");
                Step::Reply(Reply::error(
                    &Id::Null,
                    INVALID_REQUEST,
                    &format!("message refused: it is longer than the limit of {limit} bytes"),
                ))
            }
        };
        match step {
            Step::Reply(reply) => self.writer.push(reply),
            Step::Nothing => {}
            Step::Call(call) => self.call(call).await,
            Step::Stream(stream) => {
                let outgoing = self.outgoing.clone();
                self.streams.spawn(async move {
                    if let Some(answer) = stream.await {
                        let _ = outgoing.answer(answer);
                    }
                });
            }
        }
        self.handled += 1;
        if self.handled >= MESSAGES_PER_TURN {
            self.handled = 0;
            self.writing(tokio::task::yield_now()).await;
        }
    }

    /// Runs a call as far as it goes at once; one that waits continues as a task, under the
    /// ceiling on calls under way.
    async fn call(&mut self, mut call: BoxFuture<Option<Answer>>) {
        // Neither semaphore is ever closed, so the permits always come.
        let admission = match Arc::clone(&self.admitted).try_acquire_owned() {
            Ok(admission) => admission,
            Err(_) => self.admission().await,
        };
        let Ok(slot) = Arc::clone(&self.limits.calls).try_acquire_owned() else {
            // Every place is taken: the call waits for one as a task, and then for the
            // connection to have read what the client sent meanwhile. A cancellation of the
            // call may be there: the call that frees the slot may have been cancelled by the
            // message before it.
            let slots = Arc::clone(&self.limits.calls);
            let outgoing = self.outgoing.clone();
            let asks = self.caught_up.asks.clone();
            self.calls.spawn(async move {
                let _admission = admission;
                let _slot = slots.acquire_owned().await;
                let (tell, told) = oneshot::channel();
                if asks.send(tell).is_ok() {
                    let _ = told.await;
                }
                if let Some(answer) = call.await {
                    let _ = outgoing.answer(answer);
                }
            });
            return;
        };
        let polled = poll_fn(|cx| {
            Poll::Ready(panic::catch_unwind(AssertUnwindSafe(|| {
                call.as_mut().poll(cx)
            })))
        })
        .await;
        match polled {
            // Still cancellable until it is written.
            Ok(Poll::Ready(answer)) => {
                if let Some(answer) = answer {
                    self.writer.push_answer(answer);
                }
            }
            Ok(Poll::Pending) => self.spawn(call, admission, slot),
            // A tool's panic is its call's answer; one here is ours, and only this call's.
            Err(payload) => {
                tracing::error!(message = panic_message(&*payload), "a call panicked");
            }
        }
    }

    /// Continues a call that waits as a task: polled there again, it wakes that task from
    /// then on.
    fn spawn(
        &mut self,
        call: BoxFuture<Option<Answer>>,
        admission: OwnedSemaphorePermit,
        slot: OwnedSemaphorePermit,
    ) {
        let outgoing = self.outgoing.clone();
        self.calls.spawn(async move {
            let _admission = admission;
            let _slot = slot;
            if let Some(answer) = call.await {
                let _ = outgoing.answer(answer);
            }
        });
    }

    /// Waits for a place for a call that runs as a task, writing what is queued meanwhile. The
    /// input is not read until one frees, so calls whose slot came start without waiting for
    /// it to be: one of them must end for the place to free.
    async fn admission(&mut self) -> OwnedSemaphorePermit {
        let admitted = Arc::clone(&self.admitted).acquire_owned();
        let mut admitted = pin!(admitted);
        let writer = &mut self.writer;
        let caught_up = &mut self.caught_up;
        let admission = poll_fn(|cx| {
            let _ = writer.poll_write(cx);
            caught_up.take_asks(cx);
            caught_up.answer();
            admitted.as_mut().poll(cx)
        })
        .await;
        admission.expect("the semaphore is never closed")
    }

    /// Waits for `future` while writing what is queued.
    async fn writing<T>(&mut self, future: impl Future<Output = T>) -> T {
        let mut future = pin!(future);
        let writer = &mut self.writer;
        poll_fn(|cx| {
            let _ = writer.poll_write(cx);
            future.as_mut().poll(cx)
        })
        .await
    }

    /// Once the input has ended: the calls under way get the grace period to finish and send
    /// their answers, everything queued is written, and the output is shut down.
    async fn finish(self) -> io::Result<()> {
        // Nobody is left to answer the requests calls sent to the client: they stop waiting,
        // and the streams that wait for changes end.
        self.session.close();
        self.server.stop();
        let Connection {
            mut writer,
            mut calls,
            mut streams,
            mut caught_up,
            ..
        } = self;
        // Nothing more will be read: calls that wait for their slot start when it comes.
        caught_up.close();
        let drained = tokio::time::timeout(
            self.limits.shutdown_grace,
            poll_fn(|cx| {
                let _ = writer.poll_write(cx);
                while ready!(calls.poll_join_next(cx)).is_some() {}
                while ready!(streams.poll_join_next(cx)).is_some() {}
                Poll::Ready(())
            }),
        )
        .await;
        if drained.is_err() {
            tracing::warn!(
                calls = calls.len() + streams.len(),
                grace = ?self.limits.shutdown_grace,
                "the input closed; calls still running after the grace period are stopped"
            );
            calls.shutdown().await;
            streams.shutdown().await;
        }
        drop(self.session);
        drop(self.outgoing);
        poll_fn(|cx| writer.poll_close(cx)).await
    }
}

/// When a call that waited for its slot may start: once the connection has read everything its
/// client sent, so that a cancellation sent before the slot came is read before the call starts
/// (and it never does). A call asks when its slot comes; the connection answers the calls that
/// asked before it last found its input empty.
struct CaughtUp {
    asks: mpsc::UnboundedSender<oneshot::Sender<()>>,
    asked: mpsc::UnboundedReceiver<oneshot::Sender<()>>,
    /// Asks taken, to answer once the input is found empty.
    waiting: Vec<oneshot::Sender<()>>,
}

impl CaughtUp {
    fn new() -> CaughtUp {
        let (asks, asked) = mpsc::unbounded_channel();
        CaughtUp {
            asks,
            asked,
            waiting: Vec::new(),
        }
    }

    /// Takes the asks sent so far; the next one wakes the connection.
    fn take_asks(&mut self, cx: &mut Context<'_>) {
        while let Poll::Ready(Some(ask)) = self.asked.poll_recv(cx) {
            self.waiting.push(ask);
        }
    }

    /// Lets the calls whose asks were taken start.
    fn answer(&mut self) {
        for ask in self.waiting.drain(..) {
            let _ = ask.send(());
        }
    }

    /// Lets every call start from now on, without asking.
    fn close(&mut self) {
        self.asked.close();
        while let Ok(ask) = self.asked.try_recv() {
            self.waiting.push(ask);
        }
        self.answer();
    }
}

//! What every call shares, a tool's, a prompt's or a resource read's: where its request comes
//! from, its registration under the request's id (so that the client may cancel it), and its run
//! through the [pipeline](super::pipeline) to the reply its request gets.

use std::fmt;
use std::future::Future;
use std::sync::atomic::AtomicU8;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::pipeline::{BoxError, Call, Outcome, Pipeline};
use super::round::Round;
use super::session::Session;
use super::step::Step;
use crate::catalog::Progressive;
use crate::context::{Inputs, Peer, RequestStateKey, Who};
use crate::live::ServerHandle;
use crate::protocol::jsonrpc::{INVALID_REQUEST, Id, Reply};
use crate::protocol::{Client, Wire};
use crate::registry::Registry;
use crate::sink::{self, Answer, Sink};
use crate::state::States;
use crate::tasks::Tasks;

/// What running calls needs, set up once at start.
pub(super) struct Calls {
    pub(super) registry: Arc<Registry>,
    /// The application state tools take.
    pub(super) states: Arc<States>,
    /// The progressive catalog's search, in that mode.
    pub(super) progressive: Option<Progressive>,
    /// How long a call waits for the client to answer a request of its own.
    pub(super) client_request_timeout: Duration,
    /// How long a call may run, unless its tool says otherwise.
    pub(super) call_timeout: Option<Duration>,
    /// Which tools are disabled, and the handle tools reach the server by.
    pub(super) server: ServerHandle,
    /// Seals the state of input-required results.
    pub(super) state_key: RequestStateKey,
    /// What every call runs through.
    pub(super) pipeline: Pipeline,
    /// The tasks calls become.
    pub(super) tasks: Arc<Tasks>,
}

/// A request run as a call of its session under its id: `notifications/cancelled` for it (or,
/// in 2026-07-28, the client closing its stream) stops it, and then no answer is sent.
pub(super) struct Registered {
    session: Arc<Session>,
    key: String,
    cancellation: CancellationToken,
}

impl Registered {
    /// Registers the request `id` of `session`; `Err` is the answer when a call under way has
    /// that id.
    pub(super) fn new(session: &Arc<Session>, id: &Id) -> Result<Registered, Reply> {
        let key = id.to_string();
        let cancellation = CancellationToken::new();
        if !session.start_call(&key, &cancellation) {
            return Err(Reply::error(
                id,
                INVALID_REQUEST,
                &format!("request id {id} is already in use by a request under way"),
            ));
        }
        Ok(Registered {
            session: Arc::clone(session),
            key,
            cancellation,
        })
    }

    /// What the run's context sees as its cancellation.
    pub(super) fn cancellation(&self) -> CancellationToken {
        self.cancellation.clone()
    }

    /// The call that makes `answer`, unless it is cancelled first. The call stays registered
    /// until its answer is taken to be written, and a cancellation read until then stops it
    /// too: the client asked for none.
    pub(super) fn run(self, answer: impl Future<Output = Reply> + Send + 'static) -> Step {
        Step::Call(Box::pin(async move {
            // Cancellation first: a run that notices it and returns sends no answer either.
            let answered = tokio::select! {
                biased;
                () = self.cancellation.cancelled() => None,
                answer = answer => Some(answer),
            };
            Some(Answer::of(self, answered?))
        }))
    }
}

impl sink::Cancellable for Registered {
    fn is_cancelled(&self) -> bool {
        self.cancellation.is_cancelled()
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.session.end_call(&self.key);
    }
}

impl fmt::Debug for Registered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Registered")
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

/// Where a request comes from: its session, where what it sends while it runs goes, the era it
/// is answered in, and who asks.
pub(super) struct Origin<'a> {
    pub(super) session: &'a Arc<Session>,
    pub(super) sink: &'a Sink,
    /// Who sent the request.
    pub(super) who: Who,
    pub(super) wire: Wire,
    pub(super) caller: Caller,
}

/// Who a call answers to: the log level its messages must pass, what the client declared, and
/// the protocol version it speaks.
pub(super) struct Caller {
    pub(super) log_level: Arc<AtomicU8>,
    pub(super) client: Client,
    pub(super) protocol_version: &'static str,
}

impl Calls {
    /// The way back to the client for a request from `origin`: its sink, what it declared, its
    /// session's requests, and under 2026-07-28 the `inputs` its questions are answered from.
    pub(super) fn peer(&self, origin: &Origin<'_>, inputs: Option<Arc<Inputs>>) -> Peer {
        let Origin {
            session,
            sink,
            wire,
            caller,
            who: _,
        } = origin;
        Peer {
            outgoing: (*sink).clone(),
            log_level: Arc::clone(&caller.log_level),
            client_capabilities: caller.client.capabilities.clone(),
            client_info: caller.client.info.clone(),
            requests: Arc::clone(session.requests()),
            request_timeout: self.client_request_timeout,
            protocol_version: caller.protocol_version,
            inputs,
            session_id: session.id(),
            // 2026-07-28 has no sessions: each request's session ends with it.
            session: (!wire.is_stateless()).then(|| Arc::clone(session.state())),
            refused_capability: OnceLock::new(),
            task: None,
        }
    }

    /// Runs `call` through the pipeline as the request `id` it `registered`, in `round` when
    /// the request has one; `answer` makes the reply of its outcome, in the request's era.
    pub(super) fn start(
        &self,
        registered: Registered,
        call: Call,
        round: Option<Round>,
        id: Id,
        wire: Wire,
        answer: impl FnOnce(Result<Outcome, BoxError>, &Id, &Wire) -> Reply + Send + 'static,
    ) -> Step {
        let pipeline = self.pipeline.clone();
        let state_key = self.state_key.clone();
        registered.run(async move {
            let reply = |outcome| answer(outcome, &id, &wire);
            Round::answer(round, pipeline.call(call), &state_key, &id, &wire, reply).await
        })
    }
}

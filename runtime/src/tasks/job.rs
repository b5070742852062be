//! A task this process runs: its record as this process last wrote it, its cancellation, and
//! the questions it waits on. Every change of status goes through [`Job::write`], one at a
//! time, so that the store sees them in the order they happened.
//!
//! Each write replaces the record only if no other process wrote it since this one last did
//! ([`TaskStore::replace`]). Another process writes a task it does not run for two reasons: to
//! end it (a cancellation, or its replica taken for dead), which stops the run; or to hand it a
//! client's answers (`input_responses`), which go to the questions they name before the write is
//! tried again. A store that other processes share is also read every [`WATCH`], for a run that
//! writes nothing meanwhile.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Map, Value};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

use super::{TaskRecord, TaskStatus, TaskStore};
use crate::sink::Sink;
use crate::store::StoreError;

/// How often a task that runs here is read from a store other processes share, for what they
/// wrote to it.
pub(crate) const WATCH: Duration = Duration::from_millis(500);

/// How many times a write is tried while other processes write the same task.
const TRIES: usize = 8;

/// The tasks this process runs, by id: what `tasks/cancel` and `tasks/update` reach.
#[derive(Default)]
pub(crate) struct Jobs {
    running: Mutex<HashMap<String, Arc<Job>>>,
}

impl Jobs {
    fn running(&self) -> MutexGuard<'_, HashMap<String, Arc<Job>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn insert(&self, job: &Arc<Job>) {
        self.running().insert(job.id().to_owned(), Arc::clone(job));
    }

    pub(crate) fn remove(&self, id: &str) {
        self.running().remove(id);
    }

    pub(crate) fn get(&self, id: &str) -> Option<Arc<Job>> {
        self.running().get(id).cloned()
    }

    /// The server stops: every task it runs stops too, and ends failed.
    pub(crate) fn stop(&self) {
        for job in self.running().values() {
            job.stopping.store(true, Ordering::Release);
            job.cancellation.cancel();
        }
    }
}

/// Where a run that may become a task stands (protocol 2026-07-28, where the server decides).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The tool asked to ask its questions first ([`Context::defer_task`](crate::Context::defer_task)):
    /// they are asked within the call, as input-required results.
    Deferred,
    /// The tool asked for its task to begin ([`Context::start_task`](crate::Context::start_task)).
    Wanted,
    /// It is a task: stored, answered with its id, its questions asked through `tasks/get`.
    Task,
}

/// One task this process runs.
pub(crate) struct Job {
    id: String,
    /// How long it is kept, from its creation: the bound on its run.
    ttl: Duration,
    store: Arc<dyn TaskStore>,
    /// The record as this process last wrote it, and whether it is in the store yet (a run of
    /// protocol 2026-07-28 is stored once it becomes a task). Held across the store's write,
    /// so that writes reach it in order.
    record: tokio::sync::Mutex<Kept>,
    cancellation: CancellationToken,
    /// Questions waiting for the client's answer, by key: what was asked, and where the answer
    /// goes.
    questions: Mutex<BTreeMap<String, Question>>,
    phase: watch::Sender<Phase>,
    /// Asks its questions as requests to the client (the handshake era), rather than through
    /// `tasks/get` and `tasks/update`.
    requests: bool,
    /// The status message the tool set last and the store does not have yet: the next write
    /// takes it.
    message: Mutex<Option<String>>,
    /// Stopped because the server stops, not because its client cancelled it.
    stopping: AtomicBool,
    /// Where its requests to the client go (the handshake era), once the client has a stream
    /// open for them: the latest `tasks/result` that waits for it. Before, the stream of the
    /// call that created it.
    outgoing: watch::Sender<Option<Sink>>,
}

struct Kept {
    record: TaskRecord,
    stored: bool,
    /// The `updated_ms` of the record as the store holds it, as far as this process knows:
    /// what the next write expects to replace.
    seen: u64,
}

struct Question {
    request: Value,
    answer: oneshot::Sender<Value>,
}

/// What `tasks/update` did with the answers it carried.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Answered {
    /// The task was waiting for input; the keys it knew were answered, the others ignored.
    Taken,
    /// The task waits for no input.
    NotWaiting(TaskStatus),
}

impl Job {
    /// A job for `record`, kept in `store`; `requests`: in the handshake era, whose questions
    /// are requests to the client. It is a task from the start unless `phase` says otherwise.
    pub(crate) fn new(
        record: TaskRecord,
        store: Arc<dyn TaskStore>,
        cancellation: CancellationToken,
        phase: Phase,
        requests: bool,
    ) -> Arc<Job> {
        Arc::new(Job {
            id: record.id.clone(),
            ttl: Duration::from_millis(record.ttl_ms),
            store,
            record: tokio::sync::Mutex::new(Kept {
                seen: record.updated_ms,
                record,
                stored: false,
            }),
            cancellation,
            questions: Mutex::new(BTreeMap::new()),
            phase: watch::Sender::new(phase),
            requests,
            message: Mutex::new(None),
            stopping: AtomicBool::new(false),
            outgoing: watch::Sender::new(None),
        })
    }

    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// How long it is kept, from its creation: the bound on its run.
    pub(crate) fn ttl(&self) -> Duration {
        self.ttl
    }

    pub(crate) fn cancellation(&self) -> &CancellationToken {
        &self.cancellation
    }

    /// Whether it was stopped because the server stops.
    pub(crate) fn stopped_by_server(&self) -> bool {
        self.stopping.load(Ordering::Acquire)
    }

    /// Whether its questions go to the client as requests (the handshake era).
    pub(crate) fn asks_by_request(&self) -> bool {
        self.requests
    }

    pub(crate) fn phase(&self) -> Phase {
        *self.phase.borrow()
    }

    /// A run that asked to ask first: not a task until it says so.
    pub(crate) fn defer(&self) {
        self.phase.send_if_modified(|phase| {
            let questions = self.questions().is_empty();
            let deferred = *phase == Phase::Task && questions && !self.requests;
            if deferred {
                *phase = Phase::Deferred;
            }
            deferred
        });
    }

    /// The run wants its task to begin: completes once it has.
    pub(crate) async fn start(&self) {
        self.phase.send_if_modified(|phase| {
            let wanted = *phase == Phase::Deferred;
            if wanted {
                *phase = Phase::Wanted;
            }
            wanted
        });
        let mut phase = self.phase.subscribe();
        let _ = phase.wait_for(|p| *p == Phase::Task).await;
    }

    /// Completes once the run wants its task to begin (at once unless it deferred it).
    pub(crate) async fn wanted(&self) {
        let mut phase = self.phase.subscribe();
        let _ = phase.wait_for(|p| *p != Phase::Deferred).await;
    }

    /// Stores the task and makes the run one: `false` when its owner holds `cap` tasks
    /// already. The record returned is what the client is answered with.
    pub(crate) async fn store(&self, cap: usize) -> Result<Option<TaskRecord>, StoreError> {
        let mut kept = self.record.lock().await;
        if !self.store.create(&kept.record, cap).await? {
            return Ok(None);
        }
        kept.stored = true;
        kept.seen = kept.record.updated_ms;
        self.phase.send_replace(Phase::Task);
        Ok(Some(kept.record.clone()))
    }

    /// Changes the record with `change` and writes it, if the task has not ended; returns
    /// whether it was written (or, before it is stored, kept for when it is).
    pub(crate) async fn write(
        &self,
        change: impl FnOnce(&mut TaskRecord),
    ) -> Result<bool, StoreError> {
        let mut kept = self.record.lock().await;
        if kept.record.status.is_final() {
            return Ok(false);
        }
        if let Some(message) = self.take_message() {
            kept.record.status_message = Some(message);
        }
        change(&mut kept.record);
        if !kept.stored {
            return Ok(true);
        }
        self.save(&mut kept).await
    }

    /// Writes the record, unless another process ended the task or it is forgotten: then the
    /// run is cancelled, and `false`. A write that another came before takes what that one
    /// brought (a client's answers), and is tried again.
    async fn save(&self, kept: &mut Kept) -> Result<bool, StoreError> {
        for _ in 0..TRIES {
            if self.store.replace(&kept.record, kept.seen).await? {
                kept.seen = kept.record.updated_ms;
                return Ok(true);
            }
            match self.store.get(&self.id).await? {
                Some(stored) if !stored.status.is_final() => self.absorb(kept, stored),
                // Ended elsewhere (cancelled through another process), or forgotten.
                _ => {
                    self.cancellation.cancel();
                    return Ok(false);
                }
            }
        }
        Err(StoreError::new(format!(
            "task `{}` was written by other processes each of the {TRIES} times this one tried \
             to write it",
            self.id
        )))
    }

    /// Takes what another process wrote to the task, as `stored`: the client's answers it
    /// carries go to the questions they name, which stop waiting; the next write replaces it.
    fn absorb(&self, kept: &mut Kept, stored: TaskRecord) {
        kept.seen = stored.updated_ms;
        let record = &mut kept.record;
        record.updated_ms = record.updated_ms.max(stored.updated_ms);
        record.touched();
        if stored.input_responses.is_empty() || record.status.is_final() {
            return;
        }
        let left = self.deliver(stored.input_responses);
        if record.status == TaskStatus::InputRequired && left.is_empty() {
            record.status = TaskStatus::Working;
        }
        record.input_requests = left;
    }

    /// Reads the task from the store every [`WATCH`], for as long as it runs: once another
    /// process ended it (or it is forgotten) the run is cancelled, and the answers another
    /// process handed it are taken. Meant for a store that other processes share; never
    /// completes.
    pub(crate) async fn watch(&self) {
        let mut ticks = tokio::time::interval(WATCH);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        ticks.tick().await;
        loop {
            ticks.tick().await;
            let stored = match self.store.get(&self.id).await {
                Ok(Some(stored)) if !stored.status.is_final() => stored,
                Ok(_) => {
                    self.cancellation.cancel();
                    return std::future::pending().await;
                }
                Err(error) => {
                    tracing::debug!(task = self.id(), %error, "the task could not be read");
                    continue;
                }
            };
            if stored.input_responses.is_empty() {
                continue;
            }
            let mut kept = self.record.lock().await;
            if kept.record.status.is_final() {
                continue;
            }
            self.absorb(&mut kept, stored);
            if let Err(error) = self.save(&mut kept).await {
                tracing::warn!(task = self.id(), %error, "the client's answers were not taken");
            }
        }
    }

    /// The client's stream for the task's requests, from a `tasks/result` that waits for it.
    pub(crate) fn set_outgoing(&self, sink: Sink) {
        self.outgoing.send_replace(Some(sink));
    }

    /// The stream the task's requests go to now, if a `tasks/result` gave one.
    pub(crate) fn outgoing(&self) -> Option<Sink> {
        self.outgoing.borrow().clone()
    }

    /// Completes when a `tasks/result` gives the task another stream.
    pub(crate) async fn outgoing_changed(&self) {
        let mut outgoing = self.outgoing.subscribe();
        outgoing.borrow_and_update();
        let _ = outgoing.changed().await;
    }

    fn take_message(&self) -> Option<String> {
        self.message
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    /// Notes the tool's status message, and writes it in the background: a later write (the
    /// task's end, say) takes it if this one has not yet, so the last message set is kept.
    pub(crate) fn note(self: &Arc<Self>, message: String) {
        *self.message.lock().unwrap_or_else(|e| e.into_inner()) = Some(message);
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let job = Arc::clone(self);
        runtime.spawn(async move {
            let written = job.write(TaskRecord::touched).await;
            if let Err(error) = written {
                tracing::warn!(task = job.id(), %error, "the task's status message was not stored");
            }
        });
    }

    fn questions(&self) -> MutexGuard<'_, BTreeMap<String, Question>> {
        self.questions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What waits for the client: every question's request, by key.
    fn asked(&self) -> Map<String, Value> {
        self.questions()
            .iter()
            .map(|(key, q)| (key.clone(), q.request.clone()))
            .collect()
    }

    /// Asks the client `request` (`{method, params}`) under `key` through `tasks/get`, and
    /// waits for the answer `tasks/update` brings; `None` when the task is cancelled first.
    pub(crate) async fn ask(
        &self,
        key: String,
        request: Value,
    ) -> Result<Option<Value>, StoreError> {
        let (answer, answered) = oneshot::channel();
        self.questions().insert(key, Question { request, answer });
        let asked = self.asked();
        self.write(|record| {
            record.input_requests = asked;
            record.moved(TaskStatus::InputRequired, None);
        })
        .await?;
        Ok(tokio::select! {
            answer = answered => answer.ok(),
            () = self.cancellation.cancelled() => None,
        })
    }

    /// The task waits on the client's answer to a request of ours (the handshake era) while
    /// `waiting`, and works again after.
    pub(crate) async fn waiting(&self, waiting: bool) -> Result<bool, StoreError> {
        let status = if waiting {
            TaskStatus::InputRequired
        } else {
            TaskStatus::Working
        };
        self.write(|record| record.moved(status, None)).await
    }

    /// Gives the answers of a `tasks/update` to the questions they name; answers to keys the
    /// task did not ask are ignored. The record says what still waits before this returns.
    pub(crate) async fn answer(&self, answers: Map<String, Value>) -> Result<Answered, StoreError> {
        let mut kept = self.record.lock().await;
        let status = kept.record.status;
        if status != TaskStatus::InputRequired {
            return Ok(Answered::NotWaiting(status));
        }
        let left = self.deliver(answers);
        let message = self.take_message();
        let record = &mut kept.record;
        if message.is_some() {
            record.status_message = message;
        }
        let status = if left.is_empty() {
            TaskStatus::Working
        } else {
            TaskStatus::InputRequired
        };
        record.input_requests = left;
        record.moved(status, None);
        if kept.stored {
            self.save(&mut kept).await?;
        }
        Ok(Answered::Taken)
    }

    /// Gives each answer to the question it names, which stops waiting; answers to keys the
    /// task did not ask are ignored. The questions still waiting, by key.
    fn deliver(&self, answers: Map<String, Value>) -> Map<String, Value> {
        {
            let mut questions = self.questions();
            for (key, answer) in answers {
                if let Some(question) = questions.remove(&key) {
                    let _ = question.answer.send(answer);
                }
            }
        }
        self.asked()
    }

    /// Ends the task with `status`, its result or error set by `end`, unless it ended already.
    pub(crate) async fn finish(
        &self,
        status: TaskStatus,
        end: impl FnOnce(&mut TaskRecord),
    ) -> Result<bool, StoreError> {
        self.write(|record| {
            end(record);
            record.input_requests.clear();
            record.moved(status, None);
        })
        .await
    }
}

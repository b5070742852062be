//! How a call's answer reaches the client: JSON when the result comes first, else a stream of
//! events, kept for resumption in the handshake era and cancelling the call when closed under
//! protocol 2026-07-28.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use tokio::sync::oneshot;

use super::super::events::{CancelOnDrop, EventLog};
use super::super::response::json;
use super::super::stateless;
use super::{Delivery, Endpoint};
use crate::handler::BoxFuture;
use crate::protocol::jsonrpc::{INTERNAL_ERROR, Id, Reply};
use crate::sink::{Answer, Outbox};

impl Endpoint {
    /// Runs a call on a task of its own. The answer is plain JSON when the result comes first,
    /// and a stream of events when the call sends a message (or asks to end its stream) before
    /// it.
    ///
    /// In the handshake era the call finishes even if the client goes away (disconnecting is no
    /// cancellation) and what it sends is kept for the client to resume; under protocol
    /// 2026-07-28 the client going away cancels it. A call `slotted` waits for a place under
    /// the ceiling on calls under way; a stream of changes takes none.
    pub(super) async fn call(
        &self,
        call: BoxFuture<Option<Answer>>,
        mut notifications: Outbox,
        delivery: Delivery,
        id: Option<Id>,
        slotted: bool,
    ) -> Response {
        let id = id.unwrap_or(Id::Null);
        let (report, mut outcome) = oneshot::channel();
        let stop = self.stop.clone();
        let slots = slotted.then(|| Arc::clone(&self.limits.calls));
        self.calls.spawn(async move {
            let run = async {
                // The semaphore is never closed, so the permit always comes.
                let _permit = match slots {
                    Some(slots) => Some(slots.acquire_owned().await),
                    None => None,
                };
                // The answer is taken as soon as it is made: a cancellation read until then
                // stops it.
                call.await.and_then(Answer::take)
            };
            tokio::select! {
                response = run => { let _ = report.send(response); }
                () = stop.cancelled() => {}
            }
        });
        // Held while the answer is awaited, and then by the stream: dropped early, the client
        // has gone.
        let cancel = match &delivery {
            Delivery::Cancellable { session } => Some(CancelOnDrop(Arc::clone(session))),
            Delivery::Resumable { .. } => None,
        };
        let (ids, polling) = match &delivery {
            Delivery::Resumable { polling, .. } => (true, *polling),
            Delivery::Cancellable { .. } => (false, false),
        };
        // A request to end the stream only counts where streams can be resumed.
        let counts = |message: &Vec<u8>| polling || !message.is_empty();
        let first = loop {
            tokio::select! {
                biased;
                Some(message) = notifications.recv() => {
                    if counts(&message) {
                        break message;
                    }
                }
                ended = &mut outcome => {
                    let mut sent: Vec<Vec<u8>> = Vec::new();
                    while let Some(message) = notifications.try_recv() {
                        sent.extend(Some(message).filter(counts));
                    }
                    if sent.is_empty() {
                        return match ended {
                            // In 2026-07-28 a call refused as a whole (a capability it needs)
                            // has its error's status; a result is 200.
                            Ok(Some(response)) => match delivery {
                                Delivery::Cancellable { .. } => stateless::response(response),
                                Delivery::Resumable { .. } => {
                                    json(StatusCode::OK, response.into_bytes())
                                }
                            },
                            // Cancelled: no response is sent, as the protocol asks.
                            Ok(None) => StatusCode::ACCEPTED.into_response(),
                            Err(_) => json(StatusCode::OK, stopped(&id).into_bytes()),
                        };
                    }
                    let log = self.open_stream(&delivery, ids, polling, &id);
                    for message in &sent {
                        log.push(message);
                    }
                    finish(&log, ended, &id);
                    return self.answer(&log, delivery, cancel);
                }
            }
        };
        let log = self.open_stream(&delivery, ids, polling, &id);
        log.push(&first);
        let pumped = Arc::clone(&log);
        // What the call sends from now on goes to the log, read or not.
        self.calls.spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    Some(message) = notifications.recv() => pumped.push(&message),
                    ended = &mut outcome => {
                        while let Some(message) = notifications.try_recv() {
                            pumped.push(&message);
                        }
                        finish(&pumped, ended, &id);
                        break;
                    }
                }
            }
        });
        self.answer(&log, delivery, cancel)
    }

    /// A new stream's log, the answer to `request`, kept for resumption in the handshake era
    /// (in the session store too, for a client that resumes on another process).
    pub(super) fn open_stream(
        &self,
        delivery: &Delivery,
        ids: bool,
        polling: bool,
        request: &Id,
    ) -> Arc<EventLog> {
        let stream = self.streams.fetch_add(1, Ordering::Relaxed);
        match delivery {
            Delivery::Resumable { replay, .. } => {
                let log = replay.log(stream, ids, polling, request);
                replay.keep(&log);
                log
            }
            Delivery::Cancellable { .. } => EventLog::new(stream, ids, polling),
        }
    }

    /// The stream as the answer to the POST: its events from the first.
    fn answer(
        &self,
        log: &Arc<EventLog>,
        delivery: Delivery,
        cancel: Option<CancelOnDrop>,
    ) -> Response {
        let replay = match delivery {
            Delivery::Resumable { replay, .. } => Some(replay),
            Delivery::Cancellable { .. } => None,
        };
        log.reader(0, replay, cancel).into_response()
    }
}

/// The call has ended: its response (if it has one) is the stream's last event.
fn finish(log: &EventLog, ended: Result<Option<Reply>, oneshot::error::RecvError>, id: &Id) {
    match ended {
        Ok(Some(response)) => log.push(&response.into_bytes()),
        // Cancelled: no response is sent, as the protocol asks.
        Ok(None) => {}
        Err(_) => log.push(&stopped(id).into_bytes()),
    }
    log.end();
}

/// The response to a call the server stopped at the end of its grace period: the client would
/// otherwise wait for one that never comes.
fn stopped(id: &Id) -> Reply {
    Reply::error(
        id,
        INTERNAL_ERROR,
        "the server stopped before the call finished",
    )
}

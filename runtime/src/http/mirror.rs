//! Streams resumed on another process: each event of a handshake-era stream is written to the
//! session store as well as kept here, and a `GET` with `Last-Event-ID` that reaches a process
//! without the stream reads it from the store, waiting for the events still to come from the
//! process that runs the call. When that process stops saying it is alive (killed, say), the
//! resumed stream ends with an error for the call, so that no client waits for an answer that
//! cannot come.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::mpsc;

use super::response::event_stream;
use crate::protocol::jsonrpc::{INTERNAL_ERROR, Id, Reply};
use crate::store::SessionStore;

/// How often a process says it is alive, and for how long each time: a process silent for the
/// latter is taken for dead.
pub(super) const HEARTBEAT_EVERY: Duration = Duration::from_secs(1);
pub(super) const HEARTBEAT_TTL: Duration = Duration::from_secs(3);

/// How long a resumed stream waits for an event before it asks whether its process is alive.
const WAIT: Duration = Duration::from_secs(1);

/// How long a stream unknown to the store may take to appear in it, written by its process.
const FIRST_WRITE: Duration = Duration::from_secs(1);

/// How many times a write of events is tried (over about 3 seconds) before they are given up.
const WRITE_ATTEMPTS: u32 = 5;

/// The most events written to the store at once.
const BATCH: usize = 256;

/// What a log sends its mirror.
pub(super) enum ToMirror {
    Event(u64, Bytes),
    End,
}

/// Where a session's streams are mirrored: the store, under the session's id.
#[derive(Clone)]
pub(super) struct Mirror {
    pub(super) store: Arc<dyn SessionStore>,
    pub(super) session: Arc<str>,
    pub(super) replica: Arc<str>,
    /// How long a stream's events are kept after its last one.
    pub(super) lifetime: Duration,
}

/// Where a stream comes from, kept with its events: the process that sends it, and the request
/// it answers.
#[derive(Serialize, Deserialize)]
struct StreamOrigin {
    replica: String,
    request: Value,
}

impl Mirror {
    /// Starts mirroring stream number `stream`, the answer to `request`: what is sent on the
    /// returned channel is written to the store, in order, in batches.
    pub(super) fn stream(&self, stream: u64, request: &Id) -> mpsc::UnboundedSender<ToMirror> {
        let (sender, mut mirrored) = mpsc::unbounded_channel();
        let mirror = self.clone();
        let origin = StreamOrigin {
            replica: self.replica.to_string(),
            request: request.to_value(),
        };
        let origin = serde_json::to_vec(&origin).expect("an origin serialises");
        tokio::spawn(async move {
            let Mirror {
                store,
                session,
                lifetime,
                ..
            } = mirror;
            let opened = retried(|| store.open_stream(&session, stream, &origin, lifetime)).await;
            if let Err(err) = opened {
                tracing::warn!(error = %err, "a stream is not kept in the store: only this process can resume it");
                return;
            }
            let mut next = 0;
            while let Some(first) = mirrored.recv().await {
                let mut batch = vec![first];
                while batch.len() < BATCH {
                    match mirrored.try_recv() {
                        Ok(more) => batch.push(more),
                        Err(_) => break,
                    }
                }
                let mut events = Vec::with_capacity(batch.len());
                let mut ended = false;
                let mut first_number = None;
                for item in batch {
                    match item {
                        ToMirror::Event(n, event) => {
                            first_number.get_or_insert(n);
                            events.push(event.to_vec());
                        }
                        ToMirror::End => ended = true,
                    }
                }
                let first = first_number.unwrap_or(next);
                next = first + events.len() as u64;
                let written = retried(|| {
                    store.append_events(&session, stream, first, &events, ended, lifetime)
                })
                .await;
                if let Err(err) = written {
                    tracing::warn!(error = %err, "events of a stream are not in the store");
                }
                if ended {
                    break;
                }
            }
        });
        sender
    }
}

impl Mirror {
    /// Forgets stream number `stream` in the store: one of too many kept for its session.
    pub(super) fn forget(&self, stream: u64) {
        let mirror = self.clone();
        tokio::spawn(async move {
            if let Err(err) = mirror.store.forget_stream(&mirror.session, stream).await {
                tracing::debug!(error = %err, "a stream stays in the store until it expires");
            }
        });
    }
}

/// A write to the store, tried again while it fails, [`WRITE_ATTEMPTS`] times in all, waiting
/// twice as long each time: a store reconnecting fails a write or two, and a reader elsewhere
/// would wait for events that never come.
async fn retried<'a, F>(mut write: impl FnMut() -> F) -> Result<(), crate::store::StoreError>
where
    F: std::future::Future<Output = Result<(), crate::store::StoreError>> + 'a,
{
    let mut delay = Duration::from_millis(100);
    let mut attempt = 1;
    loop {
        match write().await {
            Err(_) if attempt < WRITE_ATTEMPTS => {
                tokio::time::sleep(delay).await;
                delay *= 2;
                attempt += 1;
            }
            done => return done,
        }
    }
}

/// A stream read from the store from event number `from`: what a process sends when a client
/// resumes, on it, a stream another process began.
pub(super) struct Resumed {
    store: Arc<dyn SessionStore>,
    session: Arc<str>,
    stream: u64,
    next: u64,
    pending: VecDeque<Bytes>,
    origin: Option<StreamOrigin>,
    done: bool,
    /// Since when its process has been seen without a heartbeat.
    silent_since: Option<tokio::time::Instant>,
}

impl Resumed {
    /// The stream `<stream>-<n>` names, from the event after it, if the store keeps it.
    pub(super) async fn open(
        store: Arc<dyn SessionStore>,
        session: &str,
        last_event_id: &str,
    ) -> Result<Option<Resumed>, crate::store::StoreError> {
        let Some((stream, n)) = last_event_id.trim().split_once('-') else {
            return Ok(None);
        };
        let (Ok(stream), Ok(n)) = (stream.parse::<u64>(), n.parse::<u64>()) else {
            return Ok(None);
        };
        let Some(from) = n.checked_add(1) else {
            return Ok(None);
        };
        // The process that sends the stream writes it to the store a moment after it sent it:
        // a client quick to resume may come first.
        let deadline = tokio::time::Instant::now() + FIRST_WRITE;
        let first = loop {
            match store
                .read_events(session, stream, from, Duration::ZERO)
                .await?
            {
                Some(first) => break first,
                None if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                None => return Ok(None),
            }
        };
        let mut resumed = Resumed {
            store,
            session: Arc::from(session),
            stream,
            next: from,
            pending: VecDeque::new(),
            origin: serde_json::from_slice(&first.origin).ok(),
            done: false,
            silent_since: None,
        };
        resumed.take(first.events, first.ended);
        Ok(Some(resumed))
    }

    fn take(&mut self, events: Vec<(u64, Vec<u8>)>, ended: bool) {
        for (n, event) in events {
            // Each event once, in order.
            if n >= self.next {
                self.pending.push_back(Bytes::from(event));
                self.next = n + 1;
            }
        }
        self.done |= ended;
    }

    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, Resumed)> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some((Ok(event), self));
            }
            if self.done {
                return None;
            }
            let read = self
                .store
                .read_events(&self.session, self.stream, self.next, WAIT)
                .await;
            match read {
                Ok(Some(stored)) if stored.events.is_empty() && !stored.ended => {
                    self.check_origin().await;
                }
                Ok(Some(stored)) => self.take(stored.events, stored.ended),
                // Expired, or the store does not answer: the client may resume again later.
                Ok(None) | Err(_) => self.done = true,
            }
        }
    }

    /// Nothing came: if the process that sends the stream has stopped, nothing will, and the
    /// call it answers ends with an error. A process is taken for dead once it has gone
    /// without a heartbeat for a whole [`HEARTBEAT_TTL`] of checks: a store that restarted has
    /// lost every heartbeat until the next.
    async fn check_origin(&mut self) {
        let Some(origin) = &self.origin else {
            return;
        };
        // A store that does not answer is no proof of a death.
        if self.store.alive(&origin.replica).await.unwrap_or(true) {
            self.silent_since = None;
            return;
        }
        let since = *self
            .silent_since
            .get_or_insert_with(tokio::time::Instant::now);
        if since.elapsed() < HEARTBEAT_TTL {
            return;
        }
        tracing::warn!(replica = %origin.replica, "a resumed stream's process stopped");
        self.done = true;
        let request = Id::from_value(origin.request.clone());
        if request != Id::Null {
            let error = Reply::error(
                &request,
                INTERNAL_ERROR,
                "the server process that ran this call stopped before it answered: the call \
                 may or may not have taken effect",
            );
            let mut event = b"data: ".to_vec();
            event.extend_from_slice(&error.into_bytes());
            event.extend_from_slice(b"\n\n");
            self.pending.push_back(Bytes::from(event));
        }
    }

    pub(super) fn into_response(self) -> Response {
        event_stream(Body::from_stream(futures_util::stream::unfold(
            self,
            Resumed::next,
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::MemoryStore;

    async fn read_all(resumed: Resumed) -> Vec<String> {
        let mut events = Vec::new();
        let mut state = resumed;
        while let Some((Ok(event), next)) = state.next().await {
            events.push(String::from_utf8(event.to_vec()).unwrap());
            state = next;
        }
        events
    }

    #[tokio::test]
    async fn a_stream_is_resumed_from_the_store_after_the_event_named() {
        let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
        let mirror = Mirror {
            store: Arc::clone(&store),
            session: Arc::from("s"),
            replica: Arc::from("a"),
            lifetime: Duration::from_secs(60),
        };
        store.heartbeat("a", Duration::from_secs(60)).await.unwrap();
        let sender = mirror.stream(7, &Id::Number(3.into()));
        for n in 0..3 {
            let event = format!("id: 7-{n}\ndata: {n}\n\n");
            sender.send(ToMirror::Event(n, Bytes::from(event))).unwrap();
        }
        let resumed = Resumed::open(Arc::clone(&store), "s", "7-0");
        // The events come in while the reader waits; then the stream ends.
        let later = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            sender
                .send(ToMirror::Event(3, Bytes::from("id: 7-3\ndata: 3\n\n")))
                .unwrap();
            sender.send(ToMirror::End).unwrap();
        };
        let (resumed, ()) = tokio::join!(resumed, later);
        let events = read_all(resumed.unwrap().expect("the store keeps the stream")).await;
        assert_eq!(
            events,
            [
                "id: 7-1\ndata: 1\n\n",
                "id: 7-2\ndata: 2\n\n",
                "id: 7-3\ndata: 3\n\n"
            ]
        );
        for unknown in ["7", "x-1", "7-x", "8-0"] {
            let resumed = Resumed::open(Arc::clone(&store), "s", unknown).await;
            assert!(resumed.unwrap().is_none(), "{unknown}");
        }
    }

    #[tokio::test]
    async fn a_stream_whose_process_died_ends_with_an_error_for_its_call() {
        let store: Arc<dyn SessionStore> = Arc::new(MemoryStore::new());
        let mirror = Mirror {
            store: Arc::clone(&store),
            session: Arc::from("s"),
            replica: Arc::from("gone"),
            lifetime: Duration::from_secs(60),
        };
        let sender = mirror.stream(1, &Id::String("call-9".into()));
        sender
            .send(ToMirror::Event(0, Bytes::from("id: 1-0\ndata: {}\n\n")))
            .unwrap();
        // The process that sends the stream never said it was alive.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let resumed = Resumed::open(Arc::clone(&store), "s", "1-0").await.unwrap();
        let events = read_all(resumed.unwrap()).await;
        assert_eq!(events.len(), 1, "{events:?}");
        let error: Value = serde_json::from_str(events[0].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(error["id"], "call-9");
        assert_eq!(error["error"]["code"], INTERNAL_ERROR);
        assert!(
            error["error"]["message"]
                .as_str()
                .unwrap()
                .starts_with("the server process that ran this call stopped"),
            "{error}"
        );
    }
}

//! A call's answer as server-sent events, kept as they are sent so that a client whose stream
//! ended early can resume it: with `GET` and `Last-Event-ID` in the handshake era (SEP-1699).
//!
//! Every answer stream writes to an [`EventLog`]; the HTTP bodies that carry it are [`EventReader`]s
//! of that log, the POST's from the first event, a resuming GET's from after the event the
//! client names. The call goes on whether or not anyone reads, so a client that disconnects (or
//! that a tool sent away with [`Context::close_sse_stream`](crate::Context::close_sse_stream))
//! finds what it missed when it comes back.
//!
//! What is kept is bounded, per stream by [`MAX_EVENTS`] and [`MAX_BYTES`] and per session by
//! [`MAX_STREAMS`]; past the bounds the oldest goes first, and a client resuming from before it
//! misses it. The last event of a stream, its response, is never dropped for size.

use std::collections::{BTreeMap, VecDeque};
use std::convert::Infallible;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::body::{Body, Bytes};
use axum::response::Response;
use tokio::sync::{mpsc, watch};

use super::mirror::{Mirror, ToMirror};
use super::response::event_stream;
use crate::protocol::jsonrpc::Id;
use crate::server::Session;

/// The most events one stream keeps for resumption.
pub(super) const MAX_EVENTS: usize = 1024;

/// The most bytes of events one stream keeps for resumption: 1 MiB.
pub(super) const MAX_BYTES: usize = 1024 * 1024;

/// The most streams one session keeps for resumption; a new one past it forgets the oldest.
pub(super) const MAX_STREAMS: usize = 32;

/// How long a client waits before it reconnects to a stream that ended without its response,
/// in milliseconds: the `retry` of the priming event.
pub(super) const RETRY_MS: u64 = 500;

/// The events of one stream, as they are sent.
pub(super) struct EventLog {
    stream: u64,
    /// Events carry ids (`<stream>-<n>`), so that a client can name where it stopped.
    ids: bool,
    /// The stream opened with a priming event, so a client can resume it from the start, and a
    /// tool may end it early.
    polling: bool,
    state: Mutex<LogState>,
    changed: watch::Sender<()>,
    /// Where each event goes besides, for a client to resume the stream on another process.
    mirror: Option<mpsc::UnboundedSender<ToMirror>>,
}

struct LogState {
    events: VecDeque<Bytes>,
    bytes: usize,
    /// The number of `events[0]`.
    first: u64,
    /// How many times a tool asked to end the stream.
    closes: u64,
    /// The number of the first event after the latest such request.
    closed_before: u64,
    /// The response (or the stop) is in: no event comes after.
    ended: bool,
}

impl LogState {
    fn next(&self) -> u64 {
        self.first + self.events.len() as u64
    }
}

impl EventLog {
    /// A log for stream number `stream`: with event ids when `ids`, and opened with a priming
    /// event (an id, a `retry` and no data) when `polling`, which needs ids.
    pub(super) fn new(stream: u64, ids: bool, polling: bool) -> Arc<EventLog> {
        EventLog::mirrored(stream, ids, polling, None)
    }

    /// A log as [`new`](EventLog::new) makes, whose events also go to `mirror`.
    pub(super) fn mirrored(
        stream: u64,
        ids: bool,
        polling: bool,
        mirror: Option<mpsc::UnboundedSender<ToMirror>>,
    ) -> Arc<EventLog> {
        let polling = ids && polling;
        let log = Arc::new(EventLog {
            mirror,
            stream,
            ids,
            polling,
            state: Mutex::new(LogState {
                events: VecDeque::new(),
                bytes: 0,
                first: 0,
                closes: 0,
                closed_before: 0,
                ended: false,
            }),
            changed: watch::channel(()).0,
        });
        if polling {
            log.append(|id| {
                let id = id.unwrap_or_default();
                format!("id: {id}\nretry: {RETRY_MS}\ndata: \n\n").into_bytes()
            });
        }
        log
    }

    pub(super) fn stream(&self) -> u64 {
        self.stream
    }

    fn state(&self) -> MutexGuard<'_, LogState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds a message from the call as an event; an empty one asks to end the stream here,
    /// which only a polling stream does.
    pub(super) fn push(&self, message: &[u8]) {
        if !message.is_empty() {
            self.append(|id| event(id, message));
        } else if self.polling {
            let mut state = self.state();
            state.closes += 1;
            state.closed_before = state.next();
            drop(state);
            self.changed.send_replace(());
        }
    }

    /// No event comes after those pushed.
    pub(super) fn end(&self) {
        let was = std::mem::replace(&mut self.state().ended, true);
        if !was && let Some(mirror) = &self.mirror {
            let _ = mirror.send(ToMirror::End);
        }
        self.changed.send_replace(());
    }

    fn append(&self, event: impl FnOnce(Option<String>) -> Vec<u8>) {
        let mut state = self.state();
        let id = self
            .ids
            .then(|| format!("{}-{}", self.stream, state.next()));
        let event = Bytes::from(event(id));
        if let Some(mirror) = &self.mirror {
            let _ = mirror.send(ToMirror::Event(state.next(), event.clone()));
        }
        state.bytes += event.len();
        state.events.push_back(event);
        while state.events.len() > 1 && (state.events.len() > MAX_EVENTS || state.bytes > MAX_BYTES)
        {
            if let Some(dropped) = state.events.pop_front() {
                state.bytes -= dropped.len();
                state.first += 1;
            }
        }
        drop(state);
        self.changed.send_replace(());
    }

    /// A reader from event number `from`. The stream's own reader (from 0) ends at the tool's
    /// first request to end the stream; a resuming one at the next request after it begins.
    /// `replay` is the session's, which forgets the stream once a reader has sent its last
    /// event; `cancel`, when set, is the session whose calls stop when the reader is dropped.
    pub(super) fn reader(
        self: &Arc<Self>,
        from: u64,
        replay: Option<Arc<Replay>>,
        cancel: Option<CancelOnDrop>,
    ) -> EventReader {
        let closes = if from == 0 { 0 } else { self.state().closes };
        EventReader {
            log: Arc::clone(self),
            next: from,
            closes,
            changed: self.changed.subscribe(),
            replay,
            _cancel: cancel,
        }
    }
}

/// One event: its id if it has one, and the message as its data (compact JSON has no newline).
fn event(id: Option<String>, data: &[u8]) -> Vec<u8> {
    let mut event = Vec::with_capacity(data.len() + 32);
    if let Some(id) = id {
        event.extend_from_slice(b"id: ");
        event.extend_from_slice(id.as_bytes());
        event.push(b'\n');
    }
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(data);
    event.extend_from_slice(b"\n\n");
    event
}

/// An HTTP body that sends a log's events from one on, waiting for those not yet in, until the
/// stream ends or a tool ends it early.
pub(super) struct EventReader {
    log: Arc<EventLog>,
    next: u64,
    closes: u64,
    changed: watch::Receiver<()>,
    replay: Option<Arc<Replay>>,
    _cancel: Option<CancelOnDrop>,
}

impl EventReader {
    async fn next(mut self) -> Option<(Result<Bytes, Infallible>, EventReader)> {
        loop {
            self.changed.borrow_and_update();
            {
                let state = self.log.state();
                if state.closes > self.closes && self.next >= state.closed_before {
                    return None;
                }
                // Events dropped for the bounds are skipped.
                self.next = self.next.max(state.first);
                if let Some(event) = state.events.get((self.next - state.first) as usize) {
                    let event = event.clone();
                    drop(state);
                    self.next += 1;
                    return Some((Ok(event), self));
                }
                if state.ended {
                    drop(state);
                    // Delivered whole: no client needs it again.
                    if let Some(replay) = &self.replay {
                        replay.forget(self.log.stream);
                    }
                    return None;
                }
            }
            // The log holds the sender, and this reader the log: it cannot be gone.
            let _ = self.changed.changed().await;
        }
    }

    pub(super) fn into_response(self) -> Response {
        event_stream(Body::from_stream(futures_util::stream::unfold(
            self,
            EventReader::next,
        )))
    }
}

/// Cancels a session's calls when dropped: under protocol 2026-07-28 a client cancels a call by
/// closing its stream.
pub(super) struct CancelOnDrop(pub(super) Arc<Session>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel_calls();
    }
}

/// A session's streams that a client may resume, by number.
#[derive(Default)]
pub(super) struct Replay {
    streams: Mutex<BTreeMap<u64, Arc<EventLog>>>,
    /// Where the streams' events are kept for other processes too.
    mirror: Option<Mirror>,
}

impl Replay {
    /// The streams of a session whose events are kept in a session store too.
    pub(super) fn mirrored(mirror: Mirror) -> Replay {
        Replay {
            streams: Mutex::default(),
            mirror: Some(mirror),
        }
    }

    /// A new stream's log, its events kept in the store too when the session's are; `request`
    /// is the request it answers (null for the session's own stream).
    pub(super) fn log(&self, stream: u64, ids: bool, polling: bool, request: &Id) -> Arc<EventLog> {
        let mirror = self
            .mirror
            .as_ref()
            .filter(|_| ids)
            .map(|mirror| mirror.stream(stream, request));
        EventLog::mirrored(stream, ids, polling, mirror)
    }

    fn streams(&self) -> MutexGuard<'_, BTreeMap<u64, Arc<EventLog>>> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps a stream for resumption, forgetting the oldest past [`MAX_STREAMS`].
    pub(super) fn keep(&self, log: &Arc<EventLog>) {
        let mut streams = self.streams();
        streams.insert(log.stream, Arc::clone(log));
        while streams.len() > MAX_STREAMS {
            if let Some((oldest, _)) = streams.pop_first() {
                self.forget_kept(oldest);
            }
        }
    }

    /// Forgets a stream delivered whole here. The store keeps it for its lifetime: the client
    /// may have lost the end of what was sent, and resume it on any process.
    fn forget(&self, stream: u64) {
        self.streams().remove(&stream);
    }

    /// Forgets a stream in the store too.
    fn forget_kept(&self, stream: u64) {
        if let Some(mirror) = &self.mirror {
            mirror.forget(stream);
        }
    }

    /// The stream a `Last-Event-ID` names, and the number of the event after it; `None` when
    /// the id is not one of this session's streams kept for resumption.
    pub(super) fn resume(&self, last_event_id: &str) -> Option<(Arc<EventLog>, u64)> {
        let (stream, n) = last_event_id.trim().split_once('-')?;
        let (stream, n) = (stream.parse::<u64>().ok()?, n.parse::<u64>().ok()?);
        let log = Arc::clone(self.streams().get(&stream)?);
        let from = n.checked_add(1)?;
        let issued = n < log.state().next();
        issued.then_some((log, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(event: &Bytes) -> &str {
        std::str::from_utf8(event).unwrap()
    }

    async fn read_all(reader: EventReader) -> Vec<String> {
        let mut events = Vec::new();
        let mut state = reader;
        while let Some((Ok(event), next)) = state.next().await {
            events.push(text(&event).to_owned());
            state = next;
        }
        events
    }

    #[tokio::test]
    async fn a_polling_stream_primes_and_a_close_ends_its_reader_only() {
        let log = EventLog::new(7, true, true);
        log.push(br#"{"n":1}"#);
        log.push(b"");
        log.push(br#"{"n":2}"#);
        log.end();
        let first = read_all(log.reader(0, None, None)).await;
        assert_eq!(
            first,
            [
                "id: 7-0\nretry: 500\ndata: \n\n",
                "id: 7-1\ndata: {\"n\":1}\n\n"
            ]
        );
        // A reader that begins after the close reads to the end.
        let resumed = read_all(log.reader(2, None, None)).await;
        assert_eq!(resumed, ["id: 7-2\ndata: {\"n\":2}\n\n"]);
    }

    #[tokio::test]
    async fn a_stream_that_does_not_poll_ignores_a_close() {
        let log = EventLog::new(1, false, true);
        log.push(b"");
        log.push(b"{}");
        log.end();
        assert_eq!(read_all(log.reader(0, None, None)).await, ["data: {}\n\n"]);
    }

    #[tokio::test]
    async fn the_oldest_events_go_past_the_bound_but_never_the_last() {
        let log = EventLog::new(2, true, false);
        for n in 0..MAX_EVENTS + 10 {
            log.push(format!("{n}").as_bytes());
        }
        let big = vec![b'x'; MAX_BYTES + 1];
        log.push(&big);
        log.end();
        let events = read_all(log.reader(0, None, None)).await;
        assert_eq!(events.len(), 1);
        assert!(events[0].starts_with(&format!("id: 2-{}\n", MAX_EVENTS + 10)));
    }

    #[test]
    fn resume_names_a_kept_stream_and_the_event_after() {
        let replay = Replay::default();
        let log = EventLog::new(3, true, true);
        replay.keep(&log);
        let (found, from) = replay.resume("3-0").unwrap();
        assert_eq!((found.stream(), from), (3, 1));
        for unknown in ["4-0", "3-1", "3", "x-0", "3-x", ""] {
            assert!(replay.resume(unknown).is_none(), "{unknown}");
        }
        for n in 0..MAX_STREAMS as u64 {
            replay.keep(&EventLog::new(100 + n, true, false));
        }
        assert!(replay.resume("3-0").is_none(), "the oldest is forgotten");
    }
}

//! The sessions of the handshake era: opened by `initialize`, named by `Mcp-Session-Id`, each
//! with its own stream of what changes (GET) and its streams to resume (GET with
//! `Last-Event-ID`), ended by DELETE or, past the most kept, by disuse.
//!
//! A session's record (what any process needs to serve it) is in the session store, read on
//! each request that names the session and written back when the request changed it; what only
//! this process can hold (the live [`Session`], its streams) is in `sessions`, opened again from
//! the record when a session another process started first comes here.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use super::super::access;
use super::super::clients::{ClientId, StreamSlot};
use super::super::events::Replay;
use super::super::mirror::{Mirror, Resumed};
use super::super::response::{Rejection, holding, json};
use super::{Delivery, Endpoint, LAST_EVENT_ID, SESSION_ID};
use crate::auth::{Owner, Principal};
use crate::protocol::PRIMING_SINCE;
use crate::protocol::jsonrpc::{Id, Reply};
use crate::server::Session;
use crate::sink;
use crate::store::StoreError;

/// How long a stream's events are kept in the store after its last one, at most.
const STREAM_LIFETIME: std::time::Duration = std::time::Duration::from_secs(60 * 60);

/// The most sessions kept at once. A new one past it ends the session unused the longest, so a
/// client that keeps opening sessions cannot exhaust memory.
const MAX_SESSIONS: usize = 10_000;

pub(super) struct LiveSession {
    session: Arc<Session>,
    /// Who opened it.
    client: ClientId,
    /// The place among its client's streams of the session's own stream, once it has one; a
    /// later GET replaces the stream in the same place, and the session's end gives it back.
    own_stream: Option<StreamSlot>,
    /// The session's streams a client may resume.
    replay: Arc<Replay>,
    last_used: Instant,
    /// Whom the access token that opened it named: only requests whose token names the same
    /// reach the session. `None` without OAuth.
    owner: Option<Owner>,
    /// A hash of the record the session was last read from or written as: a record that
    /// differs was changed by another process.
    record: u64,
}

/// A session a request named, as the store has it.
pub(super) struct Named {
    pub(super) session: Arc<Session>,
    pub(super) replay: Arc<Replay>,
    owner: Option<Owner>,
}

fn fingerprint(record: &[u8]) -> u64 {
    let mut hasher = DefaultHasher::new();
    record.hash(&mut hasher);
    hasher.finish()
}

/// The answer when the session store does not answer: the client may try again.
fn unavailable(error: &StoreError) -> Rejection {
    // The store's own words may name its address: they go to the log only.
    tracing::error!(error = %error, "the session store did not answer");
    Rejection::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "the session store did not answer: try again shortly",
    )
    .with_header("retry-after", "1")
}

/// Whether a request of `principal` may use a session of `owner`. A session opened without a
/// principal (no OAuth) is anyone's who holds its id.
fn owned_by(owner: Option<&Owner>, principal: Option<&Principal>) -> bool {
    match (owner, principal) {
        (None, _) => true,
        (Some(owner), Some(principal)) => *owner == principal.owner(),
        (Some(_), None) => false,
    }
}

impl Endpoint {
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, LiveSession>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A session's own stream, on which the server tells the client what changes (its lists,
    /// the resources it subscribed to); with `Last-Event-ID`, a stream resumed after the event
    /// it names: the events that followed it, then the rest as they come, to the stream's end.
    pub(super) async fn get(
        &self,
        headers: &HeaderMap,
        client: ClientId,
        principal: Option<&Principal>,
    ) -> Result<Response, Rejection> {
        access::protocol_version(headers)?;
        access::check_accept_events(headers)?;
        let Some(session_id) = headers.get(SESSION_ID) else {
            return Err(Rejection::new(
                StatusCode::BAD_REQUEST,
                "the `Mcp-Session-Id` header is missing: name the session of the stream",
            ));
        };
        let found = self
            .session(session_id.to_str().unwrap_or(""), principal, client)
            .await?;
        let Some(Named {
            session, replay, ..
        }) = found
        else {
            return Err(Rejection::new(
                StatusCode::NOT_FOUND,
                "unknown or terminated session",
            ));
        };
        let Some(last_event_id) = headers.get(LAST_EVENT_ID) else {
            self.own_stream(session_id.to_str().unwrap_or(""))?;
            return Ok(self.session_stream(&session, &replay));
        };
        let slot = self.clients.open_stream(client)?;
        let last_event_id = last_event_id.to_str().unwrap_or("");
        let Some((log, from)) = replay.resume(last_event_id) else {
            // Not here: another process's stream, in the store.
            let session_id = session_id.to_str().unwrap_or("");
            let resumed = Resumed::open(Arc::clone(&self.store), session_id, last_event_id)
                .await
                .map_err(|err| unavailable(&err))?;
            if let Some(resumed) = resumed {
                tracing::debug!("stream resumed from the store");
                return Ok(holding(resumed.into_response(), slot));
            }
            return Err(Rejection::new(
                StatusCode::BAD_REQUEST,
                format!(
                    "event `{last_event_id}` is of no stream this session can resume: its \
                     answer was delivered whole, or too many newer streams were kept since"
                ),
            ));
        };
        tracing::debug!(stream = log.stream(), from, "stream resumed");
        Ok(holding(
            log.reader(from, Some(replay), None).into_response(),
            slot,
        ))
    }

    /// Takes a place among its client's streams for the session's own stream, unless it has
    /// one.
    fn own_stream(&self, session_id: &str) -> Result<(), Rejection> {
        let mut sessions = self.sessions();
        let Some(entry) = sessions.get_mut(session_id) else {
            return Ok(());
        };
        if entry.own_stream.is_none() {
            entry.own_stream = Some(self.clients.open_stream(entry.client)?);
        }
        Ok(())
    }

    /// Opens the session's own stream, in place of the one it had: what the session is told
    /// from now on goes there, kept for the client to resume as any stream is.
    fn session_stream(&self, session: &Arc<Session>, replay: &Arc<Replay>) -> Response {
        let (sink, mut told) = sink::channel();
        let polling = session
            .negotiated_version()
            .is_some_and(|v| v >= PRIMING_SINCE);
        let log = self.open_stream(
            &Delivery::Resumable {
                replay: Arc::clone(replay),
                polling,
            },
            true,
            polling,
            &Id::Null,
        );
        // The session's listener holds the sender: a later stream, or the session's end,
        // drops it, and ends this one.
        session.listener().set_sink(sink);
        let pumped = Arc::clone(&log);
        let ending = self.ending.clone();
        self.calls.spawn(async move {
            loop {
                tokio::select! {
                    told = told.recv() => match told {
                        Some(message) => pumped.push(&message),
                        None => break,
                    },
                    () = ending.cancelled() => break,
                }
            }
            pumped.end();
        });
        tracing::debug!(stream = log.stream(), "session stream opened");
        log.reader(0, Some(Arc::clone(replay)), None)
            .into_response()
    }

    /// Ends a session: later requests naming it get 404, on every process that shares the
    /// store.
    pub(super) async fn delete(
        &self,
        headers: &HeaderMap,
        client: ClientId,
        principal: Option<&Principal>,
    ) -> Result<Response, Rejection> {
        access::protocol_version(headers)?;
        let Some(session_id) = headers.get(SESSION_ID) else {
            return Err(Rejection::new(
                StatusCode::BAD_REQUEST,
                "the `Mcp-Session-Id` header is missing: name the session to end",
            ));
        };
        let session_id = session_id.to_str().unwrap_or("");
        // Another principal's session is unknown to this one.
        let found = self.session(session_id, principal, client).await?;
        let removed = match found {
            Some(_) => self
                .store
                .remove(session_id)
                .await
                .map_err(|err| unavailable(&err))?,
            None => false,
        };
        if let Some(entry) = self.sessions().remove(session_id) {
            // Calls of the session waiting for the client's answers stop waiting.
            entry.session.close();
        }
        if removed {
            tracing::info!("session ended by the client");
            Ok(StatusCode::NO_CONTENT.into_response())
        } else {
            Err(Rejection::new(
                StatusCode::NOT_FOUND,
                "unknown or terminated session",
            ))
        }
    }

    /// The session of this id, if `principal` may use it: as if there were none otherwise, so
    /// that a session id learnt is no way into another principal's session. Its record is read
    /// from the store, which renews its lifetime; a session another process opened is opened
    /// here too, for `client`.
    pub(super) async fn session(
        &self,
        id: &str,
        principal: Option<&Principal>,
        client: ClientId,
    ) -> Result<Option<Named>, Rejection> {
        // Ids of ours are 32 hex digits: anything else is no session, and costs the store nothing.
        if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Ok(None);
        }
        let record = self
            .store
            .load(id, self.session_lifetime)
            .await
            .map_err(|err| unavailable(&err))?;
        let mut sessions = self.sessions();
        let Some(record) = record else {
            // Ended on another process, or expired: forgotten here too.
            if let Some(entry) = sessions.remove(id) {
                entry.session.close();
            }
            return Ok(None);
        };
        let hash = fingerprint(&record);
        if let Some(entry) = sessions.get_mut(id) {
            if !owned_by(entry.owner.as_ref(), principal) {
                return Ok(None);
            }
            if entry.record != hash {
                // Another process changed it (its log level, its subscriptions).
                entry
                    .session
                    .apply(&record)
                    .map_err(|err| corrupt(id, &err))?;
                entry.record = hash;
            }
            entry.last_used = Instant::now();
            return Ok(Some(Named {
                session: Arc::clone(&entry.session),
                replay: Arc::clone(&entry.replay),
                owner: entry.owner.clone(),
            }));
        }
        // A session another process opened, or that this one forgot.
        let (session, owner) =
            Session::restore(&record, &self.replica).map_err(|err| corrupt(id, &err))?;
        if !owned_by(owner.as_ref(), principal) {
            return Ok(None);
        }
        if sessions.len() >= MAX_SESSIONS && !self.evict_one(&mut sessions, None) {
            return Err(Rejection::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "too many sessions with calls under way: try again later",
            ));
        }
        session.set_id(id);
        let session = Arc::new(session);
        let replay = Arc::new(self.replay(id));
        sessions.insert(
            id.to_owned(),
            LiveSession {
                session: Arc::clone(&session),
                client,
                own_stream: None,
                replay: Arc::clone(&replay),
                last_used: Instant::now(),
                owner: owner.clone(),
                record: hash,
            },
        );
        tracing::debug!("session opened from the store");
        Ok(Some(Named {
            session,
            replay,
            owner,
        }))
    }

    /// The streams of session `id` to resume, their events kept in the store too.
    fn replay(&self, id: &str) -> Replay {
        Replay::mirrored(Mirror {
            store: Arc::clone(&self.store),
            session: Arc::from(id),
            replica: Arc::clone(&self.replica),
            lifetime: self.session_lifetime.min(STREAM_LIFETIME),
        })
    }

    /// The session of this id that this process holds, without asking the store.
    pub(super) fn live_session(&self, id: &str) -> Option<Arc<Session>> {
        self.sessions()
            .get(id)
            .map(|entry| Arc::clone(&entry.session))
    }

    /// Writes a session's record back to the store when the request changed it.
    pub(super) async fn save(&self, found: &Named) -> Result<(), Rejection> {
        if !found.session.take_changed() {
            return Ok(());
        }
        let Some(id) = found.session.id() else {
            return Ok(());
        };
        let record = found.session.record(found.owner.as_ref());
        let kept = self
            .store
            .update(&id, &record, self.session_lifetime)
            .await
            .map_err(|err| unavailable(&err))?;
        if kept && let Some(entry) = self.sessions().get_mut(&*id) {
            entry.record = fingerprint(&record);
        }
        Ok(())
    }

    /// Keeps the session a successful `initialize` started, and names it in the answer.
    pub(super) async fn open_session(
        &self,
        session: Arc<Session>,
        reply: Reply,
        id: Option<&Id>,
        client: ClientId,
        principal: Option<&Principal>,
    ) -> Result<Response, Rejection> {
        let session_id = new_session_id().map_err(|err| {
            tracing::error!(error = %err, "no randomness for a session id");
            Rejection::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "cannot start a session: the system gave no randomness",
            )
            .with_id(id)
        })?;
        {
            let mut sessions = self.sessions();
            let max = self.clients.max_sessions;
            let own = sessions.values().filter(|e| e.client == client).count();
            if own >= max && !self.evict_one(&mut sessions, Some(client)) {
                return Err(Rejection::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "this client has {max} sessions with calls under way, the most it may: \
                         end one (DELETE) or wait for its calls"
                    ),
                )
                .with_id(id));
            }
            if sessions.len() >= MAX_SESSIONS && !self.evict_one(&mut sessions, None) {
                return Err(Rejection::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many sessions with calls under way: try again later",
                )
                .with_id(id));
            }
        }
        session.set_id(&session_id);
        session.take_changed();
        let owner = principal.map(Principal::owner);
        let record = session.record(owner.as_ref());
        self.store
            .create(&session_id, &record, self.session_lifetime)
            .await
            .map_err(|err| unavailable(&err).with_id(id))?;
        self.sessions().insert(
            session_id.clone(),
            LiveSession {
                session,
                client,
                own_stream: None,
                replay: Arc::new(self.replay(&session_id)),
                last_used: Instant::now(),
                owner,
                record: fingerprint(&record),
            },
        );
        let mut response = json(StatusCode::OK, reply.into_bytes());
        response.headers_mut().insert(
            SESSION_ID,
            HeaderValue::from_str(&session_id).expect("hex is a valid header value"),
        );
        Ok(response)
    }
}

impl Endpoint {
    /// Ends the session unused the longest among those with no call under way (of `client`
    /// alone, when one is named), in the store too. Returns whether there was one.
    fn evict_one(
        &self,
        sessions: &mut HashMap<String, LiveSession>,
        client: Option<ClientId>,
    ) -> bool {
        let idle = sessions
            .iter()
            .filter(|(_, entry)| client.is_none_or(|client| entry.client == client))
            // A call under way holds the session too.
            .filter(|(_, entry)| Arc::strong_count(&entry.session) == 1)
            .min_by_key(|(_, entry)| entry.last_used)
            .map(|(id, _)| id.clone());
        let Some(id) = idle else {
            return false;
        };
        if let Some(entry) = sessions.remove(&id) {
            entry.session.close();
        }
        let store = Arc::clone(&self.store);
        tokio::spawn(async move {
            if let Err(err) = store.remove(&id).await {
                tracing::warn!(error = %err, "a session ended here stays in the store until it expires");
            }
        });
        if client.is_some() {
            tracing::info!("session ended: its client opened the most it may");
        } else {
            tracing::info!("session ended: the most sessions are open");
        }
        true
    }
}

/// The answer when a session's record is not one this server can read: written by another
/// version of the server, or damaged.
fn corrupt(id: &str, problem: &str) -> Rejection {
    tracing::error!(session = id, problem, "a session record cannot be read");
    Rejection::new(
        StatusCode::INTERNAL_SERVER_ERROR,
        "the session's record cannot be read: send `initialize` to start a new session",
    )
}

/// A random UUID (version 4, 122 random bits from the system), as 32 hex digits: visible ASCII,
/// and not to be guessed.
fn new_session_id() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes)?;
    Ok(uuid::Builder::from_random_bytes(bytes)
        .into_uuid()
        .simple()
        .to_string())
}

//! The sessions of the handshake era: opened by `initialize`, named by `Mcp-Session-Id`, each
//! with its own stream of what changes (GET) and its streams to resume (GET with
//! `Last-Event-ID`), ended by DELETE or, past the most kept, by disuse.

use std::collections::HashMap;
use std::sync::{Arc, MutexGuard};
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::super::access;
use super::super::clients::{ClientId, StreamSlot};
use super::super::events::Replay;
use super::super::response::{Rejection, holding, json};
use super::{Delivery, Endpoint, LAST_EVENT_ID, SESSION_ID};
use crate::auth::{Owner, Principal};
use crate::protocol::PRIMING_SINCE;
use crate::protocol::jsonrpc::Id;
use crate::server::session::Session;
use crate::sink;

/// The most sessions kept at once. A new one past it ends the session unused the longest, so a
/// client that keeps opening sessions cannot exhaust memory.
const MAX_SESSIONS: usize = 10_000;

pub(super) struct Entry {
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
    fn sessions(&self) -> MutexGuard<'_, HashMap<String, Entry>> {
        self.sessions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A session's own stream, on which the server tells the client what changes (its lists,
    /// the resources it subscribed to); with `Last-Event-ID`, a stream resumed after the event
    /// it names: the events that followed it, then the rest as they come, to the stream's end.
    pub(super) fn get(
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
        let Some((session, replay)) = self.session(session_id.to_str().unwrap_or(""), principal)
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

    /// Ends a session: later requests naming it get 404.
    pub(super) fn delete(
        &self,
        headers: &HeaderMap,
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
        let mut sessions = self.sessions();
        // Another principal's session is unknown to this one.
        let owned = sessions
            .get(session_id)
            .is_some_and(|entry| owned_by(entry.owner.as_ref(), principal));
        match owned.then(|| sessions.remove(session_id)).flatten() {
            Some(entry) => {
                // Calls of the session waiting for the client's answers stop waiting.
                entry.session.close();
                tracing::info!("session ended by the client");
                Ok(StatusCode::NO_CONTENT.into_response())
            }
            None => Err(Rejection::new(
                StatusCode::NOT_FOUND,
                "unknown or terminated session",
            )),
        }
    }

    /// The session of this id, if `principal` may use it: as if there were none otherwise, so
    /// that a session id learnt is no way into another principal's session.
    pub(super) fn session(
        &self,
        id: &str,
        principal: Option<&Principal>,
    ) -> Option<(Arc<Session>, Arc<Replay>)> {
        let mut sessions = self.sessions();
        let entry = sessions
            .get_mut(id)
            .filter(|entry| owned_by(entry.owner.as_ref(), principal))?;
        entry.last_used = Instant::now();
        Some((Arc::clone(&entry.session), Arc::clone(&entry.replay)))
    }

    /// Keeps the session a successful `initialize` started, and names it in the answer.
    pub(super) fn open_session(
        &self,
        session: Arc<Session>,
        reply: Vec<u8>,
        id: Option<&Id>,
        client: ClientId,
        principal: Option<&Principal>,
    ) -> Result<Response, Rejection> {
        let succeeded = serde_json::from_slice::<Value>(&reply)
            .is_ok_and(|reply| reply.get("result").is_some());
        if !succeeded {
            return Ok(json(StatusCode::OK, reply));
        }
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
            if own >= max && !evict_one(&mut sessions, Some(client)) {
                return Err(Rejection::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    format!(
                        "this client has {max} sessions with calls under way, the most it may: \
                         end one (DELETE) or wait for its calls"
                    ),
                )
                .with_id(id));
            }
            if sessions.len() >= MAX_SESSIONS && !evict_one(&mut sessions, None) {
                return Err(Rejection::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "too many sessions with calls under way: try again later",
                )
                .with_id(id));
            }
            session.set_id(&session_id);
            sessions.insert(
                session_id.clone(),
                Entry {
                    session,
                    client,
                    own_stream: None,
                    replay: Arc::default(),
                    last_used: Instant::now(),
                    owner: principal.map(Principal::owner),
                },
            );
        }
        let mut response = json(StatusCode::OK, reply);
        response.headers_mut().insert(
            SESSION_ID,
            HeaderValue::from_str(&session_id).expect("hex is a valid header value"),
        );
        Ok(response)
    }
}

/// Ends the session unused the longest among those with no call under way (of `client` alone,
/// when one is named). Returns whether there was one.
fn evict_one(sessions: &mut HashMap<String, Entry>, client: Option<ClientId>) -> bool {
    let idle = sessions
        .iter()
        .filter(|(_, entry)| client.is_none_or(|client| entry.client == client))
        // A call under way holds the session too.
        .filter(|(_, entry)| Arc::strong_count(&entry.session) == 1)
        .min_by_key(|(_, entry)| entry.last_used)
        .map(|(id, _)| id.clone());
    match idle {
        Some(id) => {
            if let Some(entry) = sessions.remove(&id) {
                entry.session.close();
            }
            if client.is_some() {
                tracing::info!("session ended: its client opened the most it may");
            } else {
                tracing::info!("session ended: the most sessions are open");
            }
            true
        }
        None => false,
    }
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

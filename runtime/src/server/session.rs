//! One client connection's state: its protocol era, its log level, its calls under way, what the
//! client said of itself, and the requests of ours it has yet to answer.
//!
//! A connection's first request decides its era, once: a request carrying the 2026-07-28
//! envelope (any method but `initialize`, which that era lacks) opens the stateless era; anything
//! else opens the handshake era. This is how the official Python SDK's dual-era server decides
//! too, and what a client in "auto" mode expects: it probes with `server/discover` and falls back
//! to `initialize`, on a new connection, only when the probe fails.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[cfg(feature = "http")]
use crate::auth::Owner;
use crate::context::ClientRequests;
use crate::live::Listener;
use crate::protocol::{Client, LogLevel, has_envelope};
use crate::state::SessionState;
#[cfg(feature = "otel")]
use crate::telemetry::Transport;

/// The most resources one session (or one `subscriptions/listen` stream) follows.
pub(crate) const MAX_SUBSCRIPTIONS: usize = 1000;

/// One client connection's state.
pub(crate) struct Session {
    /// `None` until the first request decides it.
    era: Mutex<Option<Era>>,
    /// The handshake era's log level, which `logging/setLevel` sets.
    log_level: Arc<AtomicU8>,
    /// Calls under way, by request id, so that `notifications/cancelled` can reach them.
    in_flight: Mutex<HashMap<String, CancellationToken>>,
    /// What the client said of itself in `initialize`.
    client: Mutex<Client>,
    /// Requests of ours awaiting the client's answer.
    requests: Arc<ClientRequests>,
    /// The id the transport names the session by, once it has given one (HTTP).
    id: OnceLock<Arc<str>>,
    /// What the session's calls keep between them.
    state: Arc<SessionState>,
    /// What the client is told when something changes, handshake era: every list, and the
    /// resources it subscribed to.
    listener: Arc<Listener>,
    /// Cancelled when the client is gone: what waits on it (a `subscriptions/listen` stream)
    /// ends.
    closed: CancellationToken,
    /// What a session store keeps of it changed since the store last had it.
    changed: AtomicBool,
    /// Who owns its tasks when the transport gave it no id.
    task_owner: OnceLock<Arc<str>>,
    /// When it began, for how long it lasted, and what carries it.
    #[cfg(feature = "otel")]
    opened: (std::time::Instant, crate::telemetry::Transport),
}

/// The protocol era a connection speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Era {
    /// `initialize` first; `version` is `None` until then.
    Handshake { version: Option<&'static str> },
    /// Protocol 2026-07-28: every request carries its own envelope.
    Stateless,
}

impl Session {
    /// A new session, before its first request.
    pub(crate) fn new() -> Session {
        #[cfg(feature = "otel")]
        let session = Session::with_requests(ClientRequests::new(), Transport::Pipe);
        #[cfg(not(feature = "otel"))]
        let session = Session::with_requests(ClientRequests::new());
        session
    }

    /// A new session of the process named `replica`, among several that serve it: its requests
    /// to the client name the process, so that an answer that reaches another comes back.
    #[cfg(feature = "http")]
    pub(crate) fn of_replica(replica: &str) -> Session {
        let requests = ClientRequests::with_prefix(format!("tw-{replica}-"));
        #[cfg(feature = "otel")]
        let session = Session::with_requests(requests, Transport::Tcp);
        #[cfg(not(feature = "otel"))]
        let session = Session::with_requests(requests);
        session
    }

    fn with_requests(
        requests: ClientRequests,
        #[cfg(feature = "otel")] transport: Transport,
    ) -> Session {
        Session {
            era: Mutex::new(None),
            log_level: Arc::new(AtomicU8::new(LogLevel::Info as u8)),
            in_flight: Mutex::new(HashMap::new()),
            client: Mutex::new(Client::default()),
            requests: Arc::new(requests),
            id: OnceLock::new(),
            state: Arc::default(),
            listener: Arc::new(Listener::session()),
            closed: CancellationToken::new(),
            changed: AtomicBool::new(false),
            task_owner: OnceLock::new(),
            #[cfg(feature = "otel")]
            opened: (std::time::Instant::now(), transport),
        }
    }

    #[cfg(feature = "http")]
    /// A session whose every request is of protocol 2026-07-28: one lacking the envelope is
    /// answered with an error naming what it lacks, not taken for the handshake era.
    pub(crate) fn stateless() -> Session {
        #[cfg(feature = "otel")]
        let session = Session::with_requests(ClientRequests::new(), Transport::Tcp);
        #[cfg(not(feature = "otel"))]
        let session = Session::new();
        *session.era_lock() = Some(Era::Stateless);
        session
    }

    /// What carries the session's messages.
    #[cfg(feature = "otel")]
    pub(crate) fn transport(&self) -> Transport {
        self.opened.1
    }

    /// The client is gone (the input closed, the session ended): calls waiting for its answers
    /// stop waiting.
    pub(crate) fn close(&self) {
        #[cfg(feature = "otel")]
        if !self.closed.is_cancelled()
            && let Some(Era::Handshake { version }) = *self.era_lock()
        {
            let (opened, transport) = self.opened;
            crate::telemetry::session_ended(opened, version, transport);
        }
        self.requests.close();
        self.closed.cancel();
    }

    #[cfg(feature = "http")]
    /// Names the session, once: the id the transport gave it.
    #[cfg(feature = "http")]
    pub(crate) fn set_id(&self, id: &str) {
        let _ = self.id.set(Arc::from(id));
    }

    /// The id the transport names the session by, if it gave one.
    pub(crate) fn id(&self) -> Option<Arc<str>> {
        self.id.get().cloned()
    }

    /// Who owns the tasks of the session's requests that name no principal: the id the
    /// transport gave it, else one of its own for as long as it lives (a stdio connection).
    pub(super) fn task_owner(&self) -> Arc<str> {
        if let Some(id) = self.id() {
            return id;
        }
        Arc::clone(
            self.task_owner
                .get_or_init(|| Arc::from(crate::tasks::new_id())),
        )
    }

    /// What the session's calls keep between them.
    pub(super) fn state(&self) -> &Arc<SessionState> {
        &self.state
    }

    /// The protocol version `initialize` settled on, once it has.
    #[cfg(any(feature = "http", feature = "otel"))]
    pub(crate) fn negotiated_version(&self) -> Option<&'static str> {
        match *self.era_lock() {
            Some(Era::Handshake { version }) => version,
            _ => None,
        }
    }

    #[cfg(feature = "http")]
    /// Cancels every call under way, as a `notifications/cancelled` for each would.
    pub(crate) fn cancel_calls(&self) {
        for token in self.in_flight().values() {
            token.cancel();
        }
    }

    /// The connection's era, decided by its first request.
    pub(super) fn era(&self, method: &str, params: &Value, client: &Client) -> Era {
        *self.era_lock().get_or_insert_with(|| {
            if method != "initialize" && has_envelope(params) {
                let client = client
                    .info
                    .as_deref()
                    .and_then(|info| info.get("name"))
                    .and_then(Value::as_str);
                tracing::info!(client, method, "connection speaks protocol 2026-07-28");
                Era::Stateless
            } else {
                Era::Handshake { version: None }
            }
        })
    }

    /// `initialize` succeeded: the session speaks `version`, and the client is as it said.
    pub(super) fn initialized(&self, version: &'static str, client: Client) {
        *self.era_lock() = Some(Era::Handshake {
            version: Some(version),
        });
        *self.client_lock() = client;
        self.changed.store(true, Ordering::Relaxed);
    }

    /// What the client said of itself in `initialize`.
    pub(super) fn client(&self) -> Client {
        self.client_lock().clone()
    }

    /// The handshake era's log level, shared with the calls it applies to.
    pub(super) fn log_level(&self) -> &Arc<AtomicU8> {
        &self.log_level
    }

    /// The session's requests to the client that await an answer.
    pub(super) fn requests(&self) -> &Arc<ClientRequests> {
        &self.requests
    }

    /// Sets the handshake era's log level (`logging/setLevel`).
    pub(super) fn set_log_level(&self, level: LogLevel) {
        self.log_level.store(level as u8, Ordering::Relaxed);
        self.changed.store(true, Ordering::Relaxed);
    }

    /// Registers a call under way by its request id, unless a call under way has that id.
    pub(super) fn start_call(&self, key: &str, cancellation: &CancellationToken) -> bool {
        let mut in_flight = self.in_flight();
        if in_flight.contains_key(key) {
            return false;
        }
        in_flight.insert(key.to_owned(), cancellation.clone());
        true
    }

    /// The call is over.
    pub(super) fn end_call(&self, key: &str) {
        self.in_flight().remove(key);
    }

    /// Cancels the call under way with this request id, if there is one.
    pub(super) fn cancel_call(&self, key: &str) -> bool {
        match self.in_flight().get(key) {
            Some(token) => {
                token.cancel();
                true
            }
            None => false,
        }
    }

    /// The client wants to be told when the resource at `uri` changes; `false` when it follows
    /// [`MAX_SUBSCRIPTIONS`] resources already.
    pub(super) fn subscribe(&self, uri: &str) -> bool {
        let mut filter = self.listener.filter();
        if filter.uris.len() >= MAX_SUBSCRIPTIONS && !filter.uris.contains(uri) {
            return false;
        }
        filter.uris.insert(uri.to_owned());
        self.changed.store(true, Ordering::Relaxed);
        true
    }

    /// The client no longer wants to be told about `uri`.
    pub(super) fn unsubscribe(&self, uri: &str) {
        self.listener.filter().uris.remove(uri);
        self.changed.store(true, Ordering::Relaxed);
    }

    /// Completes when the client is gone.
    pub(super) async fn closed(&self) {
        self.closed.cancelled().await;
    }

    /// What the client is told of changes, in the handshake era.
    pub(crate) fn listener(&self) -> &Arc<Listener> {
        &self.listener
    }

    /// Whether what a session store keeps of it changed since this was last asked.
    #[cfg(feature = "http")]
    pub(crate) fn take_changed(&self) -> bool {
        self.changed.swap(false, Ordering::Relaxed)
    }

    /// What a session store keeps of a handshake-era session (see [`crate::store`]): the
    /// version it settled on, what the client said of itself, its log level, the resources it
    /// follows, and whom it belongs to.
    #[cfg(feature = "http")]
    pub(crate) fn record(&self, owner: Option<&Owner>) -> Vec<u8> {
        let client = self.client();
        let record = Record {
            version: self.negotiated_version().unwrap_or_default().to_owned(),
            capabilities: client.capabilities.as_deref().cloned(),
            client_info: client.info.as_deref().cloned(),
            log_level: LogLevel::from_u8(self.log_level.load(Ordering::Relaxed)),
            subscriptions: self.listener.filter().uris.iter().cloned().collect(),
            owner: owner.cloned(),
        };
        serde_json::to_vec(&record).expect("a record serialises")
    }

    /// A session of another process (or one this process no longer holds), as its record in
    /// a session store has it, and whom it belongs to.
    #[cfg(feature = "http")]
    pub(crate) fn restore(
        record: &[u8],
        replica: &str,
    ) -> Result<(Session, Option<Owner>), String> {
        let session = Session::of_replica(replica);
        let owner = session.apply(record)?;
        Ok((session, owner))
    }

    /// Takes what a session store has of the session (another process may have changed it),
    /// and returns whom it belongs to.
    #[cfg(feature = "http")]
    pub(crate) fn apply(&self, record: &[u8]) -> Result<Option<Owner>, String> {
        let record: Record = serde_json::from_slice(record)
            .map_err(|err| format!("a session record that is not one: {err}"))?;
        let version = crate::protocol::HANDSHAKE_VERSIONS
            .into_iter()
            .find(|v| *v == record.version)
            .ok_or_else(|| format!("a session record of protocol `{}`", record.version))?;
        *self.era_lock() = Some(Era::Handshake {
            version: Some(version),
        });
        *self.client_lock() = Client {
            capabilities: record.capabilities.map(Arc::new),
            info: record.client_info.map(Arc::new),
        };
        self.log_level
            .store(record.log_level as u8, Ordering::Relaxed);
        self.listener.filter().uris = record.subscriptions.into_iter().collect();
        Ok(record.owner)
    }

    fn client_lock(&self) -> MutexGuard<'_, Client> {
        self.client.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn era_lock(&self) -> MutexGuard<'_, Option<Era>> {
        self.era.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn in_flight(&self) -> MutexGuard<'_, HashMap<String, CancellationToken>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A session's record in a session store, as JSON.
#[cfg(feature = "http")]
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Record {
    version: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    capabilities: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    client_info: Option<Value>,
    log_level: LogLevel,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    subscriptions: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<Owner>,
}

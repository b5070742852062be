//! What one client may hold at once, so that no client takes the whole server: sessions, and
//! streams that stay open waiting for what changes.
//!
//! A client is the address its connections come from, and under OAuth whom its token names:
//! behind a reverse proxy every client shares the proxy's address, so without OAuth such a
//! deployment raises the limits.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use axum::http::StatusCode;

use super::response::Rejection;
use crate::auth::Principal;
use crate::context::Who;

/// The most sessions one client keeps, by default.
pub(crate) const DEFAULT_SESSIONS: usize = 256;

/// The most streams one client keeps open, by default: a session's own stream (GET), a stream
/// resumed (GET with `Last-Event-ID`), `subscriptions/listen`.
pub(crate) const DEFAULT_STREAMS: usize = 64;

/// Who a request comes from, for its client's limits: an address and, under OAuth, a digest of
/// whom its token names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct ClientId(Option<IpAddr>, u64);

impl ClientId {
    pub(super) fn address(address: IpAddr) -> ClientId {
        ClientId(Some(address), 0)
    }

    /// A request that came through no connection of ours (the router served directly).
    pub(super) fn unknown() -> ClientId {
        ClientId(None, 0)
    }

    /// Who sent a request of this client that `principal` names, as its calls see it.
    pub(super) fn who(self, principal: Option<Arc<Principal>>) -> Who {
        Who {
            principal,
            address: self.0,
        }
    }

    /// The client as the principal its token names, if any: principals behind one address each
    /// have their own limits.
    pub(super) fn of(self, principal: Option<&Principal>) -> ClientId {
        let Some(principal) = principal else {
            return self;
        };
        let mut hasher = DefaultHasher::new();
        principal.owner().hash(&mut hasher);
        // Never 0, which is no principal's.
        ClientId(self.0, hasher.finish() | 1)
    }
}

/// The per-client limits, and the streams each client holds.
pub(super) struct Clients {
    pub(super) max_sessions: usize,
    max_streams: usize,
    streams: Mutex<HashMap<ClientId, usize>>,
}

/// One open stream of a client, given back when dropped.
pub(super) struct StreamSlot {
    clients: Arc<Clients>,
    client: ClientId,
}

impl Clients {
    pub(super) fn new(max_sessions: usize, max_streams: usize) -> Arc<Clients> {
        Arc::new(Clients {
            max_sessions,
            max_streams,
            streams: Mutex::new(HashMap::new()),
        })
    }

    fn streams(&self) -> MutexGuard<'_, HashMap<ClientId, usize>> {
        self.streams.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A place for one more stream of `client`, or `429` when it holds the most it may.
    pub(super) fn open_stream(
        self: &Arc<Clients>,
        client: ClientId,
    ) -> Result<StreamSlot, Rejection> {
        let mut streams = self.streams();
        let open = streams.entry(client).or_insert(0);
        if *open >= self.max_streams {
            tracing::warn!(
                client = ?client.0,
                streams = self.max_streams,
                "refused a stream: the client holds the most it may"
            );
            return Err(Rejection::new(
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "this client has {} streams open, the most it may: close one (or end a \
                     session) before opening another",
                    self.max_streams
                ),
            ));
        }
        *open += 1;
        Ok(StreamSlot {
            clients: Arc::clone(self),
            client,
        })
    }

    /// How many streams `client` holds.
    #[cfg(test)]
    fn open(&self, client: ClientId) -> usize {
        self.streams().get(&client).copied().unwrap_or(0)
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut streams = self.clients.streams();
        if let Some(open) = streams.get_mut(&self.client) {
            *open -= 1;
            if *open == 0 {
                streams.remove(&self.client);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_holds_at_most_its_streams_and_others_are_not_counted_with_it() {
        let clients = Clients::new(1, 2);
        let one = ClientId::address(IpAddr::from([10, 0, 0, 1]));
        let two = ClientId::address(IpAddr::from([10, 0, 0, 2]));
        let first = clients.open_stream(one).unwrap();
        let _second = clients.open_stream(one).unwrap();
        let refused = clients.open_stream(one).err().unwrap();
        assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            refused.message,
            "this client has 2 streams open, the most it may: close one (or end a session) \
             before opening another"
        );
        assert!(
            clients.open_stream(two).is_ok(),
            "another client has its own"
        );
        drop(first);
        assert_eq!(clients.open(one), 1);
        assert!(
            clients.open_stream(one).is_ok(),
            "a stream closed makes room"
        );
    }
}

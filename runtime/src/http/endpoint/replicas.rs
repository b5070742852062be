//! Messages between processes that share a session store: a client's answer to a request of
//! ours (sampling, elicitation) reaches the process whose call awaits it, and a cancellation
//! every process, since any may run the call.
//!
//! A request of ours names the process that sent it (`tw-<replica>-<n>`); an answer that
//! reaches another process is sent on through the store ([`SessionStore::publish`]) and
//! taken by the named one as if the client had sent it there.

use std::sync::Arc;

use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use super::super::mirror::{HEARTBEAT_EVERY, HEARTBEAT_TTL};
use super::Endpoint;
use crate::protocol::jsonrpc::{self, Incoming};
use crate::sink;

/// What one process sends another: a client's message, in the session it came in.
#[derive(Serialize, Deserialize)]
struct Relayed<'a> {
    /// The process that received it, which acted on it already.
    from: &'a str,
    session: &'a str,
    #[serde(borrow)]
    message: &'a RawValue,
}

/// The number of this process's first stream: a random multiple of 2^32.
pub(super) fn first_stream() -> u64 {
    u64::from(crate::store::random_u32()) << 32
}

/// The process a request id of ours names: `tw-<replica>-<n>`.
fn sender_of(id: &str) -> Option<&str> {
    let (replica, n) = id.strip_prefix("tw-")?.split_once('-')?;
    (!replica.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(replica)
}

impl Endpoint {
    /// Sends on a client's message that another process must act on; `true` when only another
    /// can (an answer to its request), so that this process leaves it.
    pub(super) async fn relay(&self, session: &str, message: &Incoming, body: &[u8]) -> bool {
        let (to, only_there) = match message {
            Incoming::Response { id, .. } => match id.as_str().and_then(sender_of) {
                Some(to) if to != &*self.replica => (Some(to), true),
                _ => return false,
            },
            // The call may run anywhere: every process hears it, this one acts on it too.
            Incoming::Notification { method, .. } if method == "notifications/cancelled" => {
                (None, false)
            }
            _ => return false,
        };
        let Ok(message) = serde_json::from_slice::<&RawValue>(body) else {
            return false;
        };
        let relayed = Relayed {
            from: &self.replica,
            session,
            message,
        };
        let bytes = serde_json::to_vec(&relayed).expect("a relayed message serialises");
        if let Err(err) = self.store.publish(to, &bytes).await {
            tracing::warn!(error = %err, "a message for another process was lost");
        }
        only_there
    }

    /// Takes the messages other processes send on, for as long as the server serves, and says
    /// that this process is alive until its calls are stopped.
    pub(in crate::http) fn listen_to_replicas(self: &Arc<Self>) {
        let store = Arc::clone(&self.store);
        let replica = Arc::clone(&self.replica);
        let stop = self.stop.clone();
        tokio::spawn(async move {
            let mut beats = tokio::time::interval(HEARTBEAT_EVERY);
            loop {
                tokio::select! {
                    _ = beats.tick() => {}
                    () = stop.cancelled() => return,
                }
                if let Err(err) = store.heartbeat(&replica, HEARTBEAT_TTL).await {
                    tracing::debug!(error = %err, "the store did not take this process's heartbeat");
                }
            }
        });
        let endpoint = Arc::clone(self);
        let mut messages = self.store.messages(&self.replica);
        let ending = self.ending.clone();
        tokio::spawn(async move {
            loop {
                let bytes = tokio::select! {
                    bytes = messages.next() => match bytes {
                        Some(bytes) => bytes,
                        None => return,
                    },
                    () = ending.cancelled() => return,
                };
                endpoint.take_relayed(&bytes);
            }
        });
    }

    /// Acts on a message another process sent on, in the session it names, if this process
    /// holds that session.
    fn take_relayed(&self, bytes: &[u8]) {
        let Ok(relayed) = serde_json::from_slice::<Relayed<'_>>(bytes) else {
            tracing::warn!("a message from another process that is not one was dropped");
            return;
        };
        if relayed.from == &*self.replica {
            return;
        }
        let Some(session) = self.live_session(relayed.session) else {
            return;
        };
        let Ok(message) = jsonrpc::parse(relayed.message.get().as_bytes()) else {
            return;
        };
        tracing::debug!(
            from = relayed.from,
            "a client's message taken from another process"
        );
        let (sink, _) = sink::channel();
        // An answer or a cancellation: nothing to send back.
        let _ = self.server.handle(&session, message, &sink);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_id_of_ours_names_its_process() {
        assert_eq!(sender_of("tw-0a1b2c3d-17"), Some("0a1b2c3d"));
        for other in ["tw-17", "tw--1", "tw-x-y", "7", "abc-0a-1"] {
            assert_eq!(sender_of(other), None, "{other}");
        }
        let name = crate::store::replica_name();
        assert_eq!(name.len(), 8);
        assert!(name.bytes().all(|b| b.is_ascii_hexdigit()));
    }
}

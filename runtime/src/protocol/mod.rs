//! The protocol's vocabulary, shared by dispatch and the transports: the versions of both eras,
//! the `_meta` keys of 2026-07-28, what a client says of itself, log levels, and JSON-RPC.
//!
//! A connection speaks one of two protocol eras:
//!
//! - the **handshake** era (2024-11-05 to 2025-11-25): `initialize` first, then the requests;
//! - the **stateless** era (2026-07-28): no handshake; every request carries the protocol
//!   version and the client's capabilities in `params._meta` (its [`Envelope`]), and every result
//!   says `resultType` and names the server.

mod envelope;
pub(crate) mod jsonrpc;
mod log;
pub(crate) mod method;

use std::sync::Arc;

use serde_json::Value;

pub(crate) use envelope::Envelope;
pub use log::LogLevel;

/// Protocol versions of the handshake era, newest first.
pub(crate) const HANDSHAKE_VERSIONS: [&str; 4] =
    ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Protocol versions of the stateless era, newest first: each request names one in its `_meta`.
pub(crate) const STATELESS_VERSIONS: [&str; 1] = ["2026-07-28"];

#[cfg(feature = "http")]
/// The first handshake version whose clients expect an event stream to open with a priming
/// event (an id and no data); older clients would take the empty data for a malformed message.
pub(crate) const PRIMING_SINCE: &str = "2025-11-25";

/// The `_meta` keys of the stateless era.
pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// Whether a request's `params` carry the 2026-07-28 envelope. The version key alone decides, so
/// that a half-built envelope is answered in that era, with an error naming what is missing.
pub(crate) fn has_envelope(params: &Value) -> bool {
    params
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(PROTOCOL_VERSION_KEY))
}

/// What a client says of itself: its `capabilities` and `clientInfo`, from `initialize` or, in
/// 2026-07-28, from each request's envelope.
#[derive(Clone, Debug, Default)]
pub(crate) struct Client {
    pub(crate) capabilities: Option<Arc<Value>>,
    pub(crate) info: Option<Arc<Value>>,
}

/// How results are shaped on the wire, in a request's era.
#[derive(Clone, Debug)]
pub(crate) enum Wire {
    /// As they are.
    Handshake,
    /// With `resultType` and this `_meta`, which names the server.
    Stateless { meta: Arc<Value> },
}

impl Wire {
    /// Whether this is protocol 2026-07-28.
    pub(crate) fn is_stateless(&self) -> bool {
        matches!(self, Wire::Stateless { .. })
    }

    /// An input-required result (protocol 2026-07-28 only), of these members: they say their
    /// `resultType`, and the server is named.
    pub(crate) fn input_required(&self, members: serde_json::Map<String, Value>) -> Value {
        let mut result = Value::Object(members);
        if let Wire::Stateless { meta } = self {
            add_meta(&mut result, meta);
        }
        result
    }

    /// A result anyone may cache for `ttl_ms`, as the request's era has it: with the caching
    /// hints in 2026-07-28 (public: it does not differ between clients).
    pub(crate) fn shape_cached(&self, mut result: Value, ttl_ms: u64) -> Value {
        if self.is_stateless() {
            merge(
                &mut result,
                &serde_json::json!({ "ttlMs": ttl_ms, "cacheScope": "public" }),
            );
        }
        self.shape(result)
    }

    /// A result as the request's era has it.
    pub(crate) fn shape(&self, mut result: Value) -> Value {
        if let Wire::Stateless { meta } = self {
            merge(
                &mut result,
                &serde_json::json!({ "resultType": "complete" }),
            );
            add_meta(&mut result, meta);
        }
        result
    }
}

/// Adds `meta`'s members to the result's `_meta`, keeping what it holds (a subscription's id).
fn add_meta(result: &mut Value, meta: &Value) {
    match result.get_mut("_meta") {
        Some(own @ Value::Object(_)) => merge(own, meta),
        _ => result["_meta"] = meta.clone(),
    }
}

/// Adds `extra`'s members to the object `into`.
pub(crate) fn merge(into: &mut Value, extra: &Value) {
    if let (Value::Object(into), Value::Object(extra)) = (into, extra) {
        into.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
}

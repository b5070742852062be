//! The protocol's vocabulary, shared by dispatch and the transports: the versions of both eras,
//! the `_meta` keys of 2026-07-28, what a client says of itself, log levels, and JSON-RPC.
//!
//! A connection speaks one of two protocol eras:
//!
//! - the **handshake** era (2024-11-05 to 2025-11-25): `initialize` first, then the requests;
//! - the **stateless** era (2026-07-28): no handshake; every request carries the protocol
//!   version and the client's capabilities in `params._meta` (its [`Envelope`]), and every result
//!   says `resultType` and names the server.

mod declared;
mod envelope;
pub(crate) mod jsonrpc;
mod log;
pub(crate) mod method;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use jsonrpc::{Id, Reply};

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

/// The member of a request's `_meta` that asks for its progress, and of a progress notification
/// that names the request it reports on (both eras).
pub(crate) const PROGRESS_TOKEN: &str = "progressToken";

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
    Stateless { meta: Arc<ServerMeta> },
}

/// The `_meta` a server puts in every result of 2026-07-28: as a value, to merge into a result
/// that has a `_meta` of its own, and as JSON, written as it is beside a result that has none.
#[derive(Debug)]
pub(crate) struct ServerMeta {
    value: Value,
    json: Box<RawValue>,
}

impl ServerMeta {
    pub(crate) fn new(value: Value) -> ServerMeta {
        let json = serde_json::value::to_raw_value(&value).expect("a JSON value serialises");
        ServerMeta { value, json }
    }
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
            add_meta(&mut result, &meta.value);
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

    /// The response to `id` with `result`, as the request's era has it, serialised where it is.
    /// `result` serialises as an object; `plain` says it has no `_meta` or `resultType` of its
    /// own, so that 2026-07-28's are written beside its members rather than merged with them in
    /// a copy.
    pub(crate) fn reply(&self, id: &Id, result: &impl Serialize, plain: bool) -> Reply {
        /// A plain result in 2026-07-28.
        #[derive(Serialize)]
        struct Complete<'a, R> {
            #[serde(flatten)]
            result: &'a R,
            #[serde(rename = "resultType")]
            result_type: &'static str,
            #[serde(rename = "_meta")]
            meta: &'a RawValue,
        }
        match self {
            Wire::Handshake => Reply::result(id, result),
            Wire::Stateless { meta } if plain => Reply::result(
                id,
                &Complete {
                    result,
                    result_type: "complete",
                    meta: &meta.json,
                },
            ),
            Wire::Stateless { .. } => match serde_json::to_value(result) {
                Ok(result @ Value::Object(_)) => Reply::result(id, &self.shape(result)),
                // Not a result of this protocol: passed on as it is rather than shaped.
                _ => Reply::result(id, result),
            },
        }
    }

    /// A result as the request's era has it.
    pub(crate) fn shape(&self, mut result: Value) -> Value {
        if let Wire::Stateless { meta } = self {
            merge(
                &mut result,
                &serde_json::json!({ "resultType": "complete" }),
            );
            add_meta(&mut result, &meta.value);
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

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The response `wire` makes of `result`, as a client reads it.
    fn replied(wire: &Wire, result: &Value, plain: bool) -> Value {
        let bytes = wire
            .reply(&Id::Number(7.into()), result, plain)
            .into_bytes();
        serde_json::from_slice(&bytes).expect("a response is JSON")
    }

    fn stateless() -> Wire {
        Wire::Stateless {
            meta: Arc::new(ServerMeta::new(
                json!({ SERVER_INFO_KEY: { "name": "s", "version": "1" } }),
            )),
        }
    }

    #[test]
    fn a_plain_result_is_sent_as_it_is_in_the_handshake_era() {
        let result = json!({ "content": [], "isError": true });
        assert_eq!(
            replied(&Wire::Handshake, &result, true),
            json!({ "jsonrpc": "2.0", "id": 7, "result": result })
        );
    }

    #[test]
    fn a_plain_result_gains_its_type_and_the_servers_meta_in_2026_07_28() {
        let result = json!({ "content": [{ "type": "text", "text": "hi" }] });
        assert_eq!(
            replied(&stateless(), &result, true)["result"],
            json!({
                "content": [{ "type": "text", "text": "hi" }],
                "resultType": "complete",
                "_meta": { SERVER_INFO_KEY: { "name": "s", "version": "1" } },
            })
        );
    }

    #[test]
    fn a_result_with_a_meta_of_its_own_keeps_it_beside_the_servers() {
        let result = json!({ "content": [], "_meta": { "trace": "abc" } });
        assert_eq!(
            replied(&stateless(), &result, false)["result"],
            json!({
                "content": [],
                "resultType": "complete",
                "_meta": { "trace": "abc", SERVER_INFO_KEY: { "name": "s", "version": "1" } },
            })
        );
    }
}

//! JSON-RPC 2.0 framing: reading one message, writing results and errors.

use bytes::Bytes;
use serde_json::{Value, json};

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// An error of the server's own.
#[cfg(feature = "http")]
pub(crate) const INTERNAL_ERROR: i64 = -32603;
/// The handshake era's "resource not found"; 2026-07-28 uses -32602 for it.
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;
/// Protocol 2026-07-28 over HTTP: the headers do not mirror the body, or one is missing.
#[cfg(feature = "http")]
pub(crate) const HEADER_MISMATCH: i64 = -32020;
/// Protocol 2026-07-28: the request needs a client capability it did not declare.
pub(crate) const MISSING_CLIENT_CAPABILITY: i64 = -32021;
/// Protocol 2026-07-28: the request names a protocol version the server does not speak.
pub(crate) const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// One message from the client.
#[derive(Debug)]
pub(crate) enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A response to a request of ours (`sampling/createMessage`, `elicitation/create`).
    Response {
        id: Value,
        outcome: Result<Value, ErrorObject>,
    },
}

/// The `error` of an error response.
#[derive(Debug, PartialEq)]
pub(crate) struct ErrorObject {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
}

/// Reads one message, or the error response to send back.
pub(crate) fn parse(line: &[u8]) -> Result<Incoming, Vec<u8>> {
    let value: Value = serde_json::from_slice(line).map_err(|err| {
        error(
            &Value::Null,
            PARSE_ERROR,
            &format!("parse error: the message is not JSON ({err})"),
        )
    })?;
    let Value::Object(mut message) = value else {
        let what = if value.is_array() {
            "batches are not supported: send one JSON-RPC message per line"
        } else {
            "a JSON-RPC message is an object"
        };
        return Err(error(&Value::Null, INVALID_REQUEST, what));
    };
    // The id is read first, so that even a malformed request gets its error under its own id.
    let id = match message.remove("id") {
        None => None,
        Some(id @ (Value::String(_) | Value::Number(_))) => Some(id),
        // An error response to a request the client could not read: answering it would start
        // an exchange of errors.
        Some(Value::Null) if message.contains_key("error") && !message.contains_key("method") => {
            Some(Value::Null)
        }
        Some(_) => {
            return Err(error(
                &Value::Null,
                INVALID_REQUEST,
                "a request id is a string or an integer",
            ));
        }
    };
    let reply_id = id.clone().unwrap_or(Value::Null);
    if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(error(
            &reply_id,
            INVALID_REQUEST,
            "the message lacks `\"jsonrpc\": \"2.0\"`",
        ));
    }
    let params = message.remove("params").unwrap_or(Value::Null);
    if !matches!(params, Value::Object(_) | Value::Null) {
        return Err(error(
            &reply_id,
            INVALID_PARAMS,
            "`params` must be an object",
        ));
    }
    match (message.remove("method"), id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request { id, method, params }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (None, Some(id)) if message.contains_key("result") || message.contains_key("error") => {
            let outcome = match (message.remove("result"), message.remove("error")) {
                (Some(result), None) => Ok(result),
                (_, error) => Err(error_object(error.unwrap_or(Value::Null))),
            };
            Ok(Incoming::Response { id, outcome })
        }
        _ => Err(error(
            &reply_id,
            INVALID_REQUEST,
            "the message has no `method` string",
        )),
    }
}

/// Reads an error response's `error`, leniently: it is the client's word, passed on to a tool.
fn error_object(error: Value) -> ErrorObject {
    ErrorObject {
        code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
        message: match error.get("message").and_then(Value::as_str) {
            Some(message) => message.to_owned(),
            None => format!("a malformed error: {error}"),
        },
        data: error.get("data").cloned(),
    }
}

/// A result response.
pub(crate) fn result(id: &Value, result: &Value) -> Vec<u8> {
    /// The response's members in the order a map of them would write: serialised in place,
    /// without copying the result into a new value first.
    #[derive(serde::Serialize)]
    struct Response<'a> {
        id: &'a Value,
        jsonrpc: &'static str,
        result: &'a Value,
    }
    serde_json::to_vec(&Response {
        id,
        jsonrpc: "2.0",
        result,
    })
    .expect("a JSON value serialises")
}

/// A result response around a result serialised ahead of time.
pub(crate) fn result_bytes(id: &Value, result: &[u8]) -> Vec<u8> {
    let mut out = result_head(id);
    out.reserve(result.len() + 1);
    out.extend_from_slice(result);
    out.push(b'}');
    out
}

/// A result response around a large result serialised ahead of time and shared, such as the
/// tool list: its bytes are written from where they are, not copied into each response.
pub(crate) struct SharedResult {
    /// `{"jsonrpc":"2.0","id":…,"result":`
    head: Vec<u8>,
    result: Bytes,
    /// How much of `result` to send: all of it, or all but its closing brace when `tail` adds
    /// members to it.
    end: usize,
    tail: Vec<u8>,
}

impl SharedResult {
    /// A result response whose result is `result`.
    pub(crate) fn new(id: &Value, result: Bytes) -> SharedResult {
        let end = result.len();
        SharedResult {
            head: result_head(id),
            result,
            end,
            tail: b"}".to_vec(),
        }
    }

    /// A result response whose result is the object `result` with more members
    /// (`"a":1,"b":2`, serialised too) added to it.
    pub(crate) fn with_members(id: &Value, result: Bytes, members: &[u8]) -> SharedResult {
        debug_assert!(result.starts_with(b"{") && result.ends_with(b"}") && result.len() > 2);
        let end = result.len() - 1;
        let mut tail = Vec::with_capacity(members.len() + 3);
        tail.push(b',');
        tail.extend_from_slice(members);
        tail.extend_from_slice(b"}}");
        SharedResult {
            head: result_head(id),
            result,
            end,
            tail,
        }
    }

    /// The message in order, in three pieces.
    pub(crate) fn parts(&self) -> [&[u8]; 3] {
        [&self.head, &self.result[..self.end], &self.tail]
    }

    /// The message in one buffer.
    pub(crate) fn into_vec(self) -> Vec<u8> {
        self.parts().concat()
    }
}

fn result_head(id: &Value) -> Vec<u8> {
    let mut head = br#"{"jsonrpc":"2.0","id":"#.to_vec();
    serde_json::to_writer(&mut head, id).expect("a JSON value serialises");
    head.extend_from_slice(br#","result":"#);
    head
}

/// An error response.
pub(crate) fn error(id: &Value, code: i64, message: &str) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message },
    }))
    .expect("a JSON value serialises")
}

/// An error response with `data`: what the client needs to recover, such as the versions a
/// server speaks.
pub(crate) fn error_with_data(id: &Value, code: i64, message: &str, data: &Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "jsonrpc": "2.0",
        "id": id,
        "error": { "code": code, "message": message, "data": data },
    }))
    .expect("a JSON value serialises")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_err(line: &str) -> Value {
        serde_json::from_slice(&parse(line.as_bytes()).unwrap_err()).unwrap()
    }

    #[test]
    fn garbage_is_a_parse_error_with_a_null_id() {
        let reply = parse_err("{not json");
        assert_eq!(reply["id"], Value::Null);
        assert_eq!(reply["error"]["code"], PARSE_ERROR);
    }

    #[test]
    fn a_batch_is_refused() {
        assert_eq!(parse_err("[]")["error"]["code"], INVALID_REQUEST);
    }

    #[test]
    fn a_malformed_request_keeps_its_id() {
        let reply = parse_err(r#"{"id": 7, "method": "ping"}"#);
        assert_eq!(reply["id"], 7);
        assert_eq!(reply["error"]["code"], INVALID_REQUEST);
        assert_eq!(
            parse_err(r#"{"jsonrpc": "2.0", "id": null, "method": "ping"}"#)["error"]["code"],
            INVALID_REQUEST
        );
    }

    #[test]
    fn responses_are_read_with_their_id_and_outcome() {
        let read = |line: &str| match parse(line.as_bytes()) {
            Ok(Incoming::Response { id, outcome }) => (id, outcome),
            other => panic!("not a response: {other:?}"),
        };
        assert_eq!(
            read(r#"{"jsonrpc": "2.0", "id": "tw-1", "result": {"a": 1}}"#),
            (json!("tw-1"), Ok(json!({"a": 1})))
        );
        assert_eq!(
            read(r#"{"jsonrpc": "2.0", "id": "tw-2", "error": {"code": -1, "message": "no"}}"#),
            (
                json!("tw-2"),
                Err(ErrorObject {
                    code: -1,
                    message: "no".to_owned(),
                    data: None
                })
            )
        );
        // An error about a message the client could not read is not answered.
        assert_eq!(
            read(r#"{"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "x"}}"#).0,
            Value::Null
        );
    }

    #[test]
    fn precomputed_results_are_valid_json() {
        let bytes = result_bytes(&json!("a\"b"), br#"{"tools":[]}"#);
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": "a\"b", "result": {"tools": []}})
        );
        let shared = Bytes::from_static(br#"{"tools":[]}"#);
        let plain = SharedResult::new(&json!(2), shared.clone()).into_vec();
        let value: Value = serde_json::from_slice(&plain).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}})
        );
        let bytes =
            SharedResult::with_members(&json!(3), shared, br#""ttlMs":5,"a":{}"#).into_vec();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [], "ttlMs": 5, "a": {}}})
        );
    }
}

//! JSON-RPC 2.0 framing: reading one message, writing results and errors.

use std::fmt;

use bytes::Bytes;
use serde::de::value::SeqAccessDeserializer;
use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Number, Value};

use super::{Client, declared};

pub(crate) const PARSE_ERROR: i64 = -32700;
pub(crate) const INVALID_REQUEST: i64 = -32600;
pub(crate) const METHOD_NOT_FOUND: i64 = -32601;
pub(crate) const INVALID_PARAMS: i64 = -32602;
/// An error of the server's own.
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

/// A request's id, answered exactly as the client wrote it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Id {
    /// No id could be read: what the answer to an unreadable message carries.
    Null,
    String(String),
    /// A number `serde_json` holds exactly: any 64-bit integer.
    Number(Number),
    /// Any other number, as the client wrote it: JSON bounds no integer, and an id beyond 64
    /// bits comes back as sent, not as the float it would be read as.
    Raw(Box<str>),
}

impl Id {
    /// The id a message's `id` member holds, if it is one a request may have. A number
    /// `serde_json` could not hold exactly is read again from `line`, as written.
    fn read(value: Value, line: &[u8]) -> Option<Id> {
        match value {
            Value::String(s) => Some(Id::String(s)),
            Value::Number(n) if !n.is_f64() => Some(Id::Number(n)),
            Value::Number(n) => Some(raw_id(line).unwrap_or_else(|| Id::Raw(n.to_string().into()))),
            _ => None,
        }
    }

    /// A number written as `text`: held exactly when it can be, kept as written otherwise.
    fn number(text: &str) -> Id {
        match serde_json::from_str::<Number>(text) {
            Ok(n) if !n.is_f64() => Id::Number(n),
            _ => Id::Raw(text.into()),
        }
    }

    /// The id a JSON value holds, as [`to_value`](Id::to_value) gave it: null for one that is
    /// no id.
    #[cfg(feature = "http")]
    pub(crate) fn from_value(value: Value) -> Id {
        match value {
            Value::String(s) => Id::String(s),
            Value::Number(n) if !n.is_f64() => Id::Number(n),
            Value::Number(n) => Id::Raw(n.to_string().into()),
            _ => Id::Null,
        }
    }

    /// The id as a JSON value, for a message that names it in its `params` (a
    /// subscription's id): exact for strings and 64-bit integers, the nearest number otherwise.
    pub(crate) fn to_value(&self) -> Value {
        match self {
            Id::Null => Value::Null,
            Id::String(s) => Value::String(s.clone()),
            Id::Number(n) => Value::Number(n.clone()),
            Id::Raw(text) => {
                serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
            }
        }
    }

    /// The id as telemetry names it (`jsonrpc.request.id`): a string id as it is, a number as
    /// JSON writes it; none for a null id.
    #[cfg(feature = "otel")]
    pub(crate) fn as_attribute(&self) -> Option<String> {
        match self {
            Id::Null => None,
            Id::String(s) => Some(s.clone()),
            Id::Number(n) => Some(n.to_string()),
            Id::Raw(text) => Some(text.to_string()),
        }
    }

    /// The id as a string, if it is one.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Id::String(s) => Some(s),
            _ => None,
        }
    }
}

/// The id as JSON, as a `serde_json::Value` of it would print: the key a call is known by, which
/// `notifications/cancelled` names with its `requestId`.
impl fmt::Display for Id {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Id::Null => f.write_str("null"),
            Id::String(s) => f.write_str(&serde_json::to_string(s).map_err(|_| fmt::Error)?),
            Id::Number(n) => n.fmt(f),
            Id::Raw(text) => f.write_str(text),
        }
    }
}

impl Serialize for Id {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Id::Null => serializer.serialize_unit(),
            Id::String(s) => serializer.serialize_str(s),
            Id::Number(n) => n.serialize(serializer),
            Id::Raw(text) => {
                let raw: &RawValue =
                    serde_json::from_str(text).map_err(serde::ser::Error::custom)?;
                raw.serialize(serializer)
            }
        }
    }
}

/// The top level of a message, read for its `id` alone: the rest is skipped, not read, so a
/// message `serde_json` cannot read (nested too deep, a number beyond a float's range, a lone
/// surrogate escape) still yields the id to answer it under.
#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
}

/// The id of a message as written, if it has one a request may have.
fn raw_id(line: &[u8]) -> Option<Id> {
    let raw = serde_json::from_slice::<IdOnly<'_>>(line).ok()?.id?;
    let text = raw.get();
    match text.as_bytes().first()? {
        b'"' => serde_json::from_str(text).ok().map(Id::String),
        b'-' | b'0'..=b'9' => Some(Id::number(text)),
        _ => None,
    }
}

/// One message from the client.
#[derive(Debug)]
pub(crate) enum Incoming {
    Request {
        id: Id,
        method: String,
        params: Value,
        /// What the request declares of its client in 2026-07-28's envelope: its capabilities
        /// and information, taken out of `params._meta`.
        client: Client,
    },
    Notification {
        method: String,
        params: Value,
    },
    /// A response to a request of ours (`sampling/createMessage`, `elicitation/create`).
    Response {
        id: Id,
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
pub(crate) fn parse(line: &[u8]) -> Result<Incoming, Reply> {
    let top = serde_json::from_slice::<Top>(line).map_err(|err| {
        // JSON this parser does not take (nested too deep, a number beyond a float's range, a
        // lone surrogate escape) may still have an id: the client waits for an answer under it.
        let id = if err.is_data() || err.is_syntax() {
            raw_id(line).unwrap_or(Id::Null)
        } else {
            Id::Null
        };
        let what = if id == Id::Null {
            "the message is not JSON"
        } else {
            "the message cannot be read"
        };
        Reply::error(&id, PARSE_ERROR, &format!("parse error: {what} ({err})"))
    })?;
    let message = match top {
        Top::Message(members) => members,
        Top::Batch => {
            return Err(Reply::error(
                &Id::Null,
                INVALID_REQUEST,
                "batches are not supported: send one JSON-RPC message per line",
            ));
        }
        Top::Other => {
            return Err(Reply::error(
                &Id::Null,
                INVALID_REQUEST,
                "a JSON-RPC message is an object",
            ));
        }
    };
    // The id is read first, so that even a malformed request gets its error under its own id.
    let id = match message.id {
        None => None,
        // An error response to a request the client could not read: answering it would start
        // an exchange of errors.
        Some(Value::Null) if message.error.is_some() && message.method.is_none() => Some(Id::Null),
        Some(id) => match Id::read(id, line) {
            Some(id) => Some(id),
            None => {
                return Err(Reply::error(
                    &Id::Null,
                    INVALID_REQUEST,
                    "a request id is a string or an integer",
                ));
            }
        },
    };
    let reply_id = id.clone().unwrap_or(Id::Null);
    if message.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(Reply::error(
            &reply_id,
            INVALID_REQUEST,
            "the message lacks `\"jsonrpc\": \"2.0\"`",
        ));
    }
    let params = message.params.unwrap_or(Value::Null);
    if !matches!(params, Value::Object(_) | Value::Null) {
        return Err(Reply::error(
            &reply_id,
            INVALID_PARAMS,
            "`params` must be an object",
        ));
    }
    match (message.method, id) {
        (Some(Value::String(method)), Some(id)) => Ok(Incoming::Request {
            id,
            method,
            params,
            client: message.client,
        }),
        (Some(Value::String(method)), None) => Ok(Incoming::Notification { method, params }),
        (None, Some(id)) if message.result.is_some() || message.error.is_some() => {
            let outcome = match (message.result, message.error) {
                (Some(result), None) => Ok(result),
                (_, error) => Err(error_object(error.unwrap_or(Value::Null))),
            };
            Ok(Incoming::Response { id, outcome })
        }
        _ => Err(Reply::error(
            &reply_id,
            INVALID_REQUEST,
            "the message has no `method` string",
        )),
    }
}

/// What a line holds at its top level: a message, or what no message is. Made once per line
/// and taken apart at once, so its message is not boxed.
#[allow(clippy::large_enum_variant)]
enum Top {
    Message(Members),
    /// An array: a batch, which this server does not take.
    Batch,
    /// A string, a number, `true`, `false` or `null`.
    Other,
}

/// A message's members that JSON-RPC gives a meaning, each read where it stands: `params` with
/// what it declares of its client taken out as `client`. Any other member is read, as JSON
/// this parser takes, and dropped.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Value>,
    id: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
    client: Client,
}

/// The name of a message's member.
#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> Deserialize<'de> for Top {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Top, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let mut members = Members::default();
        // A member written twice counts as written last, as in a `Value`.
        while let Some(member) = map.next_key()? {
            let slot = match member {
                Member::Jsonrpc => &mut members.jsonrpc,
                Member::Id => &mut members.id,
                Member::Method => &mut members.method,
                Member::Result => &mut members.result,
                Member::Error => &mut members.error,
                Member::Params => {
                    let client = &mut members.client;
                    members.params = Some(map.next_value_seed(declared::Params { client })?);
                    continue;
                }
                Member::Other => {
                    map.next_value::<Value>()?;
                    continue;
                }
            };
            *slot = Some(map.next_value()?);
        }
        Ok(Top::Message(members))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        // Read whole, so that JSON this parser does not take is answered as such.
        Value::deserialize(SeqAccessDeserializer::new(seq))?;
        Ok(Top::Batch)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_str<E>(self, _: &str) -> Result<Top, E> {
        Ok(Top::Other)
    }

    fn visit_unit<E>(self) -> Result<Top, E> {
        Ok(Top::Other)
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

/// A response for the client, and what its transport must know of it without reading it
/// again: whether it is an error, and which, or the result that opens a session.
#[derive(Debug)]
pub(crate) struct Reply {
    body: Body,
    kind: ReplyKind,
}

/// What a [`Reply`] says, as a transport needs to know: the HTTP status it takes, whether a
/// session starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReplyKind {
    /// A result.
    Result,
    /// The result of a successful `initialize`: the connection's session starts.
    Opened,
    /// A tool's result that says it failed (`isError`): a result as the protocol has it.
    ToolError,
    /// An error response with this code.
    Error(i64),
}

/// A reply's bytes: its own, or a result shared with other replies (the tool list).
#[derive(Debug)]
pub(crate) enum Body {
    Owned(Vec<u8>),
    Shared(SharedResult),
}

impl Reply {
    /// A result response.
    pub(crate) fn result(id: &Id, result: &impl Serialize) -> Reply {
        /// The response's members in the order a map of them would write: serialised in
        /// place, without copying the result into a new value first.
        #[derive(Serialize)]
        struct Message<'a, R> {
            id: &'a Id,
            jsonrpc: &'static str,
            result: &'a R,
        }
        let bytes = serde_json::to_vec(&Message {
            id,
            jsonrpc: "2.0",
            result,
        })
        .expect("a result serialises");
        Reply::owned(bytes, ReplyKind::Result)
    }

    /// A result response around a result serialised ahead of time.
    pub(crate) fn result_bytes(id: &Id, result: &[u8]) -> Reply {
        let mut out = result_head(id);
        out.reserve(result.len() + 1);
        out.extend_from_slice(result);
        out.push(b'}');
        Reply::owned(out, ReplyKind::Result)
    }

    /// A result response around bytes shared with other responses.
    pub(crate) fn shared(result: SharedResult) -> Reply {
        Reply {
            body: Body::Shared(result),
            kind: ReplyKind::Result,
        }
    }

    /// An error response.
    pub(crate) fn error(id: &Id, code: i64, message: &str) -> Reply {
        Reply::owned(
            error_response(id, code, message, None),
            ReplyKind::Error(code),
        )
    }

    /// An error response with `data`: what the client needs to recover, such as the versions a
    /// server speaks.
    pub(crate) fn error_with_data(id: &Id, code: i64, message: &str, data: &Value) -> Reply {
        Reply::owned(
            error_response(id, code, message, Some(data)),
            ReplyKind::Error(code),
        )
    }

    /// This result opens the connection's session: it answers a successful `initialize`.
    pub(crate) fn opening(self) -> Reply {
        debug_assert_eq!(self.kind, ReplyKind::Result);
        Reply {
            kind: ReplyKind::Opened,
            ..self
        }
    }

    fn owned(bytes: Vec<u8>, kind: ReplyKind) -> Reply {
        Reply {
            body: Body::Owned(bytes),
            kind,
        }
    }

    /// The same reply, said to be a tool's result that failed.
    pub(crate) fn of_tool_error(mut self) -> Reply {
        self.kind = ReplyKind::ToolError;
        self
    }

    /// What it says.
    #[cfg_attr(
        not(any(feature = "http", feature = "otel")),
        allow(dead_code, reason = "read by the HTTP transport, telemetry and tests")
    )]
    pub(crate) fn kind(&self) -> ReplyKind {
        self.kind
    }

    /// How many bytes it has.
    pub(crate) fn len(&self) -> usize {
        match &self.body {
            Body::Owned(bytes) => bytes.len(),
            Body::Shared(shared) => shared.parts().iter().map(|part| part.len()).sum(),
        }
    }

    /// Its bytes, as they are held.
    pub(crate) fn into_body(self) -> Body {
        self.body
    }

    /// Its bytes in one buffer.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        match self.body {
            Body::Owned(bytes) => bytes,
            Body::Shared(shared) => shared.into_vec(),
        }
    }
}

/// A result response around a large result serialised ahead of time and shared, such as the
/// tool list: its bytes are written from where they are, not copied into each response.
#[derive(Debug)]
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
    pub(crate) fn new(id: &Id, result: Bytes) -> SharedResult {
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
    pub(crate) fn with_members(id: &Id, result: Bytes, members: &[u8]) -> SharedResult {
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

fn result_head(id: &Id) -> Vec<u8> {
    let mut head = br#"{"jsonrpc":"2.0","id":"#.to_vec();
    serde_json::to_writer(&mut head, id).expect("a JSON value serialises");
    head.extend_from_slice(br#","result":"#);
    head
}

fn error_response(id: &Id, code: i64, message: &str, data: Option<&Value>) -> Vec<u8> {
    #[derive(Serialize)]
    struct ErrorMessage<'a> {
        jsonrpc: &'static str,
        id: &'a Id,
        error: ErrorMember<'a>,
    }
    #[derive(Serialize)]
    struct ErrorMember<'a> {
        code: i64,
        message: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        data: Option<&'a Value>,
    }
    serde_json::to_vec(&ErrorMessage {
        jsonrpc: "2.0",
        id,
        error: ErrorMember {
            code,
            message,
            data,
        },
    })
    .expect("a JSON value serialises")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_err(line: &str) -> Value {
        serde_json::from_slice(&parse(line.as_bytes()).unwrap_err().into_bytes()).unwrap()
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
            (Id::String("tw-1".into()), Ok(json!({"a": 1})))
        );
        assert_eq!(
            read(r#"{"jsonrpc": "2.0", "id": "tw-2", "error": {"code": -1, "message": "no"}}"#),
            (
                Id::String("tw-2".into()),
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
            Id::Null
        );
    }

    #[test]
    fn precomputed_results_are_valid_json() {
        let bytes =
            Reply::result_bytes(&Id::String("a\"b".into()), br#"{"tools":[]}"#).into_bytes();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": "a\"b", "result": {"tools": []}})
        );
        let shared = Bytes::from_static(br#"{"tools":[]}"#);
        let plain = SharedResult::new(&Id::Number(2.into()), shared.clone()).into_vec();
        let value: Value = serde_json::from_slice(&plain).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": []}})
        );
        let bytes =
            SharedResult::with_members(&Id::Number(3.into()), shared, br#""ttlMs":5,"a":{}"#)
                .into_vec();
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            value,
            json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [], "ttlMs": 5, "a": {}}})
        );
    }

    fn request_id(line: &str) -> Id {
        match parse(line.as_bytes()) {
            Ok(Incoming::Request { id, .. }) => id,
            other => panic!("not a request: {other:?}"),
        }
    }

    #[test]
    fn ids_come_back_as_written() {
        for id in [
            "7",
            "-3",
            "18446744073709551616",
            "123456789012345678901234567890",
            "1.5",
        ] {
            let line = format!(r#"{{"jsonrpc": "2.0", "id": {id}, "method": "ping"}}"#);
            let read = request_id(&line);
            assert_eq!(read.to_string(), id);
            let answer = String::from_utf8(Reply::result(&read, &json!({})).into_bytes()).unwrap();
            assert_eq!(
                answer,
                format!(r#"{{"id":{id},"jsonrpc":"2.0","result":{{}}}}"#)
            );
            let refusal =
                String::from_utf8(Reply::error(&read, METHOD_NOT_FOUND, "no").into_bytes())
                    .unwrap();
            assert!(refusal.contains(&format!(r#""id":{id},"#)), "{refusal}");
        }
        assert_eq!(
            request_id(r#"{"jsonrpc": "2.0", "id": "a\u0062", "method": "ping"}"#),
            Id::String("ab".into())
        );
        // A call is known by its id as JSON, as `notifications/cancelled` names it.
        for id in [json!("tab\tand\u{1}"), json!(-3), json!(u64::MAX)] {
            let line = json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string();
            assert_eq!(request_id(&line).to_string(), id.to_string());
        }
    }

    #[test]
    fn json_the_parser_cannot_read_is_answered_under_its_id() {
        let deep = format!(
            r#"{{"jsonrpc": "2.0", "method": "tools/call", "params": {{"a": {}1{}}}, "id": 41}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let huge = r#"{"jsonrpc": "2.0", "id": "h", "method": "ping", "params": {"x": 1e999}}"#;
        let lone = r#"{"jsonrpc": "2.0", "id": 123456789012345678901, "method": "x", "params": {"s": "\ud800"}}"#;
        for (line, id) in [(deep.as_str(), json!(41)), (huge, json!("h"))] {
            let reply = parse_err(line);
            assert_eq!(reply["id"], id, "{line}");
            assert_eq!(reply["error"]["code"], PARSE_ERROR);
            assert!(
                reply["error"]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("parse error: the message cannot be read ("),
                "{reply}"
            );
        }
        let reply = String::from_utf8(parse(lone.as_bytes()).unwrap_err().into_bytes()).unwrap();
        assert!(reply.contains(r#""id":123456789012345678901,"#), "{reply}");
        // An id beyond a float's range is answered as written too.
        let reply = parse(br#"{"jsonrpc": "2.0", "id": 1e400, "method": "ping"}"#).unwrap_err();
        assert!(
            String::from_utf8(reply.into_bytes())
                .unwrap()
                .contains(r#""id":1e400,"#)
        );
        // Without a readable id, the answer has none.
        assert_eq!(parse_err(r#"{"id": 1, "x": }"#)["id"], Value::Null);
        assert_eq!(parse_err(r#"{"id": [1], "x": 1e999}"#)["id"], Value::Null);
    }

    #[cfg(feature = "otel")]
    #[test]
    fn telemetry_names_a_string_id_as_it_is_and_leaves_out_a_null_one() {
        let id = |json: &str| match parse(
            format!(r#"{{"jsonrpc":"2.0","id":{json},"method":"ping"}}"#).as_bytes(),
        ) {
            Ok(Incoming::Request { id, .. }) => id,
            _ => panic!("a request"),
        };
        assert_eq!(
            id(r#""request-7""#).as_attribute().as_deref(),
            Some("request-7")
        );
        assert_eq!(id("10").as_attribute().as_deref(), Some("10"));
        assert_eq!(Id::Null.as_attribute(), None);
    }
}

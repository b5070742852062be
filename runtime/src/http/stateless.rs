//! Protocol 2026-07-28 over Streamable HTTP: which POSTs are of that era, the headers that must
//! mirror their bodies, and the HTTP status of each answer.

use axum::http::header::RETRY_AFTER;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::Response;
use base64::Engine as _;
use serde_json::Value;

use super::access::PROTOCOL_VERSION;
use super::response::json;
use crate::pipeline::RATE_LIMITED;
use crate::protocol::jsonrpc::{
    HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, Id, METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY, PARSE_ERROR, Reply, ReplyKind, UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::protocol::{Client, PROTOCOL_VERSION_KEY, STATELESS_VERSIONS, has_envelope};
use crate::registry::Mirrored;

/// The header that mirrors a request's `method`.
const METHOD: HeaderName = HeaderName::from_static("mcp-method");

/// The header that mirrors a request's `params.name` (or `params.uri`).
const NAME: HeaderName = HeaderName::from_static("mcp-name");

/// The methods whose target is mirrored in `Mcp-Name`, and the member of `params` it names.
const NAMED: [(&str, &str); 6] = [
    ("tools/call", "name"),
    ("prompts/get", "name"),
    ("resources/read", "uri"),
    ("tasks/get", "taskId"),
    ("tasks/update", "taskId"),
    ("tasks/cancel", "taskId"),
];

/// Whether a POST is of protocol 2026-07-28: its `MCP-Protocol-Version` header says so, or it is
/// a request (other than `initialize`, which that era lacks) that carries the era's `_meta`
/// envelope or is its `server/discover`.
pub(super) fn applies(headers: &HeaderMap, method: Option<&str>, params: &Value) -> bool {
    let header = header_names_era(headers);
    match method {
        Some("initialize") => false,
        Some(method) => header || method == "server/discover" || has_envelope(params),
        None => header,
    }
}

/// Whether the `MCP-Protocol-Version` header names a version of protocol 2026-07-28's era.
pub(super) fn header_names_era(headers: &HeaderMap) -> bool {
    headers
        .get(PROTOCOL_VERSION)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| STATELESS_VERSIONS.contains(&v.trim()))
}

/// The answer to an `initialize` sent under a version of protocol 2026-07-28, which has no
/// handshake: the method is not found there (`404`).
pub(super) fn no_initialize(id: &Id) -> Reply {
    Reply::error(
        id,
        METHOD_NOT_FOUND,
        &format!(
            "method not found: `initialize` is not a method of protocol {}, which has no \
             handshake: send `server/discover`, or every request with its `_meta` envelope; for \
             a session, send `initialize` without this `MCP-Protocol-Version` header",
            STATELESS_VERSIONS.join(", ")
        ),
    )
}

/// Checks that the headers mirror the request: `MCP-Protocol-Version` its `_meta` version,
/// `Mcp-Method` its method, and `Mcp-Name` the tool (or prompt, or resource) it names. Each
/// must be there, once. Returns the error to answer with `400` otherwise.
///
/// A request whose envelope lacks the version or the client's capabilities is let through: the
/// dispatcher answers it with the error that names what is missing, as the protocol orders.
pub(super) fn check_headers(
    headers: &HeaderMap,
    id: &Id,
    method: &str,
    params: &Value,
    client: &Client,
    mirrored: &[Mirrored],
) -> Result<(), Reply> {
    let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
        return Ok(());
    };
    let (Some(version), true) = (
        meta.get(PROTOCOL_VERSION_KEY),
        client.capabilities.is_some(),
    ) else {
        return Ok(());
    };
    let mismatch = |message: String| Err(Reply::error(id, HEADER_MISMATCH, &message));
    for name in [PROTOCOL_VERSION, METHOD, NAME] {
        if headers.get_all(&name).iter().count() > 1 {
            return mismatch(format!("header `{name}` appears more than once"));
        }
    }
    let header = |name: &HeaderName| headers.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"));
    let given = header(&PROTOCOL_VERSION);
    if given.is_none() || given != version.as_str() {
        return mismatch(format!(
            "header `MCP-Protocol-Version` ({}) does not match the request's `_meta` \
             `{PROTOCOL_VERSION_KEY}` ({version})",
            shown(header(&PROTOCOL_VERSION)),
        ));
    }
    if header(&METHOD) != Some(method) {
        return mismatch(format!(
            "header `Mcp-Method` ({}) does not match the request's method `{method}`",
            shown(header(&METHOD)),
        ));
    }
    let target = NAMED
        .iter()
        .find(|(named, _)| *named == method)
        .and_then(|(_, key)| Some((*key, params.get(*key).filter(|v| !v.is_null())?)));
    if let Some((key, value)) = target {
        let given = header(&NAME).and_then(decode);
        if given.is_none() || given.as_deref() != value.as_str() {
            return mismatch(format!(
                "header `Mcp-Name` ({}) does not match the request's `params.{key}` ({value})",
                shown(header(&NAME)),
            ));
        }
    }
    for argument in mirrored {
        check_mirrored(headers, params, argument).or_else(mismatch)?;
    }
    Ok(())
}

/// Checks that `Mcp-Param-<header>` says what the argument does: there, once, with the same
/// value (a string as is, a number numerically, a boolean as `true` or `false`), when the
/// argument has one; absent when it has none.
fn check_mirrored(headers: &HeaderMap, params: &Value, argument: &Mirrored) -> Result<(), String> {
    let name = format!("Mcp-Param-{}", argument.header);
    let values: Vec<_> = headers.get_all(name.as_str()).iter().collect();
    let body = params
        .get("arguments")
        .and_then(|a| a.get(&argument.property))
        .filter(|v| !v.is_null());
    let property = &argument.property;
    let sent = match values.as_slice() {
        [] => {
            return match body {
                Some(value) => Err(format!(
                    "header `{name}` is missing: it mirrors the argument `{property}`, which is \
                     {value}"
                )),
                None => Ok(()),
            };
        }
        [value] => value
            .to_str()
            .map_err(|_| format!("header `{name}` holds characters a header value cannot"))?,
        _ => return Err(format!("header `{name}` appears more than once")),
    };
    let Some(sent) = decode(sent.trim()) else {
        return Err(format!(
            "header `{name}` holds `=?base64?...?=` around what is not canonical base64 of UTF-8"
        ));
    };
    let Some(value) = body else {
        return Err(format!(
            "header `{name}` is sent, but the argument `{property}` it mirrors is not"
        ));
    };
    let same = match value {
        Value::String(text) => *text == sent,
        Value::Bool(flag) => sent == if *flag { "true" } else { "false" },
        // An integer exactly (`42`, or `42.0`), never a float that rounds to it.
        Value::Number(number) => {
            let integer = number.as_i64().map(i128::from);
            match integer.or_else(|| number.as_u64().map(i128::from)) {
                Some(n) => integral(&sent) == Some(n),
                None => sent.parse::<f64>().ok() == number.as_f64(),
            }
        }
        _ => false,
    };
    if same {
        Ok(())
    } else {
        Err(format!(
            "header `{name}` (`{sent}`) does not match the argument `{property}` it mirrors \
             ({value})"
        ))
    }
}

fn shown(value: Option<&str>) -> String {
    value.map_or_else(|| "missing".to_owned(), |v| format!("`{v}`"))
}

/// A header value as sent, or what its `=?base64?...?=` sentinel wraps (UTF-8, canonical
/// base64); `None` for a malformed sentinel, which matches nothing.
fn decode(value: &str) -> Option<String> {
    let Some(payload) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Some(value.to_owned());
    };
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(payload).ok()?;
    // Only the canonical spelling, so that one value has one header.
    if engine.encode(&bytes) != payload {
        return None;
    }
    String::from_utf8(bytes).ok()
}

/// The integer a header's text writes: `42`, or `42.0`.
fn integral(text: &str) -> Option<i128> {
    if let Ok(n) = text.parse() {
        return Some(n);
    }
    let (whole, fraction) = text.split_once('.')?;
    if !fraction.bytes().all(|b| b == b'0') {
        return None;
    }
    whole.parse().ok()
}

/// The rejection of a POST that is not a request or notification of this era (a client response:
/// the era has no requests to the client).
pub(super) fn not_a_request() -> Reply {
    Reply::error(
        &Id::Null,
        INVALID_REQUEST,
        "protocol 2026-07-28 has no requests to the client, so a client sends no responses",
    )
}

/// The HTTP status of an answer that says `kind`: `404` for an unknown method, `400` for a
/// request the server could not take (malformed, mismatched headers, an unsupported version, a
/// missing capability), `200` for the rest.
pub(super) fn status(kind: ReplyKind) -> StatusCode {
    match kind {
        ReplyKind::Error(METHOD_NOT_FOUND) => StatusCode::NOT_FOUND,
        ReplyKind::Error(
            PARSE_ERROR
            | INVALID_REQUEST
            | INVALID_PARAMS
            | HEADER_MISMATCH
            | MISSING_CLIENT_CAPABILITY
            | UNSUPPORTED_PROTOCOL_VERSION,
        ) => StatusCode::BAD_REQUEST,
        ReplyKind::Error(_) | ReplyKind::Result | ReplyKind::Opened | ReplyKind::ToolError => {
            StatusCode::OK
        }
    }
}

/// The HTTP response of `reply`, a whole request's answer: with the status its kind says
/// ([`status`]), but for a call a rate limit refused, which is `429 Too Many Requests` with
/// `Retry-After` (whole seconds, rounded up) as the refusal's `data.retryAfterMs` says.
pub(super) fn response(reply: Reply) -> Response {
    let kind = reply.kind();
    let body = reply.into_bytes();
    if kind == ReplyKind::Error(RATE_LIMITED)
        && let Some(wait_ms) = retry_after_ms(&body)
    {
        let mut response = json(StatusCode::TOO_MANY_REQUESTS, body);
        response
            .headers_mut()
            .insert(RETRY_AFTER, HeaderValue::from(wait_ms.div_ceil(1000)));
        return response;
    }
    json(status(kind), body)
}

/// The `data.retryAfterMs` of an error response's bytes.
fn retry_after_ms(body: &[u8]) -> Option<u64> {
    let reply: Value = serde_json::from_slice(body).ok()?;
    reply.pointer("/error/data/retryAfterMs")?.as_u64()
}

#[cfg(test)]
mod tests {
    use axum::http::HeaderValue;
    use serde_json::json;

    use super::*;

    #[test]
    fn header_values_decode_from_the_base64_sentinel() {
        assert_eq!(decode("get_weather").as_deref(), Some("get_weather"));
        assert_eq!(
            decode("=?base64?SGVsbG8sIOS4lueVjA==?=").as_deref(),
            Some("Hello, 世界")
        );
        assert_eq!(decode("=?base64?not base64?="), None);
        // Non-canonical padding bits.
        assert_eq!(decode("=?base64?SGVsbG9=?="), None);
    }

    #[test]
    fn the_era_is_the_header_or_the_envelope() {
        let mut headers = HeaderMap::new();
        let envelope = json!({"_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}});
        assert!(applies(&headers, Some("tools/list"), &envelope));
        assert!(applies(&headers, Some("server/discover"), &json!({})));
        assert!(!applies(&headers, Some("tools/list"), &json!({})));
        assert!(!applies(&headers, None, &json!({})));
        assert!(!applies(&headers, Some("initialize"), &envelope));
        headers.insert(PROTOCOL_VERSION, HeaderValue::from_static("2026-07-28"));
        assert!(applies(&headers, Some("tools/list"), &json!({})));
        assert!(applies(&headers, None, &json!({})));
        headers.insert(PROTOCOL_VERSION, HeaderValue::from_static("2025-11-25"));
        assert!(!applies(&headers, Some("tools/list"), &json!({})));
    }

    #[test]
    fn statuses_follow_the_error_code() {
        let error = |code| Reply::error(&Id::Number(1.into()), code, "x").kind();
        assert_eq!(status(error(METHOD_NOT_FOUND)), StatusCode::NOT_FOUND);
        for code in [
            HEADER_MISMATCH,
            UNSUPPORTED_PROTOCOL_VERSION,
            INVALID_PARAMS,
        ] {
            assert_eq!(status(error(code)), StatusCode::BAD_REQUEST, "{code}");
        }
        assert_eq!(status(error(-32603)), StatusCode::OK);
        let result = Reply::result(&Id::Number(1.into()), &json!({"error": 1}));
        assert_eq!(status(result.kind()), StatusCode::OK);
    }
}

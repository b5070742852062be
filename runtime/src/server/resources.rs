//! `resources/list`, `resources/read` and `resources/templates/list`: the MCP Apps views, the
//! only resources a toolwright server has. They exist only when the server has a view; without
//! one, the methods are unknown, as the capability is not declared.

use serde_json::{Value, json};

use crate::protocol::jsonrpc::{self, INVALID_PARAMS, Id, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND};
use crate::protocol::{Wire, merge};
use crate::registry::Registry;

/// Why a resources request has no result: a JSON-RPC error's code, message and data.
struct Failure {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl Failure {
    fn invalid(message: String) -> Failure {
        Failure {
            code: INVALID_PARAMS,
            message,
            data: None,
        }
    }
}

/// The answer to a resources request: the server's views, or "method not found" when it has
/// none. Every result in 2026-07-28, a read's included, says how long (`ttl_ms`) it may be
/// cached, and by whom: anyone, as the views do not change while the server runs nor differ
/// between clients.
pub(super) fn answer(
    registry: &Registry,
    id: &Id,
    method: &str,
    params: &Value,
    wire: &Wire,
    ttl_ms: u64,
) -> Vec<u8> {
    if registry.ui_resources().len() == 0 {
        return jsonrpc::error(
            id,
            METHOD_NOT_FOUND,
            &format!("method `{method}` is not supported"),
        );
    }
    let outcome = match method {
        "resources/list" => list(registry, params),
        "resources/read" => read(registry, params, wire),
        _ => templates(params),
    };
    let outcome = outcome.map(|mut result| {
        if wire.is_stateless() {
            merge(
                &mut result,
                &json!({ "ttlMs": ttl_ms, "cacheScope": "public" }),
            );
        }
        result
    });
    match outcome {
        Ok(result) => jsonrpc::result(id, &wire.shape(result)),
        Err(Failure {
            code,
            message,
            data: Some(data),
        }) => jsonrpc::error_with_data(id, code, &message, &data),
        Err(Failure { code, message, .. }) => jsonrpc::error(id, code, &message),
    }
}

/// Every view on one page.
fn list(registry: &Registry, params: &Value) -> Result<Value, Failure> {
    if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
        return Err(Failure::invalid(format!(
            "invalid cursor {cursor}: this server lists every resource on one page"
        )));
    }
    let resources: Vec<Value> = registry.ui_resources().map(|r| r.listed()).collect();
    Ok(json!({ "resources": resources }))
}

/// The view a `resources/read` names. One it has not is "resource not found" in the handshake
/// era, and -32602 in 2026-07-28.
fn read(registry: &Registry, params: &Value, wire: &Wire) -> Result<Value, Failure> {
    let Some(uri) = params.get("uri").and_then(Value::as_str) else {
        return Err(Failure::invalid(
            "`resources/read` needs a `uri` string".to_owned(),
        ));
    };
    match registry.ui_resource(uri) {
        Some(resource) => Ok(resource.read()),
        None => {
            let known: Vec<String> = registry
                .ui_resources()
                .map(|r| format!("`{}`", r.uri()))
                .collect();
            Err(Failure {
                code: match wire {
                    Wire::Handshake => RESOURCE_NOT_FOUND,
                    Wire::Stateless { .. } => INVALID_PARAMS,
                },
                message: format!(
                    "resource not found: `{uri}`; this server has {}",
                    known.join(", ")
                ),
                data: Some(json!({ "uri": uri })),
            })
        }
    }
}

/// No templates: every view has a fixed URI.
fn templates(params: &Value) -> Result<Value, Failure> {
    if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
        return Err(Failure::invalid(format!(
            "invalid cursor {cursor}: this server has no resource templates"
        )));
    }
    Ok(json!({ "resourceTemplates": [] }))
}

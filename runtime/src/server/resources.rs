//! `resources/list`, `resources/read` and `resources/templates/list`: the MCP Apps views, the
//! only resources a toolwright server has. They exist only when the server has a view; without
//! one, the methods are unknown, as the capability is not declared.

use serde_json::{Value, json};

use super::jsonrpc::INVALID_PARAMS;
use crate::registry::Registry;

/// "Resource not found" in the handshake era; 2026-07-28 uses -32602 for it.
pub(crate) const RESOURCE_NOT_FOUND: i64 = -32002;

/// Why a resources request has no result: a JSON-RPC error's code, message and data.
pub(crate) struct Failure {
    pub(crate) code: i64,
    pub(crate) message: String,
    pub(crate) data: Option<Value>,
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

/// Every view on one page.
pub(crate) fn list(registry: &Registry, params: &Value) -> Result<Value, Failure> {
    if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
        return Err(Failure::invalid(format!(
            "invalid cursor {cursor}: this server lists every resource on one page"
        )));
    }
    let resources: Vec<Value> = registry.ui_resources().map(|r| r.listed()).collect();
    Ok(json!({ "resources": resources }))
}

/// The view a `resources/read` names; `not_found` is the era's code for one it has not.
pub(crate) fn read(registry: &Registry, params: &Value, not_found: i64) -> Result<Value, Failure> {
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
                code: not_found,
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
pub(crate) fn templates(params: &Value) -> Result<Value, Failure> {
    if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
        return Err(Failure::invalid(format!(
            "invalid cursor {cursor}: this server has no resource templates"
        )));
    }
    Ok(json!({ "resourceTemplates": [] }))
}

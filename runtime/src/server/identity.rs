//! What the server says of itself: who it is (`serverInfo`), what it offers (its capabilities,
//! the same in both eras), and the results of `initialize` and `server/discover`. Each is
//! written as a map of its members would be, in the order of their names.

use serde::Serialize;
use serde_json::{Value, json};

use super::completion;
use crate::apps;
use crate::registry::Registry;

/// Who the server says it is.
#[derive(Clone, Debug, Serialize)]
pub(super) struct ServerInfo {
    pub(super) name: String,
    pub(super) version: String,
}

/// What the server offers: tools and logging always; resources, prompts, completions and the MCP
/// Apps extension when it has them; tasks when a tool runs as one, as each era has them (the
/// handshake era's `tasks` capability, 2026-07-28's extension). Every list may change, through
/// the server's handle.
#[derive(Clone, Debug, Serialize)]
pub(super) struct Capabilities {
    #[serde(skip_serializing_if = "Option::is_none")]
    completions: Option<Empty>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extensions: Option<Value>,
    logging: Empty,
    #[serde(skip_serializing_if = "Option::is_none")]
    prompts: Option<Lists>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources: Option<Lists>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks: Option<Value>,
    tools: Lists,
}

/// A capability with nothing to say but that it is there: `{}`.
#[derive(Clone, Copy, Debug, Serialize)]
struct Empty {}

/// A capability of lists that may change, and for resources, subscriptions to one.
#[derive(Clone, Copy, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Lists {
    list_changed: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    subscribe: Option<bool>,
}

impl Lists {
    const CHANGING: Lists = Lists {
        list_changed: true,
        subscribe: None,
    };
}

impl Capabilities {
    /// What a server of these tools, prompts and resources offers: subscriptions to resources
    /// when one of them changes, the MCP Apps extension when it has views.
    pub(super) fn of(registry: &Registry, stateless: bool) -> Capabilities {
        let tasks = registry
            .tools()
            .iter()
            .any(|tool| tool.task_support().allows_task());
        let mut extensions = registry
            .ui_resources()
            .next()
            .map(|_| apps::server_capability());
        if tasks && stateless {
            let extensions = extensions.get_or_insert_with(|| json!({}));
            extensions[crate::tasks::EXTENSION_ID] = json!({});
        }
        Capabilities {
            completions: completion::completes(registry).then_some(Empty {}),
            extensions,
            tasks: (tasks && !stateless).then(
                || json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }),
            ),
            logging: Empty {},
            prompts: registry.has_prompts().then_some(Lists::CHANGING),
            resources: registry.has_resources().then(|| Lists {
                list_changed: true,
                subscribe: registry.has_subscriptions().then_some(true),
            }),
            tools: Lists::CHANGING,
        }
    }
}

/// The result of `initialize`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Initialized<'a> {
    pub(super) capabilities: &'a Capabilities,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) instructions: Option<&'a str>,
    pub(super) protocol_version: &'static str,
    pub(super) server_info: &'a ServerInfo,
}

/// The result of `server/discover`, which every client may cache for `ttl_ms`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Discovered<'a> {
    #[serde(rename = "_meta")]
    pub(super) meta: &'a Value,
    pub(super) cache_scope: &'static str,
    pub(super) capabilities: &'a Capabilities,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) instructions: Option<&'a str>,
    pub(super) result_type: &'static str,
    pub(super) supported_versions: &'a [&'static str],
    pub(super) ttl_ms: u64,
}

//! The mounted servers connected as the server starts, their tools listed and made the
//! registry's, and each call forwarded: its progress passed back, and cancelled upstream when
//! it is cancelled here (the forwarding future dropped with the call).

use std::sync::Arc;

use futures_util::future::join_all;
use serde_json::Value;

use super::Upstream;
use crate::client::{Client, Error};
use crate::content::ToolResult;
use crate::handler::{BoxFuture, Output};
use crate::protocol::SERVER_INFO_KEY;
use crate::registry::{Forward, Tool};

/// Connects every mount at once and lists its tools: the tools to serve, or the first mount
/// that failed, by its name, and why.
pub(crate) async fn mount_all(
    mounts: Vec<(String, Upstream)>,
) -> Result<Vec<Tool>, (String, Error)> {
    let connected = join_all(mounts.into_iter().map(|(name, upstream)| async move {
        let tools = mount(&name, upstream).await;
        (name, tools)
    }))
    .await;
    let mut tools = Vec::new();
    for (name, mounted) in connected {
        tools.extend(mounted.map_err(|error| (name, error))?);
    }
    Ok(tools)
}

/// Connects the server mounted as `name` and makes its tools.
async fn mount(name: &str, upstream: Upstream) -> Result<Vec<Tool>, Error> {
    let client = Client::builder()
        .name(name)
        .versions(upstream.versions)
        .connect(upstream.endpoint.clone())
        .await?;
    let listed = client.list_tools().await?;
    let names: Vec<&str> = listed.iter().map(|tool| tool.name()).collect();
    for unknown in upstream.unknown(&names) {
        tracing::warn!(
            mount = name,
            tool = unknown,
            "the configuration names a tool the server does not list"
        );
    }
    let mount: Arc<str> = Arc::from(name);
    let forward: Arc<dyn Forward> = Arc::new(Forwarder { client });
    let mut tools = Vec::with_capacity(listed.len());
    for tool in listed.iter().filter(|tool| upstream.serves(tool.name())) {
        match Tool::from_mount(&mount, tool.json(), Arc::clone(&forward), upstream.timeout) {
            Ok(tool) => tools.push(tool),
            Err(reason) => tracing::warn!(
                mount = name,
                tool = tool.name(),
                "a tool not served, since no client could call it by its mounted name: {reason}"
            ),
        }
    }
    tracing::info!(mount = name, tools = tools.len(), "mounted");
    Ok(tools)
}

/// Forwards calls to one mounted server.
struct Forwarder {
    client: Client,
}

impl Forward for Forwarder {
    fn call(&self, tool: &str, arguments: Value, ctx: crate::Context) -> BoxFuture<Output> {
        let client = self.client.clone();
        let tool = tool.to_owned();
        Box::pin(async move {
            let progress = ctx.clone();
            // The call pipeline bounds the call, with the mount's limit: not the client.
            let called = client
                .call_tool(&tool, arguments)
                .timeout(None)
                .on_progress(move |step| {
                    progress.progress(step.progress, step.total, step.message.as_deref());
                })
                .await;
            match called {
                Ok(result) => Output::Result(ToolResult::forwarded(passed_on(result.into_json()))),
                Err(error) => Output::Error(error.to_string()),
            }
        })
    }
}

/// A result as this server passes it on: without what its server's era added to it, which
/// this server's answer adds again for its own client's.
fn passed_on(mut result: Value) -> Value {
    if let Value::Object(members) = &mut result {
        members.remove("resultType");
        if let Some(Value::Object(meta)) = members.get_mut("_meta") {
            meta.remove(SERVER_INFO_KEY);
            if meta.is_empty() {
                members.remove("_meta");
            }
        }
    }
    result
}

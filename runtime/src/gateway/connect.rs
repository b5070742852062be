//! Connecting a mounted server and listing the tools the gateway serves of it: as the server
//! starts, when a person approves, and when a watch connects again or lists again.

use serde_json::Value;
use tokio::sync::mpsc;

use super::Upstream;
use crate::client::{Client, Error, RpcError};
use crate::protocol::jsonrpc::INTERNAL_ERROR;
use crate::protocol::{LogLevel, STATELESS_VERSIONS};

/// What a mounted server told that its watch acts on.
pub(crate) enum Heard {
    /// Its tool list changed: its tools are listed again.
    Tools,
    /// Its prompt list changed: its prompts are listed again.
    Prompts,
    /// Its resource list changed: its resources and templates are listed again.
    Resources,
    /// A `subscriptions/listen` stream was acknowledged, following the resources at these URIs
    /// (on the server): a change made before it was is told on none, so its tools, prompts,
    /// resources and templates are listed again.
    Listening(Vec<String>),
    /// The resource at this URI (on the server) changed.
    Updated(String),
}

/// Connects the server mounted as `name` and lists the tools it serves: the client, and the
/// tool objects, as the server sent them. What it tells of its tools and resources is told to
/// `changes`.
pub(super) async fn connect(
    name: &str,
    upstream: &Upstream,
    changes: Option<mpsc::UnboundedSender<Heard>>,
) -> Result<(Client, Vec<Value>), Error> {
    // Sampling and elicitation are passed on to the client whose call asks for them (see
    // `Request::answering`); the handlers answer only what no call can be tied to. Declared
    // when approving too: a server may list tools by what its client can do. Roots are not
    // declared: a server given none keeps to what its own configuration says.
    let mut builder = Client::builder()
        .name(name)
        .versions(upstream.versions)
        .on_sampling(unrelated(name, "sampling/createMessage"))
        .on_elicitation(unrelated(name, "elicitation/create"));
    let serving = changes.is_some();
    if let Some(changes) = changes {
        let mount = name.to_owned();
        builder = builder.on_notification(move |notification| {
            match notification.method.as_str() {
                "notifications/tools/list_changed" => {
                    let _ = changes.send(Heard::Tools);
                }
                "notifications/prompts/list_changed" => {
                    let _ = changes.send(Heard::Prompts);
                }
                "notifications/resources/list_changed" => {
                    let _ = changes.send(Heard::Resources);
                }
                "notifications/subscriptions/acknowledged" => {
                    let uris = notification.params["notifications"]["resourceSubscriptions"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|uri| uri.as_str().map(str::to_owned))
                        .collect();
                    let _ = changes.send(Heard::Listening(uris));
                }
                "notifications/resources/updated" => {
                    if let Some(uri) = notification.params["uri"].as_str() {
                        let _ = changes.send(Heard::Updated(uri.to_owned()));
                    }
                }
                // Its log messages go to the gateway's log: none can be tied to one caller.
                "notifications/message" => logged(&mount, &notification.params),
                _ => {}
            }
        });
    }
    let client = builder.connect(upstream.endpoint.clone()).await?;
    if serving {
        every_level(name, &client).await;
    }
    let listed = client.list_tools().await?;
    let names: Vec<&str> = listed.iter().map(|tool| tool.name()).collect();
    for unknown in upstream.unknown(&names) {
        tracing::warn!(
            mount = name,
            tool = unknown,
            "the configuration names a tool the server does not list"
        );
    }
    let served = served(upstream, listed);
    Ok((client, served))
}

/// Asks a handshake-era server that logs (its `logging` capability) for its messages of every
/// level: its level is one for all the gateway's clients, so the gateway passes each message of
/// a call on at the level the call's client asked for, and logs the others at theirs. (A
/// 2026-07-28 server is told each call's client's level with the call.)
async fn every_level(name: &str, client: &Client) {
    if STATELESS_VERSIONS.contains(&client.protocol_version())
        || client.capabilities().get("logging").is_none()
    {
        return;
    }
    if let Err(error) = client.set_log_level(LogLevel::Debug).await {
        tracing::warn!(
            mount = name,
            %error,
            "its log level could not be set: its calls' messages are those its own level lets through"
        );
    }
}

/// A log message (`notifications/message`) of the server mounted as `mount`, in the gateway's
/// log at its level (`notice` as a warning, the levels graver than `warning` as errors).
fn logged(mount: &str, params: &Value) {
    let level = params["level"].as_str().unwrap_or("info");
    let logger = params["logger"].as_str().unwrap_or_default();
    let data = match &params["data"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    match level {
        "debug" => tracing::debug!(mount, logger, "{data}"),
        "info" => tracing::info!(mount, logger, "{data}"),
        "notice" | "warning" => tracing::warn!(mount, logger, "{data}"),
        _ => tracing::error!(mount, logger, level, "{data}"),
    }
}

/// Refuses `method`, asked by the server mounted as `name` outside any call the gateway could
/// tie it to.
fn unrelated(
    name: &str,
    method: &'static str,
) -> impl Fn(Value) -> std::future::Ready<Result<Value, RpcError>> + Send + Sync + 'static {
    let message = format!(
        "`{method}` came from `{name}` outside any one call the gateway forwards: it has no \
         client to pass it on to"
    );
    move |_| {
        std::future::ready(Err(RpcError {
            code: INTERNAL_ERROR,
            message: message.clone(),
            data: None,
        }))
    }
}

/// The tools `client`'s server lists now, of those the mount serves.
pub(super) async fn listing(upstream: &Upstream, client: &Client) -> Result<Vec<Value>, Error> {
    Ok(served(upstream, client.list_tools().await?))
}

/// The tool objects of `listed` the mount serves (`tools`, `hide`).
fn served(upstream: &Upstream, listed: Vec<crate::client::Tool>) -> Vec<Value> {
    listed
        .into_iter()
        .filter(|tool| upstream.serves(tool.name()))
        .map(|tool| tool.into_json())
        .collect()
}

//! The mounted servers connected as the server starts, their tools listed, checked against the
//! lock and made the registry's, and each call forwarded: its progress passed back, and
//! cancelled upstream when it is cancelled here (the forwarding future dropped with the call).

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::join_all;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::connect::{Heard, connect};
use super::lock::{Lock, Pinned};
use super::watch::{Connection, Served, Watch, held_back, indented};
use super::{NewTools, Upstream};
use crate::client::{Client, Error, Request, RpcError};
use crate::content::ToolResult;
use crate::context::ClientRequestError;
use crate::handler::{BoxFuture, Output};
use crate::protocol::jsonrpc::{INTERNAL_ERROR, METHOD_NOT_FOUND};
use crate::protocol::{LOG_LEVEL_KEY, SERVER_INFO_KEY, STATELESS_VERSIONS};
use crate::registry::{
    Forward, MountedResources, Mounts, PromptLists, ResourceLists, Tool, mounted_uri,
};

/// How long a 2026-07-28 server has to acknowledge a stream that follows a resource anew.
const FOLLOW_LIMIT: Duration = Duration::from_secs(10);

/// What the mounted servers give: what the registry serves of them, and each server's watch,
/// to start once the gateway serves.
pub(crate) struct Mounted {
    pub(crate) served: Mounts,
    pub(crate) watches: Vec<Watch>,
}

/// Connects every mount at once and lists its tools: the tools to serve (those `lock` pins as
/// they are listed now, when there is a lock) and those held back, or the first mount that
/// failed, by its name, and why.
pub(crate) async fn mount_all(
    mounts: Vec<(String, Upstream)>,
    lock: Option<&Lock>,
) -> Result<Mounted, (String, Error)> {
    let connected = join_all(mounts.into_iter().map(|(name, upstream)| async move {
        let changes = mpsc::unbounded_channel();
        let listed = match connect(&name, &upstream, Some(changes.0.clone())).await {
            Ok((client, tools)) => listed_beside(&client)
                .await
                .map(|beside| (client, tools, beside)),
            Err(error) => Err(error),
        };
        (name, upstream, changes, listed)
    }))
    .await;
    let mut mounted = Mounted {
        served: Mounts::default(),
        watches: Vec::new(),
    };
    for (name, upstream, changes, listed) in connected {
        let (client, tools, beside) = listed.map_err(|error| (name.clone(), error))?;
        let capabilities = client.capabilities();
        let listed = Listing {
            tools: &tools,
            beside: &beside,
            completes: capabilities.get("completions").is_some(),
            subscribes: capabilities["resources"]["subscribe"] == true,
        };
        mount(&name, upstream, client, listed, lock, changes, &mut mounted);
    }
    Ok(mounted)
}

/// `scopes` for the life of the process, as a tool's scopes are (`#[mcp_tool]` writes them
/// into the binary): made once for each mount, as the server starts.
fn leaked(scopes: &[String]) -> &'static [&'static str] {
    if scopes.is_empty() {
        return &[];
    }
    let scopes: Vec<&'static str> = scopes
        .iter()
        .map(|scope| &*Box::leak(scope.clone().into_boxed_str()))
        .collect();
    Box::leak(scopes.into_boxed_slice())
}

/// What a server lists beside its tools, each object as the server sent it: its prompts when it
/// says it has prompts, and its resources and templates when it says it has resources.
struct Beside {
    prompts: Option<Vec<Value>>,
    resources: Option<(Vec<Value>, Vec<Value>)>,
}

/// What `client`'s server lists beside its tools, of what it says it has.
async fn listed_beside(client: &Client) -> Result<Beside, Error> {
    let capabilities = client.capabilities();
    let prompts = match capabilities.get("prompts") {
        Some(_) => Some(client.list_prompts().await?),
        None => None,
    };
    let resources = match capabilities.get("resources") {
        Some(_) => Some((
            client.list_resources().await?,
            client.list_resource_templates().await?,
        )),
        None => None,
    };
    Ok(Beside { prompts, resources })
}

/// What a server lists: its tools (those the mount serves), and what beside them, each object
/// as the server sent them.
struct Listing<'a> {
    tools: &'a [Value],
    beside: &'a Beside,
    /// Whether the server completes arguments.
    completes: bool,
    /// Whether it tells of changes to its resources.
    subscribes: bool,
}

/// Makes the tools of the server mounted as `name`, or holds them back as `lock` says, and its
/// prompts.
fn mount(
    name: &str,
    upstream: Upstream,
    client: Client,
    listing: Listing<'_>,
    lock: Option<&Lock>,
    changes: (mpsc::UnboundedSender<Heard>, mpsc::UnboundedReceiver<Heard>),
    mounted: &mut Mounted,
) {
    let listed = listing.tools;
    let mount: Arc<str> = Arc::from(name);
    let connection = Arc::new(Connection::new(client));
    let forward: Arc<dyn Forward> = Arc::new(Forwarder {
        mount: Arc::clone(&mount),
        connection: Arc::clone(&connection),
    });
    let scopes = leaked(&upstream.scopes);
    let mut served = Vec::new();
    let mut held_at_start = Vec::new();
    for tool in listed {
        let pinned = lock.map_or(Pinned::Approved, |lock| lock.pinned(name, tool));
        let held = match pinned {
            Pinned::Approved => None,
            Pinned::New if upstream.new_tools == NewTools::Admit => None,
            Pinned::New => Some("it is new since the gateway's lock was written".to_owned()),
            Pinned::Changed(lines) => Some(format!(
                "it changed since it was approved:\n{}",
                indented(&lines)
            )),
        };
        let forward = Arc::clone(&forward);
        match Tool::from_mount(&mount, tool, forward, upstream.timeout, scopes) {
            Ok(mounted_tool) => match held {
                None => {
                    served.push(Served::new(tool, mounted_tool.wire_name()));
                    mounted.served.tools.push(mounted_tool);
                }
                Some(why) => {
                    let wire = mounted_tool.wire_name().to_owned();
                    held_at_start.push(wire.clone());
                    tracing::warn!(mount = name, tool = wire, "held back: {why}");
                    mounted.served.held.push((
                        wire.clone(),
                        held_back(
                            &wire,
                            &why,
                            "It is served once a person approves it in the gateway's lock \
                             (`toolwright-gateway --approve` prints the change and approves it).",
                        ),
                    ));
                }
            },
            Err(reason) => tracing::warn!(
                mount = name,
                tool = tool["name"].as_str().unwrap_or_default(),
                "a tool not served, since no client could call it by its mounted name: {reason}"
            ),
        }
    }
    if let Some(lock) = lock {
        for gone in lock.unlisted(name, listed) {
            tracing::warn!(
                mount = name,
                tool = gone,
                "an approved tool the server no longer lists: gone"
            );
        }
    }
    let prompt_lists = listing.beside.prompts.as_ref().map(|listed| {
        let completes = listing.completes;
        Arc::new(PromptLists::new(
            &mount,
            listed,
            completes,
            Arc::clone(&forward),
        ))
    });
    if let Some(listed) = &prompt_lists {
        mounted.served.prompts.push(Arc::clone(listed));
    }
    let resource_lists = listing
        .beside
        .resources
        .as_ref()
        .map(|(listed, templates)| Arc::new(ResourceLists::new(&mount, listed, templates)));
    if let Some(listed) = &resource_lists {
        mounted.served.resources.push(MountedResources {
            mount: Arc::clone(&mount),
            listed: Arc::clone(listed),
            subscribes: listing.subscribes,
            completes: listing.completes,
            forward: Arc::clone(&forward),
        });
    }
    let resources = resource_lists.as_ref().map_or(0, |listed| listed.len());
    tracing::info!(
        mount = name,
        tools = served.len(),
        prompts = prompt_lists
            .as_ref()
            .map_or(0, |listed| listed.listed().len()),
        resources,
        "mounted"
    );
    let admits_new = lock.is_none() || upstream.new_tools == NewTools::Admit;
    mounted.watches.push(Watch {
        mount,
        upstream,
        connection,
        served,
        held_at_start,
        admits_new,
        prompts: prompt_lists,
        resources: resource_lists,
        announce: changes.0,
        changes: changes.1,
    });
}

/// Each mounted server's tools, as it lists them now (with `tools` and `hide` applied): what
/// [`Lock::approve`] takes.
#[derive(Debug)]
pub struct Listed {
    /// The mount's name.
    pub mount: String,
    /// Its tool objects, as the server sent them.
    pub tools: Vec<Value>,
}

/// Connects every server of `upstreams` at once and lists its tools, for a person to approve:
/// the lists, by mount, or the first mount that failed, by its name, and why.
pub async fn list_all(upstreams: &[(String, Upstream)]) -> Result<Vec<Listed>, (String, Error)> {
    let listed = join_all(upstreams.iter().map(|(name, upstream)| async move {
        let listed = connect(name, upstream, None).await;
        (name, listed)
    }))
    .await;
    let mut all = Vec::with_capacity(listed.len());
    for (name, listed) in listed {
        let (client, tools) = listed.map_err(|error| (name.clone(), error))?;
        client.close().await;
        all.push(Listed {
            mount: name.clone(),
            tools,
        });
    }
    Ok(all)
}

/// Forwards calls to one mounted server.
struct Forwarder {
    mount: Arc<str>,
    connection: Arc<Connection>,
}

impl Forward for Forwarder {
    fn call(
        &self,
        tool: &str,
        arguments: Value,
        ctx: crate::context::Context,
    ) -> BoxFuture<Output> {
        let client = match self.client() {
            Ok(client) => client,
            Err(unreachable) => return Box::pin(async move { Output::Error(unreachable) }),
        };
        let tool = tool.to_owned();
        let mount = Arc::clone(&self.mount);
        let mount_of_links = Arc::clone(&self.mount);
        Box::pin(async move {
            let progress = ctx.clone();
            let called = passing_on(client.call_tool(&tool, arguments), &client, mount, ctx)
                .on_progress(move |step| {
                    progress.progress(step.progress, step.total, step.message.as_deref());
                })
                .await;
            match called {
                Ok(result) if !result.json().is_object() => {
                    tracing::warn!(
                        mount = &*mount_of_links,
                        tool,
                        "a call's result refused: it is not a JSON object"
                    );
                    Output::Error(format!(
                        "`{mount_of_links}` answered the call of `{tool}` with a result that is \
                         not a JSON object"
                    ))
                }
                Ok(result) => {
                    let mut result = passed_on(result.into_json());
                    links_here(&mount_of_links, &mut result);
                    Output::Result(ToolResult::forwarded(result))
                }
                Err(error) => Output::Error(error.to_string()),
            }
        })
    }

    fn get_prompt(
        &self,
        prompt: &str,
        arguments: Value,
        ctx: crate::context::Context,
    ) -> BoxFuture<Result<Value, RpcError>> {
        let client = self.client().map_err(internal);
        let prompt = prompt.to_owned();
        let mount = Arc::clone(&self.mount);
        let mount_of_links = Arc::clone(&self.mount);
        Box::pin(async move {
            let client = client?;
            let got = passing_on(client.get_prompt(&prompt, arguments), &client, mount, ctx).await;
            let mut got = refused_as_said(got)?;
            for message in got["messages"].as_array_mut().into_iter().flatten() {
                if let Some(block) = message.get_mut("content") {
                    link_here(&mount_of_links, block);
                }
            }
            Ok(got)
        })
    }

    fn complete(&self, params: Value) -> BoxFuture<Result<Value, RpcError>> {
        let client = self.client().map_err(internal);
        Box::pin(
            async move { refused_as_said(client?.request("completion/complete", params).await) },
        )
    }

    fn read_resource(
        &self,
        uri: &str,
        ctx: crate::context::Context,
    ) -> BoxFuture<Result<Value, RpcError>> {
        let client = self.client().map_err(internal);
        let uri = uri.to_owned();
        let mount = Arc::clone(&self.mount);
        Box::pin(async move {
            let client = client?;
            let read = passing_on(client.read_resource(&uri), &client, mount, ctx).await;
            refused_as_said(read)
        })
    }

    fn follow(&self, uri: &str) -> BoxFuture<Result<(), RpcError>> {
        let client = self.client().map_err(internal);
        let connection = Arc::clone(&self.connection);
        let mount = Arc::clone(&self.mount);
        let uri = uri.to_owned();
        Box::pin(async move {
            let client = client?;
            if connection.follows(&uri) {
                return Ok(());
            }
            if !STATELESS_VERSIONS.contains(&client.protocol_version()) {
                refused_as_said(client.subscribe(&uri).await.map(|()| Value::Null))?;
                connection.followed(&uri);
                return Ok(());
            }
            // A 2026-07-28 server is asked on the watch's stream, opened again with it: followed
            // once it acknowledges.
            connection.followed(&uri);
            if connection.acknowledged(&uri, FOLLOW_LIMIT).await {
                Ok(())
            } else {
                Err(internal(format!(
                    "`{mount}` did not say it follows `{uri}` within {}",
                    humantime::format_duration(FOLLOW_LIMIT)
                )))
            }
        })
    }
}

/// A mounted server's result, passed on; or the error it answered with, as it said it, or
/// another failure, naming it.
fn refused_as_said(answered: Result<Value, Error>) -> Result<Value, RpcError> {
    match answered {
        Ok(result) => Ok(passed_on(result)),
        Err(error) => Err(match error.rpc() {
            Some(refused) => refused.clone(),
            None => internal(error.to_string()),
        }),
    }
}

/// An internal error (-32603) saying `message`.
fn internal(message: String) -> RpcError {
    RpcError {
        code: INTERNAL_ERROR,
        message,
        data: None,
    }
}

impl Forwarder {
    /// The client to reach the server through, or why there is none now.
    fn client(&self) -> Result<Client, String> {
        self.connection
            .client()
            .map_err(|why| format!("`{}` cannot be called now: {why}", self.mount))
    }
}

/// `request`, made through `client` to the server mounted as `mount` for the call `ctx` runs,
/// as the gateway sends it: bounded by the call pipeline (with the mount's limit), not the
/// client; what the server logs for it, and asks of the client, passed on to the call's client;
/// in 2026-07-28, naming the log level that client asked for.
fn passing_on<'a, T>(
    request: Request<'a, T>,
    client: &Client,
    mount: Arc<str>,
    ctx: crate::context::Context,
) -> Request<'a, T> {
    let mut request = request.timeout(None);
    if let Some(level) = ctx.log_level()
        && STATELESS_VERSIONS.contains(&client.protocol_version())
    {
        request = request.meta(LOG_LEVEL_KEY, json!(level));
    }
    let logging = ctx.clone();
    request
        .on_log(move |message| {
            logging.log(message.level, message.data);
        })
        .answering(move |method, params| pass_on(Arc::clone(&mount), ctx.clone(), method, params))
}

/// The client's answer to `method` with `params`, which the server mounted as `mount` asked
/// for the call `ctx` forwards: its sampling, elicitation and roots requests are this client's
/// to answer.
async fn pass_on(
    mount: Arc<str>,
    ctx: crate::context::Context,
    method: String,
    params: Value,
) -> Result<Value, RpcError> {
    let error = |code, message: String| RpcError {
        code,
        message,
        data: None,
    };
    match ctx.pass_on(&method, params).await {
        None => Err(error(
            METHOD_NOT_FOUND,
            format!("the gateway passes on no `{method}` of `{mount}`"),
        )),
        Some(Ok(answer)) => Ok(answer),
        Some(Err(ClientRequestError::Client {
            code,
            message,
            data,
        })) => Err(RpcError {
            code,
            message,
            data,
        }),
        Some(Err(refused @ ClientRequestError::MissingCapability { .. })) => {
            Err(error(METHOD_NOT_FOUND, refused.to_string()))
        }
        Some(Err(failed)) => Err(error(INTERNAL_ERROR, failed.to_string())),
    }
}

/// The resources a tool result of the server mounted as `mount` links or embeds, under their
/// URIs here, so that a client reads them through the gateway.
fn links_here(mount: &str, result: &mut Value) {
    let content = result.get_mut("content").and_then(Value::as_array_mut);
    for block in content.into_iter().flatten() {
        link_here(mount, block);
    }
}

/// The resource a content block of the server mounted as `mount` links or embeds, under its
/// URI here.
fn link_here(mount: &str, block: &mut Value) {
    let uri = match block["type"].as_str() {
        Some("resource_link") => block.get_mut("uri"),
        Some("resource") => block
            .get_mut("resource")
            .and_then(|resource| resource.get_mut("uri")),
        _ => None,
    };
    if let Some(uri) = uri
        && let Some(here) = uri.as_str().and_then(|uri| mounted_uri(mount, uri))
    {
        *uri = Value::String(here);
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

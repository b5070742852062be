//! The pipeline's end: the function a call names, run with its panics caught and within its
//! time limit, and what it made shaped into an [`Outcome`]: a tool's on its own task when it
//! blocks, its result checked against its output schema; a prompt's messages; a resource's
//! contents, each with its URI and MIME type.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use futures_util::FutureExt as _;
use serde_json::Value;

use super::{BoxError, Call, Operation, Outcome, Refusal, Service};
use crate::content::ToolResult;
use crate::context::{Context, Limit};
use crate::handler::{BoxFuture, Handler, Output, panic_message};
#[cfg(feature = "gateway")]
use crate::prompt::PromptMessage;
use crate::prompt::{Made, PromptArguments, PromptHandler};
#[cfg(feature = "gateway")]
use crate::protocol::jsonrpc::{INVALID_PARAMS, RESOURCE_NOT_FOUND};
use crate::registration::{PromptRegistration, ResourceRegistration};
#[cfg(feature = "gateway")]
use crate::registry::MountedResources;
use crate::registry::{Fixed, Found, Registry, Resolved, Runs, Tool};
use crate::resource::{Read, ResourceHandler, ResourceRequest};
use crate::schema::check::problem_list;

/// Runs what a call names, from the server's registry.
#[derive(Clone)]
pub(crate) struct Run {
    registry: Arc<Registry>,
}

impl Run {
    pub(crate) fn new(registry: Arc<Registry>) -> Run {
        Run { registry }
    }

    /// Runs `call`. Its target was found when the request was read; a layer that names another
    /// target than the server has gets a refusal.
    pub(crate) fn run(&self, call: Call) -> BoxFuture<Result<Outcome, BoxError>> {
        let registry = Arc::clone(&self.registry);
        let Call {
            operation,
            target,
            arguments,
            context,
        } = call;
        Box::pin(async move {
            match operation {
                Operation::CallTool => {
                    let Some(tool) = registry.get(&target) else {
                        return Err(Refusal::invalid(format!("unknown tool `{target}`")).into());
                    };
                    let ctx = context.clone();
                    let result = match within(
                        &ctx,
                        Operation::CallTool,
                        run_tool(tool, arguments, context),
                    )
                    .await
                    {
                        Ok(result) => result,
                        Err(limit) => ToolResult::error(past(limit, &format!("tool `{target}`"))),
                    };
                    Ok(Outcome::Tool(result))
                }
                Operation::GetPrompt => {
                    #[cfg(feature = "gateway")]
                    if let Some(mounted) = registry.mounted_prompt(&target) {
                        let forward = Arc::clone(&mounted.forward);
                        let name = mounted.name.clone();
                        let ctx = context.clone();
                        let got = forward.get_prompt(&name, arguments, context);
                        return match within(&ctx, Operation::GetPrompt, got).await {
                            Ok(Ok(result)) => Ok(forwarded_prompt(result)),
                            Ok(Err(refused)) => Err(as_said(refused).into()),
                            Err(limit) => Err(Refusal::internal(past(
                                limit,
                                &format!("prompt `{target}`"),
                            ))
                            .into()),
                        };
                    }
                    let Some(prompt) = registry.prompt(&target) else {
                        return Err(Refusal::invalid(format!("unknown prompt `{target}`")).into());
                    };
                    let arguments = match arguments {
                        Value::Object(arguments) => arguments,
                        _ => PromptArguments::new(),
                    };
                    let ctx = context.clone();
                    match within(
                        &ctx,
                        Operation::GetPrompt,
                        get_prompt(prompt, arguments, context),
                    )
                    .await
                    {
                        Ok(got) => Ok(got?),
                        Err(limit) => Err(Refusal::internal(past(
                            limit,
                            &format!("prompt `{target}`"),
                        ))
                        .into()),
                    }
                }
                Operation::ReadResource => {
                    let ctx = context.clone();
                    let uri = target.clone();
                    let read = read_resource(&registry, target, context);
                    match within(&ctx, Operation::ReadResource, read).await {
                        Ok(read) => Ok(read?),
                        Err(limit) => Err(Refusal::internal(past(
                            limit,
                            &format!("the read of resource `{uri}`"),
                        ))
                        .with_data(serde_json::json!({ "uri": uri }))
                        .into()),
                    }
                }
            }
        })
    }
}

impl Service<Call> for Run {
    type Response = Outcome;
    type Error = BoxError;
    type Future = BoxFuture<Result<Outcome, BoxError>>;

    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call) -> Self::Future {
        self.run(call)
    }
}

/// Runs `work` within the limit of `ctx`'s call: what it made, or, once it has run past the
/// limit, the limit, and the call told to stop.
async fn within<T>(
    ctx: &Context,
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))] operation: Operation,
    work: impl Future<Output = T>,
) -> Result<T, Limit> {
    let Some(limit) = ctx.limit() else {
        return Ok(work.await);
    };
    match tokio::time::timeout(limit.duration(), work).await {
        Ok(made) => Ok(made),
        Err(_) => {
            ctx.stop();
            #[cfg(feature = "otel")]
            crate::telemetry::refused("timeout", operation.method(), ctx.tool_name());
            tracing::warn!(limit = ?limit.duration(), "a call ran past its time limit and was stopped");
            Err(limit)
        }
    }
}

/// What a client reads of `what` stopped past `limit`.
fn past(limit: Limit, what: &str) -> String {
    match limit {
        Limit::Call(duration) => format!(
            "{what} did not finish within its time limit of {}, and was stopped",
            humantime::format_duration(duration)
        ),
        Limit::Task(duration) => format!(
            "{what} did not finish within its task's TTL of {}, and was stopped",
            humantime::format_duration(duration)
        ),
    }
}

/// Runs a tool, catching a panic, and shapes what it produced into its result. Dropping this
/// future (the call was cancelled) drops the tool's future with it.
async fn run_tool(tool: &Tool, arguments: Value, ctx: Context) -> ToolResult {
    let caught = match tool.runs() {
        Runs::Function(Handler::Async(handler)) => {
            AssertUnwindSafe(handler(arguments, ctx))
                .catch_unwind()
                .await
        }
        Runs::Function(Handler::Sync(handler)) => {
            panic::catch_unwind(AssertUnwindSafe(|| handler(arguments, ctx)))
        }
        #[cfg(feature = "gateway")]
        Runs::Forwarded(mounted) => {
            AssertUnwindSafe(mounted.forward.call(&mounted.name, arguments, ctx))
                .catch_unwind()
                .await
        }
        Runs::Function(Handler::Blocking(handler)) => {
            let run = traced(move || handler(arguments, ctx));
            match tokio::task::spawn_blocking(run).await {
                Ok(output) => Ok(output),
                Err(err) if err.is_panic() => Err(err.into_panic()),
                Err(_) => Ok(Output::Error(format!(
                    "tool `{}` was stopped before it finished",
                    tool.name()
                ))),
            }
        }
    };
    let output = caught.unwrap_or_else(|payload| {
        let message = panic_message(&*payload);
        tracing::error!(tool = tool.name(), message, "tool panicked");
        Output::Error(format!("tool `{}` panicked: {message}", tool.name()))
    });
    tool_result(tool, output)
}

/// The result for what a tool produced.
fn tool_result(tool: &Tool, output: Output) -> ToolResult {
    let result = match output {
        Output::Value(value) if tool.is_structured() => {
            let text = serde_json::to_string(&value).expect("a JSON value serialises");
            ToolResult::text(text).with_structured(value)
        }
        Output::Value(Value::String(text)) => ToolResult::text(text),
        Output::Value(value) => {
            ToolResult::text(serde_json::to_string(&value).expect("a JSON value serialises"))
        }
        Output::Result(result) => result,
        Output::Empty => ToolResult::new(),
        Output::Error(message) => ToolResult::error(message),
    };
    match tool.check_output(&result) {
        Ok(()) => result,
        Err(problems) => {
            // Sending it would break the contract the tool lists; a tool error says why instead.
            tracing::error!(
                tool = tool.name(),
                problems,
                "a result does not match the tool's output schema; sent as a tool error (debug \
                 builds with the `validate` feature check this)"
            );
            ToolResult::error(problem_list(
                &format!(
                    "tool `{}` returned a result that does not match its output schema",
                    tool.name()
                ),
                &problems,
            ))
        }
    }
}

/// A mounted server's `GetPromptResult`, as its outcome: its messages passed on as they came.
#[cfg(feature = "gateway")]
fn forwarded_prompt(result: Value) -> Outcome {
    Outcome::Prompt {
        description: result["description"].as_str().map(str::to_owned),
        messages: result["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .cloned()
            .map(PromptMessage::forwarded)
            .collect(),
    }
}

/// The refusal of what a mounted server refused, as it said it.
#[cfg(feature = "gateway")]
fn as_said(refused: crate::answers::RpcError) -> Refusal {
    let refusal = Refusal::new(refused.code, refused.message);
    match refused.data {
        Some(data) => refusal.with_data(data),
        None => refusal,
    }
}

/// Reads the resource at `uri` (here) from `mounted`, the server it names, where it is
/// `upstream`: its contents, under their URIs here, or the error its server answered with.
#[cfg(feature = "gateway")]
async fn read_mounted(
    mounted: &MountedResources,
    upstream: String,
    uri: String,
    ctx: Context,
) -> Result<Outcome, Refusal> {
    let read = mounted.forward.read_resource(&upstream, ctx).await;
    let result = read.map_err(|refused| {
        // "Not found", in either era's code, is said in this one's, of the URI here.
        let of_uri = refused
            .data
            .as_ref()
            .is_some_and(|data| data.get("uri").is_some());
        match refused.code {
            RESOURCE_NOT_FOUND | INVALID_PARAMS if of_uri => {
                Refusal::resource_not_found(&uri, refused.message)
            }
            _ => as_said(refused),
        }
    })?;
    let contents = result["contents"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|sent| {
            let here = sent["uri"]
                .as_str()
                .and_then(|sent| crate::registry::mounted_uri(&mounted.mount, sent))
                .unwrap_or_else(|| uri.clone());
            crate::content::ResourceContents::forwarded(sent, here)
        })
        .collect();
    Ok(Outcome::Resource { contents })
}

/// Runs a prompt, catching a panic: its messages, or the refusal that says why there are none.
async fn get_prompt(
    prompt: &'static PromptRegistration,
    arguments: PromptArguments,
    ctx: Context,
) -> Result<Outcome, Refusal> {
    let made: std::thread::Result<Made> = match prompt.handler {
        PromptHandler::Sync(handler) => {
            panic::catch_unwind(AssertUnwindSafe(|| handler(&arguments, ctx)))
        }
        PromptHandler::Async(handler) => {
            AssertUnwindSafe(handler(arguments, ctx))
                .catch_unwind()
                .await
        }
        PromptHandler::Blocking(handler) => blocking(move || handler(&arguments, ctx)).await,
    };
    match made {
        Ok(Ok(messages)) => Ok(Outcome::Prompt {
            description: Some(prompt.description.to_owned()),
            messages,
        }),
        Ok(Err(error)) => Err(Refusal::invalid(error.to_string())),
        Err(payload) => {
            let message = panic_message(&*payload);
            tracing::error!(prompt = prompt.name, message, "prompt panicked");
            Err(Refusal::internal(format!(
                "prompt `{}` panicked: {message}",
                prompt.name
            )))
        }
    }
}

/// Reads the resource at `uri`, catching a panic: its contents, each with its URI and MIME type,
/// or the refusal that says why there are none.
async fn read_resource(registry: &Registry, uri: String, ctx: Context) -> Result<Outcome, Refusal> {
    let not_found = || Refusal::resource_not_found(&uri, format!("resource not found: `{uri}`"));
    #[cfg_attr(
        not(feature = "gateway"),
        expect(
            clippy::infallible_destructuring_match,
            reason = "a mounted server's resource is the other case, with the `gateway` feature"
        )
    )]
    let found = match registry.resolve_resource(&uri).ok_or_else(not_found)? {
        Resolved::Own(found) => found,
        #[cfg(feature = "gateway")]
        Resolved::Mounted(mounted, upstream) => {
            return read_mounted(mounted, upstream, uri, ctx).await;
        }
    };
    let (resource, variables) = match found {
        Found::Fixed(Fixed::View(view)) => {
            return Ok(Outcome::Resource {
                contents: vec![view.resource.contents()],
            });
        }
        Found::Fixed(Fixed::Function(resource)) => (resource, Vec::new()),
        Found::Template(template, variables) => (template.registration, variables),
    };
    let request = ResourceRequest { uri, variables };
    let uri = request.uri.clone();
    let read: std::thread::Result<Read> = match resource.handler {
        ResourceHandler::Sync(handler) => {
            panic::catch_unwind(AssertUnwindSafe(|| handler(&request, ctx)))
        }
        ResourceHandler::Async(handler) => {
            AssertUnwindSafe(handler(request, ctx)).catch_unwind().await
        }
        ResourceHandler::Blocking(handler) => blocking(move || handler(&request, ctx)).await,
    };
    contents(resource, &uri, read)
}

/// The outcome of reading `resource` at `uri`.
fn contents(
    resource: &ResourceRegistration,
    uri: &str,
    read: std::thread::Result<Read>,
) -> Result<Outcome, Refusal> {
    let uri_data = || serde_json::json!({ "uri": uri });
    match read {
        Ok(Ok(mut contents)) => {
            for content in &mut contents {
                content.complete(uri, resource.mime_type);
            }
            Ok(Outcome::Resource { contents })
        }
        Ok(Err(error)) if error.is_not_found() => Err(Refusal::resource_not_found(
            uri,
            format!("resource not found: `{uri}` ({}): {error}", resource.uri),
        )),
        Ok(Err(error)) => Err(Refusal::internal(format!(
            "resource `{uri}` could not be read: {error}"
        ))
        .with_data(uri_data())),
        Err(payload) => {
            let message = panic_message(&*payload);
            tracing::error!(resource = resource.uri, uri, message, "resource panicked");
            Err(Refusal::internal(format!(
                "resource `{uri}` panicked while being read: {message}"
            ))
            .with_data(uri_data()))
        }
    }
}

/// Runs `work` on tokio's blocking thread pool, where it holds up no other call, catching a
/// panic.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::thread::Result<T> {
    let work = traced(work);
    match tokio::task::spawn_blocking(move || panic::catch_unwind(AssertUnwindSafe(work))).await {
        Ok(caught) => caught,
        Err(err) if err.is_panic() => Err(err.into_panic()),
        Err(_) => Err(Box::new("it was stopped before it finished")),
    }
}

/// `work`, to run on another thread in the trace context of this one: the spans it makes are
/// children of the request's.
#[cfg(feature = "otel")]
fn traced<T>(work: impl FnOnce() -> T + Send + 'static) -> impl FnOnce() -> T + Send + 'static {
    let cx = opentelemetry::Context::current();
    move || {
        let _attached = cx.attach();
        work()
    }
}

/// `work`, as it is: without telemetry there is no trace context to carry.
#[cfg(not(feature = "otel"))]
fn traced<T>(work: impl FnOnce() -> T + Send + 'static) -> impl FnOnce() -> T + Send + 'static {
    work
}

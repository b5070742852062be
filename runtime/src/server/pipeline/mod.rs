//! The call pipeline: every `tools/call`, `prompts/get` and `resources/read` passes through it, as
//! a [`Call`] in and an [`Outcome`] out, once the request is read, its target found and its
//! arguments checked. It is a [`tower::Service`], so a [`tower::Layer`] given to
//! [`Server::layer`](crate::Server::layer) wraps every call in one place: to log or audit it, to
//! refuse it, or to answer it without running it. [`Server::layer_for`](crate::Server::layer_for)
//! wraps the calls of some tools only, chosen by a [`Select`]: by name, tag or annotation.
//!
//! This one writes down who called which destructive tool, with what, and how it ended:
//!
//! ```no_run
//! use std::future::Future;
//! use std::pin::Pin;
//! use std::task::{Context, Poll};
//!
//! use toolwright::pipeline::{BoxError, Call, Layer, Outcome, Select, Service};
//!
//! /// Logs every call that passes, and its outcome, at the `audit` target.
//! #[derive(Clone)]
//! struct Audit;
//!
//! impl<S> Layer<S> for Audit {
//!     type Service = Audited<S>;
//!
//!     fn layer(&self, next: S) -> Audited<S> {
//!         Audited { next }
//!     }
//! }
//!
//! #[derive(Clone)]
//! struct Audited<S> {
//!     next: S,
//! }
//!
//! impl<S> Service<Call> for Audited<S>
//! where
//!     S: Service<Call, Response = Outcome, Error = BoxError>,
//!     S::Future: Send + 'static,
//! {
//!     type Response = Outcome;
//!     type Error = BoxError;
//!     type Future = Pin<Box<dyn Future<Output = Result<Outcome, BoxError>> + Send>>;
//!
//!     fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), BoxError>> {
//!         self.next.poll_ready(cx)
//!     }
//!
//!     fn call(&mut self, call: Call) -> Self::Future {
//!         let principal = call.context().principal();
//!         let who = principal.and_then(|p| p.subject()).unwrap_or("anonymous").to_owned();
//!         let tool = call.target().to_owned();
//!         tracing::info!(target: "audit", who, tool, arguments = %call.arguments(), "called");
//!         let outcome = self.next.call(call);
//!         Box::pin(async move {
//!             let outcome = outcome.await;
//!             let failed = match &outcome {
//!                 Ok(Outcome::Tool(result)) => result.is_error(),
//!                 _ => true,
//!             };
//!             tracing::info!(target: "audit", who, tool, failed, "ended");
//!             outcome
//!         })
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     toolwright::server!().layer_for(Select::destructive(), Audit).run()
//! }
//! ```
//!
//! The pipeline runs what the request names: the tool's function (its result checked against its
//! output schema in debug builds with `validate`), the prompt's, the resource's. A panic there is
//! the call's answer, as without layers: an `isError` result for a tool, an error for a prompt or
//! a resource. A layer that fails a call answers it as the client reads it: a [`Refusal`] is a
//! JSON-RPC error with its code and message; any other error (a `tower` timeout's, say) is an
//! `isError` result naming the tool, or an internal error for a prompt or a resource.
//!
//! What a call's request asks first is settled before it enters the pipeline, and answered
//! without it: a malformed request, an unknown or disabled target, arguments its schema refuses,
//! a request id already under way, and over HTTP the scopes its tool needs.

mod layers;
#[cfg(feature = "rate-limit")]
mod rate_limit;
mod run;
mod select;

use std::fmt;
use std::task::{Context as TaskContext, Poll};

use serde_json::{Value, json};
use tower::util::BoxCloneSyncService;
pub use tower::{Layer, Service};

use crate::content::{ResourceContents, ToolResult};
use crate::context::Context;
use crate::handler::BoxFuture;
use crate::prompt::PromptMessage;
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, Id, RESOURCE_NOT_FOUND, Reply};

pub(crate) use layers::{Layers, Pipeline};
#[cfg(feature = "rate-limit")]
pub use rate_limit::{RATE_LIMITED, RateLimit, RateLimited};
pub(crate) use run::Run;
pub use select::Select;

/// What a layer or the pipeline fails a call with: any error. A [`Refusal`] reaches the client
/// as the JSON-RPC error it describes; another is an `isError` result naming the tool, or an
/// internal error for a prompt or a resource.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a call asks: run a tool, get a prompt, read a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operation {
    /// `tools/call`: the target is the tool's name on the wire.
    CallTool,
    /// `prompts/get`: the target is the prompt's name.
    GetPrompt,
    /// `resources/read`: the target is the URI read.
    ReadResource,
}

impl Operation {
    /// The protocol's method: `tools/call`, `prompts/get`, `resources/read`.
    pub fn method(self) -> &'static str {
        match self {
            Operation::CallTool => "tools/call",
            Operation::GetPrompt => "prompts/get",
            Operation::ReadResource => "resources/read",
        }
    }
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.method())
    }
}

/// One call through the pipeline: what it asks, of which target, with which arguments, and its
/// [`Context`] (who calls, from which client and session; its cancellation, progress and logs).
pub struct Call {
    operation: Operation,
    target: String,
    arguments: Value,
    context: Context,
}

impl Call {
    pub(crate) fn new(
        operation: Operation,
        target: impl Into<String>,
        arguments: Value,
        context: Context,
    ) -> Call {
        Call {
            operation,
            target: target.into(),
            arguments,
            context,
        }
    }

    /// What it asks.
    pub fn operation(&self) -> Operation {
        self.operation
    }

    /// What it asks of: the tool's wire name, the prompt's name, or the URI read.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Its arguments, a JSON object: the tool's arguments as the client sent them (and checked
    /// against its input schema), the prompt's (strings), or the values of the variables of a
    /// resource template that the URI matched (none for a resource of a fixed URI, which the
    /// read does not take: it reads the target).
    pub fn arguments(&self) -> &Value {
        &self.arguments
    }

    /// Its arguments, for a layer to change before the call runs.
    pub fn arguments_mut(&mut self) -> &mut Value {
        &mut self.arguments
    }

    /// Its context: who calls ([`Context::principal`]), from which client
    /// ([`Context::client_info`]) and session ([`Context::session_id`]), whether it was
    /// cancelled.
    pub fn context(&self) -> &Context {
        &self.context
    }
}

impl fmt::Debug for Call {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Call")
            .field("operation", &self.operation)
            .field("target", &self.target)
            .field("arguments", &self.arguments)
            .finish_non_exhaustive()
    }
}

/// What a call produced, as the client receives it.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum Outcome {
    /// A tool's result (`CallToolResult`); a tool error is one too, with `isError`.
    Tool(ToolResult),
    /// A prompt's messages, and its description (`GetPromptResult`).
    Prompt {
        /// What the prompt is for.
        description: Option<String>,
        /// The messages.
        messages: Vec<PromptMessage>,
    },
    /// A resource's contents (`ReadResourceResult`).
    Resource {
        /// The contents, each with its URI and MIME type.
        contents: Vec<ResourceContents>,
    },
}

impl Outcome {
    /// The operation whose outcome it is.
    pub fn operation(&self) -> Operation {
        match self {
            Outcome::Tool(_) => Operation::CallTool,
            Outcome::Prompt { .. } => Operation::GetPrompt,
            Outcome::Resource { .. } => Operation::ReadResource,
        }
    }
}

/// A call refused, as the client reads it: a JSON-RPC error with its code, message and data. A
/// layer refuses a call with one (`Err(Refusal::invalid(...).into())`); the pipeline does for a
/// prompt or resource that fails.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    code: Code,
    message: String,
    data: Option<Value>,
}

/// A refusal's code: one the protocol's era decides, or one given.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Code {
    /// The resource is not there: "resource not found" (-32002) in the handshake era, -32602
    /// in 2026-07-28.
    ResourceNotFound,
    Given(i64),
}

impl Refusal {
    /// A refusal with this JSON-RPC error `code`.
    pub fn new(code: i64, message: impl Into<String>) -> Refusal {
        Refusal {
            code: Code::Given(code),
            message: message.into(),
            data: None,
        }
    }

    /// The request's parameters are not acceptable (-32602, "invalid params").
    pub fn invalid(message: impl Into<String>) -> Refusal {
        Refusal::new(INVALID_PARAMS, message)
    }

    /// The server failed the request (-32603, "internal error").
    pub fn internal(message: impl Into<String>) -> Refusal {
        Refusal::new(INTERNAL_ERROR, message)
    }

    /// The resource at `uri` is not there, with the URI in `data`.
    pub fn resource_not_found(uri: &str, message: impl Into<String>) -> Refusal {
        Refusal {
            code: Code::ResourceNotFound,
            message: message.into(),
            data: Some(json!({ "uri": uri })),
        }
    }

    /// The same, with `data` for the client: what it needs to recover.
    #[must_use]
    pub fn with_data(mut self, data: Value) -> Refusal {
        self.data = Some(data);
        self
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// What answers a call that the pipeline failed with `error`: a layer's own refusal, or an
    /// internal error saying what `failed`, and why.
    pub(crate) fn from_error(error: BoxError, failed: &str) -> Refusal {
        match error.downcast::<Refusal>() {
            Ok(refusal) => *refusal,
            Err(error) => Refusal::internal(format!("{failed}: {error}")),
        }
    }

    /// What answers a call that a layer answered with the outcome of another operation.
    pub(crate) fn mismatched(outcome: &Outcome, failed: &str) -> Refusal {
        Refusal::internal(format!(
            "{failed}: it was answered with the outcome of `{}`",
            outcome.operation()
        ))
    }

    /// The error response to request `id`, as its era has it.
    pub(crate) fn reply(&self, id: &Id, wire: &Wire) -> Reply {
        let code = self.code_in(wire);
        match &self.data {
            Some(data) => Reply::error_with_data(id, code, &self.message, data),
            None => Reply::error(id, code, &self.message),
        }
    }

    /// The error object (`code`, `message`, `data`), as the request's era has it: what a task
    /// that failed with it keeps.
    pub(crate) fn error(&self, wire: &Wire) -> Value {
        let mut error = json!({ "code": self.code_in(wire), "message": self.message });
        if let Some(data) = &self.data {
            error["data"] = data.clone();
        }
        error
    }

    fn code_in(&self, wire: &Wire) -> i64 {
        match (self.code, wire) {
            (Code::Given(code), _) => code,
            (Code::ResourceNotFound, Wire::Handshake) => RESOURCE_NOT_FOUND,
            (Code::ResourceNotFound, Wire::Stateless { .. }) => INVALID_PARAMS,
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Refusal {}

/// What a tool call produced, from what the pipeline gave: its result, a refusal
/// (a layer's, or the pipeline's), or another error as a tool error the model reads.
pub(crate) fn tool_result(
    outcome: Result<Outcome, BoxError>,
    name: &str,
) -> Result<ToolResult, Refusal> {
    match outcome {
        Ok(Outcome::Tool(result)) => Ok(result),
        Ok(other) => Ok(ToolResult::error(format!(
            "tool `{name}` failed: it was answered with the outcome of `{}`",
            other.operation()
        ))),
        Err(error) => match error.downcast::<Refusal>() {
            Ok(refusal) => Err(*refusal),
            Err(error) => Ok(ToolResult::error(format!("tool `{name}` failed: {error}"))),
        },
    }
}

/// The rest of the pipeline, as a layer sees it: the layers inside it, then the call run.
#[derive(Clone)]
pub struct Next {
    inner: BoxCloneSyncService<Call, Outcome, BoxError>,
}

impl Next {
    fn new<S>(service: S) -> Next
    where
        S: Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
        S::Future: Send + 'static,
    {
        Next {
            inner: BoxCloneSyncService::new(service),
        }
    }
}

impl Service<Call> for Next {
    type Response = Outcome;
    type Error = BoxError;
    type Future = BoxFuture<Result<Outcome, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, call: Call) -> Self::Future {
        self.inner.call(call)
    }
}

impl fmt::Debug for Next {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Next").finish_non_exhaustive()
    }
}

//! One request observed: its span, opened as the request is read and closed with its answer,
//! and its duration recorded; and a session's duration, once it ends.

use std::borrow::Cow;
use std::net::IpAddr;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use opentelemetry::global::BoxedTracer;
use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry::trace::{SpanBuilder, SpanKind, Status, TraceContextExt as _};
use opentelemetry::{Context, KeyValue, Value};
use opentelemetry_sdk::propagation::TraceContextPropagator;

use super::{SCOPE, instruments};
use crate::protocol::jsonrpc::{INVALID_PARAMS, Id, ReplyKind};
use crate::protocol::method::Method;
use crate::protocol::{PROTOCOL_VERSION_KEY, STATELESS_VERSIONS};

/// What carries a session's messages, as `network.transport` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Transport {
    /// Standard input and output.
    Pipe,
    /// HTTP.
    #[cfg_attr(
        not(feature = "http"),
        allow(dead_code, reason = "made by the HTTP transport")
    )]
    Tcp,
}

impl Transport {
    fn name(self) -> &'static str {
        match self {
            Transport::Pipe => "pipe",
            Transport::Tcp => "tcp",
        }
    }
}

/// Starts the span `builder` makes, as a child of `parent`, with the `attributes` made: the context
/// that holds it.
///
/// With the telemetry installed, the span is started with its name and parent alone, and given
/// its attributes only when it is kept: the samplers `OTEL_TRACES_SAMPLER` names read neither, so
/// a request whose trace is sampled out costs no attributes. Else it is started with the global
/// tracer provider as it is when first asked for (a server whose author set one up), with its
/// attributes, which a sampler of the author's may read.
fn start_span(
    builder: SpanBuilder,
    attributes: impl FnOnce() -> Vec<KeyValue>,
    parent: &Context,
) -> Context {
    static GLOBAL: OnceLock<BoxedTracer> = OnceLock::new();
    match super::installed() {
        Some(installed) => {
            let span = builder.start_with_context(installed.tracer(), parent);
            let cx = parent.with_span(span);
            let span = cx.span();
            if span.is_recording() {
                span.set_attributes(attributes());
            }
            cx
        }
        None => {
            let tracer = GLOBAL.get_or_init(|| opentelemetry::global::tracer(SCOPE));
            let builder = builder.with_attributes(attributes());
            parent.with_span(builder.start_with_context(tracer, parent))
        }
    }
}

/// A request being answered: the context that holds its span, when it began, and what its
/// duration is recorded with.
pub(crate) struct Observed {
    cx: Context,
    started: Instant,
    /// The protocol version its envelope names, in 2026-07-28.
    stateless: Option<&'static str>,
    /// The method, as metrics name it: one the server serves, or `_OTHER`, so that a client
    /// cannot make up series.
    method: &'static str,
    /// The tool or prompt it names: `gen_ai.tool.name` or `gen_ai.prompt.name`, shared by
    /// the span and the histogram.
    target: Option<(&'static str, Arc<str>)>,
    transport: Transport,
}

impl Observed {
    /// Opens the span of the request `id` calling `method` with `params`, which came from
    /// `address` over `transport`; its parent is the trace context in `params._meta`, else
    /// the current one.
    pub(crate) fn start(
        method: &str,
        params: &serde_json::Value,
        id: &Id,
        transport: Transport,
        address: Option<IpAddr>,
    ) -> Observed {
        let named = |key: &str| params.get(key).and_then(serde_json::Value::as_str);
        let target = match method {
            "tools/call" => named("name").map(|name| ("gen_ai.tool.name", Arc::from(name))),
            "prompts/get" => named("name").map(|name| ("gen_ai.prompt.name", Arc::from(name))),
            _ => None,
        };
        let known = Method::from_name(method).map(Method::name);
        // The span's name and the method attribute borrow the method's static name when the
        // server knows it: one allocation fewer a request, and none for a request without a
        // target.
        let name: Cow<'static, str> = match (&target, known) {
            (Some((_, target)), _) => span_name(method, target).into(),
            (None, Some(known)) => known.into(),
            (None, None) => method.to_owned().into(),
        };
        // `jsonrpc.protocol.version` is left out: the conventions ask for it only when it is
        // not 2.0, which it always is here.
        let attributes = || {
            let mut attributes = Vec::with_capacity(8);
            attributes.push(KeyValue::new(
                "mcp.method.name",
                known.map_or_else(|| Value::from(method.to_owned()), Value::from),
            ));
            if let Some(id) = id.as_attribute() {
                attributes.push(KeyValue::new("jsonrpc.request.id", id));
            }
            attributes.push(KeyValue::new("network.transport", transport.name()));
            if let Some((key, target)) = &target {
                attributes.push(KeyValue::new(*key, Arc::clone(target)));
            }
            if method == "tools/call" {
                attributes.push(KeyValue::new("gen_ai.operation.name", "execute_tool"));
            }
            if method == "resources/read"
                && let Some(uri) = named("uri")
            {
                attributes.push(KeyValue::new("mcp.resource.uri", uri.to_owned()));
            }
            if let Some(address) = address {
                attributes.push(KeyValue::new("client.address", address.to_string()));
            }
            attributes
        };
        let meta = params.get("_meta").and_then(serde_json::Value::as_object);
        let parent = match meta {
            Some(meta) => TraceContextPropagator::new().extract(&Meta(meta)),
            None => Context::current(),
        };
        let builder = SpanBuilder::from_name(name).with_kind(SpanKind::Server);
        let stateless = meta
            .and_then(|meta| meta.get(PROTOCOL_VERSION_KEY))
            .and_then(serde_json::Value::as_str)
            .and_then(|version| STATELESS_VERSIONS.iter().copied().find(|v| *v == version));
        Observed {
            cx: start_span(builder, attributes, &parent),
            started: Instant::now(),
            stateless,
            method: known.unwrap_or("_OTHER"),
            target,
            transport,
        }
    }

    /// The context of the request's span, to attach while the request is handled: the
    /// `tracing` spans made meanwhile are its children.
    pub(crate) fn context(&self) -> &Context {
        &self.cx
    }

    /// Records how the request ended (`None`: cancelled, unanswered) on its span, which ends,
    /// and in the duration histogram: in the handshake era, with the protocol `version` its
    /// session settled on and the `session` id the transport gave it.
    pub(crate) fn finish(
        self,
        answered: Option<ReplyKind>,
        version: Option<&'static str>,
        session: Option<Arc<str>>,
    ) {
        let elapsed = self.started.elapsed().as_secs_f64();
        let error: Option<Value> = match answered {
            None => Some("cancelled".into()),
            Some(ReplyKind::Error(code)) => Some(Value::from(Arc::<str>::from(code.to_string()))),
            Some(ReplyKind::ToolError) => Some("tool_error".into()),
            Some(ReplyKind::Result | ReplyKind::Opened) => None,
        };
        let version = self.stateless.or(version);
        let span = self.cx.span();
        if span.is_recording() {
            // What the span learns at its end, set under one lock of it.
            let mut ended = Vec::with_capacity(5);
            if let Some(version) = version {
                ended.push(KeyValue::new("mcp.protocol.version", version));
            }
            if let Some(session) = session {
                ended.push(KeyValue::new("mcp.session.id", session));
            }
            if let Some(error) = &error {
                if let Some(ReplyKind::Error(_)) = answered {
                    ended.push(KeyValue::new("rpc.response.status_code", error.clone()));
                }
                ended.push(KeyValue::new("error.type", error.clone()));
                span.set_status(Status::error(""));
            }
            span.set_attributes(ended);
        }
        span.end();
        let mut attributes = Vec::with_capacity(5);
        attributes.push(KeyValue::new("mcp.method.name", self.method));
        attributes.push(KeyValue::new("network.transport", self.transport.name()));
        if let Some(version) = version {
            attributes.push(KeyValue::new("mcp.protocol.version", version));
        }
        // A name the server refused as unknown is the client's to make up: not a series.
        if let Some((key, target)) = self.target
            && answered != Some(ReplyKind::Error(INVALID_PARAMS))
        {
            attributes.push(KeyValue::new(key, target));
        }
        if let Some(error) = error {
            attributes.push(KeyValue::new("error.type", error));
        }
        instruments().operation.record(elapsed, &attributes);
    }
}

/// The name of a span whose request names a `target`: `{method} {target}`.
fn span_name(method: &str, target: &str) -> String {
    let mut name = String::with_capacity(method.len() + 1 + target.len());
    name.push_str(method);
    name.push(' ');
    name.push_str(target);
    name
}

/// Records how long a session of the handshake era lasted, once it ends.
pub(crate) fn session_ended(opened: Instant, version: Option<&'static str>, transport: Transport) {
    let mut attributes = vec![KeyValue::new("network.transport", transport.name())];
    if let Some(version) = version {
        attributes.push(KeyValue::new("mcp.protocol.version", version));
    }
    instruments()
        .session
        .record(opened.elapsed().as_secs_f64(), &attributes);
}

/// A request's `_meta`, where the client puts its trace context.
struct Meta<'a>(&'a serde_json::Map<String, serde_json::Value>);

impl Extractor for Meta<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.as_str()
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

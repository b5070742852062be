//! OpenTelemetry for a server, as its semantic conventions for MCP have it (feature `otel`).
//!
//! Every request the server answers is a span of kind `SERVER` named `{mcp.method.name}
//! {target}` (`tools/call add_note`, `prompts/get summarise`; the method alone for the others,
//! and for `resources/read`, whose URI is no low-cardinality name), with the attributes
//! `mcp.method.name`, `mcp.protocol.version`, `mcp.session.id`, `mcp.resource.uri`,
//! `jsonrpc.request.id` (a string id as it is, a number as JSON writes it), `gen_ai.tool.name`,
//! `gen_ai.prompt.name`, `gen_ai.operation.name` (`execute_tool`), `network.transport` (`pipe`
//! on stdio, `tcp` over HTTP), `client.address`, and when it failed `error.type` (`tool_error`
//! for a tool result with `isError`, else the JSON-RPC error code) and
//! `rpc.response.status_code`. `jsonrpc.protocol.version` is left out: the conventions ask for
//! it only when it is not `2.0`, and MCP's always is. Its parent is the
//! W3C trace context the client put in `params._meta` (`traceparent`, `tracestate`), so the
//! server's spans join the client's trace; a tool's own `tracing` spans nest under it.
//!
//! Metrics, with the same attributes but the ones that name one request or session:
//! `mcp.server.operation.duration` and `mcp.server.session.duration` (histograms, seconds), and
//! `toolwright.calls.refused` (a counter of the calls a limit refused: `toolwright.limit` is
//! `rate_limit` or `timeout`), and `toolwright.search.words_only` (a counter of the
//! `search_tools` calls ranked by words only where a model ranks by meaning too:
//! `toolwright.search.reason` is `embedding`, `tools_not_embedded` or `query_not_embedded`).
//!
//! The spans and metrics are OpenTelemetry's, made with its global tracer and meter providers;
//! a tool's `tracing` spans become OpenTelemetry's, children of the request's, through
//! [`tracing-opentelemetry`](https://docs.rs/tracing-opentelemetry)'s layer
//! ([`Installed::tracing_layer`]). [`Telemetry::install`] sets both up and exports
//! them over OTLP (HTTP, protobuf), and keeps the metrics for Prometheus when asked
//! ([`Telemetry::prometheus`], which the HTTP transport serves at `/metrics` with
//! `Http::metrics`). `Server::run` does it from the command line: `--otlp-endpoint URL`, or the
//! standard `OTEL_EXPORTER_OTLP_ENDPOINT` (and the other `OTEL_*` variables the OpenTelemetry
//! SDK reads: `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_EXPORTER_OTLP_HEADERS`,
//! `OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_BSP_SCHEDULE_DELAY`, ...), and `--metrics`.
//!
//! ```no_run
//! use toolwright::telemetry::Telemetry;
//!
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let telemetry = Telemetry::new("notes")
//!         .otlp_endpoint("http://localhost:4318")
//!         .install()?;
//!     toolwright::server!().serve_stdio().await?;
//!     // Sends what is left before the process ends.
//!     telemetry.shutdown();
//!     Ok(())
//! }
//! ```
//!
//! A server that installs a `tracing` subscriber of its own adds
//! [`Installed::tracing_layer`] to it.

mod request;

use std::fmt;
use std::sync::{Arc, OnceLock};

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Counter, Histogram, MeterProvider as _};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;
use tracing_subscriber::registry::LookupSpan;

pub(crate) use request::{Observed, Transport, session_ended};

/// The instrumentation scope: the name of the meter and tracer.
const SCOPE: &str = "toolwright";

/// The bucket boundaries of the duration histograms, in seconds: those the semantic conventions
/// for MCP advise.
const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// How a server's telemetry is exported: to an OTLP endpoint, to Prometheus, or both.
#[derive(Clone, Debug)]
pub struct Telemetry {
    service: String,
    endpoint: Option<String>,
    prometheus: bool,
}

/// Why telemetry could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TelemetryError {
    /// An exporter could not be built: an endpoint that is no URL, say.
    #[error("cannot export to OTLP at {endpoint}: {error}")]
    Otlp {
        /// Where it was to go.
        endpoint: String,
        /// What the exporter said.
        error: String,
    },
    /// The Prometheus exporter could not be built.
    #[error("cannot keep metrics for Prometheus: {0}")]
    Prometheus(String),
}

impl Telemetry {
    /// Telemetry of the service `service` (`service.name`, unless `OTEL_SERVICE_NAME` names
    /// it), exported nowhere until told where.
    pub fn new(service: impl Into<String>) -> Telemetry {
        Telemetry {
            service: service.into(),
            endpoint: None,
            prometheus: false,
        }
    }

    /// Exports spans and metrics over OTLP (HTTP, protobuf) to the collector at `endpoint`
    /// (`http://localhost:4318`): to its `/v1/traces` and `/v1/metrics`.
    #[must_use]
    pub fn otlp_endpoint(mut self, endpoint: impl Into<String>) -> Telemetry {
        self.endpoint = Some(endpoint.into());
        self
    }

    /// Exports over OTLP to where `OTEL_EXPORTER_OTLP_ENDPOINT` says, if it says.
    #[must_use]
    pub fn from_env(mut self) -> Telemetry {
        if let Ok(endpoint) = std::env::var("OTEL_EXPORTER_OTLP_ENDPOINT")
            && !endpoint.trim().is_empty()
        {
            self.endpoint = Some(endpoint);
        }
        self
    }

    /// Keeps the metrics for Prometheus to scrape ([`Installed::prometheus_text`], served at
    /// `/metrics` by the HTTP transport's `Http::metrics`).
    #[must_use]
    pub fn prometheus(mut self) -> Telemetry {
        self.prometheus = true;
        self
    }

    /// Whether it exports anywhere.
    pub fn exports(&self) -> bool {
        self.endpoint.is_some() || self.prometheus
    }

    /// Sets up the exporters, and makes them OpenTelemetry's global tracer and meter providers
    /// and its propagator the W3C trace context's. Spans reach them through
    /// [`Installed::tracing_layer`], which `Server::run` adds to the subscriber it installs.
    pub fn install(self) -> Result<Installed, TelemetryError> {
        let resource = resource(&self.service);
        let mut tracers = SdkTracerProvider::builder().with_resource(resource.clone());
        let mut meters = SdkMeterProvider::builder().with_resource(resource);
        if let Some(endpoint) = &self.endpoint {
            let base = endpoint.trim_end_matches('/');
            let failed = |error: &dyn fmt::Display| TelemetryError::Otlp {
                endpoint: endpoint.clone(),
                error: error.to_string(),
            };
            let spans = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .with_endpoint(format!("{base}/v1/traces"))
                .build()
                .map_err(|e| failed(&e))?;
            let metrics = opentelemetry_otlp::MetricExporter::builder()
                .with_http()
                .with_endpoint(format!("{base}/v1/metrics"))
                .build()
                .map_err(|e| failed(&e))?;
            tracers = tracers.with_batch_exporter(spans);
            meters = meters.with_periodic_exporter(metrics);
        }
        let registry = if self.prometheus {
            let registry = prometheus::Registry::new();
            let exporter = opentelemetry_prometheus::exporter()
                .with_registry(registry.clone())
                .build()
                .map_err(|e| TelemetryError::Prometheus(e.to_string()))?;
            meters = meters.with_reader(exporter);
            Some(registry)
        } else {
            None
        };
        let tracers = tracers.build();
        let meters = meters.build();
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        opentelemetry::global::set_tracer_provider(tracers.clone());
        opentelemetry::global::set_meter_provider(meters.clone());
        let installed = Installed {
            shared: Arc::new(Providers {
                tracer: tracers.tracer(SCOPE),
                instruments: Instruments::of(&meters.meter(SCOPE)),
                tracers,
                meters,
                registry,
            }),
        };
        let _ = INSTALLED.set(installed.clone());
        Ok(installed)
    }
}

/// The resource of `service`: what `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` say, and
/// `service` for a name when the first does not.
fn resource(service: &str) -> Resource {
    let named = std::env::var("OTEL_SERVICE_NAME").is_ok_and(|name| !name.trim().is_empty());
    let builder = Resource::builder();
    if named {
        builder.build()
    } else {
        builder.with_service_name(service.to_owned()).build()
    }
}

/// The telemetry the process installed first: what the logging of `Server::run` adds its layer
/// for.
static INSTALLED: OnceLock<Installed> = OnceLock::new();

/// The telemetry the process installed first, if it did.
pub(crate) fn installed() -> Option<&'static Installed> {
    INSTALLED.get()
}

/// Telemetry set up: its providers, flushed and shut down by [`shutdown`](Installed::shutdown).
/// Clones share them.
#[derive(Clone)]
pub struct Installed {
    shared: Arc<Providers>,
}

struct Providers {
    /// The tracer and instruments of requests.
    tracer: opentelemetry_sdk::trace::SdkTracer,
    instruments: Instruments,
    tracers: SdkTracerProvider,
    meters: SdkMeterProvider,
    registry: Option<prometheus::Registry>,
}

impl Installed {
    fn tracer(&self) -> &opentelemetry_sdk::trace::SdkTracer {
        &self.shared.tracer
    }

    /// The `tracing` layer that makes the spans of requests, and every span within them,
    /// OpenTelemetry's. Their attributes are their fields: not where in the source they were
    /// made, on which thread, or how long they were busy and idle, which `tracing-opentelemetry`
    /// adds by default, at a cost to every request.
    pub fn tracing_layer<S>(&self) -> impl Layer<S> + use<S>
    where
        S: tracing::Subscriber + for<'span> LookupSpan<'span>,
    {
        tracing_opentelemetry::layer()
            .with_tracer(self.shared.tracers.tracer(SCOPE))
            .with_location(false)
            .with_threads(false)
            .with_target(false)
            .with_tracked_inactivity(false)
    }

    /// The metrics as Prometheus reads them (its text format), when they are kept for it.
    pub fn prometheus_text(&self) -> Option<String> {
        let registry = self.shared.registry.as_ref()?;
        let mut text = String::new();
        prometheus::TextEncoder::new()
            .encode_utf8(&registry.gather(), &mut text)
            .ok()?;
        Some(text)
    }

    /// Sends what is left and stops the exporters: before the process ends.
    pub fn shutdown(&self) {
        if let Err(error) = self.shared.tracers.shutdown() {
            tracing::warn!(%error, "the spans could not all be exported");
        }
        if let Err(error) = self.shared.meters.shutdown() {
            tracing::warn!(%error, "the metrics could not all be exported");
        }
    }
}

impl fmt::Debug for Installed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Installed")
            .field("prometheus", &self.shared.registry.is_some())
            .finish_non_exhaustive()
    }
}

/// The instruments requests are measured with.
struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
    refused: Counter<u64>,
    words_only: Counter<u64>,
}

/// The instruments of the telemetry installed, else of the global meter provider as it is when
/// first asked for (a server whose author set it up).
fn instruments() -> &'static Instruments {
    static GLOBAL: OnceLock<Instruments> = OnceLock::new();
    match installed() {
        Some(installed) => &installed.shared.instruments,
        None => GLOBAL
            .get_or_init(|| Instruments::of(&opentelemetry::global::meter_provider().meter(SCOPE))),
    }
}

impl Instruments {
    fn of(meter: &opentelemetry::metrics::Meter) -> Instruments {
        Instruments {
            operation: meter
                .f64_histogram("mcp.server.operation.duration")
                .with_unit("s")
                .with_description("How long the server took to answer an MCP request")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
            session: meter
                .f64_histogram("mcp.server.session.duration")
                .with_unit("s")
                .with_description("How long an MCP session lasted")
                .with_boundaries(BOUNDARIES.to_vec())
                .build(),
            refused: meter
                .u64_counter("toolwright.calls.refused")
                .with_description("Calls a limit refused or stopped: a rate limit, a time limit")
                .build(),
            words_only: meter
                .u64_counter("toolwright.search.words_only")
                .with_description(
                    "Searches ranked by words only where a model ranks by meaning too: the tools \
                     still being embedded, or not embeddable, or the query not",
                )
                .build(),
        }
    }
}

/// Counts a `search_tools` ranked by words only, for the reason of this `kind`
/// ([`WordsOnly::kind`](crate::search::WordsOnly::kind)).
pub(crate) fn words_only(kind: &'static str) {
    instruments()
        .words_only
        .add(1, &[KeyValue::new("toolwright.search.reason", kind)]);
}

/// Counts a call of `target` that `limit` (`rate_limit`, `timeout`) refused or stopped.
pub(crate) fn refused(limit: &'static str, method: &'static str, target: &str) {
    let mut attributes = vec![
        KeyValue::new("toolwright.limit", limit),
        KeyValue::new("mcp.method.name", method),
    ];
    match method {
        "tools/call" => attributes.push(KeyValue::new("gen_ai.tool.name", target.to_owned())),
        "prompts/get" => attributes.push(KeyValue::new("gen_ai.prompt.name", target.to_owned())),
        _ => {}
    }
    instruments().refused.add(1, &attributes);
}

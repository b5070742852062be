//! Logging on stderr for the `run_*` methods and the command line.

/// Logs to stderr, since stdout carries MCP messages only. Leaves an existing subscriber alone.
///
/// `RUST_LOG` is read as `tracing_subscriber`'s [`Targets`](tracing_subscriber::filter::Targets):
/// comma-separated `target=level` directives and a bare level for the rest (`info` when unset).
/// Its `EnvFilter`, which also filters by span and field, would bring a regular-expression
/// engine into every server; an author who wants it installs a subscriber of their own before
/// `run`.
pub(crate) fn init_logging() {
    use tracing_subscriber::filter::{LevelFilter, Targets};
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    let default = || Targets::new().with_default(LevelFilter::INFO);
    let (filter, refused) = match std::env::var("RUST_LOG") {
        Ok(value) if !value.trim().is_empty() => match value.parse::<Targets>() {
            Ok(filter) => (filter, None),
            Err(err) => (default(), Some((value, err))),
        },
        _ => (default(), None),
    };
    let stderr = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false);
    // Spans go to OpenTelemetry at `info` and above, whatever `RUST_LOG` says of stderr.
    #[cfg(feature = "otel")]
    let installed = {
        use tracing_subscriber::Layer as _;
        let telemetry = crate::telemetry::installed()
            .map(|telemetry| telemetry.tracing_layer().with_filter(LevelFilter::INFO));
        tracing_subscriber::registry()
            .with(stderr.with_filter(filter))
            .with(telemetry)
            .try_init()
            .is_ok()
    };
    #[cfg(not(feature = "otel"))]
    let installed = tracing_subscriber::registry()
        .with(stderr)
        .with(filter)
        .try_init()
        .is_ok();
    if let (true, Some((value, err))) = (installed, refused) {
        tracing::warn!("RUST_LOG={value:?} is not understood ({err}): logging at info");
    }
}

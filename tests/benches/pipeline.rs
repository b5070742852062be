//! What a call pays for the pipeline's layers, time limits and rate limits: a `tools/call` of
//! `echo` through `Server::test_client` (dispatch, the pipeline, the result's JSON; no
//! transport), bare and with each, one run after the other. The differences are the costs.
//!
//! `cargo bench -p toolwright-tests --bench pipeline`; with `--features otel`, the same calls
//! again at the end with telemetry on, exporting spans and metrics over OTLP to a receiver on
//! this machine that takes them and answers 200.

use std::time::Duration;

use criterion::Criterion;
use serde_json::json;
use toolwright::pipeline::{RateLimit, Select};
use toolwright::testing::TestClient;
use toolwright::{Server, mcp_tool};
use tower::layer::util::Identity;

/// Say it back.
#[mcp_tool]
fn echo(text: String) -> String {
    text
}

/// Never called: a tool for a layer `echo` is not under.
#[mcp_tool]
fn other() {}

fn client(runtime: &tokio::runtime::Runtime, server: Server) -> TestClient {
    runtime
        .block_on(server.test_client())
        .expect("the server starts")
}

fn pipeline(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let server = || Server::new("bench", "0.0.1");
    let cases: Vec<(&str, TestClient)> = vec![
        ("bare", client(&runtime, server())),
        (
            "one empty layer",
            client(&runtime, server().layer(Identity::new())),
        ),
        (
            "five empty layers",
            client(
                &runtime,
                (0..5).fold(server(), |server, _| server.layer(Identity::new())),
            ),
        ),
        (
            "an empty layer for another tool",
            client(
                &runtime,
                server().layer_for(Select::tools(["other"]), Identity::new()),
            ),
        ),
        (
            "a call timeout",
            client(&runtime, server().call_timeout(Duration::from_secs(30))),
        ),
        (
            "a rate limit",
            client(
                &runtime,
                server().layer(RateLimit::per_caller(u32::MAX, Duration::from_secs(1))),
            ),
        ),
    ];
    let mut group = c.benchmark_group("tools/call echo");
    for (name, client) in &cases {
        group.bench_function(*name, |b| {
            b.iter(|| {
                runtime
                    .block_on(client.call("echo", json!({"text": "hi"})))
                    .unwrap()
            });
        });
    }
    group.finish();
    #[cfg(feature = "otel")]
    telemetry::bench(c, &runtime, &cases[0].1);
}

#[cfg(feature = "otel")]
mod telemetry {
    use std::io::{BufRead as _, BufReader, Read as _, Write as _};
    use std::net::TcpListener;

    use criterion::Criterion;
    use serde_json::json;
    use toolwright::telemetry::Telemetry;
    use toolwright::testing::TestClient;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    /// `bare` again, with every request a span exported over OTLP and measured in the
    /// duration histogram.
    pub(super) fn bench(c: &mut Criterion, runtime: &tokio::runtime::Runtime, bare: &TestClient) {
        let endpoint = receiver();
        let installed = Telemetry::new("bench")
            .otlp_endpoint(endpoint)
            .install()
            .expect("telemetry installs");
        tracing_subscriber::registry()
            .with(installed.tracing_layer())
            .init();
        c.bench_function("tools/call echo/bare, otel on and exporting", |b| {
            b.iter(|| {
                runtime
                    .block_on(bare.call("echo", json!({"text": "hi"})))
                    .unwrap()
            });
        });
        installed.shutdown();
    }

    /// An OTLP receiver that takes every export and answers 200: its URL.
    fn receiver() -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut stream = stream;
                    loop {
                        let mut length = 0;
                        loop {
                            let mut line = String::new();
                            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                                return;
                            }
                            let line = line.trim_end().to_ascii_lowercase();
                            if line.is_empty() {
                                break;
                            }
                            if let Some(value) = line.strip_prefix("content-length:") {
                                length = value.trim().parse().unwrap_or(0);
                            }
                        }
                        let mut body = vec![0; length];
                        if reader.read_exact(&mut body).is_err() {
                            return;
                        }
                        let answer = "HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n";
                        if stream.write_all(answer.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        url
    }
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    pipeline(&mut criterion);
    criterion.final_summary();
}

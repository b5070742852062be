//! What a call pays for the pipeline's layers, time limits and rate limits: a `tools/call` of
//! `echo` through `Server::test_client` (dispatch, the pipeline, the result's JSON; no
//! transport), bare and with each, one run after the other. The differences are the costs.
//!
//! `cargo bench -p toolwright-tests --bench pipeline`. Telemetry's cost is measured on a stdio
//! round trip by the harness: `cd bench && cargo run --release -p harness -- --telemetry`.

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
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    pipeline(&mut criterion);
    criterion.final_summary();
}

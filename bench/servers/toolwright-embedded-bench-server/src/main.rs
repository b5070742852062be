//! The benchmark's tools served by toolwright on stdio, from the manifest made at build time:
//! start-up derives no schema. Compare its start with `toolwright-bench-server`'s, which derives
//! every schema at start: `cargo run --release -p harness -- --embedded`.

use std::process::ExitCode;

fn main() -> ExitCode {
    toolwright::server!(toolwright_bench_tools)
        .embedded_manifest(toolwright::build::embedded_manifest!())
        .run_stdio()
}

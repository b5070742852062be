//! Makes the manifest of the benchmark's tools at build time. The snapshot lives in `OUT_DIR`:
//! the benchmark measures serving the manifest, not guarding it.

use std::path::PathBuf;

// Refers to the tools crate, so that the linker keeps its tools in the build script.
use toolwright_bench_tools as _;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    toolwright::build::Guard::new()
        .snapshot(out.join("snapshot.json"))
        .ci(false)
        .accept_breaking(true)
        .emit();
}

//! The benchmark's generated tools: `BENCH_TOOL_COUNT` (default 1,000) tools `tool_0000`.. as
//! plain `#[mcp_tool]` functions, each adding two integers and returning them with a label. Both
//! build scripts that need them include this file.

use std::fmt::Write as _;
use std::path::PathBuf;

/// Writes `$OUT_DIR/tools.rs`.
pub(crate) fn write_tools() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=../generate_tools.rs");
    println!("cargo::rerun-if-env-changed=BENCH_TOOL_COUNT");
    let count: usize = std::env::var("BENCH_TOOL_COUNT")
        .ok()
        .map(|n| n.parse().expect("BENCH_TOOL_COUNT is a number"))
        .unwrap_or(1000);
    let mut code = String::new();
    for i in 0..count {
        write!(
            code,
            r#"
/// Adds `a` and `b` and returns the sum with the label (tool {i:04}).
#[mcp_tool(read_only, idempotent)]
fn tool_{i:04}(
    /// The first term.
    a: i64,
    /// The second term.
    b: i64,
    /// A label returned with the sum.
    label: String,
) -> Sum {{
    Sum {{ sum: a.wrapping_add(b), label }}
}}
"#
        )
        .expect("writing to a String");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("tools.rs"), code).expect("OUT_DIR is writable");
}

//! Writes `$OUT_DIR/tools.rs`: the `#[tool_router]` impl of `BenchServer` with `BENCH_TOOL_COUNT`
//! (default 1,000) tools `tool_0000`.., each adding two integers and returning them with a label,
//! plus `echo` and `echo_async`. The whole impl is generated because `#[tool_router]` only sees
//! the `#[tool]` functions written directly inside it.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=BENCH_TOOL_COUNT");
    let count: usize = std::env::var("BENCH_TOOL_COUNT")
        .ok()
        .map(|n| n.parse().expect("BENCH_TOOL_COUNT is a number"))
        .unwrap_or(1000);
    let mut code = String::from(
        r#"
#[tool_router]
impl BenchServer {
    /// Returns the text unchanged.
    #[tool]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    /// Returns the text unchanged, from an `async fn`.
    #[tool]
    async fn echo_async(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
"#,
    );
    for i in 0..count {
        write!(
            code,
            r#"
    /// Adds `a` and `b` and returns the sum with the label (tool {i:04}).
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    fn tool_{i:04}(&self, Parameters(SumArgs {{ a, b, label }}): Parameters<SumArgs>) -> Json<Sum> {{
        Json(Sum {{ sum: a.wrapping_add(b), label }})
    }}
"#
        )
        .expect("writing to a String");
    }
    code.push_str("}\n");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("tools.rs"), code).expect("OUT_DIR is writable");
}

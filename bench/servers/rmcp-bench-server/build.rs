//! Writes `$OUT_DIR/tools.rs`: an impl of `BenchServer` with `BENCH_TOOL_COUNT` (default 1,000)
//! `#[tool]` methods `tool_0000`.., each adding two integers and returning them with a label, plus
//! `echo` and `echo_async`, and `BenchServer::served_router(limit)`. That function is what
//! `#[tool_router]` would write (`.with_route((Self::name_tool_attr(), Self::name))` per tool),
//! except that a route, and so its schema, is made only for a tool `--tools` serves: rmcp derives
//! a tool's schemas when its route is made, and toolwright derives only the served tools' too.
//!
//! Each tool has its own arguments type, `SumArgsNNNN`. With `BENCH_RMCP_SHARED_ARGS=1` every
//! tool takes one shared `SumArgs` instead, the setup of the runs before 2026-11-30, kept to
//! reproduce them: rmcp then derives one schema and one deserializer for all the tools.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=BENCH_TOOL_COUNT");
    println!("cargo::rerun-if-env-changed=BENCH_RMCP_SHARED_ARGS");
    let shared = std::env::var_os("BENCH_RMCP_SHARED_ARGS").is_some_and(|value| value == "1");
    let count: usize = std::env::var("BENCH_TOOL_COUNT")
        .ok()
        .map(|n| n.parse().expect("BENCH_TOOL_COUNT is a number"))
        .unwrap_or(1000);
    let mut code = String::from(
        r#"
impl BenchServer {
    /// Returns the text unchanged.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    fn echo(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }

    /// Returns the text unchanged, from an `async fn`.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    async fn echo_async(&self, Parameters(EchoArgs { text }): Parameters<EchoArgs>) -> String {
        text
    }
"#,
    );
    // Each tool has its own arguments type, as the tools of a real server do (and as each
    // `#[mcp_tool]` function has): one type shared by every tool would let rmcp derive one
    // schema and one deserializer for all of them.
    let mut types = String::new();
    let mut routes = String::new();
    for i in 0..count {
        write!(
            routes,
            r#"
        if {i} < limit {{
            router = router.with_route((Self::tool_{i:04}_tool_attr(), Self::tool_{i:04}));
        }}"#
        )
        .expect("writing to a String");
        // The tool's arguments type, and whose arguments its doc says they are.
        let (args, of) = if shared {
            ("SumArgs".to_owned(), "every `tool_NNNN`".to_owned())
        } else {
            (format!("SumArgs{i:04}"), format!("`tool_{i:04}`"))
        };
        write!(
            code,
            r#"
    /// Adds `a` and `b` and returns the sum with the label (tool {i:04}).
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    fn tool_{i:04}(&self, Parameters({args} {{ a, b, label }}): Parameters<{args}>) -> Json<Sum> {{
        Json(Sum {{ sum: a.wrapping_add(b), label }})
    }}
"#
        )
        .expect("writing to a String");
        // The shared type is written once.
        if shared && i > 0 {
            continue;
        }
        write!(
            types,
            r#"
/// The arguments of {of}.
#[derive(Deserialize, JsonSchema)]
struct {args} {{
    /// The first term.
    a: i64,
    /// The second term.
    b: i64,
    /// A label returned with the sum.
    label: String,
}}
"#
        )
        .expect("writing to a String");
    }
    write!(
        code,
        r#"
    /// The router of the tools `--tools limit` serves: the echo tools always, `tool_NNNN` when
    /// `NNNN < limit`.
    fn served_router(limit: usize) -> ToolRouter<BenchServer> {{
        #[allow(unused_mut)]
        let mut router = ToolRouter::new()
            .with_route((Self::echo_tool_attr(), Self::echo))
            .with_route((Self::echo_async_tool_attr(), Self::echo_async));{routes}
        router
    }}
}}
"#
    )
    .expect("writing to a String");
    code.push_str(&types);
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("tools.rs"), code).expect("OUT_DIR is writable");
}

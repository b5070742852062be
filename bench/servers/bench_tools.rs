// The benchmark's tools for toolwright: `tool_0000`.. (generated into `$OUT_DIR/tools.rs` by
// `generate_tools.rs`), `echo` and `echo_async`. Included by `toolwright-bench-server`, which
// serves them from its own crate, and by `toolwright-bench-tools`, the library whose manifest a
// build script makes.

use toolwright::mcp_tool;
use toolwright::schemars::JsonSchema;
use toolwright::serde::Serialize;

/// What every `tool_NNNN` returns: an object, so the tools have an `outputSchema`.
#[derive(Serialize, JsonSchema)]
#[serde(crate = "toolwright::serde")]
#[schemars(crate = "toolwright::schemars")]
struct Sum {
    /// `a + b`, wrapping on overflow.
    sum: i64,
    /// The label the call gave.
    label: String,
}

include!(concat!(env!("OUT_DIR"), "/tools.rs"));

/// Returns the text unchanged.
#[mcp_tool(read_only, idempotent)]
fn echo(
    /// The text to return.
    text: String,
) -> String {
    text
}

/// Returns the text unchanged, from an `async fn`.
#[mcp_tool(read_only, idempotent)]
async fn echo_async(
    /// The text to return.
    text: String,
) -> String {
    text
}

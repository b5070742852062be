//! The tools of `toolwright-bench-server` (`tool_0000`.., `echo`, `echo_async`), in a library, so
//! that a build script can link them and make their manifest at build time.

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

/// Links these tools into a binary that uses nothing else of the crate.
#[inline(never)]
pub fn link() {}

use toolwright::mcp_tool;
use toolwright::schemars::JsonSchema;
use toolwright::serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolwright::serde")]
#[schemars(crate = "toolwright::schemars")]
struct Page {
    offset: u32,
    limit: u32,
}

/// List notes.
#[mcp_tool]
fn list(#[arg(flatten, rename = "paging")] page: Page) -> Vec<String> {
    vec![format!("{}..{}", page.offset, page.limit)]
}

fn main() {}

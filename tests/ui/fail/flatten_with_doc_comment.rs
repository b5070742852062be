use toolwright::mcp_tool;
use toolwright::schemars::JsonSchema;
use toolwright::serde::Deserialize;

#[derive(Deserialize, JsonSchema)]
#[serde(crate = "toolwright::serde")]
#[schemars(crate = "toolwright::schemars")]
struct Page {
    /// How many notes to skip.
    offset: u32,
    /// How many notes to return.
    limit: u32,
}

/// List notes.
#[mcp_tool]
fn list(
    /// Which page to show.
    #[arg(flatten)]
    page: Page,
) -> Vec<String> {
    vec![format!("{}..{}", page.offset, page.limit)]
}

fn main() {}

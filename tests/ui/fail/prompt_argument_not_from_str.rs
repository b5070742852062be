use toolwright::mcp_prompt;

struct Range {
    from: u32,
    to: u32,
}

/// Plan the pages of a report.
#[mcp_prompt]
fn plan(pages: Range) -> String {
    format!("Plan pages {} to {}.", pages.from, pages.to)
}

fn main() {}

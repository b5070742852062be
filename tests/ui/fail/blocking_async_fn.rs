use toolwright::mcp_tool;

/// Reads a file.
#[mcp_tool(blocking)]
async fn read_file(path: String) -> String {
    path
}

fn main() {}

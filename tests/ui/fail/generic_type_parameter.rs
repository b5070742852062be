use toolwright::mcp_tool;

/// Echo a value back.
#[mcp_tool]
fn echo<T>(value: T) -> T {
    value
}

fn main() {}

use toolwright::mcp_tool;

/// Say hello.
#[mcp_tool]
fn greet(name: impl std::fmt::Display) -> String {
    format!("hello, {name}")
}

fn main() {}

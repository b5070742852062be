use toolwright::mcp_tool;

/// Say hello.
#[mcp_tool]
fn greet(name: String) -> impl std::fmt::Display {
    format!("hello, {name}")
}

fn main() {}

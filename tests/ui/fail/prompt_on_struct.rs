use toolwright::mcp_prompt;

/// A greeting.
#[mcp_prompt]
struct Greeting;

fn main() {}

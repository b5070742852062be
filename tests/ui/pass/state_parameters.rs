use toolwright::{Context, State, mcp_tool};

struct Counter(std::sync::atomic::AtomicU64);
struct Greeting(String);

/// By value, by reference, beside the context and arguments, in plain and async functions.
#[mcp_tool]
fn plain(counter: State<Counter>, greeting: &State<Greeting>, ctx: &Context, name: String) -> String {
    let _ = (ctx.tool_name(), counter.0.load(std::sync::atomic::Ordering::SeqCst));
    format!("{}, {name}", greeting.0)
}

/// The same, asynchronously.
#[mcp_tool]
async fn later(ctx: Context, greeting: State<Greeting>, name: String) -> String {
    let _ = ctx.protocol_version();
    format!("{}, {name}", greeting.0)
}

/// A raw identifier, too.
#[mcp_tool]
fn raw(r#type: State<Greeting>) -> String {
    r#type.0.clone()
}

fn main() {
    let registry = toolwright::registry::Registry::collect().unwrap();
    let plain = registry.get("plain").unwrap();
    // Neither state is an argument.
    assert_eq!(
        plain.input_schema()["properties"].as_object().unwrap().keys().collect::<Vec<_>>(),
        ["name"]
    );
}

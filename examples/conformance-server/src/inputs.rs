//! The fixtures of the input-required scenarios of protocol 2026-07-28 (SEP-2322): tools and a
//! prompt that ask the client for something through their `Context`. Under that protocol each
//! question becomes an input-required result, and the client calls again with the answers; in
//! the handshake era the same code sends the client requests.

use serde_json::{Value, json};
use toolwright::context::{ClientRequestError, Elicitation, Elicited, Root};
use toolwright::{Context, mcp_prompt, mcp_tool};

/// A form of one string property, `property`.
fn form(message: &str, property: &str) -> Elicitation {
    let schema = json!({
        "type": "object",
        "properties": {property: {"type": "string"}},
        "required": [property]
    });
    Elicitation::with_schema(message, schema)
}

/// The confirmation form of the request-state scenarios: one boolean, `ok`.
fn confirmation() -> Elicitation {
    let schema = json!({
        "type": "object",
        "properties": {"ok": {"type": "boolean"}},
        "required": ["ok"]
    });
    Elicitation::with_schema("Please confirm", schema)
}

/// What an elicitation's answer says for `property`.
fn answered(answer: &Elicited, property: &str) -> String {
    match answer.content().and_then(|content| content.get(property)) {
        Some(Value::String(text)) => text.clone(),
        None | Some(Value::Null) => format!("(\"{}\" without `{property}`)", answer.action()),
        Some(other) => other.to_string(),
    }
}

/// How many roots a `roots/list` answer holds.
fn root_count(roots: &[Root]) -> usize {
    roots.len()
}

/// Tests an input-required result that asks the user for their name (elicitation).
#[mcp_tool]
async fn test_input_required_result_elicitation(
    ctx: Context,
) -> Result<String, ClientRequestError> {
    let answer = ctx
        .keyed("user_name")
        .elicit(form("What is your name?", "name"))
        .await?;
    Ok(format!("Hello, {}!", answered(&answer, "name")))
}

/// Tests an input-required result that asks the client's model for a completion (sampling).
#[mcp_tool]
async fn test_input_required_result_sampling(ctx: Context) -> Result<String, ClientRequestError> {
    let text = ctx
        .keyed("sample_request")
        .sample_text("What is the capital of France?", 100)
        .await?;
    Ok(format!("Sampling result: {text}"))
}

/// Tests an input-required result that asks the client for its roots.
#[mcp_tool]
async fn test_input_required_result_list_roots(ctx: Context) -> Result<String, ClientRequestError> {
    let roots = ctx.keyed("roots_request").list_roots().await?;
    Ok(format!("Found {} root(s)", root_count(&roots)))
}

/// Tests that the state of an input-required result comes back with the answer.
#[mcp_tool]
async fn test_input_required_result_request_state(
    ctx: Context,
) -> Result<String, ClientRequestError> {
    let answer = ctx.keyed("confirm").elicit(confirmation()).await?;
    let confirmed = answer.content().and_then(|content| content.get("ok"));
    Ok(format!(
        "state-ok: requestState validated (confirmed: {})",
        confirmed.unwrap_or(&Value::Null)
    ))
}

/// Tests several questions in one input-required result: a name, a greeting and the roots.
#[mcp_tool]
async fn test_input_required_result_multiple_inputs(
    ctx: Context,
) -> Result<String, ClientRequestError> {
    let (name, greeting, roots) = tokio::join!(
        ctx.keyed("user_name")
            .elicit(form("What is your name?", "name")),
        ctx.keyed("greeting").sample_text("Generate a greeting", 50),
        ctx.keyed("client_roots").list_roots(),
    );
    Ok(format!(
        "Name: {}; Greeting: {}; Roots: {}",
        answered(&name?, "name"),
        greeting?,
        root_count(&roots?)
    ))
}

/// Tests input asked over several rounds: a name, then a favourite colour.
#[mcp_tool]
async fn test_input_required_result_multi_round(
    ctx: Context,
) -> Result<String, ClientRequestError> {
    let name = ctx
        .keyed("step1")
        .elicit(form("Step 1: What is your name?", "name"))
        .await?;
    let color = ctx
        .keyed("step2")
        .elicit(form("Step 2: What is your favorite color?", "color"))
        .await?;
    Ok(format!(
        "Multi-round complete for {} who likes {}",
        answered(&name, "name"),
        answered(&color, "color")
    ))
}

/// Tests that a changed `requestState` is refused: the state is sealed by the server.
#[mcp_tool]
async fn test_input_required_result_tampered_state(
    ctx: Context,
) -> Result<String, ClientRequestError> {
    ctx.keyed("confirm").elicit(confirmation()).await?;
    Ok("integrity-ok: state verified".to_owned())
}

/// Tests that a server asks only what the client declared it can answer.
#[mcp_tool]
async fn test_input_required_result_capabilities(
    ctx: Context,
) -> Result<String, ClientRequestError> {
    let declared = |capability: &str| {
        ctx.client_capabilities()
            .is_some_and(|c| c.get(capability).is_some())
    };
    let (elicit, sample) = (declared("elicitation"), declared("sampling"));
    let (answer, text) = tokio::join!(
        async {
            match elicit {
                true => ctx
                    .keyed("elicit_input")
                    .elicit(form("What should the tool use?", "input"))
                    .await
                    .map(|answer| Some(answered(&answer, "input"))),
                false => Ok(None),
            }
        },
        async {
            match sample {
                true => ctx
                    .keyed("sample_input")
                    .sample_text("Say hello.", 50)
                    .await
                    .map(Some),
                false => Ok(None),
            }
        },
    );
    match (answer?, text?) {
        (None, None) => Ok("No supported capabilities declared".to_owned()),
        (answer, text) => Ok(format!(
            "capabilities-ok: elicitation {answer:?}, sampling {text:?}"
        )),
    }
}

/// Tests that a request streams no request to the client under protocol 2026-07-28: the
/// question it asks is an input-required result.
#[mcp_tool]
async fn test_streaming_elicitation(ctx: Context) -> Result<String, ClientRequestError> {
    ctx.progress(50.0, Some(100.0), Some("Asking the user"));
    let answer = ctx
        .keyed("streaming_input")
        .elicit(form("What should the stream say?", "text"))
        .await?;
    Ok(format!("Streaming complete: {}", answered(&answer, "text")))
}

/// MRTR: a prompt that requires elicitation input.
#[mcp_prompt]
async fn test_input_required_result_prompt(ctx: Context) -> Result<String, ClientRequestError> {
    let answer = ctx
        .keyed("user_context")
        .elicit(form("What context should the prompt use?", "context"))
        .await?;
    Ok(format!(
        "Prompt with context: {}",
        answered(&answer, "context")
    ))
}

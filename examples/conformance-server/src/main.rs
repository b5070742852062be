//! The tool fixtures of the MCP conformance suite (`@modelcontextprotocol/conformance` 0.1.16,
//! and those of 0.2.0-alpha.12 for protocol 2026-07-28 that toolwright serves), written as
//! toolwright tools, for running the suite against toolwright.
//!
//! ```text
//! cargo run -p conformance-server -- --http 127.0.0.1:3001
//! npx @modelcontextprotocol/conformance@0.1.16 server --url http://127.0.0.1:3001/mcp --suite all
//! npx @modelcontextprotocol/conformance@0.2.0-alpha.12 server --url http://127.0.0.1:3001/mcp --suite all
//! ```
//!
//! Every scenario of both passes, the tasks extension's included: its fixtures are in
//! `tasks.rs`.
//! Sampling and elicitation go through [`Context::sample_text`] and [`Context::elicit`].

mod inputs;
mod resources;
mod tasks;

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use toolwright::completion::Completion;
use toolwright::context::Elicitation;
use toolwright::prompt::PromptMessage;
use toolwright::server::ChangeError;
use toolwright::{Content, Context, LogLevel, ToolResult, mcp_prompt, mcp_tool};

/// A 1x1 red pixel.
const PNG: &[u8] = include_bytes!("pixel.png");

/// Four samples of silence: 16-bit mono PCM at 8 kHz.
const WAV: &[u8] = include_bytes!("silence.wav");

/// The pause between the notifications of one call, so a client sees them arrive over time.
const STEP: Duration = Duration::from_millis(50);

/// Tests simple text content response.
#[mcp_tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Tests image content response.
#[mcp_tool(read_only)]
fn test_image_content() -> ToolResult {
    ToolResult::new().with(Content::image(PNG, "image/png"))
}

/// Tests audio content response.
#[mcp_tool(read_only)]
fn test_audio_content() -> ToolResult {
    ToolResult::new().with(Content::audio(WAV, "audio/wav"))
}

/// Tests embedded resource content response.
#[mcp_tool(read_only)]
fn test_embedded_resource() -> ToolResult {
    ToolResult::new().with(Content::resource_text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    ))
}

/// Tests response with multiple content types (text, image, resource).
#[mcp_tool(read_only)]
fn test_multiple_content_types() -> ToolResult {
    ToolResult::text("Multiple content types test:")
        .with(Content::image(PNG, "image/png"))
        .with(Content::resource_text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ))
}

/// Tests tool that emits log messages during execution.
#[mcp_tool(read_only)]
async fn test_tool_with_logging(ctx: Context) -> &'static str {
    ctx.log(LogLevel::Info, "Tool execution started");
    tokio::time::sleep(STEP).await;
    ctx.log(LogLevel::Info, "Tool processing data");
    tokio::time::sleep(STEP).await;
    ctx.log(LogLevel::Info, "Tool execution completed");
    "Tool with logging executed successfully"
}

/// Tests tool that reports progress notifications.
#[mcp_tool(read_only)]
async fn test_tool_with_progress(ctx: Context) -> &'static str {
    for step in [0.0, 50.0, 100.0] {
        if step > 0.0 {
            tokio::time::sleep(STEP).await;
        }
        let message = format!("Completed step {step} of 100");
        ctx.progress(step, Some(100.0), Some(&message));
    }
    "Progress reported: 0, 50 and 100 of 100"
}

/// Tests SSE stream disconnection and client reconnection (SEP-1699). Server will close the
/// stream mid-call and send the result after client reconnects.
#[mcp_tool(read_only)]
async fn test_reconnection(ctx: Context) -> &'static str {
    ctx.close_sse_stream();
    // The client reconnects meanwhile, with `Last-Event-ID`, to receive what follows.
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed successfully. If you received this, the client properly \
     reconnected after stream closure."
}

/// Tests error response handling.
#[mcp_tool(read_only)]
fn test_error_handling() -> Result<(), String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Tool with JSON Schema 2020-12 features.
///
/// Its input schema is served exactly as written (SEP-1613): `$schema`, `$defs`, `$ref` and
/// `additionalProperties` included.
#[mcp_tool(
    read_only,
    input_schema = r##"{
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"}
        },
        "additionalProperties": false
    }"##
)]
fn json_schema_2020_12_tool(arguments: Value) -> String {
    format!("JSON Schema 2020-12 tool called with: {arguments}")
}

/// Tests server-initiated sampling (LLM completion request).
#[mcp_tool]
async fn test_sampling(
    /// The prompt to send to the LLM.
    prompt: String,
    ctx: Context,
) -> Result<String, String> {
    match ctx.sample_text(&prompt, 100).await {
        Ok(text) => Ok(format!("LLM response: {text}")),
        Err(error) => Err(format!("Sampling not supported or error: {error}")),
    }
}

/// Tests server-initiated elicitation (user input request).
#[mcp_tool]
async fn test_elicitation(
    /// The message to show the user.
    message: String,
    ctx: Context,
) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {"response": {"type": "string", "description": "User's response"}},
        "required": ["response"]
    });
    elicit(&ctx, &message, schema, "User response").await
}

/// Tests elicitation with default values per SEP-1034.
#[mcp_tool]
async fn test_elicitation_sep1034_defaults(ctx: Context) -> Result<String, String> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    });
    let message = "Please review and update the form fields with defaults";
    elicit(&ctx, message, schema, "Elicitation completed").await
}

/// Tests elicitation with enum schema improvements per SEP-1330.
#[mcp_tool]
async fn test_elicitation_sep1330_enums(ctx: Context) -> Result<String, String> {
    let titled = |choices: [(&str, &str); 3]| {
        choices
            .iter()
            .map(|(value, title)| json!({"const": value, "title": title}))
            .collect::<Vec<_>>()
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {
                "type": "string",
                "description": "Select one option",
                "enum": ["option1", "option2", "option3"]
            },
            "titledSingle": {
                "type": "string",
                "description": "Select one option with titles",
                "oneOf": titled([("value1", "First Option"), ("value2", "Second Option"), ("value3", "Third Option")])
            },
            "legacyEnum": {
                "type": "string",
                "description": "Select one option (legacy)",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "description": "Select multiple options",
                "minItems": 1,
                "maxItems": 3,
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "description": "Select multiple options with titles",
                "minItems": 1,
                "maxItems": 3,
                "items": {"anyOf": titled([("value1", "First Choice"), ("value2", "Second Choice"), ("value3", "Third Choice")])}
            }
        },
        "required": []
    });
    let message = "Please select options from the enum fields";
    elicit(&ctx, message, schema, "Elicitation completed").await
}

/// Tests that a tool needing sampling is refused to a client that did not declare it: under
/// protocol 2026-07-28, with the "missing required client capability" error.
#[mcp_tool]
async fn test_missing_capability(ctx: Context) -> Result<String, String> {
    match ctx.sample_text("Say hello.", 20).await {
        Ok(text) => Ok(format!("LLM response: {text}")),
        Err(error) => Err(format!("Sampling is required: {error}")),
    }
}

/// Tests that log messages reach only a client that asked for them (protocol 2026-07-28: with
/// `io.modelcontextprotocol/logLevel` in the request's `_meta`).
#[mcp_tool(read_only)]
async fn test_logging_tool(ctx: Context) -> &'static str {
    for message in ["Logging tool started", "Logging tool finished"] {
        ctx.log(LogLevel::Info, message);
        tokio::time::sleep(STEP).await;
    }
    "Logging tool executed successfully"
}

/// Tests arguments mirrored in HTTP headers (SEP-2243): a client of protocol 2026-07-28 sends
/// `region` as `Mcp-Param-Region` too, and the server refuses a request whose two differ.
#[mcp_tool(read_only)]
fn test_x_mcp_header(
    /// The region, mirrored in the header `Mcp-Param-Region`.
    #[arg(header = "Region")]
    region: String,
) -> String {
    format!("Region: {region}")
}

/// Tests that clients listening for tool list changes are told: takes `test_dynamic_tool` out
/// of the list and puts it back.
#[mcp_tool]
fn test_trigger_tool_change(ctx: Context) -> Result<&'static str, ChangeError> {
    ctx.server().disable_tool("test_dynamic_tool")?;
    ctx.server().enable_tool("test_dynamic_tool")?;
    Ok("Mutation triggered")
}

/// Tests that clients listening for prompt list changes are told: takes `test_dynamic_prompt`
/// out of the list and puts it back.
#[mcp_tool]
fn test_trigger_prompt_change(ctx: Context) -> Result<&'static str, ChangeError> {
    ctx.server().disable_prompt("test_dynamic_prompt")?;
    ctx.server().enable_prompt("test_dynamic_prompt")?;
    Ok("Mutation triggered")
}

/// A tool that `test_trigger_tool_change` takes out of the list and puts back.
#[mcp_tool(read_only)]
fn test_dynamic_tool() -> &'static str {
    "This tool comes and goes."
}

/// A prompt that `test_trigger_prompt_change` takes out of the list and puts back.
#[mcp_prompt]
fn test_dynamic_prompt() -> &'static str {
    "This prompt comes and goes."
}

/// A simple prompt without arguments.
#[mcp_prompt]
fn test_simple_prompt() -> &'static str {
    "This is a simple prompt for testing."
}

/// A prompt with required arguments.
#[mcp_prompt(complete(arg1 = starting_with))]
fn test_prompt_with_arguments(
    /// First test argument.
    arg1: &str,
    /// Second test argument.
    arg2: &str,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// Suggestions for `arg1`: a few words, those that start with what was typed.
fn starting_with(request: &Completion) -> Vec<String> {
    ["paris", "park", "party", "test", "testing"]
        .into_iter()
        .filter(|word| word.starts_with(request.value()))
        .map(str::to_owned)
        .collect()
}

/// A prompt that embeds a resource.
#[mcp_prompt]
fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed.
    #[arg(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::resource_text(
            resource_uri,
            "text/plain",
            "Embedded resource content for testing.",
        )),
        PromptMessage::user("Please process the embedded resource above."),
    ]
}

/// A prompt with an image.
#[mcp_prompt]
fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage::user(Content::image(PNG, "image/png")),
        PromptMessage::user("Please analyze the image above."),
    ]
}

/// Asks the user through the client with a form, and says what came back.
async fn elicit(ctx: &Context, message: &str, schema: Value, said: &str) -> Result<String, String> {
    match ctx.elicit(Elicitation::with_schema(message, schema)).await {
        Ok(result) => Ok(format!(
            "{said}: action={}, content={}",
            result.action(),
            json!(result.content().cloned().unwrap_or_default())
        )),
        Err(error) => Err(format!("Elicitation not supported or error: {error}")),
    }
}

fn main() -> ExitCode {
    use toolwright::pipeline::Next;
    use tower::{layer::layer_fn, service_fn};

    // Fails `protocol_error_job` in the pipeline, as a server refuses a call it cannot run.
    let refuse = layer_fn(|next: Next| {
        service_fn(move |call| tasks::refuse_protocol_errors(next.clone(), call))
    });
    toolwright::server!().layer(refuse).run()
}

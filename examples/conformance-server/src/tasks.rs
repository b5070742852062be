//! The fixtures of the tasks scenarios of protocol 2026-07-28 (the `io.modelcontextprotocol/tasks`
//! extension, SEP-2663): a tool that is never a task, tools that may or must run as one, one that
//! fails as a tool and one whose task fails, and tools that ask the user while they run as tasks.

use std::time::Duration;

use serde_json::json;
use toolwright::context::{ClientRequestError, Elicitation, Elicited};
use toolwright::pipeline::{BoxError, Call, Next, Outcome, Refusal};
use toolwright::{Context, mcp_tool};

/// Greets someone by name, at once: never a task.
#[mcp_tool]
fn greet(
    /// Who to greet.
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Computes for `seconds` seconds, as a task when the client takes tasks: cancelling the task
/// stops it.
#[mcp_tool(task = "optional")]
async fn slow_compute(
    ctx: Context,
    /// How long the computation takes, in seconds.
    seconds: f64,
    /// A label for the result.
    label: Option<String>,
) -> String {
    let label = label.unwrap_or_else(|| "computation".to_owned());
    ctx.set_status_message(format!("computing {label} for {seconds} s"));
    tokio::time::sleep(Duration::from_secs_f64(seconds.clamp(0.0, 3600.0))).await;
    format!("{label}: done after {seconds} s")
}

/// A job that runs as a task and fails after a second, as a tool fails: its task completes with
/// an error result.
#[mcp_tool(task = "required")]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("the job failed: its input was rejected".to_owned())
}

/// A job that runs as a task and is refused by the server's pipeline (see [`refuse_protocol_errors`]):
/// its task fails with the JSON-RPC error.
#[mcp_tool(task = "required")]
async fn protocol_error_job() -> String {
    "never reached: the pipeline refuses this job".to_owned()
}

/// The pipeline's step that fails `protocol_error_job` with an internal error, as a server that
/// cannot run a call refuses it.
pub(crate) async fn refuse_protocol_errors(
    mut next: Next,
    call: Call,
) -> Result<Outcome, BoxError> {
    use toolwright::pipeline::Service as _;
    if call.target() == "protocol_error_job" {
        tokio::time::sleep(Duration::from_millis(500)).await;
        return Err(
            Refusal::internal("protocol_error_job failed: the server could not run it").into(),
        );
    }
    next.call(call).await
}

/// A form of boolean and string properties.
fn form(message: &str, properties: serde_json::Value) -> Elicitation {
    Elicitation::with_schema(message, json!({"type": "object", "properties": properties}))
}

fn said(answer: &Elicited, property: &str) -> String {
    answer
        .content()
        .and_then(|content| content.get(property))
        .map_or_else(|| "nothing".to_owned(), ToString::to_string)
}

/// Deletes a file once the user confirms, asking while it runs as a task.
#[mcp_tool(task = "optional")]
async fn confirm_delete(
    ctx: Context,
    /// The file to delete.
    filename: String,
) -> Result<String, ClientRequestError> {
    let question = form(
        &format!("Delete {filename}?"),
        json!({"confirm": {"type": "boolean"}}),
    );
    let answer = ctx.keyed("confirm").elicit(question).await?;
    Ok(format!("{filename}: confirm={}", said(&answer, "confirm")))
}

/// Asks the user two questions at once while it runs as a task.
#[mcp_tool(task = "optional")]
async fn multi_input(ctx: Context) -> Result<String, ClientRequestError> {
    let properties = json!({"name": {"type": "string"}, "confirm": {"type": "boolean"}});
    let (first, second) = tokio::join!(
        ctx.keyed("first")
            .elicit(form("First?", properties.clone())),
        ctx.keyed("second").elicit(form("Second?", properties)),
    );
    let (first, second) = (first?, second?);
    Ok(format!(
        "first: {}, second: {}",
        said(&first, "name"),
        said(&second, "name")
    ))
}

/// Asks the user's name within the call, then greets them as a task.
#[mcp_tool(task = "required")]
async fn test_tool_with_task(ctx: Context) -> Result<String, ClientRequestError> {
    ctx.defer_task();
    let question = form("What is your name?", json!({"name": {"type": "string"}}));
    let answer = ctx.keyed("user_name").elicit(question).await?;
    ctx.start_task().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let name = answer
        .content()
        .and_then(|content| content.get("name"))
        .and_then(|name| name.as_str())
        .unwrap_or("stranger")
        .to_owned();
    Ok(format!("Hello, {name}!"))
}

use serde_json::json;
use toolwright::context::{ClientRequestError, Elicitation};
use toolwright::{Context, mcp_prompt};

/// Review a file, in the language the user picks.
#[mcp_prompt]
async fn review(ctx: Context, path: String) -> Result<String, ClientRequestError> {
    let form = json!({"type": "object", "properties": {"language": {"type": "string"}}});
    let answer = ctx
        .keyed("language")
        .elicit(Elicitation::with_schema("Which language should the review be in?", form))
        .await?;
    let language = answer.content().and_then(|content| content.get("language"));
    Ok(format!("Review `{path}` in {}.", language.unwrap_or(&json!(null))))
}

/// The same prompt, borrowing its context.
#[mcp_prompt]
async fn review_borrowed(ctx: &Context, path: String) -> String {
    format!("Review `{path}` for {}.", ctx.client_name().unwrap_or("a client"))
}

fn main() {}

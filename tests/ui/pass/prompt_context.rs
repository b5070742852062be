use serde_json::json;
use toolwright::{Context, mcp_prompt};

/// Review a file, in the language the user picks.
#[mcp_prompt]
async fn review(ctx: Context, path: String) -> Result<String, toolwright::context::ClientRequestError> {
    let answer = ctx
        .keyed("language")
        .elicit(json!({
            "message": "Which language should the review be in?",
            "requestedSchema": {"type": "object", "properties": {"language": {"type": "string"}}}
        }))
        .await?;
    Ok(format!("Review `{path}` in {}.", answer["content"]["language"]))
}

/// The same prompt, borrowing its context.
#[mcp_prompt]
async fn review_borrowed(ctx: &Context, path: String) -> String {
    format!("Review `{path}` for {}.", ctx.client_name().unwrap_or("a client"))
}

fn main() {}

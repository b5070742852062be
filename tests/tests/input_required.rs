//! Protocol 2026-07-28's input-required results (SEP-2322): what a tool or a prompt asks the
//! client through its `Context` comes back as questions, and the client calls again with the
//! answers and the state, as the official clients do. (A binary of its own: `inventory` collects
//! per binary.)

use serde_json::{Value, json};
use toolwright::context::{ClientRequestError, Elicitation, Elicited};
use toolwright::{Context, Server, mcp_prompt, mcp_tool};
use toolwright_tests::stdio::Client;

/// A form of one string property.
fn form(property: &str) -> Value {
    json!({
        "message": format!("Your {property}?"),
        "requestedSchema": {
            "type": "object",
            "properties": {property: {"type": "string"}},
            "required": [property]
        }
    })
}

/// The question of [`form`].
fn ask(property: &str) -> Elicitation {
    let form = form(property);
    Elicitation::with_schema(
        form["message"].as_str().unwrap(),
        form["requestedSchema"].clone(),
    )
}

/// What the user said for `property`, as JSON.
fn said(answer: &Elicited, property: &str) -> Value {
    answer
        .content()
        .and_then(|content| content.get(property))
        .cloned()
        .unwrap_or(Value::Null)
}

/// Ask the model, then the user.
#[mcp_tool]
async fn interview(ctx: Context) -> Result<String, ClientRequestError> {
    let joke = ctx.sample_text("Tell a joke.", 50).await?;
    let name = ctx.keyed("name").elicit(ask("name")).await?;
    Ok(format!("{} laughed at: {joke}", said(&name, "name")))
}

/// Ask for the roots and a colour at once.
#[mcp_tool]
async fn survey(ctx: Context) -> Result<String, ClientRequestError> {
    let (roots, color) = tokio::join!(ctx.list_roots(), ctx.keyed("color").elicit(ask("color")));
    Ok(format!(
        "{} root(s), {}",
        roots?.len(),
        said(&color?, "color")
    ))
}

/// Greet the user by the name they give.
#[mcp_prompt]
async fn greeting(ctx: Context) -> Result<String, ClientRequestError> {
    let name = ctx.keyed("name").elicit(ask("name")).await?;
    Ok(format!("Greet {}.", said(&name, "name")))
}

fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

fn everything() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {}})
}

fn call(id: u64, name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}, "_meta": meta(everything())});
    if let Value::Object(extra) = extra {
        params.as_object_mut().unwrap().extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

async fn answer(client: &mut Client, message: Value) -> Value {
    client.send(message).await;
    client.recv().await
}

#[tokio::test]
async fn each_question_is_asked_in_its_round_and_the_answers_carry_over() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let first = answer(&mut client, call(1, "interview", json!({}))).await;
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"],
        json!({"sample-1": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Tell a joke."}}],
            "maxTokens": 50
        }}})
    );
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"].is_object());
    assert!(result.get("ttlMs").is_none(), "not cacheable: {first}");
    let state = result["requestState"].as_str().unwrap().to_owned();

    // The model's answer: the tool runs again, and asks the user.
    let joke = json!({"role": "assistant", "content": {"type": "text", "text": "a pun"},
                      "model": "m", "stopReason": "endTurn"});
    let second = answer(
        &mut client,
        call(
            2,
            "interview",
            json!({"inputResponses": {"sample-1": joke}, "requestState": state}),
        ),
    )
    .await;
    let result = &second["result"];
    assert_eq!(
        result["inputRequests"],
        json!({"name": {"method": "elicitation/create", "params": form("name")}}),
        "{second}"
    );
    let later = result["requestState"].as_str().unwrap().to_owned();
    assert_ne!(later, state, "the state carries the model's answer now");

    // Only the user's answer is sent: the model's comes back in the state.
    let name = json!({"action": "accept", "content": {"name": "Ada"}});
    let last = answer(
        &mut client,
        call(
            3,
            "interview",
            json!({"inputResponses": {"name": name}, "requestState": later}),
        ),
    )
    .await;
    assert_eq!(
        last["result"],
        json!({
            "content": [{"type": "text", "text": "\"Ada\" laughed at: a pun"}],
            "resultType": "complete",
            "_meta": last["result"]["_meta"]
        })
    );
    client.finish().await;
}

#[tokio::test]
async fn questions_asked_side_by_side_go_together() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let first = answer(&mut client, call(1, "survey", json!({}))).await;
    assert_eq!(
        first["result"]["inputRequests"],
        json!({
            "roots-1": {"method": "roots/list"},
            "color": {"method": "elicitation/create", "params": form("color")}
        }),
        "{first}"
    );
    // Answers without the state are taken as they are; an answer nobody asked for is ignored.
    let answers = json!({
        "roots-1": {"roots": [{"uri": "file:///home/ada", "name": "home"}]},
        "color": {"action": "accept", "content": {"color": "teal"}},
        "unasked": {"action": "decline"}
    });
    let done = answer(
        &mut client,
        call(2, "survey", json!({"inputResponses": answers})),
    )
    .await;
    assert_eq!(
        done["result"]["content"][0]["text"], "1 root(s), \"teal\"",
        "{done}"
    );
    client.finish().await;
}

#[tokio::test]
async fn a_changed_state_and_a_malformed_answer_are_refused() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let first = answer(&mut client, call(1, "interview", json!({}))).await;
    let state = first["result"]["requestState"].as_str().unwrap();
    let tampered = answer(
        &mut client,
        call(
            2,
            "interview",
            json!({"requestState": format!("{state}-TAMPERED")}),
        ),
    )
    .await;
    assert_eq!(
        tampered["error"],
        json!({"code": -32602, "message": "`requestState` failed its integrity check: it is not \
            one this server handed out, or it was changed"})
    );
    // A state is for the request it was handed out with.
    let elsewhere = answer(
        &mut client,
        call(3, "survey", json!({"requestState": state})),
    )
    .await;
    assert_eq!(
        elsewhere["error"]["message"],
        "`requestState` was handed out for another request than this `tools/call:survey` with \
         these arguments"
    );
    let malformed = answer(
        &mut client,
        call(
            4,
            "interview",
            json!({"inputResponses": {"sample-1": 12345}}),
        ),
    )
    .await;
    assert_eq!(
        malformed["error"],
        json!({"code": -32602, "message": "input response `sample-1` does not answer \
            `sampling/createMessage`: it is 12345, not an object"})
    );
    let not_an_object = answer(
        &mut client,
        call(5, "interview", json!({"inputResponses": [1]})),
    )
    .await;
    assert_eq!(
        not_an_object["error"]["message"],
        "`inputResponses` must be an object of answers by key, not [1]"
    );
    // `null` answers nothing: the question is asked again.
    let again = answer(
        &mut client,
        call(6, "interview", json!({"inputResponses": null})),
    )
    .await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    client.finish().await;
}

#[tokio::test]
async fn a_question_the_client_cannot_answer_is_not_asked() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let mut message = call(1, "interview", json!({}));
    message["params"]["_meta"] = meta(json!({"elicitation": {}}));
    let refused = answer(&mut client, message).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    client.finish().await;
}

#[tokio::test]
async fn a_prompt_asks_as_a_tool_does() {
    let mut client = Client::with(Server::new("test-server", "0.0.1"));
    let get = |id: u64, extra: Value| {
        let mut params = json!({"name": "greeting", "_meta": meta(everything())});
        if let Value::Object(extra) = extra {
            params.as_object_mut().unwrap().extend(extra);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get", "params": params})
    };
    let first = answer(&mut client, get(1, json!({}))).await;
    assert_eq!(
        first["result"]["inputRequests"],
        json!({"name": {"method": "elicitation/create", "params": form("name")}}),
        "{first}"
    );
    let name = json!({"action": "accept", "content": {"name": "Ada"}});
    let done = answer(
        &mut client,
        get(2, json!({"inputResponses": {"name": name}})),
    )
    .await;
    assert_eq!(
        done["result"]["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Greet \"Ada\"."}}]),
        "{done}"
    );
    client.finish().await;
}

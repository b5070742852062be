//! `prompts/list` and `prompts/get`. They exist only when the server has a prompt; without one,
//! the methods are unknown, as the capability is not declared.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use futures_util::FutureExt as _;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::call::panic_message;
use super::service::Step;
use crate::context::Context;
use crate::prompt::{Completion, PromptArguments, PromptError, PromptHandler, PromptMessage};
use crate::protocol::jsonrpc::{self, INTERNAL_ERROR, INVALID_PARAMS, Id, METHOD_NOT_FOUND};
use crate::protocol::{Wire, merge};
use crate::registration::PromptRegistration;
use crate::registry::Registry;
use crate::state::States;

/// The answer to a prompts request: at once for a list or a plain `fn`, as a call for an
/// `async fn`. A list result in 2026-07-28 says how long (`ttl_ms`) it may be cached: the
/// prompts do not change while the server runs, nor differ between clients.
pub(super) fn answer(
    registry: &Registry,
    states: &Arc<States>,
    id: Id,
    method: &str,
    params: &Value,
    wire: Wire,
    ttl_ms: u64,
) -> Step {
    if registry.prompts().is_empty() {
        return Step::Reply(jsonrpc::error(
            &id,
            METHOD_NOT_FOUND,
            &format!("method `{method}` is not supported"),
        ));
    }
    if method == "prompts/list" {
        return Step::Reply(list(registry, &id, params, &wire, ttl_ms));
    }
    let (prompt, arguments) = match request(registry, params) {
        Ok(found) => found,
        Err(message) => return Step::Reply(jsonrpc::error(&id, INVALID_PARAMS, &message)),
    };
    let ctx = Context::new(
        prompt.name,
        None,
        CancellationToken::new(),
        None,
        Arc::clone(states),
    );
    match prompt.handler {
        PromptHandler::Sync(handler) => {
            let made = panic::catch_unwind(AssertUnwindSafe(|| handler(&arguments, ctx)));
            Step::Reply(reply(prompt, &id, &wire, made))
        }
        PromptHandler::Async(handler) => Step::Call(Box::pin(async move {
            let made = AssertUnwindSafe(handler(arguments, ctx))
                .catch_unwind()
                .await;
            Some(reply(prompt, &id, &wire, made))
        })),
    }
}

/// The most values one completion sends, as the protocol has it.
const MAX_COMPLETIONS: usize = 100;

/// Whether any prompt argument has a completer: the `completions` capability.
pub(super) fn completes(registry: &Registry) -> bool {
    registry
        .prompts()
        .iter()
        .any(|p| p.arguments.iter().any(|a| a.complete.is_some()))
}

/// The answer to `completion/complete`: the values the argument's completer suggests for what
/// the user typed, the first 100 of them, with how many there are. An argument without a
/// completer has none to suggest.
pub(super) fn complete(
    registry: &Registry,
    states: &Arc<States>,
    id: &Id,
    params: &Value,
    wire: &Wire,
) -> Vec<u8> {
    if !completes(registry) {
        return jsonrpc::error(
            id,
            METHOD_NOT_FOUND,
            "method `completion/complete` is not supported",
        );
    }
    let invalid = |message: String| jsonrpc::error(id, INVALID_PARAMS, &message);
    let reference = params.get("ref");
    let prompt = match reference
        .and_then(|r| r.get("type"))
        .and_then(Value::as_str)
    {
        Some("ref/prompt") => {
            let Some(name) = reference
                .and_then(|r| r.get("name"))
                .and_then(Value::as_str)
            else {
                return invalid("`ref` of type `ref/prompt` needs a `name` string".to_owned());
            };
            match registry.prompt(name) {
                Some(prompt) => prompt,
                None => return invalid(format!("unknown prompt `{name}`")),
            }
        }
        Some("ref/resource") => {
            return invalid(
                "this server has no resource templates whose parameters complete".to_owned(),
            );
        }
        _ => {
            return invalid(
                "`ref` must be `{\"type\": \"ref/prompt\", \"name\": ...}` or a `ref/resource`"
                    .to_owned(),
            );
        }
    };
    let argument = params.get("argument");
    let (Some(name), Some(value)) = (
        argument.and_then(|a| a.get("name")).and_then(Value::as_str),
        argument
            .and_then(|a| a.get("value"))
            .and_then(Value::as_str),
    ) else {
        return invalid("`argument` needs a `name` and a `value` string".to_owned());
    };
    let Some(info) = prompt.arguments.iter().find(|a| a.name == name) else {
        return invalid(format!("prompt `{}` has no argument `{name}`", prompt.name));
    };
    let arguments = params
        .pointer("/context/arguments")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let values = match info.complete {
        Some(completer) => {
            let request = Completion {
                argument: name.to_owned(),
                value: value.to_owned(),
                arguments,
                states: Arc::clone(states),
            };
            match panic::catch_unwind(AssertUnwindSafe(|| completer(&request))) {
                Ok(values) => values,
                Err(payload) => {
                    let message = panic_message(&*payload);
                    tracing::error!(
                        prompt = prompt.name,
                        argument = name,
                        message,
                        "completer panicked"
                    );
                    return jsonrpc::error(
                        id,
                        INTERNAL_ERROR,
                        &format!("the completer of `{name}` panicked: {message}"),
                    );
                }
            }
        }
        None => Vec::new(),
    };
    let total = values.len();
    let shown = &values[..total.min(MAX_COMPLETIONS)];
    let result = json!({
        "completion": { "values": shown, "total": total, "hasMore": total > MAX_COMPLETIONS }
    });
    jsonrpc::result(id, &wire.shape(result))
}

/// Every prompt on one page.
fn list(registry: &Registry, id: &Id, params: &Value, wire: &Wire, ttl_ms: u64) -> Vec<u8> {
    if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
        return jsonrpc::error(
            id,
            INVALID_PARAMS,
            &format!("invalid cursor {cursor}: this server lists every prompt on one page"),
        );
    }
    let prompts: Vec<Value> = registry.prompts().iter().map(|p| listed(p)).collect();
    let mut result = json!({ "prompts": prompts });
    if wire.is_stateless() {
        merge(
            &mut result,
            &json!({ "ttlMs": ttl_ms, "cacheScope": "public" }),
        );
    }
    jsonrpc::result(id, &wire.shape(result))
}

/// A prompt as `prompts/list` describes it.
fn listed(prompt: &PromptRegistration) -> Value {
    let mut entry = json!({ "name": prompt.name, "description": prompt.description });
    if let Some(title) = prompt.title {
        entry["title"] = json!(title);
    }
    if !prompt.arguments.is_empty() {
        let arguments: Vec<Value> = prompt.arguments.iter().map(|a| a.listed()).collect();
        entry["arguments"] = json!(arguments);
    }
    entry
}

/// The prompt a `prompts/get` names, and its arguments: each a string the prompt takes.
fn request(
    registry: &Registry,
    params: &Value,
) -> Result<(&'static PromptRegistration, PromptArguments), String> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err("`prompts/get` needs a `name` string".to_owned());
    };
    let Some(prompt) = registry.prompt(name) else {
        let known: Vec<String> = registry
            .prompt_names()
            .map(|name| format!("`{name}`"))
            .collect();
        return Err(format!(
            "unknown prompt `{name}`; this server has {}",
            known.join(", ")
        ));
    };
    let arguments = match params.get("arguments") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(arguments)) => arguments.clone(),
        Some(_) => return Err("`arguments` must be an object of strings".to_owned()),
    };
    let taken = |key: &str| prompt.arguments.iter().any(|a| a.name == key);
    if let Some(unknown) = arguments.keys().find(|key| !taken(key)) {
        let expected: Vec<String> = prompt
            .arguments
            .iter()
            .map(|a| format!("`{}`", a.name))
            .collect();
        return Err(match expected.as_slice() {
            [] => format!(
                "prompt `{}` takes no arguments, and was given `{unknown}`",
                prompt.name
            ),
            _ => format!(
                "unknown argument `{unknown}` for prompt `{}`; it takes {}",
                prompt.name,
                expected.join(", ")
            ),
        });
    }
    Ok((prompt, arguments))
}

/// The response to a `prompts/get`: the messages, or the error that says why there are none.
fn reply(
    prompt: &PromptRegistration,
    id: &Id,
    wire: &Wire,
    made: std::thread::Result<Result<Vec<PromptMessage>, PromptError>>,
) -> Vec<u8> {
    match made {
        Ok(Ok(messages)) => {
            let result = json!({ "description": prompt.description, "messages": messages });
            jsonrpc::result(id, &wire.shape(result))
        }
        Ok(Err(error)) => jsonrpc::error(id, INVALID_PARAMS, &error.to_string()),
        Err(payload) => {
            let message = panic_message(&*payload);
            tracing::error!(prompt = prompt.name, message, "prompt panicked");
            jsonrpc::error(
                id,
                INTERNAL_ERROR,
                &format!("prompt `{}` panicked: {message}", prompt.name),
            )
        }
    }
}

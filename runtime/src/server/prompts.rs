//! `prompts/list` and `prompts/get`. They exist only when the server has a prompt; without one,
//! the methods are unknown, as the capability is not declared.

use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use futures_util::FutureExt as _;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::call::{Calls, Origin, Registered, Round, blocking};
use super::started::Step;
use crate::context::Context;
use crate::handler::BoxFuture;
use crate::handler::panic_message;
use crate::prompt::{Made, PromptArguments, PromptError, PromptHandler, PromptMessage};
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, Id, METHOD_NOT_FOUND, Reply};
use crate::registration::PromptRegistration;
use crate::registry::{Registry, prompt_descriptor as descriptor};
use crate::state::States;

/// What answering a prompts request needs.
pub(super) struct Answer<'a> {
    pub(super) registry: &'a Registry,
    pub(super) states: &'a Arc<States>,
    /// The names of the prompts disabled now.
    pub(super) disabled: &'a BTreeSet<String>,
    /// What makes a prompt's context, as for a tool call.
    pub(super) calls: &'a Calls,
    pub(super) origin: Origin<'a>,
    /// How long a 2026-07-28 client may cache the list.
    pub(super) ttl_ms: u64,
}

/// The answer to a prompts request: at once for a list or a plain `fn`, as a call for an
/// `async fn`. A list result in 2026-07-28 says how long (`ttl_ms`) it may be cached: the
/// prompts do not differ between clients.
pub(super) fn answer(served: Answer<'_>, id: Id, method: &str, params: &Value) -> Step {
    let Answer {
        registry,
        states,
        disabled,
        calls,
        origin,
        ttl_ms,
    } = served;
    let wire = origin.wire.clone();
    if registry.prompts().is_empty() {
        return Step::Reply(Reply::error(
            &id,
            METHOD_NOT_FOUND,
            &format!("method `{method}` is not supported"),
        ));
    }
    if method == "prompts/list" {
        return Step::Reply(list(registry, disabled, &id, params, &wire, ttl_ms));
    }
    let (prompt, arguments) = match request(registry, disabled, params) {
        Ok(found) => found,
        Err(message) => return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message)),
    };
    let asked = Value::Object(arguments.clone());
    let round = match Round::read(
        calls.state_key(),
        &wire,
        params,
        "prompts/get",
        prompt.name,
        &asked,
    ) {
        Ok(round) => round,
        Err(message) => return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message)),
    };
    let peer = Some(calls.peer(&origin, round.as_ref().map(Round::inputs)));
    let principal = origin.principal.clone();
    let context = |cancellation| {
        let server = calls.server().clone();
        Context::new(
            prompt.name,
            None,
            cancellation,
            peer,
            Arc::clone(states),
            server,
            principal.clone(),
        )
    };
    if let PromptHandler::Sync(handler) = prompt.handler {
        let ctx = context(CancellationToken::new());
        let made = panic::catch_unwind(AssertUnwindSafe(|| handler(&arguments, ctx)));
        return Step::Reply(reply(prompt, &id, &wire, made));
    }
    // The others are calls: cancelled as a tool call is.
    let registered = match Registered::new(origin.session, &id) {
        Ok(registered) => registered,
        Err(answer) => return Step::Reply(answer),
    };
    let ctx = context(registered.cancellation());
    let state_key = calls.state_key().clone();
    registered.run(async move {
        let made: BoxFuture<std::thread::Result<Made>> = match prompt.handler {
            PromptHandler::Async(handler) => {
                Box::pin(AssertUnwindSafe(handler(arguments, ctx)).catch_unwind())
            }
            PromptHandler::Blocking(handler) => {
                Box::pin(blocking(move || handler(&arguments, ctx)))
            }
            PromptHandler::Sync(_) => unreachable!("a plain prompt is answered at once"),
        };
        let answer = |made| reply(prompt, &id, &wire, made);
        Round::answer(round, made, &state_key, &id, &wire, answer).await
    })
}

/// Every prompt on one page.
fn list(
    registry: &Registry,
    disabled: &BTreeSet<String>,
    id: &Id,
    params: &Value,
    wire: &Wire,
    ttl_ms: u64,
) -> Reply {
    if let Some(cursor) = params.get("cursor").filter(|c| !c.is_null()) {
        return Reply::error(
            id,
            INVALID_PARAMS,
            &format!("invalid cursor {cursor}: this server lists every prompt on one page"),
        );
    }
    let prompts: Vec<Value> = registry
        .prompts()
        .iter()
        .filter(|p| !disabled.contains(p.name))
        .map(|p| descriptor(p))
        .collect();
    let result = json!({ "prompts": prompts });
    Reply::result(id, &wire.shape_cached(result, ttl_ms))
}

/// The prompt a `prompts/get` names, and its arguments: each a string the prompt takes.
fn request(
    registry: &Registry,
    disabled: &BTreeSet<String>,
    params: &Value,
) -> Result<(&'static PromptRegistration, PromptArguments), String> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err("`prompts/get` needs a `name` string".to_owned());
    };
    let Some(prompt) = registry.prompt(name).filter(|p| !disabled.contains(p.name)) else {
        let known: Vec<String> = registry
            .prompt_names()
            .filter(|name| !disabled.contains(*name))
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
) -> Reply {
    match made {
        Ok(Ok(messages)) => {
            let result = json!({ "description": prompt.description, "messages": messages });
            Reply::result(id, &wire.shape(result))
        }
        Ok(Err(error)) => Reply::error(id, INVALID_PARAMS, &error.to_string()),
        Err(payload) => {
            let message = panic_message(&*payload);
            tracing::error!(prompt = prompt.name, message, "prompt panicked");
            Reply::error(
                id,
                INTERNAL_ERROR,
                &format!("prompt `{}` panicked: {message}", prompt.name),
            )
        }
    }
}

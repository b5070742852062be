//! `prompts/list` and `prompts/get`. They exist only when the server has a prompt; without one,
//! the methods are unknown, as the capability is not declared.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::call::{Calls, Origin, Registered};
use super::pipeline::{BoxError, Call, Operation, Outcome, Refusal};
use super::round::Round;
use super::step::Step;
use crate::context::{Context, Limit};
use crate::prompt::PromptArguments;
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{INVALID_PARAMS, Id, METHOD_NOT_FOUND, Reply};
use crate::protocol::method::Method;
use crate::registration::PromptRegistration;
#[cfg(feature = "gateway")]
use crate::registry::MountedPrompt;
use crate::registry::Registry;
use crate::state::States;

/// A prompts request's answer, and what it needs: the prompts, what runs one, and where the
/// request comes from.
pub(super) struct PromptMethods<'a> {
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

/// The answer to a prompts request: at once for a list, as a call for a `prompts/get`. A list result in 2026-07-28 says how long (`ttl_ms`) it may be cached: the
/// prompts do not differ between clients.
pub(super) fn answer(served: PromptMethods<'_>, id: Id, method: Method, params: &Value) -> Step {
    let PromptMethods {
        registry,
        states,
        disabled,
        calls,
        origin,
        ttl_ms,
    } = served;
    let wire = origin.wire.clone();
    if !registry.has_prompts() {
        return Step::Reply(Reply::error(
            &id,
            METHOD_NOT_FOUND,
            &format!("method `{}` is not supported", method.name()),
        ));
    }
    if method == Method::ListPrompts {
        return Step::Reply(list(registry, disabled, &id, params, &wire, ttl_ms));
    }
    let (prompt, arguments) = match request(registry, disabled, params) {
        Ok(found) => found,
        Err(message) => return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message)),
    };
    let asked = Value::Object(arguments);
    let name = prompt.name();
    let round = match Round::read(&calls.state_key, &wire, params, "prompts/get", name, &asked) {
        Ok(round) => round,
        Err(message) => return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message)),
    };
    let registered = match Registered::new(origin.session, &id) {
        Ok(registered) => registered,
        Err(answer) => return Step::Reply(answer),
    };
    let peer = calls.peer(&origin, round.as_ref().map(Round::inputs));
    let ctx = Context::new(
        name,
        None,
        registered.cancellation(),
        Some(peer),
        Arc::clone(states),
        calls.server.clone(),
        origin.who.clone(),
    )
    .limited(calls.call_timeout.map(Limit::Call));
    let call = Call::new(Operation::GetPrompt, name, asked, ctx);
    calls.start(registered, call, round, id, wire, reply)
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
    let result = json!({ "prompts": registry.prompt_descriptors(disabled) });
    Reply::result(id, &wire.shape_cached(result, ttl_ms))
}

/// A prompt a `prompts/get` names: one of the server's own, or of a mounted server.
enum Named<'a> {
    Own(&'a PromptRegistration),
    #[cfg(feature = "gateway")]
    Mounted(Arc<MountedPrompt>),
}

impl Named<'_> {
    fn name(&self) -> &str {
        match self {
            Named::Own(prompt) => prompt.name,
            #[cfg(feature = "gateway")]
            Named::Mounted(prompt) => &prompt.wire,
        }
    }

    /// The names of the arguments it takes.
    fn arguments(&self) -> Vec<&str> {
        match self {
            Named::Own(prompt) => prompt.arguments.iter().map(|a| a.name).collect(),
            #[cfg(feature = "gateway")]
            Named::Mounted(prompt) => prompt.arguments.iter().map(String::as_str).collect(),
        }
    }
}

/// The prompt a `prompts/get` names, and its arguments: each a string the prompt takes.
fn request<'a>(
    registry: &'a Registry,
    disabled: &BTreeSet<String>,
    params: &Value,
) -> Result<(Named<'a>, PromptArguments), String> {
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err("`prompts/get` needs a `name` string".to_owned());
    };
    let found = registry.prompt(name).map(Named::Own);
    #[cfg(feature = "gateway")]
    let found = found.or_else(|| registry.mounted_prompt(name).map(Named::Mounted));
    let Some(prompt) = found.filter(|_| !disabled.contains(name)) else {
        let known: Vec<String> = registry
            .prompt_names()
            .into_iter()
            .filter(|name| !disabled.contains(name))
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
    let taken = prompt.arguments();
    if let Some(unknown) = arguments.keys().find(|key| !taken.contains(&key.as_str())) {
        let expected: Vec<String> = taken.iter().map(|name| format!("`{name}`")).collect();
        return Err(match expected.as_slice() {
            [] => format!(
                "prompt `{}` takes no arguments, and was given `{unknown}`",
                prompt.name()
            ),
            _ => format!(
                "unknown argument `{unknown}` for prompt `{}`; it takes {}",
                prompt.name(),
                expected.join(", ")
            ),
        });
    }
    Ok((prompt, arguments))
}

/// The reply to a `prompts/get` from what the pipeline gave: the messages and the prompt's
/// description, or the error that says why there are none.
fn reply(outcome: Result<Outcome, BoxError>, id: &Id, wire: &Wire) -> Reply {
    let refusal = match outcome {
        Ok(Outcome::Prompt {
            description,
            messages,
        }) => {
            let result = json!({ "description": description, "messages": messages });
            return Reply::result(id, &wire.shape(result));
        }
        Ok(other) => Refusal::mismatched(&other, "the prompt failed"),
        Err(error) => Refusal::from_error(error, "the prompt failed"),
    };
    refusal.reply(id, wire)
}

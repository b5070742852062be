//! `completion/complete`: the values a prompt argument's or a template variable's completer
//! suggests for what the user typed.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use serde_json::{Value, json};

use crate::completion::{Completer, Completion};
use crate::handler::panic_message;
use crate::live::{Disabled, Live};
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, Id, METHOD_NOT_FOUND, Reply};
use crate::registry::Registry;
use crate::state::States;
#[cfg(feature = "gateway")]
use {super::call::Registered, super::session::Session, super::step::Step, crate::sink::Answer};

/// The most values one completion sends, as the protocol has it.
const MAX_COMPLETIONS: usize = 100;

/// Whether any prompt argument or template variable has a completer: the `completions`
/// capability.
pub(super) fn completes(registry: &Registry) -> bool {
    let prompts = registry
        .prompts()
        .iter()
        .any(|p| p.arguments.iter().any(|a| a.complete.is_some()));
    let templates = registry.resources().templates().iter().any(|t| {
        t.registration
            .variables
            .iter()
            .any(|v| v.complete.is_some())
    });
    #[cfg(feature = "gateway")]
    let prompts = prompts || registry.completes_mounted_prompts();
    #[cfg(feature = "gateway")]
    let templates = templates || registry.mounted_resources().iter().any(|r| r.completes);
    prompts || templates
}

/// The answer to a `completion/complete` of an argument of a mounted server's prompt or a
/// variable of its resource template, which its server gives (none when it completes nothing);
/// `None` for any other.
#[cfg(feature = "gateway")]
pub(super) fn forwarded(
    registry: &Registry,
    live: &Live,
    session: &Arc<Session>,
    id: &Id,
    params: &Value,
    wire: &Wire,
) -> Option<Step> {
    let reference = params.get("ref")?;
    let mut asked = params.clone();
    let (completes, forward) = match reference.get("type").and_then(Value::as_str)? {
        "ref/prompt" => {
            let name = reference.get("name").and_then(Value::as_str)?;
            let prompt = registry
                .mounted_prompt(name)
                .filter(|_| !live.disabled().prompts.contains(name))?;
            asked["ref"]["name"] = json!(prompt.name);
            (prompt.completes, Arc::clone(&prompt.forward))
        }
        "ref/resource" => {
            let uri = reference.get("uri").and_then(Value::as_str)?;
            if registry.resources().template(uri).is_some() {
                return None;
            }
            let (mounted, upstream) = registry.mounted_resource(uri)?;
            asked["ref"]["uri"] = json!(upstream);
            (mounted.completes, Arc::clone(&mounted.forward))
        }
        _ => return None,
    };
    if !completes {
        let none = json!({ "completion": { "values": [], "total": 0, "hasMore": false } });
        return Some(Step::Reply(Reply::result(id, &wire.shape(none))));
    }
    let registered = match Registered::new(session, id) {
        Ok(registered) => registered,
        Err(reply) => return Some(Step::Reply(reply)),
    };
    if let Some(members) = asked.as_object_mut() {
        members.remove("_meta");
    }
    let completed = forward.complete(asked);
    let (id, wire) = (id.clone(), wire.clone());
    Some(Step::Call(Box::pin(async move {
        let reply = match completed.await {
            Ok(result) => Reply::result(&id, &wire.shape(result)),
            Err(refused) => match &refused.data {
                Some(data) => Reply::error_with_data(&id, refused.code, &refused.message, data),
                None => Reply::error(&id, refused.code, &refused.message),
            },
        };
        Some(Answer::of(registered, reply))
    })))
}

/// The answer to `completion/complete`: the values the completer suggests for what the user
/// typed, the first 100 of them, with how many there are. An argument or a variable without a
/// completer has none to suggest.
pub(super) fn complete(
    registry: &Registry,
    states: &Arc<States>,
    live: &Live,
    id: &Id,
    params: &Value,
    wire: &Wire,
) -> Reply {
    if !completes(registry) {
        return Reply::error(
            id,
            METHOD_NOT_FOUND,
            "method `completion/complete` is not supported",
        );
    }
    let argument = params.get("argument");
    let (Some(name), Some(value)) = (
        argument.and_then(|a| a.get("name")).and_then(Value::as_str),
        argument
            .and_then(|a| a.get("value"))
            .and_then(Value::as_str),
    ) else {
        return Reply::error(
            id,
            INVALID_PARAMS,
            "`argument` needs a `name` and a `value` string",
        );
    };
    let completer = match completer(registry, &live.disabled(), params.get("ref"), name) {
        Ok(completer) => completer,
        Err(message) => return Reply::error(id, INVALID_PARAMS, &message),
    };
    let values = match completer {
        Some(completer) => {
            let request = Completion {
                argument: name.to_owned(),
                value: value.to_owned(),
                arguments: params
                    .pointer("/context/arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default(),
                states: Arc::clone(states),
            };
            match panic::catch_unwind(AssertUnwindSafe(|| completer(&request))) {
                Ok(values) => values,
                Err(payload) => {
                    let message = panic_message(&*payload);
                    tracing::error!(argument = name, message, "completer panicked");
                    return Reply::error(
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
    Reply::result(id, &wire.shape(result))
}

/// The completer of argument `name` of what `reference` names (`ref/prompt` by name,
/// `ref/resource` by URI template), if it has one; `Err` says why the reference does not hold.
fn completer(
    registry: &Registry,
    disabled: &Disabled,
    reference: Option<&Value>,
    name: &str,
) -> Result<Option<Completer>, String> {
    let field = |key: &str| reference.and_then(|r| r.get(key)).and_then(Value::as_str);
    match field("type") {
        Some("ref/prompt") => {
            let Some(prompt_name) = field("name") else {
                return Err("`ref` of type `ref/prompt` needs a `name` string".to_owned());
            };
            let prompt = registry
                .prompt(prompt_name)
                .filter(|p| !disabled.prompts.contains(p.name));
            let Some(prompt) = prompt else {
                return Err(format!("unknown prompt `{prompt_name}`"));
            };
            match prompt.arguments.iter().find(|a| a.name == name) {
                Some(argument) => Ok(argument.complete),
                None => Err(format!("prompt `{prompt_name}` has no argument `{name}`")),
            }
        }
        Some("ref/resource") => {
            let Some(uri) = field("uri") else {
                return Err("`ref` of type `ref/resource` needs a `uri` string".to_owned());
            };
            let template = registry
                .resources()
                .template(uri)
                .filter(|t| !disabled.resources.contains(t.registration.uri));
            let Some(template) = template else {
                let known: Vec<String> = registry
                    .resources()
                    .templates()
                    .iter()
                    .map(|t| t.registration.uri)
                    .filter(|uri| !disabled.resources.contains(*uri))
                    .map(|uri| format!("`{uri}`"))
                    .collect();
                return Err(match known.as_slice() {
                    [] => format!(
                        "unknown resource template `{uri}`: this server has no resource templates"
                    ),
                    known => format!(
                        "unknown resource template `{uri}`; this server has {}",
                        known.join(", ")
                    ),
                });
            };
            match template
                .registration
                .variables
                .iter()
                .find(|v| v.name == name)
            {
                Some(variable) => Ok(variable.complete),
                None => Err(format!(
                    "resource template `{uri}` has no variable `{name}`"
                )),
            }
        }
        _ => Err(
            "`ref` must be `{\"type\": \"ref/prompt\", \"name\": ...}` or `{\"type\": \
             \"ref/resource\", \"uri\": ...}`"
                .to_owned(),
        ),
    }
}

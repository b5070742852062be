//! `tools/call`: which tool a call runs (by name, or through the progressive catalog's
//! meta-tools), its arguments checked, and what it produced shaped into the `CallToolResult` of
//! its era.

use std::sync::Arc;

use serde_json::{Value, json};

use super::call::{Calls, Origin, Registered};
use super::pipeline::{BoxError, Call, Operation, Outcome, tool_result};
use super::round::Round;
use super::step::Step;
use super::tasks::{self, Mode};
use crate::apps;
use crate::catalog::{CALL_TOOL, SEARCH_TOOL};
use crate::content::ToolResult;
use crate::context::{Context, Limit, Peer};
use crate::protocol::jsonrpc::{INVALID_PARAMS, Id, MISSING_CLIENT_CAPABILITY, Reply};
use crate::protocol::{PROGRESS_TOKEN, Wire};
use crate::registry::Tool;
use crate::schema::check::problem_list;
use crate::tasks::Job;

/// Why a `tools/call` does not run a tool.
enum NotRun {
    /// A malformed request or an unknown tool: a JSON-RPC error.
    Protocol(String),
    /// A tool for MCP Apps views, called by a client that did not declare the extension: -32602,
    /// or in 2026-07-28 the error that names a missing client capability.
    Capability(String),
    /// An answer for the model: the progressive catalog's search, or a `call_tool` that cannot
    /// run what it names.
    Answered(ToolResult),
}

impl Calls {
    /// Handles a `tools/call`: an answer at once for a call that runs nothing, or the call to
    /// run through the pipeline alongside other messages.
    pub(super) fn call_tool(&self, origin: Origin<'_>, id: Id, mut params: Value) -> Step {
        let caller = &origin.caller;
        let wire = origin.wire.clone();
        let session = origin.session;
        let (tool, arguments) = match self.resolve(&mut params, apps::declared_by(&caller.client)) {
            Ok(found) => found,
            Err(NotRun::Protocol(message)) => {
                return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message));
            }
            Err(NotRun::Capability(message)) => {
                let code = match wire {
                    Wire::Handshake => INVALID_PARAMS,
                    Wire::Stateless { .. } => MISSING_CLIENT_CAPABILITY,
                };
                return Step::Reply(Reply::error(&id, code, &message));
            }
            Err(NotRun::Answered(result)) => return Step::Reply(result_reply(result, &id, &wire)),
        };
        let mode = match tasks::mode(tool, &params, &wire, &caller.client) {
            Ok(mode) => mode,
            Err(refusal) => return Step::Reply(refusal.reply(&id, &wire)),
        };
        let name = tool.wire_name();
        if let Err(problems) = tool.check_arguments(&arguments) {
            let text = problem_list(&format!("invalid arguments for tool `{name}`"), &problems);
            return Step::Reply(result_reply(ToolResult::error(text), &id, &wire));
        }
        let round = match Round::read(
            &self.state_key,
            &wire,
            &params,
            "tools/call",
            name,
            &arguments,
        ) {
            Ok(round) => round,
            Err(message) => return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message)),
        };

        let registered = match Registered::new(session, &id) {
            Ok(registered) => registered,
            Err(reply) => return Step::Reply(reply),
        };
        let peer = self.peer(&origin, round.as_ref().map(Round::inputs));
        let progress_token = params
            .get("_meta")
            .and_then(|meta| meta.get(PROGRESS_TOKEN))
            .cloned();
        if !matches!(mode, Mode::Call) {
            // Progress is not told of a task in 2026-07-28: its status is read instead.
            let progress_token = progress_token.filter(|_| !wire.is_stateless());
            let (states, server) = (Arc::clone(&self.states), self.server.clone());
            let who = origin.who.clone();
            let tool_name = tool.name();
            let name = name.to_owned();
            let called = name.clone();
            let call = move |cancellation, job: Arc<Job>| {
                let ttl = Limit::Task(job.ttl());
                let peer = Peer {
                    task: Some(job),
                    ..peer
                };
                let ctx = Context::new(
                    tool_name,
                    progress_token,
                    cancellation,
                    Some(peer),
                    states,
                    server,
                    who,
                )
                .limited(Some(ttl));
                Call::new(Operation::CallTool, called, arguments, ctx)
            };
            return self.start_task(&origin, registered, mode, call, round, id, name);
        }
        let ctx = Context::new(
            tool.name(),
            progress_token,
            registered.cancellation(),
            Some(peer),
            Arc::clone(&self.states),
            self.server.clone(),
            origin.who.clone(),
        )
        .limited(tool.timeout().or(self.call_timeout).map(Limit::Call));
        // Kept to read, once the tool has returned, what its requests to the client met.
        let called = ctx.clone();
        let name = name.to_owned();
        let call = Call::new(Operation::CallTool, name.clone(), arguments, ctx);
        let answer =
            move |outcome, id: &Id, wire: &Wire| tool_reply(outcome, &called, id, wire, &name);
        self.start(registered, call, round, id, wire, answer)
    }

    /// The tool a `tools/call` with these `params` runs (the one it names, or the one
    /// `call_tool` names in the progressive catalog) and its scopes, when it has some.
    #[cfg(feature = "http")]
    pub(super) fn scopes(&self, params: &Value) -> Option<(String, &'static [&'static str])> {
        let named = params.get("name").and_then(Value::as_str);
        let name = match named {
            Some(CALL_TOOL) if self.progressive.is_some() => params
                .get("arguments")
                .and_then(|a| a.get("name"))
                .and_then(Value::as_str),
            named => named,
        };
        // A tool disabled now is checked too: it may be enabled before the call runs.
        let tool = name.and_then(|name| self.registry.get(name))?;
        (!tool.scopes().is_empty()).then(|| (tool.wire_name().to_owned(), tool.scopes()))
    }

    /// The tool a `tools/call` runs, and its arguments: the named tool, or in progressive mode
    /// the tool `call_tool` names. `search_tools` answers here, at once.
    fn resolve(&self, params: &mut Value, apps: bool) -> Result<(&Tool, Value), NotRun> {
        let arguments = params.get_mut("arguments").map(Value::take);
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(NotRun::Protocol(
                "`tools/call` needs a `name` string".to_owned(),
            ));
        };
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Default::default()),
            Some(args @ Value::Object(_)) => args,
            Some(_) => {
                return Err(NotRun::Protocol("`arguments` must be an object".to_owned()));
            }
        };
        // A view-only tool is called by the host for one of the server's views: never through
        // the catalog, which is the model's way in, nor by a client that has no views.
        let for_views = |tool: &Tool| {
            format!(
                "tool `{}` is called only by this server's MCP Apps views (its visibility is \
                 [\"app\"]), ",
                tool.wire_name()
            )
        };
        let direct = |tool: &'_ Tool| {
            if tool.is_app_only() && !apps {
                Err(NotRun::Capability(format!(
                    "{}and this client has not declared the extension \
                     (`capabilities.extensions[\"{}\"]`)",
                    for_views(tool),
                    apps::EXTENSION_ID
                )))
            } else {
                Ok(())
            }
        };
        let disabled = self.server.live().disabled();
        // A disabled tool is unknown until it is enabled again, and one held back too.
        let get = |name: &str| self.registry.get(name).filter(|_| !disabled.tool_off(name));
        // A mounted server's tool held back says why: since the start, or since its server
        // changed it.
        let held = |name: &str| {
            disabled
                .held
                .get(name)
                .map(String::as_str)
                .or_else(|| self.registry.held_back(name))
                .map(str::to_owned)
        };
        let Some(progressive) = &self.progressive else {
            return match get(name) {
                Some(tool) => direct(tool).map(|()| (tool, arguments)),
                None => Err(NotRun::Protocol(
                    held(name).unwrap_or_else(|| format!("unknown tool `{name}`")),
                )),
            };
        };
        let unknown = |name: &str| {
            held(name).unwrap_or_else(|| {
                format!("unknown tool `{name}`: `{SEARCH_TOOL}` finds the tools this server has")
            })
        };
        match name {
            SEARCH_TOOL => Err(NotRun::Answered(progressive.search(arguments, &disabled))),
            CALL_TOOL => {
                let (name, arguments) = progressive
                    .unwrap_call(arguments)
                    .map_err(NotRun::Answered)?;
                match get(&name) {
                    Some(tool) if tool.is_app_only() => Err(NotRun::Answered(ToolResult::error(
                        format!("{}not through `{CALL_TOOL}`", for_views(tool)),
                    ))),
                    Some(tool) => Ok((tool, arguments)),
                    None => Err(NotRun::Answered(ToolResult::error(unknown(&name)))),
                }
            }
            name => match get(name) {
                Some(tool) => direct(tool).map(|()| (tool, arguments)),
                None => Err(NotRun::Protocol(unknown(name))),
            },
        }
    }
}

/// The reply to a tool call of `called` from what the pipeline gave: its result, or in
/// 2026-07-28 the error that names a capability the tool needed and the client had not
/// declared; a refusal as the error it describes.
fn tool_reply(
    outcome: Result<Outcome, BoxError>,
    called: &Context,
    id: &Id,
    wire: &Wire,
    name: &str,
) -> Reply {
    let result = match tool_result(outcome, name) {
        Ok(result) => result,
        Err(refusal) => return refusal.reply(id, wire),
    };
    match called.refused_capability() {
        Some(capability) if wire.is_stateless() && result.is_error() => {
            missing_capability(id, name, capability)
        }
        _ => result_reply(result, id, wire),
    }
}

/// A tool's result as the request's era has it.
fn result_reply(result: ToolResult, id: &Id, wire: &Wire) -> Reply {
    let failed = result.is_error();
    let reply = wire.reply(id, &result, result.is_plain());
    if failed { reply.of_tool_error() } else { reply }
}

/// The answer, in 2026-07-28, to a call that failed after the tool asked the client for what
/// needs a capability the client did not declare.
fn missing_capability(id: &Id, tool: &str, capability: &str) -> Reply {
    Reply::error_with_data(
        id,
        MISSING_CLIENT_CAPABILITY,
        &format!(
            "tool `{tool}` needs the client's `{capability}` capability, which this request's \
             `io.modelcontextprotocol/clientCapabilities` does not declare"
        ),
        &json!({ "requiredCapabilities": { capability: {} } }),
    )
}

//! `resources/list`, `resources/templates/list`, `resources/read`, `resources/subscribe` and
//! `resources/unsubscribe`: the MCP Apps views and the resources of `#[mcp_resource]`. They
//! exist only when the server has a resource; without one, the methods are unknown, as the
//! capability is not declared.

use std::collections::BTreeSet;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;

use futures_util::FutureExt as _;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::call::{Registered, blocking};
use super::session::{MAX_SUBSCRIPTIONS, Session};
use super::started::Step;
use crate::auth::Principal;
use crate::context::Context;
use crate::handler::panic_message;
use crate::live::ServerHandle;
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{
    INTERNAL_ERROR, INVALID_PARAMS, Id, METHOD_NOT_FOUND, RESOURCE_NOT_FOUND, Reply,
};
use crate::registration::ResourceRegistration;
use crate::registry::{Fixed, Found, Registry, Template};
use crate::resource::{Read, ResourceHandler, ResourceRequest};
use crate::state::States;

/// Why a resources request has no result: a JSON-RPC error's code, message and data.
struct Failure {
    code: i64,
    message: String,
    data: Option<Value>,
}

impl Failure {
    fn invalid(message: String) -> Failure {
        Failure {
            code: INVALID_PARAMS,
            message,
            data: None,
        }
    }

    /// The URI names no resource: "resource not found" in the handshake era, -32602 in
    /// 2026-07-28, with the URI in `data` in both.
    fn not_found(uri: &str, message: String, wire: &Wire) -> Failure {
        Failure {
            code: match wire {
                Wire::Handshake => RESOURCE_NOT_FOUND,
                Wire::Stateless { .. } => INVALID_PARAMS,
            },
            message,
            data: Some(json!({ "uri": uri })),
        }
    }

    fn reply(self, id: &Id) -> Reply {
        match self.data {
            Some(data) => Reply::error_with_data(id, self.code, &self.message, &data),
            None => Reply::error(id, self.code, &self.message),
        }
    }
}

/// What answering a resources request needs.
pub(super) struct Answer<'a> {
    pub(super) registry: &'a Registry,
    pub(super) states: &'a Arc<States>,
    /// The URIs (and URI templates) of the resources disabled now.
    pub(super) disabled: &'a BTreeSet<String>,
    pub(super) session: &'a Arc<Session>,
    pub(super) wire: Wire,
    /// Who sent the request, as its access token says.
    pub(super) principal: Option<Arc<Principal>>,
    /// How long a 2026-07-28 client may cache what does not change while the server runs.
    pub(super) ttl_ms: u64,
}

impl Answer<'_> {
    /// The answer to a resources request: at once for a list, a view or a plain `fn`, as a
    /// call for an `async fn`. Every result in 2026-07-28, a read's included, says how long it
    /// may be cached, and by whom: anyone, as resources do not differ between clients; a
    /// resource that changes is cached for no time.
    pub(super) fn answer(self, id: Id, method: &str, params: &Value) -> Step {
        let resources = self.registry.resources();
        if resources.is_empty() {
            return Step::Reply(Reply::error(
                &id,
                METHOD_NOT_FOUND,
                &format!("method `{method}` is not supported"),
            ));
        }
        let outcome = match method {
            "resources/list" => self.list(params),
            "resources/templates/list" => self.templates(params),
            "resources/subscribe" | "resources/unsubscribe" => {
                self.subscription(method == "resources/subscribe", params)
            }
            _ => return self.read(id, params),
        };
        Step::Reply(match outcome {
            Ok(result) => Reply::result(&id, &self.shape(result, true)),
            Err(failure) => failure.reply(&id),
        })
    }

    /// A result as the request's era has it, with caching hints in 2026-07-28.
    fn shape(&self, result: Value, unchanging: bool) -> Value {
        let ttl = if unchanging { self.ttl_ms } else { 0 };
        self.wire.shape_cached(result, ttl)
    }

    /// Every resource of a fixed URI, on one page.
    fn list(&self, params: &Value) -> Result<Value, Failure> {
        one_page(params, "resource")?;
        let resources: Vec<Value> = self
            .registry
            .resources()
            .fixed()
            .iter()
            .filter(|resource| !self.disabled.contains(resource.uri()))
            .map(Fixed::descriptor)
            .collect();
        Ok(json!({ "resources": resources }))
    }

    /// Every template, on one page, in the order of their URI templates.
    fn templates(&self, params: &Value) -> Result<Value, Failure> {
        one_page(params, "resource template")?;
        let templates: Vec<Value> = self
            .registry
            .resources()
            .templates_by_uri()
            .filter(|t| !self.disabled.contains(t.registration.uri))
            .map(Template::descriptor)
            .collect();
        Ok(json!({ "resourceTemplates": templates }))
    }

    /// `resources/subscribe` (or, when `subscribe` is false, `resources/unsubscribe`) of a
    /// resource that says it changes.
    fn subscription(&self, subscribe: bool, params: &Value) -> Result<Value, Failure> {
        let method = if subscribe {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        let uri = uri_of(method, params)?;
        let Some(found) = self.find(uri) else {
            return Err(Failure::not_found(
                uri,
                format!("resource not found: `{uri}`; {}", self.known()),
                &self.wire,
            ));
        };
        if !found.changes() {
            return Err(Failure::invalid(format!(
                "`{method}`: resource `{uri}` does not change while the server runs, so there is \
                 nothing to be told about it"
            )));
        }
        if subscribe {
            if !self.session.subscribe(uri) {
                return Err(Failure::invalid(format!(
                    "`resources/subscribe`: this session follows {MAX_SUBSCRIPTIONS} resources \
                     already, the most it may; unsubscribe from one first"
                )));
            }
        } else {
            self.session.unsubscribe(uri);
        }
        Ok(json!({}))
    }

    /// The answer to `resources/read`.
    fn read(self, id: Id, params: &Value) -> Step {
        let uri = match uri_of("resources/read", params) {
            Ok(uri) => uri.to_owned(),
            Err(failure) => return Step::Reply(failure.reply(&id)),
        };
        let Some(found) = self.find(&uri) else {
            let message = format!("resource not found: `{uri}`; {}", self.known());
            return Step::Reply(Failure::not_found(&uri, message, &self.wire).reply(&id));
        };
        let (resource, variables) = match found {
            Found::Fixed(Fixed::View(view)) => {
                let result = self.shape(view.resource.read(), true);
                return Step::Reply(Reply::result(&id, &result));
            }
            Found::Fixed(Fixed::Function(resource)) => (resource, Vec::new()),
            Found::Template(template, variables) => (template.registration, variables),
        };
        let request = ResourceRequest { uri, variables };
        let states = Arc::clone(self.states);
        let principal = self.principal.clone();
        let context = |cancellation| {
            let server = ServerHandle::default();
            Context::new(
                resource.name,
                None,
                cancellation,
                None,
                states,
                server,
                principal,
            )
        };
        let answer = Contents {
            wire: self.wire.clone(),
            ttl_ms: self.ttl_ms,
        };
        if let ResourceHandler::Sync(handler) = resource.handler {
            let ctx = context(CancellationToken::new());
            let read = panic::catch_unwind(AssertUnwindSafe(|| handler(&request, ctx)));
            return Step::Reply(answer.reply(resource, &id, &request.uri, read));
        }
        // The others are calls: cancelled as a tool call is.
        let registered = match Registered::new(self.session, &id) {
            Ok(registered) => registered,
            Err(reply) => return Step::Reply(reply),
        };
        let ctx = context(registered.cancellation());
        registered.run(async move {
            let uri = request.uri.clone();
            let read = match resource.handler {
                ResourceHandler::Async(handler) => {
                    AssertUnwindSafe(handler(request, ctx)).catch_unwind().await
                }
                ResourceHandler::Blocking(handler) => {
                    blocking(move || handler(&request, ctx)).await
                }
                ResourceHandler::Sync(_) => unreachable!("a plain resource is read at once"),
            };
            answer.reply(resource, &id, &uri, read)
        })
    }

    /// What `uri` names, unless it is disabled.
    fn find(&self, uri: &str) -> Option<Found<'_>> {
        let found = self.registry.resources().find(uri)?;
        let declared = match &found {
            Found::Fixed(resource) => resource.uri(),
            Found::Template(template, _) => template.registration.uri,
        };
        (!self.disabled.contains(declared)).then_some(found)
    }

    /// What the server has, for a "not found" message.
    fn known(&self) -> String {
        let resources = self.registry.resources();
        let fixed = resources.fixed().iter().map(Fixed::uri);
        let templates = resources.templates().iter().map(|t| t.registration.uri);
        let known: Vec<String> = fixed
            .chain(templates)
            .filter(|uri| !self.disabled.contains(*uri))
            .map(|uri| format!("`{uri}`"))
            .collect();
        format!("this server has {}", known.join(", "))
    }
}

/// What a read's answer needs once the function has run, which may be later, on a task.
struct Contents {
    wire: Wire,
    ttl_ms: u64,
}

impl Contents {
    /// The response to a `resources/read` of `resource` at `uri`: its contents, or the error
    /// that says why there are none.
    fn reply(
        self,
        resource: &ResourceRegistration,
        id: &Id,
        uri: &str,
        read: std::thread::Result<Read>,
    ) -> Reply {
        match read {
            Ok(Ok(mut contents)) => {
                for content in &mut contents {
                    content.complete(uri, resource.mime_type);
                }
                let result = json!({ "contents": contents });
                let ttl = if resource.changes { 0 } else { self.ttl_ms };
                Reply::result(id, &self.wire.shape_cached(result, ttl))
            }
            Ok(Err(error)) if error.is_not_found() => Failure::not_found(
                uri,
                format!("resource not found: `{uri}` ({}): {error}", resource.uri),
                &self.wire,
            )
            .reply(id),
            Ok(Err(error)) => Reply::error_with_data(
                id,
                INTERNAL_ERROR,
                &format!("resource `{uri}` could not be read: {error}"),
                &json!({ "uri": uri }),
            ),
            Err(payload) => {
                let message = panic_message(&*payload);
                tracing::error!(resource = resource.uri, uri, message, "resource panicked");
                Reply::error_with_data(
                    id,
                    INTERNAL_ERROR,
                    &format!("resource `{uri}` panicked while being read: {message}"),
                    &json!({ "uri": uri }),
                )
            }
        }
    }
}

/// Refuses a cursor: every list is on one page.
fn one_page(params: &Value, what: &str) -> Result<(), Failure> {
    match params.get("cursor").filter(|c| !c.is_null()) {
        Some(cursor) => Err(Failure::invalid(format!(
            "invalid cursor {cursor}: this server lists every {what} on one page"
        ))),
        None => Ok(()),
    }
}

/// The `uri` a request of `method` names.
fn uri_of<'p>(method: &str, params: &'p Value) -> Result<&'p str, Failure> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| Failure::invalid(format!("`{method}` needs a `uri` string")))
}

//! `resources/list`, `resources/templates/list`, `resources/read`, `resources/subscribe` and
//! `resources/unsubscribe`: the MCP Apps views and the resources of `#[mcp_resource]`. They
//! exist only when the server has a resource; without one, the methods are unknown, as the
//! capability is not declared.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::call::{Calls, Registered};
use super::pipeline::{BoxError, Call, Operation, Outcome, Refusal};
use super::session::{MAX_SUBSCRIPTIONS, Session};
use super::step::Step;
use crate::context::{Context, Limit, Who};
use crate::live::ServerHandle;
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{Id, METHOD_NOT_FOUND, Reply};
use crate::protocol::method::Method;
#[cfg(feature = "gateway")]
use crate::registry::MountedResources;
use crate::registry::{Fixed, Found, Registry, Resolved, Template};
#[cfg(feature = "gateway")]
use crate::sink::Answer;
use crate::state::States;

/// A resources request's answer, and what it needs: the resources, the session it comes from, and
/// its era.
pub(super) struct ResourceMethods<'a> {
    pub(super) registry: &'a Registry,
    pub(super) states: &'a Arc<States>,
    /// What runs a read.
    pub(super) calls: &'a Calls,
    /// The URIs (and URI templates) of the resources disabled now.
    pub(super) disabled: &'a BTreeSet<String>,
    pub(super) session: &'a Arc<Session>,
    pub(super) wire: Wire,
    /// Who sent the request.
    pub(super) who: Who,
    /// How long a 2026-07-28 client may cache what does not change while the server runs.
    pub(super) ttl_ms: u64,
}

impl<'a> ResourceMethods<'a> {
    /// The answer to a resources request: at once for a list or a subscription, as a call for a
    /// read. Every result in 2026-07-28, a read's included, says how long it
    /// may be cached, and by whom: anyone, as resources do not differ between clients; a
    /// resource that changes is cached for no time.
    pub(super) fn answer(self, id: Id, method: Method, params: &Value) -> Step {
        if !self.registry.has_resources() {
            return Step::Reply(Reply::error(
                &id,
                METHOD_NOT_FOUND,
                &format!("method `{}` is not supported", method.name()),
            ));
        }
        #[cfg(feature = "gateway")]
        if method == Method::Subscribe
            && let Some((mounted, upstream)) = self.mounted(params)
        {
            return self.follow_mounted(id, params, mounted, upstream);
        }
        let outcome = match method {
            Method::ListResources => self.list(params),
            Method::ListResourceTemplates => self.templates(params),
            Method::Subscribe => self.subscription(true, params),
            Method::Unsubscribe => self.subscription(false, params),
            _ => return self.read(id, params),
        };
        Step::Reply(match outcome {
            Ok(result) => Reply::result(&id, &self.shape(result, true)),
            Err(refusal) => refusal.reply(&id, &self.wire),
        })
    }

    /// A result as the request's era has it, with caching hints in 2026-07-28.
    fn shape(&self, result: Value, unchanging: bool) -> Value {
        let ttl = if unchanging { self.ttl_ms } else { 0 };
        self.wire.shape_cached(result, ttl)
    }

    /// Every resource of a fixed URI, on one page: its own, then each mounted server's.
    fn list(&self, params: &Value) -> Result<Value, Refusal> {
        one_page(params, "resource")?;
        #[allow(unused_mut, reason = "mounted resources join them with the gateway")]
        let mut resources: Vec<Value> = self
            .registry
            .resources()
            .fixed()
            .iter()
            .filter(|resource| !self.disabled.contains(resource.uri()))
            .map(Fixed::descriptor)
            .collect();
        #[cfg(feature = "gateway")]
        for mounted in self.registry.mounted_resources() {
            resources.extend(mounted.listed.resources());
        }
        Ok(json!({ "resources": resources }))
    }

    /// Every template, on one page, in the order of their URI templates: its own, then each
    /// mounted server's.
    fn templates(&self, params: &Value) -> Result<Value, Refusal> {
        one_page(params, "resource template")?;
        #[allow(unused_mut, reason = "mounted templates join them with the gateway")]
        let mut templates: Vec<Value> = self
            .registry
            .resources()
            .templates_by_uri()
            .filter(|t| !self.disabled.contains(t.registration.uri))
            .map(Template::descriptor)
            .collect();
        #[cfg(feature = "gateway")]
        for mounted in self.registry.mounted_resources() {
            templates.extend(mounted.listed.templates());
        }
        Ok(json!({ "resourceTemplates": templates }))
    }

    /// The mounted server the `uri` of `params` names, and the URI on it, when none of the
    /// server's own resources has that URI.
    #[cfg(feature = "gateway")]
    fn mounted(&self, params: &Value) -> Option<(&'a MountedResources, String)> {
        let uri = params.get("uri").and_then(Value::as_str)?;
        match self.registry.resolve_resource(uri)? {
            Resolved::Mounted(mounted, upstream) => Some((mounted, upstream)),
            Resolved::Own(_) => None,
        }
    }

    /// `resources/subscribe` of a mounted server's resource: its server asked to tell of its
    /// changes (once for every client here), then this session told of them.
    #[cfg(feature = "gateway")]
    fn follow_mounted(
        self,
        id: Id,
        params: &Value,
        mounted: &MountedResources,
        upstream: String,
    ) -> Step {
        let uri = params["uri"].as_str().unwrap_or_default().to_owned();
        if !mounted.subscribes {
            let refusal = Refusal::invalid(format!(
                "`resources/subscribe`: `{}`, the server of `{uri}`, does not tell of changes \
                 to its resources",
                mounted.mount
            ));
            return Step::Reply(refusal.reply(&id, &self.wire));
        }
        let registered = match Registered::new(self.session, &id) {
            Ok(registered) => registered,
            Err(reply) => return Step::Reply(reply),
        };
        let following = mounted.forward.follow(&upstream);
        let session = Arc::clone(self.session);
        let wire = self.wire;
        Step::Call(Box::pin(async move {
            let reply = match following.await {
                Ok(()) if session.subscribe(&uri) => Reply::result(&id, &wire.shape(json!({}))),
                Ok(()) => Refusal::invalid(format!(
                    "`resources/subscribe`: this session follows {MAX_SUBSCRIPTIONS} resources \
                     already, the most it may; unsubscribe from one first"
                ))
                .reply(&id, &wire),
                Err(refused) => match &refused.data {
                    Some(data) => Reply::error_with_data(&id, refused.code, &refused.message, data),
                    None => Reply::error(&id, refused.code, &refused.message),
                },
            };
            Some(Answer::of(registered, reply))
        }))
    }

    /// `resources/subscribe` (or, when `subscribe` is false, `resources/unsubscribe`) of a
    /// resource that says it changes.
    fn subscription(&self, subscribe: bool, params: &Value) -> Result<Value, Refusal> {
        let method = if subscribe {
            "resources/subscribe"
        } else {
            "resources/unsubscribe"
        };
        let uri = uri_of(method, params)?;
        let Some(found) = self.find(uri) else {
            return Err(Refusal::resource_not_found(
                uri,
                format!("resource not found: `{uri}`; {}", self.known()),
            ));
        };
        if !found.changes() {
            return Err(Refusal::invalid(format!(
                "`{method}`: resource `{uri}` does not change while the server runs, so there is \
                 nothing to be told about it"
            )));
        }
        if subscribe {
            if !self.session.subscribe(uri) {
                return Err(Refusal::invalid(format!(
                    "`resources/subscribe`: this session follows {MAX_SUBSCRIPTIONS} resources \
                     already, the most it may; unsubscribe from one first"
                )));
            }
        } else {
            self.session.unsubscribe(uri);
        }
        Ok(json!({}))
    }

    /// The answer to `resources/read`: the resource read through the pipeline.
    fn read(self, id: Id, params: &Value) -> Step {
        let uri = match uri_of("resources/read", params) {
            Ok(uri) => uri.to_owned(),
            Err(refusal) => return Step::Reply(refusal.reply(&id, &self.wire)),
        };
        let found = match self.registry.resolve_resource(&uri) {
            Some(Resolved::Own(found)) => self.enabled(found),
            #[cfg(feature = "gateway")]
            Some(Resolved::Mounted(mounted, _)) => {
                // Whether it changes is its server's to know: it is cached for no time.
                let mount = Arc::clone(&mounted.mount);
                return self.start_read(id, uri, &mount, (Value::Object(Map::new()), true));
            }
            None => None,
        };
        let Some(found) = found else {
            let message = format!("resource not found: `{uri}`; {}", self.known());
            let refusal = Refusal::resource_not_found(&uri, message);
            return Step::Reply(refusal.reply(&id, &self.wire));
        };
        let (name, changes, variables) = match &found {
            Found::Fixed(Fixed::View(view)) => (view.resource.uri(), false, Map::new()),
            Found::Fixed(Fixed::Function(resource)) => {
                (resource.name, resource.changes, Map::new())
            }
            Found::Template(template, variables) => (
                template.registration.name,
                template.registration.changes,
                variables
                    .iter()
                    .map(|(name, value)| ((*name).to_owned(), Value::from(value.as_str())))
                    .collect(),
            ),
        };
        self.start_read(id, uri, name, (Value::Object(variables), changes))
    }

    /// Starts the read of `uri`, of the resource `name` (a mounted server's: its mount's), with
    /// its template's `variables` through the pipeline; a resource that `changes` is cached for
    /// no time.
    fn start_read(
        self,
        id: Id,
        uri: String,
        name: &str,
        (variables, changes): (Value, bool),
    ) -> Step {
        let registered = match Registered::new(self.session, &id) {
            Ok(registered) => registered,
            Err(reply) => return Step::Reply(reply),
        };
        let ctx = Context::new(
            name,
            None,
            registered.cancellation(),
            None,
            Arc::clone(self.states),
            ServerHandle::default(),
            self.who.clone(),
        )
        .limited(self.calls.call_timeout.map(Limit::Call));
        let call = Call::new(Operation::ReadResource, uri, variables, ctx);
        // A resource that changes is cached for no time.
        let ttl_ms = if changes { 0 } else { self.ttl_ms };
        let answer = move |outcome, id: &Id, wire: &Wire| contents_reply(outcome, id, wire, ttl_ms);
        self.calls
            .start(registered, call, None, id, self.wire, answer)
    }

    /// What `uri` names of the server's own, unless it is disabled.
    fn find(&self, uri: &str) -> Option<Found<'a>> {
        self.enabled(self.registry.resources().find(uri)?)
    }

    /// What was `found`, unless it is disabled.
    fn enabled(&self, found: Found<'a>) -> Option<Found<'a>> {
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
        let own = known.join(", ");
        #[cfg(feature = "gateway")]
        let own = self.with_mounts(own);
        format!("this server has {own}")
    }

    /// `own`, what the server has of its own, with what its mounted servers have.
    #[cfg(feature = "gateway")]
    fn with_mounts(&self, own: String) -> String {
        let mounts: Vec<String> = self
            .registry
            .mounted_resources()
            .iter()
            .map(|r| format!("`{}`", r.mount))
            .collect();
        if mounts.is_empty() {
            return own;
        }
        let mounted = format!(
            "the resources of the servers mounted as {}, each at `scheme://<mount>/...`",
            mounts.join(", ")
        );
        if own.is_empty() {
            mounted
        } else {
            format!("{own}; and {mounted}")
        }
    }
}

/// The reply to a `resources/read` from what the pipeline gave: the contents, which a client of
/// 2026-07-28 may cache for `ttl_ms`, or the error that says why there are none.
fn contents_reply(outcome: Result<Outcome, BoxError>, id: &Id, wire: &Wire, ttl_ms: u64) -> Reply {
    let refusal = match outcome {
        Ok(Outcome::Resource { contents }) => {
            let result = json!({ "contents": contents });
            return Reply::result(id, &wire.shape_cached(result, ttl_ms));
        }
        Ok(other) => Refusal::mismatched(&other, "the read failed"),
        Err(error) => Refusal::from_error(error, "the read failed"),
    };
    refusal.reply(id, wire)
}

/// Refuses a cursor: every list is on one page.
fn one_page(params: &Value, what: &str) -> Result<(), Refusal> {
    match params.get("cursor").filter(|c| !c.is_null()) {
        Some(cursor) => Err(Refusal::invalid(format!(
            "invalid cursor {cursor}: this server lists every {what} on one page"
        ))),
        None => Ok(()),
    }
}

/// The `uri` a request of `method` names.
fn uri_of<'p>(method: &str, params: &'p Value) -> Result<&'p str, Refusal> {
    params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| Refusal::invalid(format!("`{method}` needs a `uri` string")))
}

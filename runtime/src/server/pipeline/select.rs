//! Which tools a layer given to [`Server::layer_for`](crate::Server::layer_for) applies to: a
//! [`Select`], resolved against the registry when the server starts into the wire names it
//! covers, and the service that sends those tools' calls through the layer and every other call
//! past it.

use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};

use tower::ServiceExt as _;

use super::{BoxError, Call, Next, Operation, Outcome, Service};
use crate::handler::BoxFuture;
use crate::names::CanonicalName;
use crate::registry::{Registry, Tool};

/// Some of a server's tools, for a layer that applies to them alone
/// ([`Server::layer_for`](crate::Server::layer_for)): by name, by tag, by the hints their
/// annotations give, or by any test of the [`Tool`].
///
/// ```
/// use toolwright::pipeline::Select;
///
/// let billing = Select::tagged("billing");
/// let risky = Select::destructive();
/// let two = Select::tools(["delete_note", "wipe"]);
/// let slow = Select::matching(|tool| tool.tags().contains(&"slow"));
/// # let _ = (billing, risky, two, slow);
/// ```
#[derive(Clone)]
pub struct Select(Rule);

#[derive(Clone)]
enum Rule {
    Names(Vec<String>),
    Tag(String),
    Destructive,
    ReadOnly,
    OpenWorld,
    Matching(Arc<dyn Fn(&Tool) -> bool + Send + Sync>),
}

impl Select {
    /// The tools of these names: each its own name, its name on the wire (`<provider>__<tool>`
    /// when the server is [namespaced](crate::Server::namespaced)) or its canonical name
    /// (`mcp::<provider>::<tool>`). A name the server does not serve stops it at start
    /// ([`Conflict::UnknownLayerTool`](crate::registry::Conflict::UnknownLayerTool)): a typo
    /// would leave a layer unapplied without a word.
    pub fn tools<I>(names: I) -> Select
    where
        I: IntoIterator,
        I::Item: Into<String>,
    {
        Select(Rule::Names(names.into_iter().map(Into::into).collect()))
    }

    /// The tools with this tag (`#[mcp_tool(tags = [...])]`).
    pub fn tagged(tag: impl Into<String>) -> Select {
        Select(Rule::Tag(tag.into()))
    }

    /// The tools a client must take to be destructive, as the protocol reads their hints: every
    /// tool that is not read-only and does not say it is not destructive
    /// (`destructiveHint` is `true` unless it is set to `false`).
    pub fn destructive() -> Select {
        Select(Rule::Destructive)
    }

    /// The tools that say they do not modify their environment (`readOnlyHint: true`).
    pub fn read_only() -> Select {
        Select(Rule::ReadOnly)
    }

    /// The tools that may reach entities outside the server, as the protocol reads their hints
    /// (`openWorldHint` is `true` unless it is set to `false`).
    pub fn open_world() -> Select {
        Select(Rule::OpenWorld)
    }

    /// The tools `test` is true of.
    pub fn matching(test: impl Fn(&Tool) -> bool + Send + Sync + 'static) -> Select {
        Select(Rule::Matching(Arc::new(test)))
    }

    /// The names it gives that are none of `registry`'s tools.
    pub(crate) fn unknown<'a>(&'a self, registry: &'a Registry) -> impl Iterator<Item = &'a str> {
        let names = match &self.0 {
            Rule::Names(names) => names.as_slice(),
            _ => &[],
        };
        names
            .iter()
            .map(String::as_str)
            .filter(|name| !registry.tools().iter().any(|tool| is_named(tool, name)))
    }

    /// The wire names of the tools of `registry` it selects.
    pub(crate) fn resolve(&self, registry: &Registry) -> Selected {
        let names = registry
            .tools()
            .iter()
            .filter(|tool| self.covers(tool))
            .map(|tool| tool.wire_name().to_owned())
            .collect();
        Selected(Arc::new(names))
    }

    fn covers(&self, tool: &Tool) -> bool {
        let hints = tool.annotations();
        match &self.0 {
            Rule::Names(names) => names.iter().any(|name| is_named(tool, name)),
            Rule::Tag(tag) => tool.tags().contains(&tag.as_str()),
            Rule::Destructive => hints.read_only != Some(true) && hints.destructive != Some(false),
            Rule::ReadOnly => hints.read_only == Some(true),
            Rule::OpenWorld => hints.open_world != Some(false),
            Rule::Matching(test) => test(tool),
        }
    }
}

fn is_named(tool: &Tool, name: &str) -> bool {
    tool.name() == name
        || tool.wire_name() == name
        || CanonicalName::strip(name, tool.provider()) == Some(tool.name())
}

impl fmt::Debug for Select {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Rule::Names(names) => f.debug_tuple("Select::tools").field(names).finish(),
            Rule::Tag(tag) => f.debug_tuple("Select::tagged").field(tag).finish(),
            Rule::Destructive => f.write_str("Select::destructive()"),
            Rule::ReadOnly => f.write_str("Select::read_only()"),
            Rule::OpenWorld => f.write_str("Select::open_world()"),
            Rule::Matching(_) => f.write_str("Select::matching(..)"),
        }
    }
}

/// The wire names a [`Select`] covers on one server.
#[derive(Clone, Debug)]
pub(crate) struct Selected(Arc<HashSet<String>>);

impl Selected {
    fn covers(&self, call: &Call) -> bool {
        call.operation() == Operation::CallTool && self.0.contains(call.target())
    }
}

/// The rest of the pipeline with a layer on some of its calls: the calls of the tools
/// selected go through the layer, every other call goes past it.
#[derive(Clone)]
pub(crate) struct Steer {
    selected: Selected,
    layered: Next,
    past: Next,
}

impl Steer {
    pub(crate) fn new(selected: Selected, layered: Next, past: Next) -> Steer {
        Steer {
            selected,
            layered,
            past,
        }
    }
}

impl Service<Call> for Steer {
    type Response = Outcome;
    type Error = BoxError;
    type Future = BoxFuture<Result<Outcome, BoxError>>;

    /// Ready at once: which way a call goes is known with the call, and that way is made ready
    /// then.
    fn poll_ready(&mut self, _: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: Call) -> Self::Future {
        let next = if self.selected.covers(&call) {
            self.layered.clone()
        } else {
            self.past.clone()
        };
        Box::pin(next.oneshot(call))
    }
}

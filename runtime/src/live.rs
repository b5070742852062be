//! What changes while a server runs, and who is told: the tools, prompts and resources it serves
//! (each may be disabled and enabled again through a [`ServerHandle`]), the contents of the
//! resources that change, and the listeners that want to know: a handshake-era session, on its
//! connection (stdio) or its GET stream (HTTP), and each `subscriptions/listen` stream of
//! protocol 2026-07-28.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock, Weak};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::jsonrpc::Id;
use crate::sink::Sink;

/// The `_meta` key that ties a notification to the `subscriptions/listen` stream it is on.
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// A handle on a server, to change what it serves while it runs and to tell its clients what
/// changed. Clone it freely; every clone is the same handle.
///
/// Take one from the server before it serves ([`Server::handle`](crate::Server::handle)), or in
/// a tool from its [`Context`](crate::Context::server).
///
/// ```
/// use toolwright::{Context, mcp_tool};
///
/// /// Rename the notebook's tag everywhere.
/// #[mcp_tool]
/// fn rename_tag(ctx: Context, from: String, to: String) -> String {
///     // ... change the notes ...
///     // The clients that subscribed to the tag's resource are told it changed.
///     ctx.server().resource_updated(&format!("notes://tags/{to}"));
///     format!("`{from}` is now `{to}`")
/// }
/// ```
///
/// Disabling a tool (a prompt, a resource) takes it out of its list and makes it unknown to
/// calls, for every client, until it is enabled again; each change is announced with the
/// protocol's `notifications/tools/list_changed` (`prompts`, `resources`), on which clients list
/// again. A handshake-era client is told on its connection (stdio) or on the stream it opened
/// with GET (HTTP); a client of protocol 2026-07-28, on the streams it opened with
/// `subscriptions/listen` for it.
#[derive(Clone, Default)]
pub struct ServerHandle {
    live: Arc<Live>,
}

/// Why a [`ServerHandle`] could not change what the server serves.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ChangeError {
    /// The server has no tool (prompt, resource) of this name (URI).
    #[error("this server has no {kind} `{name}`")]
    Unknown {
        /// `tool`, `prompt` or `resource`.
        kind: &'static str,
        /// The name, or the resource's URI (or URI template), as given.
        name: String,
    },
}

/// What the server serves changes: which tools, prompts or resources, or a resource's contents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Changed<'a> {
    Tools,
    Prompts,
    Resources,
    Updated(&'a str),
}

/// What a server shares between its handle and its dispatcher.
#[derive(Default)]
pub(crate) struct Live {
    listeners: Mutex<Vec<Weak<Listener>>>,
    /// What is disabled, replaced whole at each change: a reader keeps the set it took, and
    /// holds no lock while it serves.
    disabled: RwLock<Arc<Disabled>>,
    /// Changed each time something is disabled or enabled, so a listing made before is made
    /// again.
    version: AtomicU64,
    /// What the server serves, once it does: names to check changes against.
    known: OnceLock<Disabled>,
    /// Cancelled when the server stops: the streams that wait for changes end.
    stopping: CancellationToken,
}

/// Tools, prompts and resources by name (URI): those taken out of their lists, or those a
/// server has.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Disabled {
    pub(crate) tools: BTreeSet<String>,
    pub(crate) prompts: BTreeSet<String>,
    pub(crate) resources: BTreeSet<String>,
    /// Mounted tools held back since the server started, because their server changed them,
    /// with why: out of the list, and refused by name with the reason.
    pub(crate) held: BTreeMap<String, String>,
}

impl Disabled {
    /// Whether the tool `name` is out of its list and unknown to calls: disabled, or held
    /// back.
    pub(crate) fn tool_off(&self, name: &str) -> bool {
        self.tools.contains(name) || self.held.contains_key(name)
    }

    fn set(&self, kind: Listed) -> &BTreeSet<String> {
        match kind {
            Listed::Tool => &self.tools,
            Listed::Prompt => &self.prompts,
            Listed::Resource => &self.resources,
        }
    }

    fn set_mut(&mut self, kind: Listed) -> &mut BTreeSet<String> {
        match kind {
            Listed::Tool => &mut self.tools,
            Listed::Prompt => &mut self.prompts,
            Listed::Resource => &mut self.resources,
        }
    }
}

#[derive(Clone, Copy)]
enum Listed {
    Tool,
    Prompt,
    Resource,
}

impl Listed {
    fn name(self) -> &'static str {
        match self {
            Listed::Tool => "tool",
            Listed::Prompt => "prompt",
            Listed::Resource => "resource",
        }
    }

    fn change(self) -> Changed<'static> {
        match self {
            Listed::Tool => Changed::Tools,
            Listed::Prompt => Changed::Prompts,
            Listed::Resource => Changed::Resources,
        }
    }
}

impl ServerHandle {
    /// Tells the clients that subscribed to the resource at `uri` that its contents changed
    /// (`notifications/resources/updated`): they read it again. Call it after the change, for
    /// a resource that says it changes (`#[mcp_resource(changes)]`); nobody is told before the
    /// server serves.
    pub fn resource_updated(&self, uri: &str) {
        self.live.tell(Changed::Updated(uri));
    }

    /// Takes the tool `name` out of `tools/list`, and makes calls to it unknown, until
    /// [`enable_tool`](Self::enable_tool). Before the server serves, the name is checked when
    /// it starts, and a tool it does not have stops it.
    pub fn disable_tool(&self, name: &str) -> Result<(), ChangeError> {
        self.live.switch(Listed::Tool, name, false)
    }

    /// Serves the tool `name` again.
    pub fn enable_tool(&self, name: &str) -> Result<(), ChangeError> {
        self.live.switch(Listed::Tool, name, true)
    }

    /// Takes the prompt `name` out of `prompts/list`, and makes it unknown to `prompts/get`,
    /// until [`enable_prompt`](Self::enable_prompt); checked as
    /// [`disable_tool`](Self::disable_tool) is.
    pub fn disable_prompt(&self, name: &str) -> Result<(), ChangeError> {
        self.live.switch(Listed::Prompt, name, false)
    }

    /// Serves the prompt `name` again.
    pub fn enable_prompt(&self, name: &str) -> Result<(), ChangeError> {
        self.live.switch(Listed::Prompt, name, true)
    }

    /// Takes the resource of this URI (or this URI template, with every resource it matches)
    /// out of its list, and makes it unknown to `resources/read`, until
    /// [`enable_resource`](Self::enable_resource); checked as
    /// [`disable_tool`](Self::disable_tool) is.
    pub fn disable_resource(&self, uri: &str) -> Result<(), ChangeError> {
        self.live.switch(Listed::Resource, uri, false)
    }

    /// Serves the resource of this URI (or URI template) again.
    pub fn enable_resource(&self, uri: &str) -> Result<(), ChangeError> {
        self.live.switch(Listed::Resource, uri, true)
    }

    pub(crate) fn live(&self) -> &Arc<Live> {
        &self.live
    }
}

impl std::fmt::Debug for ServerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerHandle")
            .field("serving", &self.live.known.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Live {
    /// The server serves what `known` names (its tools, prompts and resources): what was
    /// disabled before must be among them. Returns the names that are not, each with its kind.
    pub(crate) fn attach(&self, known: Disabled) -> Vec<(&'static str, String)> {
        let disabled = self.disabled();
        let mut unknown = Vec::new();
        for (kind, given, served) in [
            (Listed::Tool, &disabled.tools, &known.tools),
            (Listed::Prompt, &disabled.prompts, &known.prompts),
            (Listed::Resource, &disabled.resources, &known.resources),
        ] {
            unknown.extend(
                given
                    .difference(served)
                    .map(|name| (kind.name(), name.clone())),
            );
        }
        drop(disabled);
        let _ = self.known.set(known);
        unknown
    }

    fn switch(&self, kind: Listed, name: &str, enable: bool) -> Result<(), ChangeError> {
        if let Some(known) = self.known.get()
            && !known.set(kind).contains(name)
        {
            return Err(ChangeError::Unknown {
                kind: kind.name(),
                name: name.to_owned(),
            });
        }
        let changed = {
            let mut disabled = self.disabled.write().unwrap_or_else(|e| e.into_inner());
            let mut changed = (**disabled).clone();
            let set = changed.set_mut(kind);
            let differs = if enable {
                set.remove(name)
            } else {
                set.insert(name.to_owned())
            };
            if differs {
                *disabled = Arc::new(changed);
            }
            differs
        };
        if changed {
            self.version.fetch_add(1, Ordering::Release);
            self.tell(kind.change());
        }
        Ok(())
    }

    /// Holds the tool `name` back, out of its list and refused by name with `why`, or serves
    /// it again (`None`); a change is announced as a change of the list.
    #[cfg(feature = "gateway")]
    pub(crate) fn hold(&self, name: &str, why: Option<String>) {
        let changed = {
            let mut disabled = self.disabled.write().unwrap_or_else(|e| e.into_inner());
            let mut changed = (**disabled).clone();
            let listed_before = !changed.held.contains_key(name);
            match why {
                Some(why) => changed.held.insert(name.to_owned(), why),
                None => changed.held.remove(name),
            };
            let differs = listed_before == changed.held.contains_key(name);
            *disabled = Arc::new(changed);
            differs
        };
        // The message may change while the tool stays held: the list is the same.
        if changed {
            self.version.fetch_add(1, Ordering::Release);
            self.tell(Changed::Tools);
        }
    }

    /// What is disabled now: a snapshot, which later changes leave as it is.
    /// Tells the clients what a mounted server told of its changes, under the names and URIs
    /// here: its resource list changed, a resource a client follows changed.
    #[cfg(feature = "gateway")]
    pub(crate) fn told(&self, change: Changed<'_>) {
        self.tell(change);
    }

    pub(crate) fn disabled(&self) -> Arc<Disabled> {
        Arc::clone(&self.disabled.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Changes each time what is disabled does.
    pub(crate) fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The server is stopping: the streams that wait for changes end.
    pub(crate) fn stop(&self) {
        self.stopping.cancel();
    }

    /// Completes when the server stops.
    pub(crate) async fn stopping(&self) {
        self.stopping.cancelled().await;
    }

    /// Keeps `listener` told of changes for as long as it lives.
    pub(crate) fn register(&self, listener: &Arc<Listener>) {
        let mut listeners = self.listeners();
        listeners.retain(|l| l.strong_count() > 0);
        if !listeners
            .iter()
            .any(|l| l.as_ptr() == Arc::as_ptr(listener))
        {
            listeners.push(Arc::downgrade(listener));
        }
    }

    /// How many `subscriptions/listen` streams are open.
    pub(crate) fn streams(&self) -> usize {
        self.listeners()
            .iter()
            .filter_map(Weak::upgrade)
            .filter(|l| l.subscription.is_some())
            .count()
    }

    /// Tells every listener that wants to know.
    fn tell(&self, change: Changed<'_>) {
        let listeners: Vec<Arc<Listener>> = {
            let mut listeners = self.listeners();
            listeners.retain(|l| l.strong_count() > 0);
            listeners.iter().filter_map(Weak::upgrade).collect()
        };
        for listener in listeners {
            listener.tell(change);
        }
    }

    fn listeners(&self) -> MutexGuard<'_, Vec<Weak<Listener>>> {
        self.listeners.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Who wants to know what changes: where to send it, and what it asked for.
pub(crate) struct Listener {
    /// `None` until the transport says where (a handshake-era session over HTTP before its GET
    /// stream).
    sink: Mutex<Option<Sink>>,
    filter: Mutex<Filter>,
    /// The id of the `subscriptions/listen` request that opened it, which every notification
    /// carries.
    subscription: Option<Value>,
}

/// What a listener asked to be told.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Filter {
    pub(crate) tools: bool,
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
    /// The resources whose contents it follows.
    pub(crate) uris: BTreeSet<String>,
}

impl Listener {
    /// A handshake-era session's: every list that changes, and the resources it subscribes to.
    pub(crate) fn session() -> Listener {
        Listener {
            sink: Mutex::new(None),
            filter: Mutex::new(Filter {
                tools: true,
                prompts: true,
                resources: true,
                uris: BTreeSet::new(),
            }),
            subscription: None,
        }
    }

    /// A `subscriptions/listen` stream's, on `sink`.
    pub(crate) fn stream(sink: Sink, filter: Filter, subscription: Id) -> Listener {
        Listener {
            sink: Mutex::new(Some(sink)),
            filter: Mutex::new(filter),
            subscription: Some(subscription.to_value()),
        }
    }

    /// Sends what is told on `sink` from now on.
    pub(crate) fn set_sink(&self, sink: Sink) {
        *self.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(sink);
    }

    /// What it asked to be told.
    pub(crate) fn filter(&self) -> MutexGuard<'_, Filter> {
        self.filter.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn tell(&self, change: Changed<'_>) {
        let (method, mut params) = {
            let filter = self.filter();
            match change {
                Changed::Tools if filter.tools => ("notifications/tools/list_changed", json!({})),
                Changed::Prompts if filter.prompts => {
                    ("notifications/prompts/list_changed", json!({}))
                }
                Changed::Resources if filter.resources => {
                    ("notifications/resources/list_changed", json!({}))
                }
                Changed::Updated(uri) if filter.uris.contains(uri) => {
                    ("notifications/resources/updated", json!({ "uri": uri }))
                }
                _ => return,
            }
        };
        if let Some(id) = &self.subscription {
            params["_meta"] = json!({ SUBSCRIPTION_ID_KEY: id });
        }
        let message = json!({ "jsonrpc": "2.0", "method": method, "params": params });
        let sink = self.sink.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(sink) = &*sink {
            let _ = sink.send(serde_json::to_vec(&message).expect("a JSON value serialises"));
        }
    }
}

/// The `_meta` of what a `subscriptions/listen` stream sends: its subscription's id.
pub(crate) fn subscription_meta(id: &Id) -> Value {
    json!({ SUBSCRIPTION_ID_KEY: id.to_value() })
}

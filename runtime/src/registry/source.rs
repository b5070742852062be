//! Where a tool comes from: `#[mcp_tool]`'s registration, linked into the binary, or a mounted
//! server, which runs its calls.

#[cfg(feature = "gateway")]
use std::sync::Arc;
#[cfg(feature = "gateway")]
use std::time::Duration;

#[cfg(feature = "gateway")]
use serde_json::Value;

#[cfg(feature = "gateway")]
use crate::handler::{BoxFuture, Output};
#[cfg(feature = "gateway")]
use crate::registration::Annotations;
use crate::registration::ToolRegistration;

/// Where a tool comes from.
pub(crate) enum Source {
    /// `#[mcp_tool]`'s registration, linked into the binary.
    Registered(&'static ToolRegistration),
    /// A tool of a server the gateway mounts, forwarded to it.
    #[cfg(feature = "gateway")]
    Mounted(Arc<Mounted>),
}

/// A tool of a mounted server, as the registry holds it: what the server said of it, and how a
/// call reaches it.
#[cfg(feature = "gateway")]
pub(crate) struct Mounted {
    /// The mount's name: the provider of its canonical name.
    pub(crate) mount: Arc<str>,
    /// The tool's name on its own server.
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) annotations: Annotations,
    /// How long a call may run, as the mount says.
    pub(crate) timeout: Option<Duration>,
    /// The OAuth scopes a call needs, as the mount says.
    pub(crate) scopes: &'static [&'static str],
    /// Runs a call on the server.
    pub(crate) forward: Arc<dyn Forward>,
}

/// Carries a call of a mounted tool, a get of a mounted prompt or a read of a mounted resource
/// to its server: the tool's (prompt's, resource's) own name there, the arguments, and the
/// call's context, whose progress and cancellation the forwarding passes on.
#[cfg(feature = "gateway")]
pub(crate) trait Forward: Send + Sync {
    fn call(&self, tool: &str, arguments: Value, ctx: crate::context::Context)
    -> BoxFuture<Output>;

    /// The server's `GetPromptResult`, or the error it answered with.
    fn get_prompt(
        &self,
        prompt: &str,
        arguments: Value,
        ctx: crate::context::Context,
    ) -> BoxFuture<Result<Value, crate::answers::RpcError>>;

    /// The server's `CompleteResult` for `params` (a `completion/complete` in its own names),
    /// or the error it answered with.
    fn complete(&self, params: Value) -> BoxFuture<Result<Value, crate::answers::RpcError>>;

    /// The server's `ReadResourceResult` for its resource `uri`, or the error it answered with.
    fn read_resource(
        &self,
        uri: &str,
        ctx: crate::context::Context,
    ) -> BoxFuture<Result<Value, crate::answers::RpcError>>;

    /// Asks the server to tell of changes to its resource `uri`, unless it was asked before
    /// (by any client here): done once it accepted, or the error it answered with.
    fn follow(&self, uri: &str) -> BoxFuture<Result<(), crate::answers::RpcError>>;
}

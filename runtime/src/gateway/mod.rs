//! Mounting other MCP servers (feature `gateway`): [`Server::mount`](crate::Server::mount) serves
//! the tools of a server the gateway starts (stdio) or reaches (Streamable HTTP) beside its own,
//! each under the mount's name, so that two servers' `search` never collide: `files__search` on
//! the wire, `mcp::files::search` in the catalog. Calls are forwarded through the
//! [`client`](crate::client), with their progress and cancellation; the call pipeline's layers,
//! time limits and rate limits apply to them as to the server's own tools.
//!
//! ```no_run
//! use toolwright::gateway::Upstream;
//!
//! fn main() -> std::process::ExitCode {
//!     toolwright::server!()
//!         .mount("time", Upstream::command("uvx", ["mcp-server-time"]))
//!         .mount("notes", Upstream::url("https://notes.example.com/mcp"))
//!         .run()
//! }
//! ```
//!
//! Its prompts are served the same way (`files__summarise`), each `prompts/get` and completion
//! forwarded; its resources under URIs with the mount's name after the scheme
//! (`file://files//tmp/a.txt` for its `file:///tmp/a.txt`), each read forwarded and each
//! subscription followed on its server. A mounted server's sampling and elicitation requests made for a call are asked of
//! the client that made it, through the call's [`Context`](crate::Context).
//!
//! The mounted servers are connected as the server starts, all at once; one that cannot be
//! reached stops the start with an error naming it. While the server serves, each is watched:
//! connected again with backoff when its connection ends, and its tools listed again when it
//! says they changed, a tool that changed since it was approved (see [`Lock`]) or went away
//! being held back until it is listed as approved again. Its prompts, resources and templates
//! are listed again when it says they changed (or comes back), and served as listed.

mod config;
mod connect;
mod forward;
mod lock;
mod upstream;
mod watch;

pub use config::{Config, ConfigError};
pub use forward::{Listed, list_all};
pub use lock::{Lock, LockError};
pub use upstream::{NewTools, Upstream};

pub(crate) use forward::mount_all;
pub(crate) use watch::Watch;

//! The MCP server: the [`Server`] builder, dispatch, and the transports that carry it.
//!
//! Messages flow one way: a transport ([`stdio`], `http`) frames bytes into a parsed message and
//! hands it, with the connection's [`Session`](session::Session), to the [`Service`](service::Service)
//! the builder made (the dispatcher), which answers from what it prepared at start ([`listing`])
//! or starts a call ([`call`]). Transports know the service, the session and the protocol, never
//! the dispatcher.

mod builder;
mod call;
mod completion;
mod dispatch;
#[cfg(feature = "http")]
pub mod http;
mod limits;
mod listen;
mod listing;
mod logging;
mod prompts;
mod resources;
#[cfg(feature = "semantic")]
mod semantic;
mod service;
mod session;
mod stdio;
pub mod testing;

pub use builder::{Error, Server};

#[cfg(feature = "cli")]
pub(crate) use logging::init_logging;

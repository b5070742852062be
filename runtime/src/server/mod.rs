//! What is served: the [`Server`] a server's author builds, started ([`Started`]) into the app
//! every transport carries: its registry, catalog, state, handle and limits, the sessions of its
//! clients, and dispatch.
//!
//! Messages flow one way: a transport ([`stdio`](crate::stdio), `http`) frames bytes into a
//! parsed message and hands it, with the connection's [`Session`](session::Session), to the
//! [`Started`] server, whose dispatcher answers from what it prepared at start ([`listing`]) or
//! starts a call ([`call`]), and says what to do in a [`Step`]. Transports know [`Started`], the
//! session and the protocol, never the dispatcher or the builder; nothing here imports a
//! transport.

mod builder;
mod call;
mod completion;
mod dispatch;
mod error;
mod limits;
mod listen;
mod listing;
mod prompts;
mod resources;
#[cfg(feature = "semantic")]
mod semantic;
mod session;
mod start;
mod started;

pub use builder::Server;
pub use error::Error;
pub(crate) use limits::Limits;
pub(crate) use session::Session;
pub use started::Started;
pub(crate) use started::Step;

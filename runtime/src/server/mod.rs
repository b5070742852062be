//! What is served, whichever transport carries it: the [`Server`] an author builds (its tools,
//! prompts and resources, their catalog, the application state, the limits every transport
//! applies, the [layers](pipeline) every call passes through), and the [`Started`] server it
//! becomes, which a transport serves: [`stdio`](crate::stdio), or `http` with the `http` feature.
//! Its [`ServerHandle`] changes what it serves while it runs.
//!
//! ```no_run
//! # async fn run() -> Result<(), toolwright::Error> {
//! use toolwright::stdio::Stdio;
//!
//! let started = toolwright::server!().start().await?;
//! Stdio::new().serve(started).await
//! # }
//! ```

// Messages flow one way: a transport frames bytes into a parsed message and hands it, with the
// connection's `Session`, to the `Started` server, whose dispatcher answers from what it
// prepared at start (`listing`) or starts a call through the pipeline (`call`, `tools`,
// `prompts`, `resources`), and says what to do in a `Step`. Transports know `Started`, the
// session and the protocol, never the dispatcher or the builder; nothing here imports a
// transport.

mod builder;
mod call;
mod completion;
mod dispatch;
mod error;
mod identity;
mod limits;
mod listen;
mod listing;
#[cfg(feature = "otel")]
mod observe;
pub mod pipeline;
mod prompts;
mod resources;
mod round;
#[cfg(feature = "semantic")]
mod semantic;
mod session;
mod start;
mod started;
mod step;
mod tasks;
mod tools;

pub use crate::live::{ChangeError, ServerHandle};
pub use builder::Server;
pub use error::Error;
pub(crate) use limits::Limits;
pub(crate) use session::Session;
pub use started::Started;
pub(crate) use step::Step;

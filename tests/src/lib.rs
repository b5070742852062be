//! Integration and compile-time tests of toolwright; nothing here is published.
//!
//! The library holds what the test files share: [`stdio::Client`], which drives a server over
//! in-memory pipes as a stdio client would.

pub mod stdio;

pub use stdio::Client;

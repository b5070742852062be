//! Example tools for toolwright: a notebook a model can add to, search, tag, edit and export,
//! kept in SQLite.
//!
//! The tools live in three modules, [`edit`], [`read`] and [`board`] (an MCP Apps view of the
//! notebook), beside a prompt in [`prompts`] and a resource per note in [`resources`]
//! (`notes://{id}`), and take the [`Notebook`] as application state: a server names this crate
//! and gives it one.
//!
//! ```no_run
//! use notes_tools::Notebook;
//!
//! fn main() -> std::process::ExitCode {
//!     toolwright::server!(notes_tools)
//!         .state(Notebook::in_memory())
//!         .run()
//! }
//! ```

pub mod board;
pub mod edit;
mod notebook;
pub mod prompts;
pub mod read;
pub mod resources;

pub use notebook::{
    Found, MAX_BODY_CHARS, MAX_TAG_CHARS, MAX_TAGS, MAX_TITLE_CHARS, Note, Notebook, NotesError,
};

//! Example tools for toolwright: a notebook a model can add to, search, tag, edit and export.
//!
//! The tools live in three modules, [`edit`], [`read`] and [`board`] (an MCP Apps view of the
//! notebook); `notes-server` serves them all, naming only the crate: `server!(notes_tools)`.
//! Call [`open`] before serving.

pub mod board;
pub mod edit;
mod notebook;
pub mod read;

pub use notebook::{Note, Notebook, NotesError, notebook, open};

/// Tags as stored: trimmed, lowercase, sorted, without repeats.
fn normalise_tags<S: AsRef<str>>(tags: &[S]) -> Result<Vec<String>, NotesError> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let tag = tag.as_ref().trim().to_lowercase();
        if tag.is_empty() {
            return Err(NotesError::EmptyTag);
        }
        out.push(tag);
    }
    out.sort();
    out.dedup();
    Ok(out)
}

//! Resources: each note as a Markdown document a client can read, attach to a conversation or
//! subscribe to, at `notes://{id}`.

use toolwright::completion::Completion;
use toolwright::{State, mcp_resource};

use crate::notebook::{Note, Notebook, NotesError};

/// The most ids a completion suggests: the newest.
const MAX_SUGGESTED: u32 = 100;

/// A note as Markdown: its title, its tags and its body. It changes when the note does, and
/// subscribers are told. It reads the database, so it runs on the blocking thread pool.
#[mcp_resource(
    uri = "notes://{id}",
    title = "Note",
    mime_type = "text/markdown",
    changes,
    blocking,
    complete(id = note_ids)
)]
pub fn note(
    notebook: State<Notebook>,
    /// The note's id, as `list_notes` shows it.
    id: u64,
) -> Result<Option<String>, NotesError> {
    match notebook.get(id) {
        Ok(note) => Ok(Some(markdown(&note))),
        // No such note: the URI names nothing, and the client is told "resource not found".
        Err(NotesError::NotFound(_)) => Ok(None),
        Err(other) => Err(other),
    }
}

/// The URI of a note's resource.
pub fn uri(id: u64) -> String {
    format!("notes://{id}")
}

/// A note as the resource shows it.
pub fn markdown(note: &Note) -> String {
    let mut text = format!("# {}\n\n", note.title);
    if !note.tags.is_empty() {
        let tags: Vec<String> = note.tags.iter().map(|t| format!("`{t}`")).collect();
        text.push_str(&format!("Tags: {}\n\n", tags.join(", ")));
    }
    text.push_str(&note.body);
    text
}

/// The ids that start with what the user typed, the newest hundred.
fn note_ids(request: &Completion) -> Vec<String> {
    let Some(notebook) = request.state::<Notebook>() else {
        return Vec::new();
    };
    notebook
        .ids_starting_with(request.value().trim(), MAX_SUGGESTED)
        .unwrap_or_default()
        .into_iter()
        .map(|id| id.to_string())
        .collect()
}

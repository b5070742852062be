//! Tools that change the notebook. They are `blocking`: with a data file, each change is written
//! to disk and synced before the tool returns, so they run on the blocking thread pool.

use schemars::JsonSchema;
use serde::Serialize;
use toolwright::mcp_tool;

use crate::normalise_tags;
use crate::notebook::{Note, NotesError, notebook, now};

/// Add a note to the notebook and return it with its new id.
#[mcp_tool(destructive = false, idempotent = false, open_world = false, core, tags = ["notes", "write"], blocking)]
pub fn add_note(
    /// Title shown in lists; must not be blank.
    title: String,
    /// Body text, Markdown allowed.
    body: String,
    /// Tags to file the note under; stored lowercase.
    tags: Option<Vec<String>>,
) -> Result<Note, NotesError> {
    if title.trim().is_empty() {
        return Err(NotesError::EmptyTitle);
    }
    let tags = normalise_tags(&tags.unwrap_or_default())?;
    notebook().change(|notes, next_id| {
        let id = *next_id;
        *next_id += 1;
        let now = now();
        let note = Note {
            id,
            title: title.trim().to_owned(),
            body,
            tags,
            created_at: now,
            updated_at: now,
        };
        notes.insert(id, note.clone());
        Ok(note)
    })
}

/// Change a note's title, body, or both. Fields left out stay as they are.
#[mcp_tool(destructive, idempotent, open_world = false, tags = ["notes", "write"], blocking)]
pub fn update_note(
    /// The note to change.
    id: u64,
    /// The new title.
    title: Option<String>,
    /// The new body, replacing the old one whole.
    body: Option<String>,
) -> Result<Note, NotesError> {
    if title.is_none() && body.is_none() {
        return Err(NotesError::NothingToUpdate);
    }
    if title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(NotesError::EmptyTitle);
    }
    notebook().change(|notes, _| {
        let note = notes.get_mut(&id).ok_or(NotesError::NotFound(id))?;
        if let Some(title) = title {
            note.title = title.trim().to_owned();
        }
        if let Some(body) = body {
            note.body = body;
        }
        note.updated_at = now();
        Ok(note.clone())
    })
}

/// File a note under more tags. Tags it already has are kept once.
#[mcp_tool(destructive = false, idempotent, open_world = false, tags = ["notes", "tags", "write"], blocking)]
pub fn tag_note(
    /// The note to tag.
    id: u64,
    /// Tags to add; stored lowercase.
    tags: &[String],
) -> Result<Note, NotesError> {
    let added = normalise_tags(tags)?;
    notebook().change(|notes, _| {
        let note = notes.get_mut(&id).ok_or(NotesError::NotFound(id))?;
        let mut all = note.tags.clone();
        all.extend(added);
        note.tags = normalise_tags(&all)?;
        note.updated_at = now();
        Ok(note.clone())
    })
}

/// Remove tags from a note. Tags the note does not have are ignored.
#[mcp_tool(destructive, idempotent, open_world = false, tags = ["notes", "tags", "write"], blocking)]
pub fn untag_note(
    /// The note to untag.
    id: u64,
    /// Tags to remove.
    tags: &[String],
) -> Result<Note, NotesError> {
    let removed = normalise_tags(tags)?;
    notebook().change(|notes, _| {
        let note = notes.get_mut(&id).ok_or(NotesError::NotFound(id))?;
        note.tags.retain(|t| !removed.contains(t));
        note.updated_at = now();
        Ok(note.clone())
    })
}

/// What `delete_note` removed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Deleted {
    /// The id the note had.
    pub id: u64,
    /// The title it had, to confirm the right note went.
    pub title: String,
}

/// Delete a note for good.
///
/// There is no undo: check the id with `get_note` first when in doubt.
#[mcp_tool(destructive, idempotent = false, open_world = false, tags = ["notes", "write"], blocking)]
pub fn delete_note(
    /// The note to delete.
    id: u64,
) -> Result<Deleted, NotesError> {
    notebook().change(|notes, _| {
        let note = notes.remove(&id).ok_or(NotesError::NotFound(id))?;
        Ok(Deleted {
            id,
            title: note.title,
        })
    })
}

//! Tools that change the notebook. They are `blocking`: with a database file, each change is
//! written and synced before the tool returns, so they run on the blocking thread pool.

use schemars::JsonSchema;
use serde::Serialize;
use toolwright::{Context, State, mcp_tool};

use crate::notebook::{Note, Notebook, NotesError};
use crate::resources;

/// Tells the clients that subscribed to the note's resource that it changed.
pub(crate) fn changed(ctx: &Context, id: u64) {
    ctx.server().resource_updated(&resources::uri(id));
}

/// Add a note to the notebook and return it with its new id.
#[mcp_tool(destructive = false, idempotent = false, open_world = false, core, tags = ["notes", "write"], scopes = ["notes:write"], blocking)]
pub fn add_note(
    notebook: State<Notebook>,
    /// Title shown in lists; not blank, at most 200 characters.
    title: String,
    /// Body text, Markdown allowed; at most 100,000 characters.
    body: String,
    /// Tags to file the note under, at most 20 of 64 characters each; stored lowercase.
    tags: Option<Vec<String>>,
) -> Result<Note, NotesError> {
    notebook.add(&title, body, &tags.unwrap_or_default())
}

/// Change a note's title, body, or both. Fields left out stay as they are.
#[mcp_tool(destructive, idempotent, open_world = false, tags = ["notes", "write"], scopes = ["notes:write"], blocking)]
pub fn update_note(
    ctx: &Context,
    notebook: State<Notebook>,
    /// The note to change.
    id: u64,
    /// The new title.
    title: Option<String>,
    /// The new body, replacing the old one whole.
    body: Option<String>,
) -> Result<Note, NotesError> {
    let note = notebook.update(id, title.as_deref(), body)?;
    changed(ctx, id);
    Ok(note)
}

/// File a note under more tags. Tags it already has are kept once.
#[mcp_tool(destructive = false, idempotent, open_world = false, tags = ["notes", "tags", "write"], scopes = ["notes:write"], blocking)]
pub fn tag_note(
    ctx: &Context,
    notebook: State<Notebook>,
    /// The note to tag.
    id: u64,
    /// Tags to add; stored lowercase.
    tags: &[String],
) -> Result<Note, NotesError> {
    let note = notebook.retag(id, tags, &[])?;
    changed(ctx, id);
    Ok(note)
}

/// Remove tags from a note. Tags the note does not have are ignored.
#[mcp_tool(destructive, idempotent, open_world = false, tags = ["notes", "tags", "write"], scopes = ["notes:write"], blocking)]
pub fn untag_note(
    ctx: &Context,
    notebook: State<Notebook>,
    /// The note to untag.
    id: u64,
    /// Tags to remove.
    tags: &[String],
) -> Result<Note, NotesError> {
    let note = notebook.retag(id, &[], tags)?;
    changed(ctx, id);
    Ok(note)
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
#[mcp_tool(destructive, idempotent = false, open_world = false, tags = ["notes", "write"], scopes = ["notes:write"], blocking)]
pub fn delete_note(
    ctx: &Context,
    notebook: State<Notebook>,
    /// The note to delete.
    id: u64,
) -> Result<Deleted, NotesError> {
    let note = notebook.delete(id)?;
    // Subscribers read it again, and find it gone.
    changed(ctx, id);
    Ok(Deleted {
        id,
        title: note.title,
    })
}

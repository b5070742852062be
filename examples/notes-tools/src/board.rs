//! The notes board: an MCP Apps view of the notebook, one column per tag.
//!
//! `show_board` is the model's tool: hosts with MCP Apps show its result in the board view
//! (`board.html`), and every host gets the board as JSON text and structured content.
//! `move_note` is the view's: it moves a card between columns, and only the view calls it. The
//! view calls it by this name, so a server that namespaces its tools
//! (`Server::namespaced`, `<provider>__move_note` on the wire) would need a view that knows.

use schemars::JsonSchema;
use serde::Serialize;
use toolwright::apps::UiResource;
use toolwright::{Context, State, mcp_tool};

use crate::notebook::{Note, Notebook, NotesError};

/// The view's URI, which `show_board` names.
const BOARD: &str = "ui://notes/board.html";

toolwright::apps::ui_resource!(
    UiResource::new(BOARD, include_str!("board.html"))
        .name("notes-board")
        .title("Notes board")
        .description("The notebook as a board, one column per tag; cards move between columns.")
        .prefers_border(true)
);

/// A note on the board.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Card {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// The start of its body.
    pub excerpt: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// When it last changed, in seconds since the Unix epoch.
    pub updated_at: u64,
}

/// The notes under one tag.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Column {
    /// The tag.
    pub tag: String,
    /// Its notes, newest first.
    pub notes: Vec<Card>,
}

/// The notebook as a board.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Board {
    /// How many notes the board shows.
    pub total: usize,
    /// One column per tag, by tag; a note with several tags is in each of their columns.
    pub columns: Vec<Column>,
    /// The notes without tags, newest first.
    pub untagged: Vec<Card>,
}

/// How much of a body a card shows, in characters.
const EXCERPT_CHARS: usize = 140;

/// Show the notebook as a board, one column per tag, to see at a glance what is filed where.
#[mcp_tool(read_only, open_world = false, tags = ["notes", "read", "tags"], ui = "ui://notes/board.html", blocking)]
pub fn show_board(
    notebook: State<Notebook>,
    /// Only the column of this tag.
    tag: Option<String>,
) -> Result<Board, NotesError> {
    let tag = tag.map(|t| t.trim().to_lowercase());
    Ok(board(&notebook.all(tag.as_deref())?, tag.as_deref()))
}

/// Move a note from one column of the board to another: remove the tag `from`, add the tag
/// `to`. Called by the board view when a card is moved.
#[mcp_tool(
    destructive,
    idempotent,
    open_world = false,
    tags = ["notes", "tags", "write"],
    scopes = ["notes:write"],
    visibility = ["app"],
    blocking
)]
pub fn move_note(
    ctx: &Context,
    notebook: State<Notebook>,
    /// The note to move.
    id: u64,
    /// The column it leaves; none when it leaves the untagged ones.
    from: Option<String>,
    /// The column it joins; none to leave it untagged when `from` was its last tag.
    to: Option<String>,
) -> Result<Board, NotesError> {
    notebook.retag(id, &Vec::from_iter(to), &Vec::from_iter(from))?;
    crate::edit::changed(ctx, id);
    Ok(board(&notebook.all(None)?, None))
}

/// The board of these notes (newest first), or of those with `tag` only. A note is in each of
/// its tags' columns, and carries at most `MAX_TAGS` of them: the board grows with the notebook,
/// by at most that factor.
fn board(notes: &[Note], tag: Option<&str>) -> Board {
    let mut columns: Vec<Column> = Vec::new();
    let mut untagged = Vec::new();
    let mut total = 0;
    for note in notes {
        if tag.is_some_and(|t| !note.tags.iter().any(|n| n == t)) {
            continue;
        }
        total += 1;
        if note.tags.is_empty() {
            untagged.push(card(note));
        }
        for t in &note.tags {
            if tag.is_some_and(|only| only != t) {
                continue;
            }
            match columns.binary_search_by(|c| c.tag.as_str().cmp(t)) {
                Ok(i) => columns[i].notes.push(card(note)),
                Err(i) => columns.insert(
                    i,
                    Column {
                        tag: t.clone(),
                        notes: vec![card(note)],
                    },
                ),
            }
        }
    }
    Board {
        total,
        columns,
        untagged,
    }
}

fn card(note: &Note) -> Card {
    let mut excerpt: String = note.body.chars().take(EXCERPT_CHARS).collect();
    if note.body.chars().nth(EXCERPT_CHARS).is_some() {
        excerpt.push('…');
    }
    Card {
        id: note.id,
        title: note.title.clone(),
        excerpt,
        tags: note.tags.clone(),
        updated_at: note.updated_at,
    }
}

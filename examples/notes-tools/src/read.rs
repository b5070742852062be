//! Tools that read the notebook. They are `blocking`: they read the database.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolwright::{Context, State, mcp_tool};

use crate::notebook::{Note, Notebook, NotesError};

/// Get one note, whole.
#[mcp_tool(read_only, open_world = false, tags = ["notes", "read"], blocking)]
pub fn get_note(
    notebook: State<Notebook>,
    /// The note's id.
    id: u64,
) -> Result<Note, NotesError> {
    notebook.get(id)
}

/// A note in a list: everything but the body.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteSummary {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Its tags.
    pub tags: Vec<String>,
    /// When it last changed, in seconds since the Unix epoch.
    pub updated_at: u64,
}

/// One page of notes.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NoteList {
    /// The notes on this page, newest first.
    pub notes: Vec<NoteSummary>,
    /// How many notes match in all.
    pub total: usize,
}

/// List notes, newest first, optionally only those with a tag.
#[mcp_tool(read_only, open_world = false, core, tags = ["notes", "read"], blocking)]
pub fn list_notes(
    notebook: State<Notebook>,
    /// Only notes with this tag.
    tag: Option<String>,
    /// How many notes to return at most.
    #[arg(default = 20)]
    limit: u32,
    /// How many matching notes to skip, for the next page.
    #[arg(default = 0)]
    offset: u32,
) -> Result<NoteList, NotesError> {
    let (total, notes) = notebook.list(tag.as_deref(), limit, offset)?;
    Ok(NoteList {
        total: total as usize,
        notes: notes
            .into_iter()
            .map(|n| NoteSummary {
                id: n.id,
                title: n.title,
                tags: n.tags,
                updated_at: n.updated_at,
            })
            .collect(),
    })
}

/// A note that matches a search.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Match {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// The text around the first match.
    pub snippet: String,
    /// How many of the query's words the note contains; higher is better.
    pub score: u32,
}

/// What `search_notes` found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SearchResults {
    /// The matching notes, best first.
    pub matches: Vec<Match>,
}

/// Find notes whose title, body or tags contain the query's words, best matches first.
///
/// Each word of the query matches the words of a note that start with it, whatever their case
/// (`egg` finds "Eggs", not "begged"); a note matches if it contains any of the words, and the
/// more it contains the better.
#[mcp_tool(read_only, open_world = false, core, tags = ["notes", "read", "search"], blocking)]
pub fn search_notes(
    notebook: State<Notebook>,
    /// Words to look for.
    query: &str,
    /// How many matches to return at most.
    #[arg(default = 10)]
    limit: u32,
) -> Result<SearchResults, NotesError> {
    let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
    let matches = notebook
        .search(&words, limit)?
        .into_iter()
        .map(|found| Match {
            snippet: snippet(&found.body, &words),
            id: found.id,
            title: found.title,
            score: found.score,
        })
        .collect();
    Ok(SearchResults { matches })
}

/// Up to 80 characters of `body` around the first word found.
fn snippet(body: &str, words: &[String]) -> String {
    let lower = body.to_lowercase();
    let at = words
        .iter()
        .filter_map(|w| lower.find(w.as_str()))
        .min()
        .unwrap_or(0);
    // Lowercasing can change byte lengths; fall back to the start when the offset is not a
    // character boundary of the original.
    let start = if body.is_char_boundary(at) { at } else { 0 };
    let from = body[..start]
        .char_indices()
        .rev()
        .nth(30)
        .map_or(0, |(i, _)| i);
    body[from..].chars().take(80).collect()
}

/// How many notes carry each tag.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TagCounts {
    /// Each tag and how many notes carry it, by tag.
    pub tags: Vec<TagCount>,
}

/// One tag and its count.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TagCount {
    /// The tag.
    pub tag: String,
    /// How many notes carry it.
    pub count: usize,
}

/// List every tag in use, with how many notes carry it.
#[mcp_tool(read_only, open_world = false, tags = ["tags", "read"], blocking)]
pub fn list_tags(notebook: State<Notebook>) -> Result<TagCounts, NotesError> {
    Ok(TagCounts {
        tags: notebook
            .tag_counts()?
            .into_iter()
            .map(|(tag, count)| TagCount {
                tag,
                count: count as usize,
            })
            .collect(),
    })
}

/// How `export_notes` writes the notebook.
#[derive(Clone, Copy, Debug, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ExportFormat {
    /// One Markdown section per note.
    Markdown,
    /// The notes as a JSON array.
    Json,
}

/// Export the whole notebook as one document, oldest note first.
#[mcp_tool(
    read_only,
    open_world = false,
    tags = ["notes", "read", "export"],
    blocking,
    task = "optional"
)]
pub fn export_notes(
    ctx: &Context,
    notebook: State<Notebook>,
    /// The document's format.
    #[arg(default = ExportFormat::Markdown)]
    format: ExportFormat,
) -> Result<String, NotesError> {
    let mut notes = notebook.all(None)?;
    notes.reverse();
    // Progress in tenths, for a client that asked for it: a large notebook takes a while.
    let total = notes.len();
    let step = total.div_ceil(10).max(1);
    let report = |done: usize| {
        let message = format!("{done} of {total} notes");
        ctx.progress(done as f64, Some(total as f64), Some(&message));
        ctx.set_status_message(format!("exported {message}"));
    };
    Ok(match format {
        ExportFormat::Json => {
            report(total);
            serde_json::to_string_pretty(&notes).expect("notes serialise")
        }
        ExportFormat::Markdown => {
            let mut out = String::new();
            for (done, note) in notes.iter().enumerate() {
                if done % step == 0 {
                    report(done);
                }
                out.push_str(&format!("# {}\n\n", note.title));
                if !note.tags.is_empty() {
                    out.push_str(&format!("Tags: {}\n\n", note.tags.join(", ")));
                }
                out.push_str(note.body.trim_end());
                out.push_str("\n\n");
            }
            report(total);
            out
        }
    })
}

/// Wait until a note whose title contains `text` is added (by this client or another), and
/// return it: for work that waits on a person. Runs as a task when the client takes tasks, and
/// stops when the task is cancelled.
#[mcp_tool(read_only, open_world = false, tags = ["notes", "read", "wait"], task = "optional")]
pub async fn wait_for_note(
    ctx: Context,
    notebook: State<Notebook>,
    /// What the note's title must contain, ignoring case.
    text: String,
    /// How long to wait, in seconds.
    #[arg(default = 600)]
    timeout_seconds: u64,
) -> Result<Note, NotesError> {
    // The notebook's queries are quick: each check runs here rather than on another thread.
    let after = notebook.newest_id()?;
    let started = std::time::Instant::now();
    let timeout = std::time::Duration::from_secs(timeout_seconds);
    let mut ticks = tokio::time::interval(std::time::Duration::from_millis(200));
    loop {
        ticks.tick().await;
        if let Some(note) = notebook.added_after(after, &text)? {
            return Ok(note);
        }
        let waited = started.elapsed();
        if waited >= timeout {
            return Err(NotesError::NotAdded {
                text,
                seconds: timeout_seconds,
            });
        }
        ctx.set_status_message(format!(
            "waiting for a note titled like {text:?}: {} s so far",
            waited.as_secs()
        ));
    }
}

//! Prompts: requests about the notebook a user picks from the client's menu.

use toolwright::completion::Completion;
use toolwright::prompt::PromptMessage;
use toolwright::{Content, State, mcp_prompt};

use crate::Notebook;

/// The most notes a summary takes in.
const MAX_SUMMARISED: u32 = 50;

/// Summarise the notes that carry a tag: the request, and each note (newest first) as an
/// embedded resource the model reads.
#[mcp_prompt(title = "Summarise a tag", blocking, complete(tag = tags_in_use))]
pub fn summarise_tag(
    notebook: State<Notebook>,
    /// The tag whose notes to summarise; `list_tags` shows them.
    tag: String,
    /// How many notes to take in at most, newest first: 20 by default, 50 at most.
    limit: Option<u32>,
) -> Result<Vec<PromptMessage>, String> {
    let limit = limit.unwrap_or(20).min(MAX_SUMMARISED);
    let (total, notes) = notebook
        .list(Some(&tag), limit, 0)
        .map_err(|e| e.to_string())?;
    if notes.is_empty() {
        return Err(format!(
            "no note is tagged `{tag}`; `list_tags` shows the tags in use"
        ));
    }
    let tag = tag.trim().to_lowercase();
    let shown = notes.len();
    let scope = if (shown as u64) < total {
        format!("the {shown} newest of the {total} notes")
    } else {
        format!("the {shown} notes")
    };
    let mut messages = vec![PromptMessage::user(format!(
        "Summarise {scope} tagged `{tag}` below: what they are about, what is decided, and what \
         is still open. Cite notes by their id."
    ))];
    messages.extend(notes.into_iter().map(|note| {
        PromptMessage::user(Content::resource_text(
            format!("notes://{}", note.id),
            "text/markdown",
            format!("# {} (note {})\n\n{}", note.title, note.id, note.body),
        ))
    }));
    Ok(messages)
}

/// The tags in use that start with what the user typed, the most used first.
fn tags_in_use(request: &Completion) -> Vec<String> {
    let Some(notebook) = request.state::<Notebook>() else {
        return Vec::new();
    };
    let typed = request.value().trim().to_lowercase();
    let mut counts = notebook.tag_counts().unwrap_or_default();
    counts.retain(|(tag, _)| tag.starts_with(&typed));
    counts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    counts.into_iter().map(|(tag, _)| tag).collect()
}

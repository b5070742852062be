//! The prompts a registry serves beside its tools: sorted by name, each name once.

use serde_json::{Value, json};

use super::conflict::Conflict;
use crate::registration::PromptRegistration;

/// The prompts sorted by name, after a conflict for each duplicate.
pub(super) fn sorted(
    prompts: impl IntoIterator<Item = &'static PromptRegistration>,
    conflicts: &mut Vec<Conflict>,
) -> Vec<&'static PromptRegistration> {
    let mut prompts: Vec<_> = prompts.into_iter().collect();
    // Link order varies between builds; the name (then the place) does not.
    prompts.sort_by_key(|p| {
        let l = p.location;
        (p.name, l.file, l.line, l.column)
    });
    for pair in prompts.windows(2) {
        if pair[0].name == pair[1].name {
            conflicts.push(Conflict::DuplicatePrompt {
                name: pair[0].name.to_owned(),
                first: pair[0].location,
                second: pair[1].location,
            });
        }
    }
    prompts
}

/// The prompt with this name among prompts sorted by name.
pub(super) fn find(
    prompts: &[&'static PromptRegistration],
    name: &str,
) -> Option<&'static PromptRegistration> {
    prompts
        .binary_search_by(|p| p.name.cmp(name))
        .ok()
        .map(|i| prompts[i])
}

/// A prompt as `prompts/list` describes it.
pub(crate) fn descriptor(prompt: &PromptRegistration) -> Value {
    let mut entry = json!({ "name": prompt.name, "description": prompt.description });
    if let Some(title) = prompt.title {
        entry["title"] = json!(title);
    }
    if !prompt.arguments.is_empty() {
        let arguments: Vec<Value> = prompt.arguments.iter().map(|a| a.listed()).collect();
        entry["arguments"] = json!(arguments);
    }
    entry
}

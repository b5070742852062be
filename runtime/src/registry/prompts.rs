//! The prompts a registry serves beside its tools: sorted by name, each name once.

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

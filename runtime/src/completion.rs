//! Completions: values suggested for a prompt's argument or a resource template's variable as
//! the user types it (`completion/complete`).
//!
//! Name a completer in the attribute, `#[mcp_prompt(complete(tag = tags_in_use))]` or
//! `#[mcp_resource(uri = "notes://{id}", complete(id = note_ids))]`: a
//! `fn(&Completion) -> Vec<String>`. A server with one declares the `completions` capability.

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::state::States;

/// Suggests values for a prompt argument or a template variable as the user types it.
pub type Completer = fn(&Completion) -> Vec<String>;

/// What a completer is asked: the argument (or variable) being typed, what the user typed so
/// far, the others already filled in, and the server's application state.
///
/// ```
/// use toolwright::completion::Completion;
///
/// /// The languages a review can be in, starting with what the user typed.
/// fn languages(request: &Completion) -> Vec<String> {
///     ["english", "french", "german"]
///         .into_iter()
///         .filter(|l| l.starts_with(&request.value().to_lowercase()))
///         .map(str::to_owned)
///         .collect()
/// }
/// ```
///
/// Name it in the attribute, `#[mcp_prompt(complete(language = languages))]`. The client shows
/// the first 100 values and says how many there are. A completer runs on the server's runtime
/// while the user types: keep it quick, and filter by [`value`](Self::value) itself.
pub struct Completion {
    pub(crate) argument: String,
    pub(crate) value: String,
    pub(crate) arguments: Map<String, Value>,
    pub(crate) states: Arc<States>,
}

impl Completion {
    /// The argument or variable being completed.
    pub fn argument(&self) -> &str {
        &self.argument
    }

    /// What the user has typed so far.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Another argument or variable the user already filled in, to narrow the suggestions.
    pub fn other(&self, name: &str) -> Option<&str> {
        self.arguments.get(name).and_then(Value::as_str)
    }

    /// The server's application state of type `T` ([`Server::state`](crate::Server::state)),
    /// if it was given one.
    pub fn state<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.states.get_ref::<T>()
    }
}

//! Prompts: messages a user picks from the client's menu, filled in from a few arguments.
//!
//! Put [`#[mcp_prompt]`](crate::mcp_prompt) on a function. Its parameters are the prompt's
//! arguments, which the protocol passes as strings; its return value is the messages the client
//! puts in front of the model. See [`mcp_prompt`](crate::mcp_prompt) for the rules.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::completion::Completer;
use crate::content::Content;
pub use crate::content::Role;
use crate::context::Context;
use crate::handler::BoxFuture;
use crate::state::FromState;

/// One message of a prompt: who says it, and one content block (text, an image, audio, an
/// embedded resource or a link to one).
///
/// ```
/// use toolwright::Content;
/// use toolwright::prompt::PromptMessage;
///
/// let messages = vec![
///     PromptMessage::user("Review this file."),
///     PromptMessage::user(Content::resource_text("file:///src/lib.rs", "text/x-rust", "fn main() {}")),
///     PromptMessage::assistant("I will read it line by line."),
/// ];
/// assert_eq!(messages.len(), 3);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct PromptMessage {
    role: Role,
    content: Content,
    /// A message another server sent, passed on as it came.
    forwarded: Option<Value>,
}

impl Serialize for PromptMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct as _;

        if let Some(message) = &self.forwarded {
            return message.serialize(serializer);
        }
        let mut message = serializer.serialize_struct("PromptMessage", 2)?;
        message.serialize_field("role", &self.role)?;
        message.serialize_field("content", &self.content)?;
        message.end()
    }
}

impl PromptMessage {
    /// A message the user says: text (`&str`, `String`) or any [`Content`].
    pub fn user(content: impl Into<Content>) -> PromptMessage {
        PromptMessage {
            role: Role::User,
            content: content.into(),
            forwarded: None,
        }
    }

    /// A message the model says, to prime the conversation.
    pub fn assistant(content: impl Into<Content>) -> PromptMessage {
        PromptMessage {
            role: Role::Assistant,
            content: content.into(),
            forwarded: None,
        }
    }

    /// A message another server sent (a `PromptMessage` object), kept as it came: passed on
    /// unchanged, its role and its text readable here (a block of another kind reads as empty
    /// text).
    #[cfg(feature = "gateway")]
    pub(crate) fn forwarded(message: Value) -> PromptMessage {
        let role = match message["role"].as_str() {
            Some("assistant") => Role::Assistant,
            _ => Role::User,
        };
        let text = message["content"]["text"].as_str().unwrap_or_default();
        PromptMessage {
            role,
            content: Content::text(text),
            forwarded: Some(message),
        }
    }

    /// Who says it.
    pub fn role(&self) -> Role {
        self.role
    }

    /// What is said.
    pub fn content(&self) -> &Content {
        &self.content
    }
}

/// What a prompt function returns: the messages of `prompts/get`.
///
/// Implemented for text (`String`, `&str`: one message from the user), one [`PromptMessage`],
/// and `Vec<PromptMessage>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a prompt",
    label = "a prompt returns its messages",
    note = "return text (`String`, `&str`: one message from the user), a `PromptMessage`, or a \
            `Vec<PromptMessage>`; `Result<_, E>` with `E: Display` too"
)]
pub trait IntoPrompt {
    /// The messages.
    fn into_messages(self) -> Vec<PromptMessage>;
}

impl IntoPrompt for String {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::user(self)]
    }
}

impl IntoPrompt for &str {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![PromptMessage::user(self)]
    }
}

impl IntoPrompt for PromptMessage {
    fn into_messages(self) -> Vec<PromptMessage> {
        vec![self]
    }
}

impl IntoPrompt for Vec<PromptMessage> {
    fn into_messages(self) -> Vec<PromptMessage> {
        self
    }
}

/// A type a prompt argument is read into. The protocol passes every prompt argument as a string,
/// so any type that implements [`FromStr`] with an error that implements `Display` is one:
/// `String`, numbers, `bool`, your own enums.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a prompt argument",
    label = "prompt arguments arrive as strings",
    note = "take `String` (or `&str`), `Option<_>` of it for an optional argument, or a type that \
            implements `FromStr` with an error that implements `Display`"
)]
pub trait PromptArgument: Sized {
    /// Reads the argument from the client's string.
    fn parse(text: &str) -> Result<Self, String>;
}

impl<T> PromptArgument for T
where
    T: FromStr,
    T::Err: fmt::Display,
{
    fn parse(text: &str) -> Result<T, String> {
        text.parse().map_err(|err: T::Err| err.to_string())
    }
}

/// Why `prompts/get` has no messages: an argument the prompt cannot take, or the prompt's own
/// error. Both are answered as invalid params (-32602), with this text: the protocol has no error
/// result for prompts, and a prompt fails for the arguments it was given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptError(pub(crate) String);

impl fmt::Display for PromptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The arguments of one `prompts/get`: each a string, by name.
pub type PromptArguments = Map<String, Value>;

/// What a prompt makes: its messages, or why it has none.
pub type Made = Result<Vec<PromptMessage>, PromptError>;

/// How a prompt is run: the function `#[mcp_prompt]` generates around the user's.
#[derive(Clone, Copy, Debug)]
pub enum PromptHandler {
    /// A plain `fn`, run on the runtime.
    Sync(fn(&PromptArguments, Context) -> Made),
    /// A plain `fn` that blocks, run on the blocking thread pool (`#[mcp_prompt(blocking)]`).
    Blocking(fn(&PromptArguments, Context) -> Made),
    /// An `async fn`.
    Async(fn(PromptArguments, Context) -> BoxFuture<Made>),
}

/// One argument of a prompt, as `prompts/list` describes it.
#[derive(Clone, Copy, Debug)]
pub struct ArgumentInfo {
    /// Its name.
    pub name: &'static str,
    /// What it is, for the user who fills it in: the parameter's doc comment.
    pub description: Option<&'static str>,
    /// Whether `prompts/get` needs it (every argument but an `Option<_>`).
    pub required: bool,
    /// What suggests its values, if anything does.
    pub complete: Option<Completer>,
}

impl ArgumentInfo {
    /// The entry of `prompts/list`'s `arguments`.
    pub(crate) fn listed(&self) -> Value {
        let mut entry = json!({ "name": self.name });
        if let Some(description) = self.description {
            entry["description"] = json!(description);
        }
        if self.required {
            entry["required"] = json!(true);
        }
        entry
    }
}

/// Reads argument `name` of prompt `prompt`: required when `required`, as `T`. Generated code
/// calls it for each argument.
pub fn read_argument<T: PromptArgument>(
    prompt: &str,
    arguments: &PromptArguments,
    name: &str,
) -> Result<T, PromptError> {
    match read_optional_argument(prompt, arguments, name)? {
        Some(value) => Ok(value),
        None => Err(PromptError(format!(
            "prompt `{prompt}` needs the argument `{name}`"
        ))),
    }
}

/// Reads the optional argument `name` of prompt `prompt` as `T`: `None` when it is not given.
pub fn read_optional_argument<T: PromptArgument>(
    prompt: &str,
    arguments: &PromptArguments,
    name: &str,
) -> Result<Option<T>, PromptError> {
    match arguments.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => T::parse(text).map(Some).map_err(|err| {
            PromptError(format!(
                "invalid argument `{name}` for prompt `{prompt}`: {err}"
            ))
        }),
        Some(other) => Err(PromptError(format!(
            "invalid argument `{name}` for prompt `{prompt}`: {other} is not a string; prompt \
             arguments are strings"
        ))),
    }
}

/// The application state a `State<T>` parameter of a prompt takes.
pub fn take_prompt_state<S: FromState>(ctx: &Context) -> Result<S, PromptError> {
    S::from_states(ctx.states()).map_err(PromptError)
}

/// The error a prompt returned, as `prompts/get` answers it.
pub fn prompt_failed<E: fmt::Display>(prompt: &str, error: E) -> PromptError {
    PromptError(format!("prompt `{prompt}` failed: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arguments(value: Value) -> PromptArguments {
        match value {
            Value::Object(map) => map,
            _ => unreachable!(),
        }
    }

    #[test]
    fn arguments_are_read_from_strings() {
        let given = arguments(json!({"tag": "home", "words": "50", "bad": "many", "n": 3}));
        assert_eq!(read_argument::<String>("p", &given, "tag").unwrap(), "home");
        assert_eq!(read_argument::<u32>("p", &given, "words").unwrap(), 50);
        assert_eq!(
            read_optional_argument::<u32>("p", &given, "absent").unwrap(),
            None
        );
        assert_eq!(
            read_argument::<u32>("p", &given, "bad")
                .unwrap_err()
                .to_string(),
            "invalid argument `bad` for prompt `p`: invalid digit found in string"
        );
        assert_eq!(
            read_argument::<String>("p", &given, "n")
                .unwrap_err()
                .to_string(),
            "invalid argument `n` for prompt `p`: 3 is not a string; prompt arguments are strings"
        );
        assert_eq!(
            read_argument::<String>("p", &given, "absent")
                .unwrap_err()
                .to_string(),
            "prompt `p` needs the argument `absent`"
        );
    }

    #[test]
    fn messages_serialise_as_the_protocol_has_them() {
        let message = PromptMessage::assistant("Hi");
        assert_eq!(
            serde_json::to_value(&message).unwrap(),
            json!({"role": "assistant", "content": {"type": "text", "text": "Hi"}})
        );
        assert_eq!("Hello".into_messages(), vec![PromptMessage::user("Hello")]);
    }
}

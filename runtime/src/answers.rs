//! What a client reads in a server's answers: a tool call's result, and a JSON-RPC error. Shared
//! by the in-process [`testing`](crate::testing) client and the [`client`](crate::client) (feature
//! `client`).

use serde::de::{DeserializeOwned, Error as _};
use serde_json::Value;

/// The result of a tool call (`CallToolResult`): the JSON the server sent, whole, and what a
/// caller reads in it.
#[derive(Clone, Debug, PartialEq)]
pub struct CallResult(pub(crate) Value);

impl CallResult {
    /// Whether the tool reported an error (`isError`): its text says why.
    pub fn is_error(&self) -> bool {
        self.0["isError"] == true
    }

    /// Its content blocks, as sent.
    pub fn content(&self) -> &[Value] {
        self.0["content"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The text of its content, every text block joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .content()
            .iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect();
        texts.join("\n")
    }

    /// Its `structuredContent`, from a tool with an output schema.
    pub fn structured(&self) -> Option<&Value> {
        self.0.get("structuredContent")
    }

    /// Its `structuredContent` read into `T`, such as the tool's own output type. An error
    /// when the result has none, or it does not read as a `T`.
    pub fn output<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        match self.structured() {
            Some(structured) => T::deserialize(structured),
            None => Err(serde_json::Error::custom(
                "the result has no `structuredContent`",
            )),
        }
    }

    /// The whole result, as sent.
    pub fn json(&self) -> &Value {
        &self.0
    }

    /// The whole result, as sent, owned.
    pub fn into_json(self) -> Value {
        self.0
    }
}

/// A request the server refused: a JSON-RPC error. Also what a client's handler answers a
/// server's request with, to refuse it.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("error {code}: {message}")]
pub struct RpcError {
    /// The JSON-RPC error code (-32602 for an unknown tool, say).
    pub code: i64,
    /// The message.
    pub message: String,
    /// The error's `data`, if any.
    pub data: Option<Value>,
}

//! A tool result built by hand (several content blocks, binary content, resources), and what a
//! resource holds.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Who speaks a message: of a prompt ([`PromptMessage`](crate::prompt::PromptMessage)), or of
/// a conversation a tool asks the client's model to continue
/// ([`CreateMessage`](crate::context::CreateMessage)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// A tool result with full control over what the client receives.
///
/// Return it from a tool (or `Result<ToolResult, E>`) to send several content blocks, images,
/// audio or resources, or structured content the tool assembles itself. A tool that returns a
/// `ToolResult` has no `outputSchema`.
///
/// ```
/// use toolwright::{Content, ToolResult};
///
/// let result = ToolResult::text("Here is the chart.")
///     .with(Content::image(&[0x89, b'P', b'N', b'G'], "image/png"));
/// assert_eq!(result.content().len(), 2);
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ToolResult {
    content: Vec<Content>,
    structured_content: Option<Value>,
    is_error: bool,
    /// A result another server sent, which a mounted tool's call passes on as it came: what it
    /// serialises to. `content` then holds its text blocks, for a layer to read.
    forwarded: Option<Value>,
}

impl Serialize for ToolResult {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap as _;

        if let Some(forwarded) = &self.forwarded {
            return forwarded.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("content", &self.content)?;
        if let Some(structured) = &self.structured_content {
            map.serialize_entry("structuredContent", structured)?;
        }
        if self.is_error {
            map.serialize_entry("isError", &true)?;
        }
        map.end()
    }
}

impl ToolResult {
    /// A result with no content.
    pub fn new() -> ToolResult {
        ToolResult::default()
    }

    /// A result with one text block.
    pub fn text(text: impl Into<String>) -> ToolResult {
        ToolResult::new().with(Content::text(text))
    }

    /// A tool error (`isError: true`) with one text block: the model reads it and may try again.
    pub fn error(text: impl Into<String>) -> ToolResult {
        ToolResult {
            is_error: true,
            ..ToolResult::text(text)
        }
    }

    /// Adds a content block.
    #[must_use]
    pub fn with(mut self, content: Content) -> ToolResult {
        self.content.push(content);
        self
    }

    /// Sets `structuredContent`. The protocol asks that the same JSON also be sent as text, so
    /// add a text block with it too.
    #[must_use]
    pub fn with_structured(mut self, value: Value) -> ToolResult {
        self.structured_content = Some(value);
        self
    }

    /// The content blocks.
    pub fn content(&self) -> &[Content] {
        &self.content
    }

    /// The structured content, if any.
    pub fn structured_content(&self) -> Option<&Value> {
        self.structured_content.as_ref()
    }

    /// Whether this result reports a tool error.
    pub fn is_error(&self) -> bool {
        self.is_error
    }

    /// Whether the result is an object with no `_meta` and no `resultType` of its own: only one
    /// passed on from another server may be otherwise.
    pub(crate) fn is_plain(&self) -> bool {
        self.forwarded.as_ref().is_none_or(|sent| {
            sent.as_object().is_some_and(|members| {
                !members.contains_key("_meta") && !members.contains_key("resultType")
            })
        })
    }

    /// A result another server sent (a `CallToolResult` object), kept as it came: passed on
    /// unchanged, with its text blocks, structured content and error flag readable here.
    #[cfg(feature = "gateway")]
    pub(crate) fn forwarded(result: Value) -> ToolResult {
        let content = result["content"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .map(Content::text)
            .collect();
        ToolResult {
            content,
            structured_content: result.get("structuredContent").cloned(),
            is_error: result["isError"] == true,
            forwarded: Some(result),
        }
    }
}

/// One content block of a tool result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
#[non_exhaustive]
pub enum Content {
    /// Text for the model.
    Text {
        /// The text.
        text: String,
    },
    /// An image.
    Image {
        /// The image's bytes, base64-encoded.
        data: String,
        /// Its media type, such as `image/png`.
        mime_type: String,
    },
    /// Audio.
    Audio {
        /// The audio's bytes, base64-encoded.
        data: String,
        /// Its media type, such as `audio/wav`.
        mime_type: String,
    },
    /// A resource embedded in the result.
    Resource {
        /// The resource.
        resource: ResourceContents,
    },
    /// A link to a resource the client may read.
    ResourceLink {
        /// The resource's URI.
        uri: String,
        /// Its name.
        name: String,
        /// What it is.
        #[serde(skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// Its media type.
        #[serde(skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
    },
}

/// What a resource holds, as `resources/read` returns it and a tool or a prompt embeds it: text
/// or bytes, with the resource's URI and media type.
///
/// A resource function ([`#[mcp_resource]`](crate::mcp_resource)) returns it to say more than
/// its text: a media type of its own, several contents, `_meta`. Its URI is the one read, unless
/// [`with_uri`](ResourceContents::with_uri) names another.
///
/// ```
/// use toolwright::content::ResourceContents;
///
/// let contents = ResourceContents::text("# Groceries\n- tea").with_mime_type("text/markdown");
/// assert_eq!(contents.as_text(), Some("# Groceries\n- tea"));
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceContents {
    uri: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    /// The bytes, base64-encoded.
    #[serde(skip_serializing_if = "Option::is_none")]
    blob: Option<String>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<serde_json::Map<String, Value>>,
}

impl ResourceContents {
    /// Text contents.
    pub fn text(text: impl Into<String>) -> ResourceContents {
        ResourceContents {
            uri: String::new(),
            mime_type: None,
            text: Some(text.into()),
            blob: None,
            meta: None,
        }
    }

    /// Binary contents, sent base64-encoded.
    pub fn blob(bytes: impl AsRef<[u8]>) -> ResourceContents {
        ResourceContents {
            uri: String::new(),
            mime_type: None,
            text: None,
            blob: Some(BASE64.encode(bytes)),
            meta: None,
        }
    }

    /// The same contents under another URI than the one read (a resource read as several).
    #[must_use]
    pub fn with_uri(mut self, uri: impl Into<String>) -> ResourceContents {
        self.uri = uri.into();
        self
    }

    /// The same contents with this media type, such as `text/markdown` or `image/png`.
    #[must_use]
    pub fn with_mime_type(mut self, mime_type: impl Into<String>) -> ResourceContents {
        self.mime_type = Some(mime_type.into());
        self
    }

    /// The same contents with `_meta[key] = value`.
    #[must_use]
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> ResourceContents {
        self.meta
            .get_or_insert_with(Default::default)
            .insert(key.into(), value);
        self
    }

    /// The URI; empty until the server fills in the one read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The media type, if one is set.
    pub fn mime_type(&self) -> Option<&str> {
        self.mime_type.as_deref()
    }

    /// The text, for text contents.
    pub fn as_text(&self) -> Option<&str> {
        self.text.as_deref()
    }

    /// The bytes, base64-encoded, for binary contents.
    pub fn as_blob_base64(&self) -> Option<&str> {
        self.blob.as_deref()
    }

    /// Contents a mounted server sent (a `TextResourceContents` or `BlobResourceContents`),
    /// under `uri`, the URI here.
    #[cfg(feature = "gateway")]
    pub(crate) fn forwarded(sent: &Value, uri: String) -> ResourceContents {
        let text = |key: &str| sent.get(key).and_then(Value::as_str).map(str::to_owned);
        ResourceContents {
            uri,
            mime_type: text("mimeType"),
            text: text("text"),
            blob: text("blob"),
            meta: sent.get("_meta").and_then(Value::as_object).cloned(),
        }
    }

    /// Fills in what the resource's declaration says and the contents leave out: the URI read,
    /// the declared media type.
    pub(crate) fn complete(&mut self, uri: &str, mime_type: Option<&str>) {
        if self.uri.is_empty() {
            uri.clone_into(&mut self.uri);
        }
        if self.mime_type.is_none() {
            self.mime_type = mime_type.map(str::to_owned);
        }
    }
}

impl From<String> for Content {
    /// A text block.
    fn from(text: String) -> Content {
        Content::Text { text }
    }
}

impl From<&str> for Content {
    /// A text block.
    fn from(text: &str) -> Content {
        Content::Text {
            text: text.to_owned(),
        }
    }
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Content {
        Content::Text { text: text.into() }
    }

    /// An image block from its bytes.
    pub fn image(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Content {
        Content::Image {
            data: BASE64.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An audio block from its bytes.
    pub fn audio(bytes: impl AsRef<[u8]>, mime_type: impl Into<String>) -> Content {
        Content::Audio {
            data: BASE64.encode(bytes),
            mime_type: mime_type.into(),
        }
    }

    /// An embedded text resource.
    pub fn resource_text(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        text: impl Into<String>,
    ) -> Content {
        Content::resource(uri, ResourceContents::text(text).with_mime_type(mime_type))
    }

    /// An embedded binary resource from its bytes.
    pub fn resource_blob(
        uri: impl Into<String>,
        mime_type: impl Into<String>,
        bytes: impl AsRef<[u8]>,
    ) -> Content {
        Content::resource(uri, ResourceContents::blob(bytes).with_mime_type(mime_type))
    }

    /// An embedded resource: these contents, as read at `uri`.
    pub fn resource(uri: impl Into<String>, contents: ResourceContents) -> Content {
        Content::Resource {
            resource: contents.with_uri(uri),
        }
    }

    /// A link to a resource.
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> Content {
        Content::ResourceLink {
            uri: uri.into(),
            name: name.into(),
            description: None,
            mime_type: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn blocks_serialise_as_the_protocol_names_them() {
        let result = ToolResult::text("hello")
            .with(Content::image([1u8, 2, 3], "image/png"))
            .with(Content::audio([0u8], "audio/wav"))
            .with(Content::resource_text("test://r", "text/plain", "body"))
            .with(Content::resource_blob(
                "test://b",
                "application/octet-stream",
                [255u8],
            ))
            .with(Content::resource_link("file:///notes/1", "note 1"));
        assert_eq!(
            serde_json::to_value(&result).unwrap(),
            json!({
                "content": [
                    {"type": "text", "text": "hello"},
                    {"type": "image", "data": "AQID", "mimeType": "image/png"},
                    {"type": "audio", "data": "AA==", "mimeType": "audio/wav"},
                    {"type": "resource", "resource": {"uri": "test://r", "mimeType": "text/plain", "text": "body"}},
                    {"type": "resource", "resource": {"uri": "test://b", "mimeType": "application/octet-stream", "blob": "/w=="}},
                    {"type": "resource_link", "uri": "file:///notes/1", "name": "note 1"}
                ]
            })
        );
    }

    #[test]
    fn an_error_result_says_so() {
        assert_eq!(
            serde_json::to_value(ToolResult::error("no note with id 42")).unwrap(),
            json!({"content": [{"type": "text", "text": "no note with id 42"}], "isError": true})
        );
    }
}

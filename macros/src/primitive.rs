//! Which attribute is expanded: the MCP primitive the function becomes, and the words its
//! messages use for it. Every stage takes one, as serde's stages take the derive they serve.

/// The MCP primitive a function becomes, named for the attribute that makes it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Primitive {
    /// `#[mcp_tool]`: the parameters are the arguments of a JSON object, described by a schema.
    Tool,
    /// `#[mcp_prompt]`: the parameters are string arguments, each of which may be left out.
    Prompt,
    /// `#[mcp_resource]`: the parameters are the variables of a URI template.
    Resource,
}

impl Primitive {
    /// The attribute's name: `mcp_tool`.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            Primitive::Tool => "mcp_tool",
            Primitive::Prompt => "mcp_prompt",
            Primitive::Resource => "mcp_resource",
        }
    }

    /// What the function becomes: `tool`.
    pub(crate) fn noun(self) -> &'static str {
        match self {
            Primitive::Tool => "tool",
            Primitive::Prompt => "prompt",
            Primitive::Resource => "resource",
        }
    }

    /// One of its values, where the primitive is not named beside it: `prompt argument`.
    pub(crate) fn value(self) -> &'static str {
        match self {
            Primitive::Tool => "tool argument",
            Primitive::Prompt => "prompt argument",
            Primitive::Resource => "template variable",
        }
    }

    /// One of its values, where the primitive is named beside it: `argument`.
    pub(crate) fn short_value(self) -> &'static str {
        match self {
            Primitive::Tool | Primitive::Prompt => "argument",
            Primitive::Resource => "variable",
        }
    }

    /// What is settled when the program is built, so that the signature cannot be generic.
    pub(crate) fn fixed(self) -> &'static str {
        match self {
            Primitive::Tool => "its schema is fixed at compile time",
            Primitive::Prompt => "its arguments are fixed at compile time",
            Primitive::Resource => "its URI is fixed at compile time",
        }
    }
}

//! The `#[mcp_tool]` attribute of [toolwright](https://docs.rs/toolwright).
//!
//! Depend on `toolwright`, not on this crate: `toolwright` re-exports the attribute together with
//! the runtime items the generated code refers to, and pins this crate to the matching version.

use proc_macro::TokenStream;

mod ast;
mod attr;
mod check;
mod docs;
mod errors;
mod expand;
mod fallback;
mod json;
mod prompt;
mod resource;
mod shared_attr;
mod strings;

/// Turns a free function into an MCP tool.
///
/// The full reference, with examples, is on `toolwright::mcp_tool`, which re-exports this
/// attribute.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::mcp_tool(args.into(), input.into()).into()
}

/// Turns a free function into an MCP prompt.
///
/// The full reference, with examples, is on `toolwright::mcp_prompt`, which re-exports this
/// attribute.
#[proc_macro_attribute]
pub fn mcp_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    prompt::mcp_prompt(args.into(), input.into()).into()
}

/// Turns a free function into an MCP resource, or a template of resources.
///
/// The full reference, with examples, is on `toolwright::mcp_resource`, which re-exports this
/// attribute.
#[proc_macro_attribute]
pub fn mcp_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    resource::mcp_resource(args.into(), input.into()).into()
}

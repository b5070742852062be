//! The `#[mcp_tool]`, `#[mcp_prompt]` and `#[mcp_resource]` attributes of
//! [toolwright](https://docs.rs/toolwright).
//!
//! Depend on `toolwright`, not on this crate: `toolwright` re-exports the attributes together
//! with the runtime items the generated code refers to, and pins this crate to the matching
//! version.
//!
//! The three attributes share one set of stages: `attr` reads the options, `ast` makes a typed
//! view of the function, `check` runs the rules into one accumulator (`errors`), and `expand`
//! makes the code, or `fallback` the function and the errors.

use proc_macro::TokenStream;

mod ast;
mod attr;
mod check;
mod docs;
mod errors;
mod expand;
mod fallback;
mod json;
mod primitive;

use primitive::Primitive;

/// Turns a free function into an MCP tool.
///
/// The full reference, with examples, is on `toolwright::mcp_tool`, which re-exports this
/// attribute.
#[proc_macro_attribute]
pub fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::expand(Primitive::Tool, args.into(), input.into()).into()
}

/// Turns a free function into an MCP prompt.
///
/// The full reference, with examples, is on `toolwright::mcp_prompt`, which re-exports this
/// attribute.
#[proc_macro_attribute]
pub fn mcp_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::expand(Primitive::Prompt, args.into(), input.into()).into()
}

/// Turns a free function into an MCP resource, or a template of resources.
///
/// The full reference, with examples, is on `toolwright::mcp_resource`, which re-exports this
/// attribute.
#[proc_macro_attribute]
pub fn mcp_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::expand(Primitive::Resource, args.into(), input.into()).into()
}

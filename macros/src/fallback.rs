//! On error: the user's item unchanged, plus the errors. Emitting the function keeps its callers
//! compiling and IDEs working, so the build shows only the mistakes that were made.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Item, ItemFn};

use crate::attr;
use crate::primitive::Primitive;

/// The function, without the parameter attributes only this crate understands, and every error
/// found.
pub(crate) fn with_errors(func: &ItemFn, error: &syn::Error) -> TokenStream {
    let func = attr::without_helpers(func);
    let errors = error.to_compile_error();
    quote! {
        #func
        #errors
    }
}

/// The attribute is on something that is not a function.
pub(crate) fn not_a_function(primitive: Primitive, item: &Item, input: TokenStream) -> TokenStream {
    let error = match primitive {
        Primitive::Tool => {
            let (what, tokens) = what_item(item);
            syn::Error::new_spanned(
                tokens,
                format!(
                    "`#[mcp_tool]` goes on a free `fn` or `async fn`, not on {what}: write a \
                     function whose parameters are the tool's arguments"
                ),
            )
        }
        Primitive::Prompt => syn::Error::new_spanned(
            item,
            "`#[mcp_prompt]` goes on a free `fn` or `async fn` whose parameters are the \
             prompt's arguments",
        ),
        Primitive::Resource => syn::Error::new_spanned(
            item,
            "`#[mcp_resource]` goes on a free `fn` or `async fn` that returns the resource's \
             contents",
        ),
    }
    .to_compile_error();
    quote! {
        #input
        #error
    }
}

/// What the item is, in words, and the keyword that says so, where the error points.
fn what_item(item: &Item) -> (&'static str, TokenStream) {
    match item {
        Item::Struct(i) => ("a struct", i.struct_token.to_token_stream()),
        Item::Enum(i) => ("an enum", i.enum_token.to_token_stream()),
        Item::Union(i) => ("a union", i.union_token.to_token_stream()),
        Item::Impl(i) => ("an `impl` block", i.impl_token.to_token_stream()),
        Item::Trait(i) => ("a trait", i.trait_token.to_token_stream()),
        Item::Mod(i) => ("a module", i.mod_token.to_token_stream()),
        Item::Const(i) => ("a constant", i.const_token.to_token_stream()),
        Item::Static(i) => ("a static", i.static_token.to_token_stream()),
        Item::Type(i) => ("a type alias", i.type_token.to_token_stream()),
        Item::Use(i) => ("a `use` declaration", i.use_token.to_token_stream()),
        Item::ForeignMod(i) => ("an `extern` block", i.abi.to_token_stream()),
        other => ("this item", other.to_token_stream()),
    }
}

/// The input did not parse as an item; rustc reports the syntax error itself.
pub(crate) fn unparsed(input: TokenStream, error: syn::Error) -> TokenStream {
    let error = error.to_compile_error();
    quote! {
        #input
        #error
    }
}

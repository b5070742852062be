//! On error: the user's item unchanged, plus the errors. Emitting the function keeps its callers
//! compiling and IDEs working, so the build shows only the mistakes that were made.

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Item, ItemFn};

/// The function, with the parameter attributes only `#[mcp_tool]` understands already removed,
/// and every error found.
pub(crate) fn with_errors(func: &ItemFn, error: &syn::Error) -> TokenStream {
    let errors = error.to_compile_error();
    quote! {
        #func
        #errors
    }
}

/// The attribute is on something that is not a function.
pub(crate) fn not_a_function(item: &Item, input: TokenStream) -> TokenStream {
    let (what, tokens): (&str, TokenStream) = match item {
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
    };
    let error = syn::Error::new_spanned(
        tokens,
        format!(
            "`#[mcp_tool]` goes on a free `fn` or `async fn`, not on {what}: write a function whose \
             parameters are the tool's arguments"
        ),
    )
    .to_compile_error();
    quote! {
        #input
        #error
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

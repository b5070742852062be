//! Tokens out. [`expand`] runs the stages in order (options, the typed view, the checks) and,
//! when nothing is wrong, assembles the generated code from named steps, each of which makes one
//! piece: a tool's schemas and bounds checks ([`schema`]), the handler shim the runtime calls
//! ([`handler`]), and the registration record ([`record`]). All of it sits out of sight in a
//! `const _: () = { ... };` beside the user's function.

mod handler;
mod record;
mod schema;

use proc_macro2::TokenStream;
use quote::{ToTokens, quote};
use syn::{Item, ItemFn, Path};

use crate::ast::Function;
use crate::errors::Errors;
use crate::primitive::Primitive;
use crate::{attr, check, fallback};

/// The attribute `primitive` on `input`, with its arguments `args`: the user's function and
/// what registers it, or the function and every mistake found.
pub(crate) fn expand(primitive: Primitive, args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let options = attr::parse_options(primitive, args, &mut errors);
    let func = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Fn(func)) => func,
        Ok(item) => return fallback::not_a_function(primitive, &item, input),
        Err(err) => return fallback::unparsed(input, err),
    };
    let function = Function::from_syn(primitive, &func, &options, &mut errors);
    check::check(&function, &mut errors);
    if let Some(error) = errors.take() {
        return fallback::with_errors(&func, &error);
    }
    let krate: Path = options
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::toolwright));
    // Generated code reaches the runtime through its hidden re-exports only.
    let tw = quote!(#krate::__private);
    let items = match primitive {
        Primitive::Tool => {
            let (input_items, input_schema) = schema::input(&function, &krate, &tw);
            let header_checks = schema::header_checks(&function, &tw);
            let output_schema = schema::output(&function, &tw);
            let (shim, handler) = handler::tool(&function, &tw);
            let record = record::tool(&function, &tw, &input_schema, &handler);
            quote! {
                #input_items

                #(#header_checks)*

                #output_schema

                #shim

                #krate::__register_tool! { #record }
            }
        }
        Primitive::Prompt => {
            let (shim, handler) = handler::prompt_or_resource(&function, &tw);
            let record = record::prompt(&function, &tw, &handler);
            quote! {
                #shim

                #krate::__register_tool! { #record }
            }
        }
        Primitive::Resource => {
            let (shim, handler) = handler::prompt_or_resource(&function, &tw);
            let record = record::resource(&function, &tw, &handler);
            quote! {
                #shim

                #krate::__register_tool! { #record }
            }
        }
    };
    beside(&attr::without_helpers(&func), &items)
}

/// The user's function, unchanged but for the helper attributes, and beside it, out of sight,
/// the generated `items`.
fn beside(func: &ItemFn, items: &TokenStream) -> TokenStream {
    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, clippy::all)]
        const _: () = {
            #items
        };
    }
}

/// `Some(#value)` or `None`.
fn option(value: Option<impl ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

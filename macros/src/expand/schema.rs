//! A tool's schemas: the hidden arguments struct that derives the input schema and reads the
//! arguments, or a literal input schema; the bounds checks on mirrored arguments; the output
//! schema.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, Path};

use crate::ast::{self, Function, Output, Param, Value};

/// The items that derive the input schema and read the arguments, and the record's
/// `InputSchema` that names them; with `input_schema`, no items and the literal.
pub(super) fn input(
    function: &Function<'_>,
    krate: &Path,
    tw: &TokenStream,
) -> (TokenStream, TokenStream) {
    if let Some(lit) = &function.options.input_schema {
        return (quote!(), quote!(#tw::InputSchema::Literal(#lit)));
    }
    let items = args_struct(function, krate, tw);
    (
        items,
        quote!(#tw::InputSchema::Derived(__toolwright_input_schema)),
    )
}

/// The call that names the arguments struct with the arguments' types; the parser and the
/// schema function it returns check the types' bounds at the types themselves.
pub(super) fn input_call(function: &Function<'_>) -> TokenStream {
    let types = function.values().map(|(_, value)| &value.owned);
    quote!(__toolwright_input::<#(#types),*>())
}

/// `__toolwright_Args`, deriving `Deserialize` and `JsonSchema` through the runtime's re-exports,
/// the functions for its defaults, and the functions that read it and make its schema.
fn args_struct(function: &Function<'_>, krate: &Path, tw: &TokenStream) -> TokenStream {
    let krate_string = quote!(#krate).to_string();
    let serde_crate = format!("{krate_string}::__private::serde");
    let schemars_crate = format!("{krate_string}::__private::schemars");
    let values: Vec<(&Param<'_>, &Value)> = function.values().collect();
    // Each argument without a default is a type parameter of the arguments struct, so that the
    // derives hold for any types and the user's types meet a bound only where `#input` names
    // them, at their own spans: a type that cannot be an argument is then one error at that type
    // (both uses of `#input` report it identically, and rustc prints it once), not one per place
    // the derives use it. A default is a function of the concrete type, so those fields keep it.
    let type_params: Vec<Ident> = (0..values.len())
        .map(|i| format_ident!("__toolwright_T{}", i))
        .collect();
    let struct_params: Vec<&Ident> = values
        .iter()
        .zip(&type_params)
        .filter(|((param, _), _)| param.options.default.is_none())
        .map(|(_, type_param)| type_param)
        .collect();
    let fields = values
        .iter()
        .zip(&type_params)
        .map(|((param, value), type_param)| field(param, value, type_param));
    let defaults = values
        .iter()
        .filter_map(|(param, value)| default_fn(param, value));
    // Unknown arguments are refused by serde too, as the schema's `additionalProperties: false`
    // says, so that arguments read without the schema check are refused as well. serde cannot
    // do it for a struct with a flattened field, which takes the other keys.
    let deny_unknown = values
        .iter()
        .all(|(param, _)| param.options.flatten.is_none())
        .then(|| quote!(#[serde(deny_unknown_fields)]));
    let input = input_call(function);
    quote! {
        #[derive(#tw::serde::Deserialize, #tw::schemars::JsonSchema)]
        #[serde(crate = #serde_crate)]
        #deny_unknown
        #[schemars(crate = #schemars_crate)]
        struct __toolwright_Args<#(#struct_params),*> {
            #(#fields,)*
        }

        #(#defaults)*

        fn __toolwright_input<#(#type_params: #tw::ToolArgument),*>() -> (
            fn(&str, #tw::Value) -> ::core::result::Result<
                __toolwright_Args<#(#struct_params),*>,
                #tw::Output,
            >,
            fn(&mut #tw::SchemaGenerator) -> #tw::Schema,
        ) {
            (
                #tw::parse_arguments,
                |generator| generator.root_schema_for::<__toolwright_Args<#(#struct_params),*>>(),
            )
        }

        fn __toolwright_input_schema(
            generator: &mut #tw::SchemaGenerator,
        ) -> #tw::Schema {
            let (_, schema) = #input;
            schema(generator)
        }
    }
}

/// One field of the arguments struct, named after the parameter: of its type parameter, or of
/// its own type when it has a default.
fn field(param: &Param<'_>, value: &Value, type_param: &Ident) -> TokenStream {
    let ident = param.ident;
    let arg = &param.options;
    let ty = match arg.default {
        Some(_) => value.owned.to_token_stream(),
        None => type_param.to_token_stream(),
    };
    let doc = param.description.as_ref().map(|d| quote!(#[doc = #d]));
    let rename = arg.rename.as_ref().map(|r| quote!(#[serde(rename = #r)]));
    let default = arg.default.as_ref().map(|_| {
        let path = default_fn_name(param).to_string();
        quote!(#[serde(default = #path)])
    });
    let flatten = arg.flatten.map(|_| quote!(#[serde(flatten)]));
    let header = arg
        .header
        .as_ref()
        .map(|h| quote!(#[schemars(extend("x-mcp-header" = #h))]));
    quote!(#doc #rename #default #flatten #header #ident: #ty)
}

fn default_fn_name(param: &Param<'_>) -> Ident {
    format_ident!("__toolwright_default_{}", ast::unraw(param.ident))
}

/// The function serde calls for a missing argument that has `#[arg(default = ...)]`.
fn default_fn(param: &Param<'_>, value: &Value) -> Option<TokenStream> {
    let expr = param.options.default.as_ref()?;
    let name = default_fn_name(param);
    let ty = &value.owned;
    // A string literal is converted, so `default = "x"` works for `String`, `PathBuf` and `Cow`;
    // other expressions must have the parameter's type, so integer literals infer it.
    let made = match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(_), ..
        }) => quote_spanned!(expr.span()=> ::core::convert::Into::into(#expr)),
        _ => quote_spanned!(expr.span()=> #expr),
    };
    Some(quote! {
        fn #name() -> #ty {
            #made
        }
    })
}

/// A bounds check for each argument mirrored in a header, which is a string, an integer or a
/// boolean: checked at its type.
pub(super) fn header_checks(function: &Function<'_>, tw: &TokenStream) -> Vec<TokenStream> {
    function
        .values()
        .filter(|(param, _)| param.options.header.is_some())
        .map(|(_, value)| {
            let ty = &value.owned;
            quote_spanned! {ty.span()=>
                const _: fn() = || {
                    fn mirrored<T: #tw::HeaderArgument>() {}
                    mirrored::<#ty>();
                };
            }
        })
        .collect()
}

/// `__toolwright_output_schema`: the schema of what the tool returns, `None` for nothing. It
/// names the output type at the user's span as the handler's conversion does, so a type that
/// cannot be returned gives rustc the same diagnostic twice, which it prints once.
pub(super) fn output(function: &Function<'_>, tw: &TokenStream) -> TokenStream {
    match returned(&function.output) {
        None => quote! {
            fn __toolwright_output_schema(
                _: &mut #tw::SchemaGenerator,
            ) -> ::core::option::Option<#tw::Schema> {
                ::core::option::Option::None
            }
        },
        Some(ty) => quote_spanned! {ty.span()=>
            fn __toolwright_output_schema(
                generator: &mut #tw::SchemaGenerator,
            ) -> ::core::option::Option<#tw::Schema> {
                <#ty as #tw::IntoOutput>::output_schema(generator)
            }
        },
    }
}

/// The type a tool's call returns, in `Ok` for a `Result`; `None` for `()` or nothing.
pub(super) fn returned<'a>(output: &Output<'a>) -> Option<&'a syn::Type> {
    match output {
        Output::Nothing => None,
        Output::Value(ty) | Output::Result { ok: ty, .. } => (!ast::is_unit(ty)).then_some(*ty),
    }
}

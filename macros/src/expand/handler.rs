//! The handler shim: the hidden function the runtime calls, which reads the parameters, calls
//! the user's function and converts what it returns; and the variant of the runtime's handler
//! enum (`Async`, `Blocking` or `Sync`) that names it. A tool's reads one JSON object of
//! arguments; a prompt's and a resource's read each parameter from a string.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, Type};

use super::schema;
use crate::ast::{self, Function, Output, Param, Role};
use crate::primitive::Primitive;

/// A tool's `__toolwright_call(arguments, context)`, and its `Handler` variant.
pub(super) fn tool(function: &Function<'_>, tw: &TokenStream) -> (TokenStream, TokenStream) {
    let fn_ident = &function.func.sig.ident;
    let literal = function.options.input_schema.is_some();
    let parse = parse_arguments(function, tw);
    let states = state_bindings(function, tw);
    let call_args = function
        .params
        .iter()
        .map(|param| tool_call_arg(param, tw, literal));
    let await_ = function.is_async().then(|| quote!(.await));
    let convert = tool_output(function, tw);
    let body = quote! {
        let __toolwright_args = match { #parse } {
            ::core::result::Result::Ok(args) => args,
            ::core::result::Result::Err(output) => return output,
        };
        #states
        let __toolwright_ret = #fn_ident(#(#call_args),*) #await_;
        #convert
    };
    if function.is_async() {
        return (
            quote_spanned! {fn_ident.span()=>
                #[allow(unused_variables)]
                fn __toolwright_call(
                    __toolwright_arguments: #tw::Value,
                    __toolwright_ctx: #tw::Context,
                ) -> #tw::BoxFuture<#tw::Output> {
                    ::std::boxed::Box::pin(async move { #body })
                }
            },
            quote!(#tw::Handler::Async(__toolwright_call)),
        );
    }
    let shim = quote! {
        #[allow(unused_variables)]
        fn __toolwright_call(
            __toolwright_arguments: #tw::Value,
            __toolwright_ctx: #tw::Context,
        ) -> #tw::Output {
            #body
        }
    };
    let variant = if function.blocks() {
        quote!(#tw::Handler::Blocking(__toolwright_call))
    } else {
        quote!(#tw::Handler::Sync(__toolwright_call))
    };
    (shim, variant)
}

/// Reads the arguments object. With a literal schema the one argument parameter (checked) reads
/// the whole object, at its own type's span so that a type serde cannot read is reported there.
fn parse_arguments(function: &Function<'_>, tw: &TokenStream) -> TokenStream {
    let first = function.values().next();
    match (&function.options.input_schema, first) {
        (None, _) => {
            let input = schema::input_call(function);
            quote! {
                let (__toolwright_parse, _) = #input;
                __toolwright_parse(__toolwright_ctx.tool_name(), __toolwright_arguments)
            }
        }
        (Some(_), Some((_, value))) => {
            let ty = &value.owned;
            quote_spanned! {ty.span()=>
                #tw::parse_literal_arguments::<#ty>(
                    __toolwright_ctx.tool_name(),
                    __toolwright_arguments,
                )
            }
        }
        (Some(_), None) => quote!(::core::result::Result::<(), #tw::Output>::Ok(())),
    }
}

/// What a tool's shim passes for a parameter. The context goes through `IsContext` at the
/// parameter's type, so that a different type named `Context` is reported there, once.
fn tool_call_arg(param: &Param<'_>, tw: &TokenStream, literal: bool) -> TokenStream {
    match &param.role {
        Role::Context { by_ref } => {
            let ty = ast::strip_reference(param.ty);
            if *by_ref {
                quote_spanned!(ty.span()=> <#ty as #tw::IsContext>::from_ref(&__toolwright_ctx))
            } else {
                quote_spanned!(ty.span()=> <#ty as #tw::IsContext>::from_context(__toolwright_ctx))
            }
        }
        Role::State { by_ref } => {
            let local = state_local(param);
            if *by_ref {
                quote!(&#local)
            } else {
                quote!(#local)
            }
        }
        Role::Value(value) => {
            let ident = param.ident;
            let read = if literal {
                quote!(__toolwright_args)
            } else {
                quote!(__toolwright_args.#ident)
            };
            if value.by_ref { quote!(&#read) } else { read }
        }
    }
}

/// The local that holds a `State` parameter's value during a tool's call.
fn state_local(param: &Param<'_>) -> Ident {
    format_ident!("__toolwright_state_{}", ast::unraw(param.ident))
}

/// Takes each `State` parameter's value from the server's, before a tool's call, at the
/// parameter's type, so that a different type named `State` is reported there. A call that
/// cannot have it returns the tool error that says so.
fn state_bindings(function: &Function<'_>, tw: &TokenStream) -> TokenStream {
    let bindings = function.params.iter().filter_map(|param| {
        let Role::State { .. } = param.role else {
            return None;
        };
        let ty = ast::strip_reference(param.ty);
        let local = state_local(param);
        Some(quote_spanned! {ty.span()=>
            let #local = match #tw::take_state::<#ty>(&__toolwright_ctx) {
                ::core::result::Result::Ok(state) => state,
                ::core::result::Result::Err(output) => return output,
            };
        })
    });
    quote!(#(#bindings)*)
}

/// What a tool's return value becomes: an `Output`, through `IntoOutput` at the user's span; an
/// `Err` becomes a tool error, pointing at `E` in `Result<T, E>` (an alias such as
/// `io::Result<T>` has only itself).
fn tool_output(function: &Function<'_>, tw: &TokenStream) -> TokenStream {
    let into = |ty: &Type, value: TokenStream| quote_spanned!(ty.span()=> <#ty as #tw::IntoOutput>::into_output(#value));
    let Output::Result { error, ty, .. } = &function.output else {
        return match schema::returned(&function.output) {
            Some(ty) => into(ty, quote!(__toolwright_ret)),
            None => quote! {
                let () = __toolwright_ret;
                #tw::Output::Empty
            },
        };
    };
    let error = match error {
        Some(error) => quote_spanned!(error.span()=> #tw::Output::error::<#error>(error)),
        None => quote_spanned!(ty.span()=> #tw::Output::error(error)),
    };
    let ok = match schema::returned(&function.output) {
        Some(ok) => {
            let made = into(ok, quote!(value));
            quote!(::core::result::Result::Ok(value) => #made,)
        }
        None => quote!(::core::result::Result::Ok(()) => #tw::Output::Empty,),
    };
    quote! {
        match __toolwright_ret {
            #ok
            ::core::result::Result::Err(error) => #error,
        }
    }
}

/// A prompt's or a resource's `__toolwright_handler(input, context)`, and the variant of its
/// handler enum. An `async fn`'s handler takes the input by value and returns a boxed future.
pub(super) fn prompt_or_resource(
    function: &Function<'_>,
    tw: &TokenStream,
) -> (TokenStream, TokenStream) {
    let (input, made, handler) = match function.primitive {
        Primitive::Prompt => (
            quote!(#tw::PromptArguments),
            quote!(::core::result::Result<::std::vec::Vec<#tw::PromptMessage>, #tw::PromptError>),
            quote!(#tw::PromptHandler),
        ),
        Primitive::Tool | Primitive::Resource => (
            quote!(#tw::ResourceRequest),
            quote!(#tw::Read),
            quote!(#tw::ResourceHandler),
        ),
    };
    let fn_ident = &function.func.sig.ident;
    let (reads, call_args) = string_reads(function, tw);
    let await_ = function.is_async().then(|| quote!(.await));
    let convert = string_output(function, tw);
    let body = quote! {
        #(#reads)*
        let __toolwright_ret = #fn_ident(#(#call_args),*) #await_;
        #convert
    };
    if function.is_async() {
        let shim = quote! {
            #[allow(unused_variables)]
            fn __toolwright_handler(
                __toolwright_owned: #input,
                __toolwright_ctx: #tw::Context,
            ) -> #tw::BoxFuture<#made> {
                ::std::boxed::Box::pin(async move {
                    let __toolwright_input = &__toolwright_owned;
                    #body
                })
            }
        };
        return (shim, quote!(#handler::Async(__toolwright_handler)));
    }
    let shim = quote! {
        #[allow(unused_variables)]
        fn __toolwright_handler(
            __toolwright_input: &#input,
            __toolwright_ctx: #tw::Context,
        ) -> #made {
            #body
        }
    };
    let variant = if function.blocks() {
        quote!(#handler::Blocking(__toolwright_handler))
    } else {
        quote!(#handler::Sync(__toolwright_handler))
    };
    (shim, variant)
}

/// The statements that read each parameter of a prompt or a resource from the input
/// `__toolwright_input` and the context `__toolwright_ctx`, and what the call passes for each.
fn string_reads(function: &Function<'_>, tw: &TokenStream) -> (Vec<TokenStream>, Vec<TokenStream>) {
    let take_state = match function.primitive {
        Primitive::Prompt => quote!(#tw::take_prompt_state),
        Primitive::Tool | Primitive::Resource => quote!(#tw::take_resource_state),
    };
    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    for param in &function.params {
        let local = format_ident!("__toolwright_{}", ast::unraw(param.ident));
        let by_ref = match &param.role {
            Role::Context { by_ref } => {
                // Through `IsContext` at the parameter's type, so that another type named
                // `Context` is reported there, once.
                let ty = ast::strip_reference(param.ty);
                call_args.push(if *by_ref {
                    quote_spanned!(ty.span()=> <#ty as #tw::IsContext>::from_ref(&__toolwright_ctx))
                } else {
                    quote_spanned!(ty.span()=> <#ty as #tw::IsContext>::from_context(__toolwright_ctx.clone()))
                });
                continue;
            }
            Role::State { by_ref } => {
                let ty = ast::strip_reference(param.ty);
                reads.push(quote_spanned! {ty.span()=>
                    let #local = #take_state::<#ty>(&__toolwright_ctx)?;
                });
                *by_ref
            }
            Role::Value(value) => {
                let read = value.optional.as_ref().unwrap_or(&value.owned);
                let name = &value.name;
                let made = match function.primitive {
                    Primitive::Prompt => {
                        let prompt = &function.name;
                        let reader = if value.optional.is_some() {
                            quote_spanned!(read.span()=> #tw::read_optional_argument::<#read>)
                        } else {
                            quote_spanned!(read.span()=> #tw::read_argument::<#read>)
                        };
                        quote!(#reader(#prompt, __toolwright_input, #name))
                    }
                    Primitive::Tool | Primitive::Resource => {
                        quote_spanned!(read.span()=> #tw::read_variable::<#read>(__toolwright_input, #name))
                    }
                };
                reads.push(quote!(let #local = #made?;));
                value.by_ref
            }
        };
        call_args.push(if by_ref {
            quote!(&#local)
        } else {
            quote!(#local)
        });
    }
    (reads, call_args)
}

/// What a prompt's or a resource's return value becomes: its messages through `IntoPrompt`, its
/// contents through `IntoContents`, at the user's span; an `Err` becomes the error the client
/// reads.
fn string_output(function: &Function<'_>, tw: &TokenStream) -> TokenStream {
    let into = |ty: &Type, value: TokenStream| match function.primitive {
        Primitive::Prompt => {
            quote_spanned!(ty.span()=> <#ty as #tw::IntoPrompt>::into_messages(#value))
        }
        Primitive::Tool | Primitive::Resource => {
            quote_spanned!(ty.span()=> <#ty as #tw::IntoContents>::into_contents(#value)?)
        }
    };
    let failed = |error: Option<&Type>| match (function.primitive, error) {
        (Primitive::Prompt, Some(ty)) => {
            let prompt = &function.name;
            quote_spanned!(ty.span()=> #tw::prompt_failed::<#ty>(#prompt, error))
        }
        (Primitive::Prompt, None) => {
            let prompt = &function.name;
            quote!(#tw::prompt_failed(#prompt, error))
        }
        (Primitive::Tool | Primitive::Resource, Some(ty)) => {
            quote_spanned!(ty.span()=> #tw::resource_failed::<#ty>(error))
        }
        (Primitive::Tool | Primitive::Resource, None) => quote!(#tw::resource_failed(error)),
    };
    match &function.output {
        Output::Value(ty) => {
            let made = into(ty, quote!(__toolwright_ret));
            quote!(::core::result::Result::Ok(#made))
        }
        Output::Result { ok, error, .. } => {
            let made = into(ok, quote!(value));
            let failed = failed(*error);
            quote! {
                match __toolwright_ret {
                    ::core::result::Result::Ok(value) => ::core::result::Result::Ok(#made),
                    ::core::result::Result::Err(error) => ::core::result::Result::Err(#failed),
                }
            }
        }
        // `check` refuses a prompt or a resource that returns nothing; `()` is converted as
        // any other value, and refused by the conversion's trait.
        Output::Nothing => {
            let made = into(&syn::parse_quote!(()), quote!(__toolwright_ret));
            quote!(::core::result::Result::Ok(#made))
        }
    }
}

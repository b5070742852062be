//! Tokens out: the arguments struct, the handler shim, the schemas and the registration.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Item, Lit, Path};

use crate::ast::{Argument, Output, Param, Role, Tool};
use crate::attr::{Flag, parse_tool_attr};
use crate::check::{self, Errors};
use crate::fallback;

pub(crate) fn mcp_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let attr = parse_tool_attr(args, &mut errors);
    let func = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Fn(func)) => func,
        Ok(other) => return fallback::not_a_function(&other, input),
        Err(err) => return fallback::unparsed(input, err),
    };
    check::signature(&func, &mut errors);
    let tool = Tool::from_fn(func, attr, &mut errors);
    check::tool(&tool, &mut errors);
    match errors.take() {
        Some(err) => fallback::with_errors(&tool.func, &err),
        None => generate(&tool),
    }
}

fn generate(tool: &Tool) -> TokenStream {
    let func = &tool.func;
    let krate: Path = tool
        .attr
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::toolwright));
    let tw = quote!(#krate::__private);
    let krate_string = quote!(#krate).to_string();
    let serde_crate = format!("{krate_string}::__private::serde");
    let schemars_crate = format!("{krate_string}::__private::schemars");

    let arguments: Vec<(&Param, &Argument)> = tool
        .params
        .iter()
        .filter_map(|p| match &p.role {
            Role::Argument(arg) => Some((p, &**arg)),
            Role::Context { .. } => None,
        })
        .collect();
    let fields = arguments.iter().map(|(param, arg)| field(param, arg));
    let defaults = arguments
        .iter()
        .filter_map(|(param, arg)| default_fn(param, arg));
    let call_args = tool.params.iter().map(call_arg);
    let checks = tool.params.iter().map(|p| param_check(p, &tw));

    let fn_ident = &func.sig.ident;
    let is_async = func.sig.asyncness.is_some();
    let await_ = is_async.then(|| quote!(.await));
    let (convert, output_check, output_schema) = output(tool, &tw);
    let body = quote! {
        let __toolwright_args: __toolwright_Args =
            match #tw::parse_arguments(__toolwright_arguments) {
                ::core::result::Result::Ok(args) => args,
                ::core::result::Result::Err(output) => return output,
            };
        let __toolwright_ret = #fn_ident(#(#call_args),*) #await_;
        #convert
    };
    let (shim, handler) = if is_async {
        (
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
        )
    } else {
        (
            quote! {
                #[allow(unused_variables)]
                fn __toolwright_call(
                    __toolwright_arguments: #tw::Value,
                    __toolwright_ctx: #tw::Context,
                ) -> #tw::Output {
                    #body
                }
            },
            quote!(#tw::Handler::Blocking(__toolwright_call)),
        )
    };

    let name = &tool.name;
    let description = tool.description.as_deref().unwrap_or_default();
    let title = option_str(tool.attr.title.as_ref().map(syn::LitStr::value));
    let read_only = option_flag(tool.attr.read_only);
    let destructive = option_flag(tool.attr.destructive);
    let idempotent = option_flag(tool.attr.idempotent);
    let open_world = option_flag(tool.attr.open_world);
    let core = tool.attr.core.is_some_and(|f| f.value);
    let tags = &tool.attr.tags;
    let provider = match &tool.attr.provider {
        Some(lit) => quote!(#lit),
        None => quote!(::core::env!("CARGO_PKG_NAME")),
    };

    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, clippy::all)]
        const _: () = {
            #[derive(#tw::serde::Deserialize, #tw::schemars::JsonSchema)]
            #[serde(crate = #serde_crate)]
            #[schemars(crate = #schemars_crate)]
            struct __toolwright_Args {
                #(#fields,)*
            }

            #(#defaults)*

            #[allow(dead_code)]
            fn __toolwright_checks() {
                #(#checks)*
                #output_check
            }

            fn __toolwright_input_schema(
                generator: &mut #tw::SchemaGenerator,
            ) -> #tw::Schema {
                generator.root_schema_for::<__toolwright_Args>()
            }

            #output_schema

            #shim

            #krate::__register_tool! {
                #tw::ToolRegistration {
                    name: #name,
                    title: #title,
                    description: #description,
                    annotations: #tw::Annotations {
                        read_only: #read_only,
                        destructive: #destructive,
                        idempotent: #idempotent,
                        open_world: #open_world,
                    },
                    tags: &[#(#tags),*],
                    core: #core,
                    provider: #provider,
                    input_schema: __toolwright_input_schema,
                    output_schema: __toolwright_output_schema,
                    handler: #handler,
                    location: #tw::Location {
                        file: ::core::file!(),
                        line: ::core::line!(),
                        column: ::core::column!(),
                        module_path: ::core::module_path!(),
                    },
                }
            }
        };
    }
}

/// One field of the hidden arguments struct, named after the parameter.
fn field(param: &Param, arg: &Argument) -> TokenStream {
    let ident = &param.ident;
    let ty = &arg.field_ty;
    let doc = arg.description.as_ref().map(|d| quote!(#[doc = #d]));
    let rename = arg
        .attr
        .rename
        .as_ref()
        .map(|r| quote!(#[serde(rename = #r)]));
    let default = arg.attr.default.as_ref().map(|_| {
        let path = default_fn_name(param).to_string();
        quote!(#[serde(default = #path)])
    });
    let flatten = arg.attr.flatten.map(|_| quote!(#[serde(flatten)]));
    quote!(#doc #rename #default #flatten #ident: #ty)
}

fn default_fn_name(param: &Param) -> syn::Ident {
    let unraw = param.ident.to_string();
    format_ident!("__toolwright_default_{}", unraw.trim_start_matches("r#"))
}

/// The function serde calls for a missing argument that has `#[arg(default = ...)]`.
fn default_fn(param: &Param, arg: &Argument) -> Option<TokenStream> {
    let expr = arg.attr.default.as_ref()?;
    let name = default_fn_name(param);
    let ty = &arg.field_ty;
    // A string literal is converted, so `default = "x"` works for `String`, `PathBuf` and `Cow`;
    // other expressions must have the parameter's type, so integer literals infer it.
    let value = match expr {
        Expr::Lit(ExprLit {
            lit: Lit::Str(_), ..
        }) => quote_spanned!(expr.span()=> ::core::convert::Into::into(#expr)),
        _ => quote_spanned!(expr.span()=> #expr),
    };
    Some(quote! {
        fn #name() -> #ty {
            #value
        }
    })
}

fn call_arg(param: &Param) -> TokenStream {
    match &param.role {
        Role::Context { by_ref: false } => quote!(__toolwright_ctx),
        Role::Context { by_ref: true } => quote!(&__toolwright_ctx),
        Role::Argument(arg) => {
            let ident = &param.ident;
            if arg.by_ref {
                quote!(&__toolwright_args.#ident)
            } else {
                quote!(__toolwright_args.#ident)
            }
        }
    }
}

/// A bound check at the parameter's own type, so that rustc's error points at the user's token
/// and carries the runtime's `on_unimplemented` message.
fn param_check(param: &Param, tw: &TokenStream) -> TokenStream {
    let span = param.ty.span();
    match &param.role {
        Role::Context { .. } => {
            let ty = strip_reference(&param.ty);
            quote_spanned!(span=> #tw::assert_context::<#ty>();)
        }
        Role::Argument(arg) => {
            let ty = &arg.field_ty;
            quote_spanned!(span=> #tw::assert_argument::<#ty>();)
        }
    }
}

fn strip_reference(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Reference(r) => &r.elem,
        other => other,
    }
}

/// The conversion of the return value, the bound checks on the output type, and the output
/// schema function.
fn output(tool: &Tool, tw: &TokenStream) -> (TokenStream, TokenStream, TokenStream) {
    let no_schema = quote! {
        fn __toolwright_output_schema(
            _: &mut #tw::SchemaGenerator,
        ) -> ::core::option::Option<#tw::Schema> {
            ::core::option::Option::None
        }
    };
    let schema_of = |ty: &syn::Type| {
        quote_spanned! {ty.span()=>
            fn __toolwright_output_schema(
                generator: &mut #tw::SchemaGenerator,
            ) -> ::core::option::Option<#tw::Schema> {
                <#ty as #tw::ToolOutput>::output_schema(generator)
            }
        }
    };
    let check_of = |ty: &syn::Type| quote_spanned!(ty.span()=> #tw::assert_output::<#ty>(););
    match &tool.output {
        Output::Unit => (
            quote! {
                let () = __toolwright_ret;
                #tw::Output::empty()
            },
            TokenStream::new(),
            no_schema,
        ),
        Output::Value(ty) => (
            quote_spanned!(ty.span()=> #tw::ToolOutput::into_output(__toolwright_ret)),
            check_of(ty),
            schema_of(ty),
        ),
        Output::Result { ok, span } => {
            let error = quote_spanned!(*span=> #tw::Output::error(error));
            match ok {
                None => (
                    quote! {
                        match __toolwright_ret {
                            ::core::result::Result::Ok(()) => #tw::Output::empty(),
                            ::core::result::Result::Err(error) => #error,
                        }
                    },
                    TokenStream::new(),
                    no_schema,
                ),
                Some(ty) => {
                    let ok = quote_spanned!(ty.span()=> #tw::ToolOutput::into_output(value));
                    (
                        quote! {
                            match __toolwright_ret {
                                ::core::result::Result::Ok(value) => #ok,
                                ::core::result::Result::Err(error) => #error,
                            }
                        },
                        check_of(ty),
                        schema_of(ty),
                    )
                }
            }
        }
    }
}

fn option_str(value: Option<String>) -> TokenStream {
    match value {
        Some(s) => quote!(::core::option::Option::Some(#s)),
        None => quote!(::core::option::Option::None),
    }
}

fn option_flag(flag: Option<Flag>) -> TokenStream {
    match flag {
        Some(Flag { value, .. }) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

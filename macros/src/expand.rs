//! Tokens out: the arguments struct, the handler shim, the schemas and the registration.

use proc_macro2::TokenStream;
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Item, Lit, Path};

use crate::ast::{Argument, Output, Param, Role, Tool};
use crate::attr::{Flag, parse_tool_attr};
use crate::check;
use crate::errors::Errors;
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

    let arguments: Vec<(&Param, &Argument)> = tool.arguments().collect();
    // Each argument without a default is a type parameter of the arguments struct, so that the
    // derives hold for any types and the user's types meet a bound only where `#input` names
    // them, at their own spans: a type that cannot be an argument is then one error at that type
    // (both uses of `#input` report it identically, and rustc prints it once), not one per place
    // the derives use it. A default is a function of the concrete type, so those fields keep it.
    let type_params: Vec<syn::Ident> = (0..arguments.len())
        .map(|i| format_ident!("__toolwright_T{}", i))
        .collect();
    let struct_params: Vec<&syn::Ident> = arguments
        .iter()
        .zip(&type_params)
        .filter(|((_, arg), _)| arg.attr.default.is_none())
        .map(|(_, param)| param)
        .collect();
    let fields = arguments
        .iter()
        .zip(&type_params)
        .map(|((param, arg), type_param)| field(param, arg, type_param));
    let defaults = arguments
        .iter()
        .filter_map(|(param, arg)| default_fn(param, arg));
    // Unknown arguments are refused by serde too, as the schema's `additionalProperties: false`
    // says, so that a server built without the `validate` feature refuses them as well. serde
    // cannot do it for a struct with a flattened field, which takes the other keys.
    let deny_unknown = arguments
        .iter()
        .all(|(_, arg)| arg.attr.flatten.is_none())
        .then(|| quote!(#[serde(deny_unknown_fields)]));
    let argument_types: Vec<&syn::Type> = arguments.iter().map(|(_, arg)| &arg.field_ty).collect();
    // An argument mirrored in a header is a string, an integer or a boolean: checked at its type.
    let header_checks = arguments
        .iter()
        .filter(|(_, arg)| arg.attr.header.is_some())
        .map(|(_, arg)| {
            let ty = &arg.field_ty;
            quote_spanned! {ty.span()=>
                const _: fn() = || {
                    fn mirrored<T: #tw::HeaderArgument>() {}
                    mirrored::<#ty>();
                };
            }
        });
    let input = quote!(__toolwright_input::<#(#argument_types),*>());
    let literal = tool.attr.input_schema.as_ref();
    let call_args = tool
        .params
        .iter()
        .map(|p| call_arg(p, &tw, literal.is_some()));

    let fn_ident = &func.sig.ident;
    let is_async = func.sig.asyncness.is_some();
    let await_ = is_async.then(|| quote!(.await));
    let (convert, output_schema) = output(tool, &tw);
    // With a literal schema the one argument parameter (checked) reads the whole object, at its
    // own type's span so that a type serde cannot read is reported there.
    let parse = match (literal, arguments.first()) {
        (None, _) => quote! {
            let (__toolwright_parse, _) = #input;
            __toolwright_parse(__toolwright_ctx.tool_name(), __toolwright_arguments)
        },
        (Some(_), Some((_, arg))) => {
            let ty = &arg.field_ty;
            quote_spanned! {ty.span()=>
                #tw::parse_literal_arguments::<#ty>(
                    __toolwright_ctx.tool_name(),
                    __toolwright_arguments,
                )
            }
        }
        (Some(_), None) => quote!(::core::result::Result::<(), #tw::Output>::Ok(())),
    };
    let states = state_bindings(tool, &tw);
    let body = quote! {
        let __toolwright_args = match { #parse } {
            ::core::result::Result::Ok(args) => args,
            ::core::result::Result::Err(output) => return output,
        };
        #states
        let __toolwright_ret = #fn_ident(#(#call_args),*) #await_;
        #convert
    };
    let blocking = tool.attr.blocking.is_some_and(|f| f.value);
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
            if blocking {
                quote!(#tw::Handler::Blocking(__toolwright_call))
            } else {
                quote!(#tw::Handler::Sync(__toolwright_call))
            },
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
    let scopes = &tool.attr.scopes;
    let ui_uri = option_str(tool.attr.ui.as_ref().map(syn::LitStr::value));
    let visibility = match &tool.attr.visibility {
        Some(visibility) => {
            let has = |who: &str| visibility.entries.iter().any(|e| e.value() == who);
            let (model, app) = (has("model"), has("app"));
            quote!(::core::option::Option::Some(#tw::Visibility { model: #model, app: #app }))
        }
        None => quote!(::core::option::Option::None),
    };
    let state_types = state_types(tool, &tw);
    let location = location(&tw);
    let provider = match (&tool.attr.provider, &tool.package) {
        (Some(lit), _) => quote!(#lit),
        (None, Some(package)) => quote!(#package),
        (None, None) => quote!(::core::env!("CARGO_PKG_NAME")),
    };

    let (input_items, input_schema) = match literal {
        Some(lit) => (quote!(), quote!(#tw::InputSchema::Literal(#lit))),
        None => (
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
            },
            quote!(#tw::InputSchema::Derived(__toolwright_input_schema)),
        ),
    };

    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, clippy::all)]
        const _: () = {
            #input_items

            #(#header_checks)*

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
                    scopes: &[#(#scopes),*],
                    core: #core,
                    provider: #provider,
                    ui: #tw::ToolUi {
                        resource_uri: #ui_uri,
                        visibility: #visibility,
                    },
                    input_schema: #input_schema,
                    output_schema: __toolwright_output_schema,
                    states: #state_types,
                    handler: #handler,
                    location: #location,
                }
            }
        };
    }
}

/// One field of the hidden arguments struct, named after the parameter: of its type parameter,
/// or of its own type when it has a default.
fn field(param: &Param, arg: &Argument, type_param: &syn::Ident) -> TokenStream {
    let ident = &param.ident;
    let ty = match arg.attr.default {
        Some(_) => arg.field_ty.to_token_stream(),
        None => type_param.to_token_stream(),
    };
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
    let header = arg
        .attr
        .header
        .as_ref()
        .map(|h| quote!(#[schemars(extend("x-mcp-header" = #h))]));
    quote!(#doc #rename #default #flatten #header #ident: #ty)
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

/// What the shim passes for a parameter. The context goes through `IsContext` at the
/// parameter's type, so that a different type named `Context` is reported there, once.
fn call_arg(param: &Param, tw: &TokenStream, literal: bool) -> TokenStream {
    match &param.role {
        Role::Context { by_ref } => {
            let ty = strip_reference(&param.ty);
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
        Role::Argument(arg) => {
            let ident = &param.ident;
            let value = if literal {
                quote!(__toolwright_args)
            } else {
                quote!(__toolwright_args.#ident)
            };
            if arg.by_ref { quote!(&#value) } else { value }
        }
    }
}

/// The local that holds a `State` parameter's value during the call.
fn state_local(param: &Param) -> syn::Ident {
    let unraw = param.ident.to_string();
    format_ident!("__toolwright_state_{}", unraw.trim_start_matches("r#"))
}

/// Takes each `State` parameter's value from the server's, before the call, at the parameter's
/// type, so that a different type named `State` is reported there. A call that cannot have it
/// returns the tool error that says so.
fn state_bindings(tool: &Tool, tw: &TokenStream) -> TokenStream {
    let bindings = tool.params.iter().filter_map(|param| {
        let Role::State { .. } = param.role else {
            return None;
        };
        let ty = strip_reference(&param.ty);
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

/// The state types the tool takes, for the server to check at start: the `T` of each `State<T>`,
/// named without a trait bound, so that a type that cannot be state is reported once, by
/// `state_bindings`. A parameter named `State` without one type argument goes through the
/// trait, which refuses it.
fn state_types(tool: &Tool, tw: &TokenStream) -> TokenStream {
    let types = tool.params.iter().filter_map(|param| {
        let Role::State { .. } = param.role else {
            return None;
        };
        let ty = strip_reference(&param.ty);
        Some(match state_inner(ty) {
            Some(inner) => quote_spanned! {inner.span()=>
                #tw::StateType {
                    id: ::core::any::TypeId::of::<#inner>,
                    name: ::core::any::type_name::<#inner>,
                }
            },
            None => quote_spanned!(ty.span()=> <#ty as #tw::FromState>::TYPE),
        })
    });
    quote!(&[#(#types),*])
}

/// The `T` of a type written `State<T>`.
fn state_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let syn::PathArguments::AngleBracketed(arguments) = &path.path.segments.last()?.arguments
    else {
        return None;
    };
    match arguments.args.iter().collect::<Vec<_>>().as_slice() {
        [syn::GenericArgument::Type(inner)] => Some(inner),
        _ => None,
    }
}

fn strip_reference(ty: &syn::Type) -> &syn::Type {
    match ty {
        syn::Type::Reference(r) => &r.elem,
        other => other,
    }
}

/// The conversion of the return value and the output schema function. Both name the output
/// type the same way at the user's span, so a type that cannot be returned gives rustc the same
/// diagnostic twice, which it prints once.
fn output(tool: &Tool, tw: &TokenStream) -> (TokenStream, TokenStream) {
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
                <#ty as #tw::IntoOutput>::output_schema(generator)
            }
        }
    };
    let convert = |ty: &syn::Type, value: TokenStream| quote_spanned!(ty.span()=> <#ty as #tw::IntoOutput>::into_output(#value));
    match &tool.output {
        Output::Unit => (
            quote! {
                let () = __toolwright_ret;
                #tw::Output::Empty
            },
            no_schema,
        ),
        Output::Value(ty) => (convert(ty, quote!(__toolwright_ret)), schema_of(ty)),
        Output::Result { ok, error, span } => {
            // Point at `E` in `Result<T, E>`; an alias such as `io::Result<T>` has only itself.
            let error = match error {
                Some(ty) => quote_spanned!(ty.span()=> #tw::Output::error::<#ty>(error)),
                None => quote_spanned!(*span=> #tw::Output::error(error)),
            };
            match ok {
                None => (
                    quote! {
                        match __toolwright_ret {
                            ::core::result::Result::Ok(()) => #tw::Output::Empty,
                            ::core::result::Result::Err(error) => #error,
                        }
                    },
                    no_schema,
                ),
                Some(ty) => {
                    let ok = convert(ty, quote!(value));
                    (
                        quote! {
                            match __toolwright_ret {
                                ::core::result::Result::Ok(value) => #ok,
                                ::core::result::Result::Err(error) => #error,
                            }
                        },
                        schema_of(ty),
                    )
                }
            }
        }
    }
}

/// Where the attribute is, as the registration records it.
pub(crate) fn location(tw: &TokenStream) -> TokenStream {
    quote! {
        #tw::Location {
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
            module_path: ::core::module_path!(),
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

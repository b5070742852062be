//! Parameters read from strings: a prompt's arguments (`#[mcp_prompt]`) and a resource
//! template's variables (`#[mcp_resource]`). Both take `State<T>` too, and return a value or a
//! `Result` of one; what differs between them is said by a [`Kind`].

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, ReturnType, Type, TypePath,
    TypeReference,
};

use crate::ast;
use crate::attr::parse_arg_attrs;
use crate::errors::Errors;

/// What the parameters are read for, in the words of the messages.
pub(crate) struct Kind {
    /// The item: `prompt`, `resource`.
    pub(crate) item: &'static str,
    /// One of its string parameters: `prompt argument`, `template variable`.
    pub(crate) value: &'static str,
    /// The same, where the item is named beside it: `argument`, `variable`.
    pub(crate) short: &'static str,
    /// What the item does with them: `makes messages`, `reads its contents`.
    pub(crate) makes: &'static str,
    /// Whether a parameter may be `Option<T>`: a prompt argument may be left out, a template
    /// variable is always in the URI.
    pub(crate) optional: bool,
    /// Whether the item may take the `Context`: a prompt, to ask the client for input.
    pub(crate) context: bool,
}

pub(crate) struct Param {
    pub(crate) ident: Ident,
    pub(crate) ty: Type,
    pub(crate) role: Role,
}

pub(crate) enum Role {
    /// `Context` or `&Context`.
    Context { by_ref: bool },
    /// `State<T>` or `&State<T>`.
    State { by_ref: bool },
    Text {
        /// The type read from the string.
        read: Box<Type>,
        /// The name clients send.
        name: String,
        description: Option<String>,
        /// `Option<T>`: not required, `None` when absent.
        optional: bool,
        /// The function borrows the value (`&str`, `&T`).
        by_ref: bool,
    },
}

impl Param {
    /// The name clients send, for a string parameter.
    pub(crate) fn text_name(&self) -> Option<&str> {
        match &self.role {
            Role::Text { name, .. } => Some(name),
            Role::Context { .. } | Role::State { .. } => None,
        }
    }
}

pub(crate) enum Output {
    Value(Type),
    Result { ok: Type, error: Option<Box<Type>> },
}

/// The parameters in their roles; `#[arg]` and doc comments are taken off them.
pub(crate) fn params(func: &mut ItemFn, kind: &Kind, errors: &mut Errors) -> Vec<Param> {
    let Kind { item, value, .. } = kind;
    let mut params = Vec::new();
    for input in &mut func.sig.inputs {
        let pat_type = match input {
            FnArg::Receiver(receiver) => {
                errors.push(syn::Error::new(
                    receiver.self_token.span,
                    format!(
                        "`#[mcp_{item}]` goes on a free function, not a method: move it out of \
                         the `impl` block, and take shared state as `State<T>`"
                    ),
                ));
                continue;
            }
            FnArg::Typed(pat_type) => pat_type,
        };
        let attr = parse_arg_attrs(&pat_type.attrs, errors);
        let description = crate::docs::description(&pat_type.attrs);
        pat_type
            .attrs
            .retain(|a| !a.path().is_ident("doc") && !a.path().is_ident("arg"));
        let ident = match &*pat_type.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    format!(
                        "a {item} parameter needs a plain name, which becomes the {value}'s \
                         name: write `name: Type`"
                    ),
                ));
                continue;
            }
        };
        if let Some(expr) = &attr.default {
            errors.push(syn::Error::new_spanned(
                expr,
                if kind.optional {
                    format!(
                        "a {value} takes no default: make it `Option<T>` and choose the default \
                         in the body"
                    )
                } else {
                    format!("a {value} takes no default: it is always in the URI")
                },
            ));
        }
        if let Some(span) = attr.flatten {
            errors.push(syn::Error::new(
                span,
                format!("a {value} cannot be flattened: each parameter is one string"),
            ));
        }
        if let Some(header) = &attr.header {
            errors.push(syn::Error::new(
                header.span(),
                format!(
                    "a {value} is not mirrored in a header: only a tool's arguments are \
                     (`Mcp-Param-<header>`)"
                ),
            ));
        }
        let ty = (*pat_type.ty).clone();
        // The parameters the runtime supplies, by the name of their type, as for tools.
        let supplied = match ast::supplied_param(&ty, "Context", false) {
            Some(by_ref) => Some(("Context", Role::Context { by_ref })),
            None => ast::supplied_param(&ty, "State", true)
                .map(|by_ref| ("State", Role::State { by_ref })),
        };
        if let Some((name, role)) = supplied {
            if matches!(role, Role::Context { .. }) && !kind.context {
                errors.push(syn::Error::new_spanned(
                    &ty,
                    format!(
                        "a {item} takes no `Context`: it {} from its {}s and state, and sends \
                         nothing to the client",
                        kind.makes, kind.short
                    ),
                ));
                continue;
            }
            if let Some(span) = attr.span {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "a `{name}` parameter is supplied by the runtime and takes no `#[arg]`; \
                         remove the attribute"
                    ),
                ));
            }
            params.push(Param { ident, ty, role });
            continue;
        }
        let (inner, by_ref) = match &ty {
            Type::Reference(TypeReference {
                elem,
                mutability: None,
                ..
            }) => ((**elem).clone(), true),
            Type::Reference(r) => {
                errors.push(syn::Error::new_spanned(
                    r,
                    format!("a {value} cannot be borrowed mutably: take the value or `&T`"),
                ));
                continue;
            }
            other => (other.clone(), false),
        };
        let (read, optional) = match option_inner(&inner) {
            Some(inner_type) if !kind.optional => {
                errors.push(syn::Error::new_spanned(
                    &inner,
                    format!(
                        "a {value} cannot be optional: the template matches a URI only where \
                         each of its variables has a value; take `T`, not `Option<T>`"
                    ),
                ));
                // Read as `T`, so that the parameter still names its variable.
                (inner_type.clone(), false)
            }
            Some(inner) => (inner.clone(), true),
            None => (inner, false),
        };
        // `&str` is read as a `String` and lent.
        let read = match &read {
            Type::Path(p) if by_ref && p.qself.is_none() && p.path.is_ident("str") => {
                syn::parse_quote_spanned!(read.span()=> ::std::string::String)
            }
            _ => read,
        };
        let name = match &attr.rename {
            Some(lit) => lit.value(),
            None => ident.to_string().trim_start_matches("r#").to_owned(),
        };
        params.push(Param {
            ident,
            ty,
            role: Role::Text {
                read: Box::new(read),
                name,
                description,
                optional,
                by_ref,
            },
        });
    }
    params
}

/// A mistake for each string parameter named twice.
pub(crate) fn unique_names(params: &[Param], kind: &Kind, errors: &mut Errors) {
    let mut names: Vec<&str> = Vec::new();
    for param in params {
        if let Some(name) = param.text_name() {
            if names.contains(&name) {
                errors.push(syn::Error::new(
                    param.ident.span(),
                    format!(
                        "two {}s of this {} are named `{name}`; rename one",
                        kind.short, kind.item
                    ),
                ));
            }
            names.push(name);
        }
    }
}

/// The `T` of `Option<T>`.
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(TypePath {
        qself: None, path, ..
    }) = ty
    else {
        return None;
    };
    let segment = path.segments.last()?;
    if segment.ident != "Option" {
        return None;
    }
    match &segment.arguments {
        PathArguments::AngleBracketed(args) => match args.args.first()? {
            GenericArgument::Type(inner) if args.args.len() == 1 => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// The return type; `missing` says what to return when there is none.
pub(crate) fn output(sig: &syn::Signature, missing: &str, errors: &mut Errors) -> Option<Output> {
    let ty = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            // Where the return type goes.
            errors.push(syn::Error::new(sig.paren_token.span.close(), missing));
            return None;
        }
    };
    if let Some((ok, error)) = ast::result_parts(&ty) {
        return Some(Output::Result {
            ok: ok.clone(),
            error: error.cloned().map(Box::new),
        });
    }
    Some(Output::Value(ty))
}

/// The tokens around one parameter: the local it is read into, the statement that reads it
/// (with `read_text(read_type, name, optional)` for a string parameter, and `take_state` for a
/// state), and what the call passes.
pub(crate) struct Reads {
    pub(crate) reads: Vec<TokenStream>,
    pub(crate) call_args: Vec<TokenStream>,
    /// The state types taken, for the registration.
    pub(crate) states: Vec<TokenStream>,
}

/// Reads every parameter: `read_text` makes the expression that reads a string parameter,
/// `take_state` names the function that takes a state from `__toolwright_ctx`.
pub(crate) fn reads(
    params: &[Param],
    tw: &TokenStream,
    take_state: &TokenStream,
    mut read_text: impl FnMut(&Type, &str, bool) -> TokenStream,
) -> Reads {
    let mut out = Reads {
        reads: Vec::new(),
        call_args: Vec::new(),
        states: Vec::new(),
    };
    for param in params {
        let local = format_ident!(
            "__toolwright_{}",
            param.ident.to_string().trim_start_matches("r#")
        );
        let by_ref = match &param.role {
            Role::Context { by_ref } => {
                // Through `IsContext` at the parameter's type, so that another type named
                // `Context` is reported there, once.
                let ty = match &param.ty {
                    Type::Reference(r) => &*r.elem,
                    other => other,
                };
                out.call_args.push(if *by_ref {
                    quote_spanned!(ty.span()=> <#ty as #tw::IsContext>::from_ref(&__toolwright_ctx))
                } else {
                    quote_spanned!(ty.span()=> <#ty as #tw::IsContext>::from_context(__toolwright_ctx.clone()))
                });
                continue;
            }
            Role::State { by_ref } => {
                let ty = match &param.ty {
                    Type::Reference(r) => &*r.elem,
                    other => other,
                };
                out.reads.push(quote_spanned! {ty.span()=>
                    let #local = #take_state::<#ty>(&__toolwright_ctx)?;
                });
                out.states
                    .push(quote_spanned! {ty.span()=> <#ty as #tw::FromState>::TYPE });
                *by_ref
            }
            Role::Text {
                read,
                name,
                optional,
                by_ref,
                ..
            } => {
                let value = read_text(read, name, *optional);
                out.reads.push(quote!(let #local = #value?;));
                *by_ref
            }
        };
        out.call_args.push(if by_ref {
            quote!(&#local)
        } else {
            quote!(#local)
        });
    }
    out
}

/// `Some(#value)` or `None`.
pub(crate) fn option_tokens(value: Option<impl quote::ToTokens>) -> TokenStream {
    match value {
        Some(value) => quote!(::core::option::Option::Some(#value)),
        None => quote!(::core::option::Option::None),
    }
}

/// What the function's return value becomes: `into(type, value)` converts a value, `failed(E)`
/// makes the error of an `Err(error)`.
pub(crate) fn convert(
    output: &Output,
    into: impl Fn(&Type, TokenStream) -> TokenStream,
    failed: impl Fn(Option<&Type>) -> TokenStream,
) -> TokenStream {
    match output {
        Output::Value(ty) => {
            let made = into(ty, quote!(__toolwright_ret));
            quote!(::core::result::Result::Ok(#made))
        }
        Output::Result { ok, error } => {
            let made = into(ok, quote!(value));
            let failed = failed(error.as_deref());
            quote! {
                match __toolwright_ret {
                    ::core::result::Result::Ok(value) => ::core::result::Result::Ok(#made),
                    ::core::result::Result::Err(error) => ::core::result::Result::Err(#failed),
                }
            }
        }
    }
}

/// The function the runtime calls, `__toolwright_handler`, which reads the parameters, calls the
/// user's function and converts what it returns (`convert`), and the variant of `handler` (the
/// runtime's enum: `Async`, `Blocking` or `Sync`) that names it. The body reads its input as
/// `__toolwright_input: &Input` and its context as `__toolwright_ctx`, and evaluates to `Made`;
/// an `async fn`'s handler takes the input by value and returns a boxed future.
#[allow(clippy::too_many_arguments)]
pub(crate) fn handler(
    tw: &TokenStream,
    func: &ItemFn,
    blocking: bool,
    reads: &Reads,
    convert: &TokenStream,
    input: &TokenStream,
    made: &TokenStream,
    handler: &TokenStream,
) -> (TokenStream, TokenStream) {
    let fn_ident = &func.sig.ident;
    let Reads {
        reads, call_args, ..
    } = reads;
    let is_async = func.sig.asyncness.is_some();
    let await_ = is_async.then(|| quote!(.await));
    let body = quote! {
        #(#reads)*
        let __toolwright_ret = #fn_ident(#(#call_args),*) #await_;
        #convert
    };
    if is_async {
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
    let variant = if blocking {
        quote!(#handler::Blocking(__toolwright_handler))
    } else {
        quote!(#handler::Sync(__toolwright_handler))
    };
    (shim, variant)
}

/// The user's function, unchanged, and beside it, out of sight, the handler `shim` and the
/// `registration` it submits to the registry.
pub(crate) fn registered(
    func: &ItemFn,
    krate: &syn::Path,
    shim: &TokenStream,
    registration: &TokenStream,
) -> TokenStream {
    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, clippy::all)]
        const _: () = {
            #shim

            #krate::__register_tool! { #registration }
        };
    }
}

//! `#[mcp_prompt]`: a function's parameters become a prompt's string arguments, its return value
//! the prompt's messages. The stages are those of `#[mcp_tool]` on a smaller scale: options,
//! parameters, checks, tokens; mistakes go to one accumulator.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, Item, ItemFn, LitStr, Pat, Path, PathArguments, ReturnType,
    Type, TypePath, TypeReference,
};

use crate::attr::{self, parse_arg_attrs};
use crate::errors::Errors;
use crate::{ast, check, docs, expand, fallback, rules};

const OPTIONS: &[&str] = &["name", "title", "description", "complete", "crate"];

#[derive(Default)]
struct PromptAttr {
    name: Option<LitStr>,
    title: Option<LitStr>,
    description: Option<LitStr>,
    krate: Option<Path>,
    /// `complete(argument = completer, ...)`: each argument's name as written, and the path of
    /// the function that completes it.
    complete: Vec<(Ident, Path)>,
    seen: Vec<String>,
    /// An option could not be read; it may have been the description.
    incomplete: bool,
}

struct Param {
    ident: Ident,
    ty: Type,
    role: Role,
}

enum Role {
    /// `State<T>` or `&State<T>`.
    State { by_ref: bool },
    Argument {
        /// The type read from the argument's string.
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

enum Output {
    Value(Type),
    Result { ok: Type, error: Option<Box<Type>> },
}

pub(crate) fn mcp_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let attr = parse_attr(args, &mut errors);
    let mut func = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Fn(func)) => func,
        Ok(item) => {
            let error = syn::Error::new_spanned(
                item,
                "`#[mcp_prompt]` goes on a free `fn` or `async fn` whose parameters are the \
                 prompt's arguments",
            )
            .to_compile_error();
            return quote!(#input #error);
        }
        Err(err) => return fallback::unparsed(input, err),
    };
    check::signature_of(
        &func,
        "prompt",
        "its arguments are fixed at compile time",
        &mut errors,
    );
    let params = params(&mut func, &mut errors);
    let output = output(&func.sig, &mut errors);
    let name = ast::name_of(attr.name.as_ref(), &func);
    if let Err(problem) = rules::tool_name(&name) {
        let span = attr
            .name
            .as_ref()
            .map_or(func.sig.ident.span(), LitStr::span);
        errors.push(syn::Error::new(
            span,
            format!(
                "invalid prompt name `{name}`: {problem}; a prompt's name is 1 to {} of `A-Z a-z \
                 0-9 _ - .`",
                rules::MAX_TOOL_NAME_LEN
            ),
        ));
    }
    let description = match &attr.description {
        Some(lit) => Some(lit.value()),
        None => docs::description(&func.attrs),
    };
    if description.is_none() && !attr.incomplete {
        errors.push(syn::Error::new(
            func.sig.ident.span(),
            "a prompt needs a description, for the user who picks it: write a doc comment \
             (`/// ...`) on the function, or `#[mcp_prompt(description = \"...\")]`",
        ));
    }
    for (argument, _) in &attr.complete {
        let named = params.iter().any(|p| match &p.role {
            Role::Argument { name, .. } => argument == name,
            Role::State { .. } => false,
        });
        if !named {
            errors.push(syn::Error::new(
                argument.span(),
                format!("`complete` names `{argument}`, which is not an argument of this prompt"),
            ));
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for param in &params {
        if let Role::Argument { name, .. } = &param.role {
            if names.contains(&name.as_str()) {
                errors.push(syn::Error::new(
                    param.ident.span(),
                    format!("two arguments of this prompt are named `{name}`; rename one"),
                ));
            }
            names.push(name);
        }
    }
    match (errors.take(), output) {
        (None, Some(output)) => generate(
            &func,
            &attr,
            &name,
            &description.unwrap_or_default(),
            &params,
            &output,
        ),
        (Some(err), _) => fallback::with_errors(&func, &err),
        (None, None) => unreachable!("a missing output is reported"),
    }
}

fn parse_attr(args: TokenStream, errors: &mut Errors) -> PromptAttr {
    let mut attr = PromptAttr::default();
    let parser = syn::meta::parser(|meta| {
        if let Err(err) = attr.option(&meta) {
            errors.push(err);
            attr.incomplete = true;
            attr::skip_value(&meta)?;
        }
        Ok(())
    });
    if let Err(err) = parser.parse2(args) {
        errors.push(err);
        attr.incomplete = true;
    }
    attr
}

impl PromptAttr {
    fn option(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = if meta.path.is_ident("crate") {
            "crate".to_owned()
        } else {
            meta.path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default()
        };
        if !OPTIONS.contains(&key.as_str()) {
            return Err(meta.error(format!(
                "unknown `mcp_prompt` option `{key}`; expected one of {}",
                attr::expected(OPTIONS)
            )));
        }
        if self.seen.contains(&key) {
            return Err(meta.error(format!(
                "`mcp_prompt` option `{key}` is given twice; keep one"
            )));
        }
        self.seen.push(key.clone());
        if key == "complete" {
            let usage = "`complete` names a completer for each argument: \
                         `complete(tag = tag_names)`";
            return meta.parse_nested_meta(|inner| {
                let Some(argument) = inner.path.get_ident().cloned() else {
                    return Err(inner.error(usage));
                };
                let value = inner.value().map_err(|_| inner.error(usage))?;
                let path: Path = value.parse()?;
                if self.complete.iter().any(|(a, _)| *a == argument) {
                    return Err(inner.error(format!(
                        "argument `{argument}` has a completer already; keep one"
                    )));
                }
                self.complete.push((argument, path));
                Ok(())
            });
        }
        if key == "crate" {
            let value = meta
                .value()
                .map_err(|_| meta.error("`crate` takes a path: `crate = my_toolwright`"))?;
            self.krate = Some(value.call(Path::parse_mod_style)?);
            return Ok(());
        }
        let value = attr::string_value(meta, &key)?;
        match key.as_str() {
            "name" => self.name = Some(value),
            "title" => self.title = Some(value),
            _ => self.description = Some(value),
        }
        Ok(())
    }
}

/// The parameters in their roles; `#[arg]` and doc comments are taken off them.
fn params(func: &mut ItemFn, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for input in &mut func.sig.inputs {
        let pat_type = match input {
            FnArg::Receiver(receiver) => {
                errors.push(syn::Error::new(
                    receiver.self_token.span,
                    "`#[mcp_prompt]` goes on a free function, not a method: move it out of the \
                     `impl` block, and take shared state as `State<T>`",
                ));
                continue;
            }
            FnArg::Typed(pat_type) => pat_type,
        };
        let attr = parse_arg_attrs(&pat_type.attrs, errors);
        let description = docs::description(&pat_type.attrs);
        pat_type
            .attrs
            .retain(|a| !a.path().is_ident("doc") && !a.path().is_ident("arg"));
        let ident = match &*pat_type.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    "a prompt parameter needs a plain name, which becomes the argument's name: \
                     write `name: Type`",
                ));
                continue;
            }
        };
        if let Some(expr) = &attr.default {
            errors.push(syn::Error::new_spanned(
                expr,
                "a prompt argument takes no default: make it `Option<T>` and choose the default \
                 in the body",
            ));
        }
        if let Some(span) = attr.flatten {
            errors.push(syn::Error::new(
                span,
                "a prompt argument cannot be flattened: its arguments are strings, one per \
                 parameter",
            ));
        }
        let ty = (*pat_type.ty).clone();
        // The parameters the runtime supplies, by the name of their type, as for tools.
        if ast::supplied_param(&ty, "Context", true).is_some() {
            errors.push(syn::Error::new_spanned(
                &ty,
                "a prompt takes no `Context`: it makes messages from its arguments and state, \
                 and sends nothing to the client",
            ));
            continue;
        }
        if let Some(by_ref) = ast::supplied_param(&ty, "State", true) {
            if let Some(span) = attr.span {
                errors.push(syn::Error::new(
                    span,
                    "a `State` parameter is supplied by the runtime and takes no `#[arg]`; \
                     remove the attribute",
                ));
            }
            params.push(Param {
                ident,
                ty,
                role: Role::State { by_ref },
            });
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
                    "a prompt argument cannot be borrowed mutably: take the value or `&T`",
                ));
                continue;
            }
            other => (other.clone(), false),
        };
        let (read, optional) = match option_inner(&inner) {
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
            role: Role::Argument {
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

fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(TypePath {
            qself: None, path, ..
        }) => path.segments.last(),
        _ => None,
    }
}

/// The `T` of `Option<T>`.
fn option_inner(ty: &Type) -> Option<&Type> {
    let segment = last_segment(ty)?;
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

fn output(sig: &syn::Signature, errors: &mut Errors) -> Option<Output> {
    let ty = match &sig.output {
        ReturnType::Type(_, ty) => (**ty).clone(),
        ReturnType::Default => {
            // Where the return type goes.
            errors.push(syn::Error::new(
                sig.paren_token.span.close(),
                "a prompt returns its messages: text (`String`), a `PromptMessage` or a \
                 `Vec<PromptMessage>`",
            ));
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

fn generate(
    func: &ItemFn,
    attr: &PromptAttr,
    name: &str,
    description: &str,
    params: &[Param],
    output: &Output,
) -> TokenStream {
    let krate: Path = attr
        .krate
        .clone()
        .unwrap_or_else(|| syn::parse_quote!(::toolwright));
    let tw = quote!(#krate::__private);
    let fn_ident = &func.sig.ident;
    let is_async = func.sig.asyncness.is_some();

    let mut reads = Vec::new();
    let mut call_args = Vec::new();
    let mut infos = Vec::new();
    let mut states = Vec::new();
    for param in params {
        let local = format_ident!(
            "__toolwright_{}",
            param.ident.to_string().trim_start_matches("r#")
        );
        match &param.role {
            Role::State { by_ref } => {
                let ty = match &param.ty {
                    Type::Reference(r) => &*r.elem,
                    other => other,
                };
                reads.push(quote_spanned! {ty.span()=>
                    let #local = #tw::take_prompt_state::<#ty>(&__toolwright_ctx)?;
                });
                call_args.push(if *by_ref {
                    quote!(&#local)
                } else {
                    quote!(#local)
                });
                states.push(quote_spanned! {ty.span()=> <#ty as #tw::FromState>::TYPE });
            }
            Role::Argument {
                read,
                name: argument,
                description,
                optional,
                by_ref,
            } => {
                let reader = if *optional {
                    quote_spanned!(read.span()=> #tw::read_optional_argument::<#read>)
                } else {
                    quote_spanned!(read.span()=> #tw::read_argument::<#read>)
                };
                reads.push(quote! {
                    let #local = #reader(#name, __toolwright_arguments, #argument)?;
                });
                call_args.push(if *by_ref {
                    quote!(&#local)
                } else {
                    quote!(#local)
                });
                let description = match description {
                    Some(d) => quote!(::core::option::Option::Some(#d)),
                    None => quote!(::core::option::Option::None),
                };
                let required = !optional;
                let complete = match attr.complete.iter().find(|(a, _)| *a == argument.as_str()) {
                    Some((_, path)) => quote_spanned! {path.span()=>
                        ::core::option::Option::Some::<#tw::Completer>(#path)
                    },
                    None => quote!(::core::option::Option::None),
                };
                infos.push(quote! {
                    #tw::ArgumentInfo {
                        name: #argument,
                        description: #description,
                        required: #required,
                        complete: #complete,
                    }
                });
            }
        }
    }
    let await_ = is_async.then(|| quote!(.await));
    let into = |ty: &Type, value: TokenStream| quote_spanned!(ty.span()=> <#ty as #tw::IntoPrompt>::into_messages(#value));
    let convert = match output {
        Output::Value(ty) => {
            let messages = into(ty, quote!(__toolwright_ret));
            quote!(::core::result::Result::Ok(#messages))
        }
        Output::Result { ok, error } => {
            let messages = into(ok, quote!(value));
            let failed = match error {
                Some(ty) => quote_spanned!(ty.span()=> #tw::prompt_failed::<#ty>(#name, error)),
                None => quote!(#tw::prompt_failed(#name, error)),
            };
            quote! {
                match __toolwright_ret {
                    ::core::result::Result::Ok(value) => ::core::result::Result::Ok(#messages),
                    ::core::result::Result::Err(error) => ::core::result::Result::Err(#failed),
                }
            }
        }
    };
    let body = quote! {
        #(#reads)*
        let __toolwright_ret = #fn_ident(#(#call_args),*) #await_;
        #convert
    };
    let (shim, handler) = if is_async {
        (
            quote! {
                #[allow(unused_variables)]
                fn __toolwright_prompt(
                    __toolwright_owned: #tw::PromptArguments,
                    __toolwright_ctx: #tw::Context,
                ) -> #tw::BoxFuture<::core::result::Result<
                    ::std::vec::Vec<#tw::PromptMessage>,
                    #tw::PromptError,
                >> {
                    ::std::boxed::Box::pin(async move {
                        let __toolwright_arguments = &__toolwright_owned;
                        #body
                    })
                }
            },
            quote!(#tw::PromptHandler::Async(__toolwright_prompt)),
        )
    } else {
        (
            quote! {
                #[allow(unused_variables)]
                fn __toolwright_prompt(
                    __toolwright_arguments: &#tw::PromptArguments,
                    __toolwright_ctx: #tw::Context,
                ) -> ::core::result::Result<
                    ::std::vec::Vec<#tw::PromptMessage>,
                    #tw::PromptError,
                > {
                    #body
                }
            },
            quote!(#tw::PromptHandler::Sync(__toolwright_prompt)),
        )
    };
    let title = match &attr.title {
        Some(lit) => quote!(::core::option::Option::Some(#lit)),
        None => quote!(::core::option::Option::None),
    };
    let location = expand::location(&tw);
    quote! {
        #func

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case, clippy::all)]
        const _: () = {
            #shim

            #krate::__register_tool! {
                #tw::PromptRegistration {
                    name: #name,
                    title: #title,
                    description: #description,
                    arguments: &[#(#infos),*],
                    states: &[#(#states),*],
                    handler: #handler,
                    location: #location,
                }
            }
        };
    }
}

//! `#[mcp_prompt]`: a function's parameters become a prompt's string arguments, its return value
//! the prompt's messages. The stages are those of `#[mcp_tool]` on a smaller scale: options,
//! parameters, checks, tokens; mistakes go to one accumulator. What prompts share with resources
//! is in [`strings`](crate::strings).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Item, ItemFn, LitStr, Type};

use crate::errors::Errors;
use crate::shared_attr::{self, CommonAttr};
use crate::strings::{self, Kind, Output, Param, Role};
use crate::{ast, check, docs, expand, fallback};
use toolwright_rules as rules;

const OPTIONS: &[&str] = &[
    "name",
    "title",
    "description",
    "complete",
    "blocking",
    "crate",
];

const KIND: Kind = Kind {
    item: "prompt",
    value: "prompt argument",
    short: "argument",
    makes: "makes messages",
    optional: true,
    context: true,
};

pub(crate) fn mcp_prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let attr = CommonAttr::parse(args, "mcp_prompt", OPTIONS, &mut errors, |_, _| {
        unreachable!("every option of `mcp_prompt` is a shared one")
    });
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
    let params = strings::params(&mut func, &KIND, &mut errors);
    let output = strings::output(
        &func.sig,
        "a prompt returns its messages: text (`String`), a `PromptMessage` or a \
         `Vec<PromptMessage>`",
        &mut errors,
    );
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
    shared_attr::completers_named(&attr, &params, &KIND, &mut errors);
    strings::unique_names(&params, &KIND, &mut errors);
    let blocking = attr.blocks(&func, &mut errors);
    match (errors.take(), output) {
        (None, Some(output)) => generate(
            &func,
            blocking,
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

fn generate(
    func: &ItemFn,
    blocking: bool,
    attr: &CommonAttr,
    name: &str,
    description: &str,
    params: &[Param],
    output: &Output,
) -> TokenStream {
    let (krate, tw) = attr.private();

    let reads = strings::reads(
        params,
        &tw,
        &quote!(#tw::take_prompt_state),
        |read, argument, optional| {
            let reader = if optional {
                quote_spanned!(read.span()=> #tw::read_optional_argument::<#read>)
            } else {
                quote_spanned!(read.span()=> #tw::read_argument::<#read>)
            };
            quote!(#reader(#name, __toolwright_input, #argument))
        },
    );
    let infos = params.iter().filter_map(|param| {
        let Role::Text {
            name: argument,
            description,
            optional,
            ..
        } = &param.role
        else {
            return None;
        };
        let description = strings::option_tokens(description.as_ref());
        let required = !optional;
        let complete = attr.completer(&tw, argument);
        Some(quote! {
            #tw::ArgumentInfo {
                name: #argument,
                description: #description,
                required: #required,
                complete: #complete,
            }
        })
    });
    let convert = strings::convert(
        output,
        |ty: &Type, value| quote_spanned!(ty.span()=> <#ty as #tw::IntoPrompt>::into_messages(#value)),
        |error| match error {
            Some(ty) => quote_spanned!(ty.span()=> #tw::prompt_failed::<#ty>(#name, error)),
            None => quote!(#tw::prompt_failed(#name, error)),
        },
    );
    let (shim, handler) = strings::handler(
        &tw,
        func,
        blocking,
        &reads,
        &convert,
        &quote!(#tw::PromptArguments),
        &quote!(::core::result::Result<::std::vec::Vec<#tw::PromptMessage>, #tw::PromptError>),
        &quote!(#tw::PromptHandler),
    );
    let states = &reads.states;
    let title = strings::option_tokens(attr.title.as_ref());
    let location = expand::location(&tw);
    let registration = quote! {
        #tw::PromptRegistration {
            name: #name,
            title: #title,
            description: #description,
            arguments: &[#(#infos),*],
            states: &[#(#states),*],
            handler: #handler,
            location: #location,
        }
    };
    strings::registered(func, &krate, &shim, &registration)
}

//! The registration records the runtime collects: `ToolRegistration`, `PromptRegistration`,
//! `ResourceRegistration`, each naming the handler its shim made.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::option;
use crate::ast::{self, Function, Role};
use crate::attr::{Audience, TaskSupport};

/// A tool's record; `input_schema` is the `InputSchema` from `schema::input`.
pub(super) fn tool(
    function: &Function<'_>,
    tw: &TokenStream,
    input_schema: &TokenStream,
    handler: &TokenStream,
) -> TokenStream {
    let options = function.options;
    let name = &function.name;
    let description = function.description.as_deref().unwrap_or_default();
    let title = option(options.title.as_ref().map(syn::LitStr::value));
    let read_only = option(options.read_only.map(|flag| flag.value));
    let destructive = option(options.destructive.map(|flag| flag.value));
    let idempotent = option(options.idempotent.map(|flag| flag.value));
    let open_world = option(options.open_world.map(|flag| flag.value));
    let core = options.core.is_some_and(|flag| flag.value);
    let tags = &options.tags;
    let scopes = &options.scopes;
    let ui_uri = option(options.ui.as_ref().map(syn::LitStr::value));
    let visibility = match &options.visibility {
        Some(visibility) => {
            let has = |who: &str| visibility.entries.iter().any(|e| e.value() == who);
            let (model, app) = (has("model"), has("app"));
            quote!(::core::option::Option::Some(#tw::Visibility { model: #model, app: #app }))
        }
        None => quote!(::core::option::Option::None),
    };
    let task = match options.task.unwrap_or(TaskSupport::Forbidden) {
        TaskSupport::Forbidden => quote!(#tw::TaskSupport::Forbidden),
        TaskSupport::Optional => quote!(#tw::TaskSupport::Optional),
        TaskSupport::Required => quote!(#tw::TaskSupport::Required),
    };
    let timeout = match options.timeout {
        Some(nanos) => {
            quote!(::core::option::Option::Some(::core::time::Duration::from_nanos(#nanos)))
        }
        None => quote!(::core::option::Option::None),
    };
    let provider = match (&options.provider, &function.package) {
        (Some(lit), _) => quote!(#lit),
        (None, Some(package)) => quote!(#package),
        (None, None) => quote!(::core::env!("CARGO_PKG_NAME")),
    };
    let states = tool_states(function, tw);
    let location = location(tw);
    quote! {
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
            task: #task,
            timeout: #timeout,
            input_schema: #input_schema,
            output_schema: __toolwright_output_schema,
            states: #states,
            handler: #handler,
            location: #location,
        }
    }
}

/// A prompt's record, with an `ArgumentInfo` for each argument.
pub(super) fn prompt(
    function: &Function<'_>,
    tw: &TokenStream,
    handler: &TokenStream,
) -> TokenStream {
    let name = &function.name;
    let title = option(function.options.title.as_ref());
    let description = function.description.as_deref().unwrap_or_default();
    let infos = function.values().map(|(param, value)| {
        let argument = &value.name;
        let description = option(param.description.as_ref());
        let required = value.optional.is_none();
        let complete = completer(function, tw, argument);
        quote! {
            #tw::ArgumentInfo {
                name: #argument,
                description: #description,
                required: #required,
                complete: #complete,
            }
        }
    });
    let states = states(function, tw);
    let location = location(tw);
    quote! {
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
}

/// A resource's record, with a `VariableInfo` for each variable of its URI template.
pub(super) fn resource(
    function: &Function<'_>,
    tw: &TokenStream,
    handler: &TokenStream,
) -> TokenStream {
    let options = function.options;
    let template = function
        .template
        .as_ref()
        .expect("`check` refuses a resource without a URI");
    let uri = template.uri;
    let variables = template.variables.as_deref().unwrap_or_default();
    let infos = variables.iter().map(|variable| {
        let complete = completer(function, tw, variable);
        quote! {
            #tw::VariableInfo { name: #variable, complete: #complete }
        }
    });
    let name = &function.name;
    let title = option(options.title.as_ref());
    let description = option(function.description.as_deref());
    let mime_type = option(options.mime_type.as_ref());
    let audience = options.audience.iter().map(|audience| match audience {
        Audience::User => quote!(#tw::Role::User),
        Audience::Assistant => quote!(#tw::Role::Assistant),
    });
    let priority = option(options.priority.map(|(priority, _)| priority));
    let changes = options.changes.is_some_and(|flag| flag.value);
    let states = states(function, tw);
    let location = location(tw);
    quote! {
        #tw::ResourceRegistration {
            uri: #uri,
            name: #name,
            title: #title,
            description: #description,
            mime_type: #mime_type,
            annotations: #tw::ResourceAnnotations {
                audience: &[#(#audience),*],
                priority: #priority,
            },
            variables: &[#(#infos),*],
            changes: #changes,
            states: &[#(#states),*],
            handler: #handler,
            location: #location,
        }
    }
}

/// The state types a tool takes, for the server to check at start: the `T` of each `State<T>`,
/// named without a trait bound, so that a type that cannot be state is reported once, by the
/// shim's binding. A parameter named `State` without one type argument goes through the trait,
/// which refuses it.
fn tool_states(function: &Function<'_>, tw: &TokenStream) -> TokenStream {
    let types = function.params.iter().filter_map(|param| {
        let Role::State { .. } = param.role else {
            return None;
        };
        let ty = ast::strip_reference(param.ty);
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

/// The state types a prompt or a resource takes, through `FromState` at each parameter's type.
fn states(function: &Function<'_>, tw: &TokenStream) -> Vec<TokenStream> {
    function
        .params
        .iter()
        .filter(|param| matches!(param.role, Role::State { .. }))
        .map(|param| {
            let ty = ast::strip_reference(param.ty);
            quote_spanned! {ty.span()=> <#ty as #tw::FromState>::TYPE }
        })
        .collect()
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

/// The completer `complete(...)` names for the prompt argument or template variable `name`, as
/// an `Option<Completer>`.
fn completer(function: &Function<'_>, tw: &TokenStream, name: &str) -> TokenStream {
    match function.options.complete.iter().find(|(p, _)| *p == name) {
        Some((_, path)) => quote_spanned! {path.span()=>
            ::core::option::Option::Some::<#tw::Completer>(#path)
        },
        None => quote!(::core::option::Option::None),
    }
}

/// Where the attribute is, as every record has it.
fn location(tw: &TokenStream) -> TokenStream {
    quote! {
        #tw::Location {
            file: ::core::file!(),
            line: ::core::line!(),
            column: ::core::column!(),
            module_path: ::core::module_path!(),
        }
    }
}

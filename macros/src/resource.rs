//! `#[mcp_resource]`: a function becomes a resource of a fixed URI, or a template of resources
//! whose variables are its parameters; its return value is the contents. The stages are those of
//! `#[mcp_prompt]`, with which it shares [`strings`](crate::strings).

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::spanned::Spanned;
use syn::{Expr, Item, ItemFn, Lit, LitStr, Type};

use crate::attr::{self, Flag};
use crate::errors::Errors;
use crate::shared_attr::{self, CommonAttr};
use crate::strings::{self, Kind, Output, Param};
use crate::{ast, check, docs, expand, fallback};
use toolwright_rules::template::{self, Part};

const OPTIONS: &[&str] = &[
    "uri",
    "name",
    "title",
    "description",
    "mime_type",
    "audience",
    "priority",
    "changes",
    "complete",
    "blocking",
    "crate",
];

const KIND: Kind = Kind {
    item: "resource",
    value: "template variable",
    short: "variable",
    makes: "reads its contents",
    optional: false,
    context: false,
};

/// The options only resources have.
#[derive(Default)]
struct ResourceAttr {
    uri: Option<LitStr>,
    mime_type: Option<LitStr>,
    /// `audience = ["user", "assistant"]`: each entry as written.
    audience: Vec<LitStr>,
    priority: Option<(f64, Span)>,
    changes: Option<Flag>,
}

pub(crate) fn mcp_resource(args: TokenStream, input: TokenStream) -> TokenStream {
    let mut errors = Errors::default();
    let mut own = ResourceAttr::default();
    let attr = CommonAttr::parse(args, "mcp_resource", OPTIONS, &mut errors, |key, meta| {
        own.option(key, meta)
    });
    let mut func = match syn::parse2::<Item>(input.clone()) {
        Ok(Item::Fn(func)) => func,
        Ok(item) => {
            let error = syn::Error::new_spanned(
                item,
                "`#[mcp_resource]` goes on a free `fn` or `async fn` that returns the resource's \
                 contents",
            )
            .to_compile_error();
            return quote!(#input #error);
        }
        Err(err) => return fallback::unparsed(input, err),
    };
    check::signature_of(
        &func,
        "resource",
        "its URI is fixed at compile time",
        &mut errors,
    );
    let params = strings::params(&mut func, &KIND, &mut errors);
    let output = strings::output(
        &func.sig,
        "a resource returns its contents: text (`String`), bytes (`Vec<u8>`), `Json<T>` or \
         `ResourceContents`",
        &mut errors,
    );
    let variables = own.variables(&func, &attr, &params, &mut errors);
    let name = ast::name_of(attr.name.as_ref(), &func);
    if name.is_empty() {
        let span = attr.name.as_ref().map_or(Span::call_site(), LitStr::span);
        errors.push(syn::Error::new(span, "a resource's name cannot be empty"));
    }
    let description = match &attr.description {
        Some(lit) => Some(lit.value()),
        None => docs::description(&func.attrs),
    };
    shared_attr::completers_named(&attr, &params, &KIND, &mut errors);
    strings::unique_names(&params, &KIND, &mut errors);
    let blocking = attr.blocks(&func, &mut errors);
    match (errors.take(), output, variables) {
        (None, Some(output), Some(variables)) => generate(
            &func,
            blocking,
            &attr,
            &own,
            &name,
            description.as_deref(),
            &params,
            &variables,
            &output,
        ),
        (Some(err), _, _) => fallback::with_errors(&func, &err),
        (None, _, _) => unreachable!("a missing output or URI is reported"),
    }
}

impl ResourceAttr {
    fn option(&mut self, key: &str, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        match key {
            "uri" => self.uri = Some(attr::string_value(meta, key)?),
            "mime_type" => self.mime_type = Some(attr::string_value(meta, key)?),
            "changes" => self.changes = Some(attr::flag(meta, key)?),
            "audience" => {
                let usage = "`audience` lists whom the resource is for: `audience = [\"user\", \
                             \"assistant\"]`";
                let (_, entries) = attr::string_list(meta, usage)?;
                for entry in &entries {
                    if !matches!(entry.value().as_str(), "user" | "assistant") {
                        return Err(syn::Error::new(
                            entry.span(),
                            format!(
                                "unknown audience `{}`; expected `\"user\"` or `\"assistant\"`",
                                entry.value()
                            ),
                        ));
                    }
                }
                self.audience = entries;
            }
            _ => {
                let usage = "`priority` takes a number from 0 (least) to 1 (most): \
                             `priority = 0.5`";
                let value = meta.value().map_err(|_| meta.error(usage))?;
                let expr: Expr = value.parse()?;
                let priority = match &expr {
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Float(lit),
                        ..
                    }) => lit.base10_parse::<f64>()?,
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Int(lit), ..
                    }) => lit.base10_parse::<f64>()?,
                    _ => return Err(syn::Error::new_spanned(expr, usage)),
                };
                if !(0.0..=1.0).contains(&priority) {
                    return Err(syn::Error::new_spanned(expr, usage));
                }
                self.priority = Some((priority, expr.span()));
            }
        }
        Ok(())
    }

    /// The template's variables, in its order, each a parameter's name; `None` when the URI is
    /// missing or not one (the mistake is reported).
    fn variables(
        &self,
        func: &ItemFn,
        attr: &CommonAttr,
        params: &[Param],
        errors: &mut Errors,
    ) -> Option<Vec<String>> {
        let Some(uri) = &self.uri else {
            if !attr.incomplete {
                errors.push(syn::Error::new(
                    func.sig.ident.span(),
                    "a resource needs a URI: `#[mcp_resource(uri = \"notes://tags\")]`, or a URI \
                     template whose variables are the function's parameters, \
                     `#[mcp_resource(uri = \"notes://{id}\")]`",
                ));
            }
            return None;
        };
        let text = uri.value();
        let parts = match template::parse(&text) {
            Ok(parts) => parts,
            Err(problem) => {
                errors.push(syn::Error::new(
                    uri.span(),
                    format!("invalid resource URI `{text}`: {problem}"),
                ));
                return None;
            }
        };
        let variables: Vec<String> = parts
            .iter()
            .filter_map(|part| match part {
                Part::Variable { name, .. } => Some((*name).to_owned()),
                Part::Literal(_) => None,
            })
            .collect();
        for param in params {
            let Some(name) = param.text_name() else {
                continue;
            };
            if !variables.iter().any(|v| v == name) {
                let message = if variables.is_empty() {
                    format!(
                        "`{name}` is not a variable of the URI `{text}`: a resource of a fixed URI \
                         takes no parameters but `State<T>`; write a template, such as \
                         `{text}/{{{name}}}`"
                    )
                } else {
                    format!(
                        "`{name}` is not a variable of the URI template `{text}`, whose variables \
                         are {}",
                        variables
                            .iter()
                            .map(|v| format!("`{v}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                };
                errors.push(syn::Error::new(param.ident.span(), message));
            }
        }
        for variable in &variables {
            if !params.iter().any(|p| p.text_name() == Some(variable)) {
                errors.push(syn::Error::new(
                    uri.span(),
                    format!(
                        "variable `{variable}` of `{text}` is not a parameter of the function: \
                         add `{variable}: String` (or a type that implements `FromStr`)"
                    ),
                ));
            }
        }
        Some(variables)
    }
}

#[allow(clippy::too_many_arguments)]
fn generate(
    func: &ItemFn,
    blocking: bool,
    attr: &CommonAttr,
    own: &ResourceAttr,
    name: &str,
    description: Option<&str>,
    params: &[Param],
    variables: &[String],
    output: &Output,
) -> TokenStream {
    let (krate, tw) = attr.private();

    let reads = strings::reads(
        params,
        &tw,
        &quote!(#tw::take_resource_state),
        |read, variable, _| quote_spanned!(read.span()=> #tw::read_variable::<#read>(__toolwright_input, #variable)),
    );
    let infos = variables.iter().map(|variable| {
        let complete = attr.completer(&tw, variable);
        quote! {
            #tw::VariableInfo { name: #variable, complete: #complete }
        }
    });
    let convert = strings::convert(
        output,
        |ty: &Type, value| quote_spanned!(ty.span()=> <#ty as #tw::IntoContents>::into_contents(#value)?),
        |error| match error {
            Some(ty) => quote_spanned!(ty.span()=> #tw::resource_failed::<#ty>(error)),
            None => quote!(#tw::resource_failed(error)),
        },
    );
    let (shim, handler) = strings::handler(
        &tw,
        func,
        blocking,
        &reads,
        &convert,
        &quote!(#tw::ResourceRequest),
        &quote!(#tw::Read),
        &quote!(#tw::ResourceHandler),
    );
    let states = &reads.states;
    let uri = own
        .uri
        .as_ref()
        .expect("a resource without a URI is reported");
    let title = strings::option_tokens(attr.title.as_ref());
    let description = strings::option_tokens(description);
    let mime_type = strings::option_tokens(own.mime_type.as_ref());
    let audience = own
        .audience
        .iter()
        .map(|entry| match entry.value().as_str() {
            "user" => quote!(#tw::Role::User),
            _ => quote!(#tw::Role::Assistant),
        });
    let priority = strings::option_tokens(own.priority.map(|(p, _)| p));
    let changes = own.changes.is_some_and(|flag| flag.value);
    let location = expand::location(&tw);
    let registration = quote! {
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
    };
    strings::registered(func, &krate, &shim, &registration)
}

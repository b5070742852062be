//! The rules on the parameters: the roles they take, the types they are read into, their
//! `#[arg]` options and their names.

use syn::LitStr;
use toolwright_rules as rules;

use crate::ast::{self, Function, Role};
use crate::errors::Errors;
use crate::json;
use crate::primitive::Primitive;

/// A parameter the runtime supplies takes no `#[arg]`, and a resource is given no `Context`.
pub(super) fn supplied(function: &Function<'_>, errors: &mut Errors) {
    let primitive = function.primitive;
    for param in &function.params {
        let name = match param.role {
            Role::Context { .. } if primitive == Primitive::Resource => {
                errors.push(syn::Error::new_spanned(
                    param.ty,
                    "a resource takes no `Context`: it reads its contents from its variables and \
                     state, and sends nothing to the client",
                ));
                continue;
            }
            Role::Context { .. } => "Context",
            Role::State { .. } => "State",
            Role::Value(_) => continue,
        };
        if let Some(span) = param.options.span {
            errors.push(syn::Error::new(
                span,
                format!(
                    "a `{name}` parameter is supplied by the runtime and takes no `#[arg]`; \
                     remove the attribute"
                ),
            ));
        }
    }
}

/// A tool has one call context at most, whatever describes its arguments.
pub(super) fn one_context(function: &Function<'_>, errors: &mut Errors) {
    let contexts = function
        .params
        .iter()
        .filter(|param| matches!(param.role, Role::Context { .. }));
    for extra in contexts.skip(1) {
        errors.push(syn::Error::new_spanned(
            extra.ty,
            "a tool takes at most one `Context` parameter; remove this one",
        ));
    }
}

/// A value's type can be read: a tool's argument names a concrete type, no value is borrowed
/// mutably (the values belong to the call), and a template variable is always there.
pub(super) fn value_types(function: &Function<'_>, errors: &mut Errors) {
    let primitive = function.primitive;
    let value = primitive.value();
    for (param, read) in function.values() {
        if primitive == Primitive::Tool
            && let Some(span) = ast::impl_trait(param.ty)
        {
            errors.push(syn::Error::new(
                span,
                "`impl Trait` cannot be a tool argument: the input schema is derived from the \
                 type; name a concrete type that derives `Deserialize` and `JsonSchema`",
            ));
            continue;
        }
        if let syn::Type::Reference(reference) = param.ty
            && let Some(mutability) = reference.mutability
        {
            errors.push(match primitive {
                Primitive::Tool => syn::Error::new(
                    mutability.span,
                    "a tool argument cannot be borrowed mutably: the arguments belong to the \
                     call; take the value (`T`) or a shared reference (`&T`)",
                ),
                Primitive::Prompt | Primitive::Resource => syn::Error::new_spanned(
                    reference,
                    format!("a {value} cannot be borrowed mutably: take the value or `&T`"),
                ),
            });
            continue;
        }
        if primitive == Primitive::Resource && read.optional.is_some() {
            errors.push(syn::Error::new_spanned(
                ast::strip_reference(param.ty),
                format!(
                    "a {value} cannot be optional: the template matches a URI only where each of \
                     its variables has a value; take `T`, not `Option<T>`"
                ),
            ));
        }
    }
}

/// A tool's `#[arg]` options make sense together: a header is named by an HTTP token, once; a
/// flattened parameter, not a property of its own, takes no option about one; a rename gives a
/// valid name. With a literal input schema, `literal_schema` says what applies instead.
pub(super) fn tool_helpers(function: &Function<'_>, errors: &mut Errors) {
    if function.options.input_schema.is_some() {
        return;
    }
    let mut headers: Vec<String> = Vec::new();
    for (param, _) in function.values() {
        let arg = &param.options;
        if let Some(header) = &arg.header {
            let name = header.value();
            if let Err(problem) = rules::header_name(&name) {
                errors.push(syn::Error::new(
                    header.span(),
                    format!(
                        "`{name}` cannot name a header: {problem}; the argument is mirrored in \
                         `Mcp-Param-<header>`, whose name is an HTTP token: letters, digits and \
                         `!#$%&'*+-.^_|~`"
                    ),
                ));
            } else if headers.contains(&name.to_ascii_lowercase()) {
                errors.push(syn::Error::new(
                    header.span(),
                    format!(
                        "two arguments are mirrored in the header `Mcp-Param-{name}` (header \
                         names ignore case); name another"
                    ),
                ));
            }
            headers.push(name.to_ascii_lowercase());
        }
        if let Some(flatten) = arg.flatten {
            if arg.header.is_some() {
                errors.push(syn::Error::new(
                    flatten,
                    "a flattened parameter is not an argument of its own, so no header can \
                     mirror it; put `header` on the struct's field instead",
                ));
            } else if arg.rename.is_some() || arg.default.is_some() {
                errors.push(syn::Error::new(
                    flatten,
                    "`flatten` merges the struct's fields into the arguments, so it \
                     takes no `rename` or `default`; put those on the struct's fields",
                ));
            } else if param.description.is_some() {
                errors.push(syn::Error::new(
                    flatten,
                    "a flattened parameter is not an argument of its own, so its doc \
                     comment would describe nothing; document the struct's fields instead",
                ));
            }
            continue;
        }
        if let Some(rename) = &arg.rename
            && let Err(reason) = rules::tool_name(&rename.value())
        {
            errors.push(syn::Error::new(
                rename.span(),
                format!(
                    "`{}` is not a valid argument name: {reason}",
                    rename.value()
                ),
            ));
        }
    }
}

/// A prompt's argument or a template's variable is one string, present or not: it takes no
/// default, is not flattened and is not mirrored in a header, as a tool's argument may be.
pub(super) fn string_helpers(function: &Function<'_>, errors: &mut Errors) {
    let value = function.primitive.value();
    for (param, _) in function.values() {
        let arg = &param.options;
        if let Some(expr) = &arg.default {
            errors.push(syn::Error::new_spanned(
                expr,
                match function.primitive {
                    Primitive::Resource => {
                        format!("a {value} takes no default: it is always in the URI")
                    }
                    Primitive::Tool | Primitive::Prompt => format!(
                        "a {value} takes no default: make it `Option<T>` and choose the default \
                         in the body"
                    ),
                },
            ));
        }
        if let Some(span) = arg.flatten {
            errors.push(syn::Error::new(
                span,
                format!("a {value} cannot be flattened: each parameter is one string"),
            ));
        }
        if let Some(header) = &arg.header {
            errors.push(syn::Error::new(
                header.span(),
                format!(
                    "a {value} is not mirrored in a header: only a tool's arguments are \
                     (`Mcp-Param-<header>`)"
                ),
            ));
        }
    }
}

/// No two values share a name: a tool's properties (a flattened parameter has none of its own),
/// a prompt's arguments, a template's variables.
pub(super) fn unique_names(function: &Function<'_>, errors: &mut Errors) {
    let primitive = function.primitive;
    if primitive == Primitive::Tool && function.options.input_schema.is_some() {
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    for (param, value) in function.values() {
        if param.options.flatten.is_some() && primitive == Primitive::Tool {
            continue;
        }
        if names.contains(&value.name.as_str()) {
            errors.push(match primitive {
                Primitive::Tool => syn::Error::new(
                    param
                        .options
                        .rename
                        .as_ref()
                        .map_or_else(|| param.ident.span(), LitStr::span),
                    format!(
                        "two parameters are both named `{}` in the input schema; rename one \
                         with `#[arg(rename = \"...\")]`",
                        value.name
                    ),
                ),
                Primitive::Prompt | Primitive::Resource => syn::Error::new(
                    param.ident.span(),
                    format!(
                        "two {}s of this {} are named `{}`; rename one",
                        primitive.short_value(),
                        primitive.noun(),
                        value.name
                    ),
                ),
            });
        }
        names.push(&value.name);
    }
}

/// With a literal input schema nothing is derived from the parameters, so the schema, a JSON
/// object schema, alone describes the arguments: one parameter receives the whole arguments
/// object, and nothing on it may pretend to describe or rename a property.
pub(super) fn literal_schema(function: &Function<'_>, errors: &mut Errors) {
    let Some(lit) = &function.options.input_schema else {
        return;
    };
    if let Err(reason) = json::object_schema(&lit.value()) {
        errors.push(syn::Error::new(
            lit.span(),
            format!(
                "`input_schema` must be a JSON object schema with `\"type\": \"object\"`: \
                 {reason}"
            ),
        ));
    }
    let mut argument_seen = false;
    for (param, _) in function.values() {
        if argument_seen {
            errors.push(syn::Error::new_spanned(
                param.ty,
                "a tool with `input_schema` takes its arguments as one parameter, which \
                 receives the whole arguments object: take one `serde_json::Value`, \
                 `serde_json::Map<String, Value>` or `Deserialize` struct instead of \
                 several",
            ));
        }
        argument_seen = true;
        if let Some(span) = param.options.span {
            errors.push(syn::Error::new(
                span,
                "`#[arg]` has no effect with `input_schema`: the parameter receives the \
                 whole arguments object as the schema describes it; remove the attribute",
            ));
        } else if param.description.is_some() {
            errors.push(syn::Error::new(
                param.ident.span(),
                "with `input_schema`, the parameter is not a property of its own, so its \
                 doc comment would describe nothing; put descriptions in the schema",
            ));
        }
    }
}

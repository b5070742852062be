//! The rules a tool must follow, each a spanned error. Every rule runs, so one build shows every
//! mistake at once.

use syn::{GenericParam, ItemFn, LitStr, Safety};

use crate::ast::{Role, Tool};
use crate::errors::Errors;
use crate::json;
use toolwright_rules::{self as rules, MAX_TOOL_NAME_LEN, PROVIDER_RULE};

/// Qualifiers and generics that a tool's signature cannot have.
pub(crate) fn signature(func: &ItemFn, errors: &mut Errors) {
    signature_of(func, "tool", "its schema is fixed at compile time", errors);
}

/// The rules of [`signature`], for a tool or a prompt (`what`), whose inputs are `fixed`.
pub(crate) fn signature_of(func: &ItemFn, what: &str, fixed: &str, errors: &mut Errors) {
    let sig = &func.sig;
    if let Some(constness) = sig.constness {
        errors.push(syn::Error::new(
            constness.span,
            format!(
                "a {what} cannot be a `const fn`: it is called by the runtime, never in a \
                 constant; remove `const`"
            ),
        ));
    }
    if let Safety::Unsafe(unsafety) = &sig.safety {
        errors.push(syn::Error::new(
            unsafety.span,
            format!(
                "a {what} cannot be an `unsafe fn`: nothing can uphold its safety contract when a \
                 client calls it; make the function safe and put an `unsafe` block inside"
            ),
        ));
    }
    if let Some(abi) = &sig.abi {
        errors.push(syn::Error::new_spanned(
            abi,
            format!(
                "a {what} cannot have a foreign ABI: remove the `extern`, and call the foreign \
                 function from the {what}'s body"
            ),
        ));
    }
    if let Some(variadic) = &sig.variadic {
        errors.push(syn::Error::new(
            variadic.dots.spans[0],
            format!("a {what} cannot be variadic: take the values as one `Vec<T>` parameter"),
        ));
    }
    if let Some(param) = sig.generics.params.first() {
        let (span, message) = match param {
            GenericParam::Lifetime(l) => (
                l.lifetime.span(),
                format!(
                    "a {what} cannot have generic lifetime parameters: its arguments are read \
                     anew for each call; remove the lifetime (borrowed arguments such as `&str` \
                     need no named lifetime)"
                ),
            ),
            GenericParam::Type(t) => (
                t.ident.span(),
                format!(
                    "a {what} cannot have generic type parameters: {fixed}; use concrete types"
                ),
            ),
            GenericParam::Const(c) => (
                c.const_token.span,
                format!(
                    "a {what} cannot have const generic parameters: {fixed}; use concrete values"
                ),
            ),
        };
        errors.push(syn::Error::new(span, message));
    } else if let Some(where_clause) = &sig.generics.where_clause {
        errors.push(syn::Error::new(
            where_clause.where_token.span,
            format!("a {what} cannot have a `where` clause: {fixed}; use concrete types"),
        ));
    }
}

/// Rules on the tool as a whole, each a check of its own: every one runs.
pub(crate) fn tool(tool: &Tool, errors: &mut Errors) {
    const CHECKS: [fn(&Tool, &mut Errors); 11] = [
        name,
        description,
        texts,
        provider,
        hints,
        blocking,
        tags,
        scopes,
        view,
        context_params,
        arguments,
    ];
    for check in CHECKS {
        check(tool, errors);
    }
}

/// The tool's name follows SEP-986.
fn name(tool: &Tool, errors: &mut Errors) {
    let span = match &tool.attr.name {
        Some(lit) => lit.span(),
        None => tool.func.sig.ident.span(),
    };
    if let Err(reason) = rules::tool_name(&tool.name) {
        errors.push(syn::Error::new(
            span,
            format!(
                "`{}` is not a valid tool name: {reason}; tool names are 1 to {MAX_TOOL_NAME_LEN} \
                 of `A-Z a-z 0-9 _ - .` (SEP-986): choose one with `name = \"...\"`",
                tool.name
            ),
        ));
    }
}

/// A model chooses tools by their descriptions, so a tool has one.
fn description(tool: &Tool, errors: &mut Errors) {
    if tool.description.is_none() && !tool.attr.incomplete {
        errors.push(syn::Error::new(
            tool.func.sig.ident.span(),
            format!(
                "tool `{}` has no description: models choose tools by their descriptions; add a \
                 `///` doc comment or `description = \"...\"`",
                tool.name
            ),
        ));
    }
}

/// A description or title given as an option says something.
fn texts(tool: &Tool, errors: &mut Errors) {
    for (lit, option) in [
        (&tool.attr.description, "description"),
        (&tool.attr.title, "title"),
    ] {
        if let Some(lit) = lit
            && lit.value().trim().is_empty()
        {
            errors.push(syn::Error::new(
                lit.span(),
                format!("`{option}` cannot be empty"),
            ));
        }
    }
}

/// A provider becomes the middle of the canonical name `mcp::<provider>::<tool>` and the
/// prefix of the namespaced name `<provider>__<tool>`, so it follows the provider rule: the
/// `provider` option, or else the package's name.
fn provider(tool: &Tool, errors: &mut Errors) {
    let (value, span, fix) = match (&tool.attr.provider, &tool.package) {
        (Some(lit), _) => (lit.value(), lit.span(), ""),
        (None, Some(package)) => (
            package.clone(),
            tool.func.sig.ident.span(),
            "; the provider is the package's name unless `provider = \"...\"` gives one",
        ),
        (None, None) => return,
    };
    if !rules::is_provider(&value) {
        errors.push(syn::Error::new(
            span,
            format!(
                "`{value}` is not a valid provider: {PROVIDER_RULE}, so that namespaced names \
                 stay unambiguous{fix}"
            ),
        ));
    }
}

/// The behaviour hints agree with each other.
fn hints(tool: &Tool, errors: &mut Errors) {
    if let (Some(read_only), Some(destructive)) = (tool.attr.read_only, tool.attr.destructive)
        && read_only.value
        && destructive.value
    {
        errors.push(syn::Error::new(
            destructive.span,
            "a `read_only` tool cannot be `destructive`: it does not change its environment; \
             remove one of the two",
        ));
    }
}

/// `blocking` is for a plain `fn`.
fn blocking(tool: &Tool, errors: &mut Errors) {
    if let Some(blocking) = tool.attr.blocking
        && blocking.value
        && tool.func.sig.asyncness.is_some()
    {
        errors.push(syn::Error::new(
            blocking.span,
            format!(
                "`blocking` is for a plain `fn`, and `{}` is an `async fn`, which runs on the \
                 runtime and must not block: make it a plain `fn`, or run its blocking part with \
                 `tokio::task::spawn_blocking`",
                tool.func.sig.ident
            ),
        ));
    }
}

/// Each tag says something, once.
fn tags(tool: &Tool, errors: &mut Errors) {
    let mut tags: Vec<String> = Vec::new();
    for tag in &tool.attr.tags {
        let value = tag.value();
        if value.trim().is_empty() {
            errors.push(syn::Error::new(tag.span(), "a tag cannot be empty"));
        } else if tags.contains(&value) {
            errors.push(syn::Error::new(
                tag.span(),
                format!("tag `{value}` is listed twice; keep one"),
            ));
        }
        tags.push(value);
    }
}

/// Each scope is one OAuth scope (no spaces: a token lists its scopes space-separated), once.
fn scopes(tool: &Tool, errors: &mut Errors) {
    let mut scopes: Vec<String> = Vec::new();
    for scope in &tool.attr.scopes {
        let value = scope.value();
        if !rules::is_scope(&value) {
            errors.push(syn::Error::new(
                scope.span(),
                format!("`{value}` is not an OAuth scope: {}", rules::SCOPE_RULE),
            ));
        } else if scopes.contains(&value) {
            errors.push(syn::Error::new(
                scope.span(),
                format!("scope `{value}` is listed twice; keep one"),
            ));
        }
        scopes.push(value);
    }
}

/// The MCP Apps options: a view that is a `ui://` resource, and a visibility that names someone.
fn view(tool: &Tool, errors: &mut Errors) {
    if let Some(lit) = &tool.attr.ui {
        ui_uri(lit, errors);
    }
    if let Some(visibility) = &tool.attr.visibility {
        visibility_list(visibility, errors);
    }
}

/// The parameters describe the arguments: a literal schema and its one parameter, or a property
/// per parameter.
fn arguments(tool: &Tool, errors: &mut Errors) {
    if let Some(lit) = &tool.attr.input_schema {
        if let Err(reason) = json::object_schema(&lit.value()) {
            errors.push(syn::Error::new(
                lit.span(),
                format!(
                    "`input_schema` must be a JSON object schema with `\"type\": \"object\"`: \
                     {reason}"
                ),
            ));
        }
        literal_params(tool, errors);
    } else {
        params(tool, errors);
    }
}

/// A tool has one call context at most, whatever describes its arguments.
fn context_params(tool: &Tool, errors: &mut Errors) {
    let contexts = tool
        .params
        .iter()
        .filter(|param| matches!(param.role, Role::Context { .. }));
    for extra in contexts.skip(1) {
        errors.push(syn::Error::new_spanned(
            &extra.ty,
            "a tool takes at most one `Context` parameter; remove this one",
        ));
    }
}

/// With a literal input schema nothing is derived from the parameters, so the schema alone must
/// describe the arguments: one parameter receives the whole arguments object, and nothing on it
/// may pretend to describe or rename a property.
fn literal_params(tool: &Tool, errors: &mut Errors) {
    let mut argument_seen = false;
    for (param, arg) in tool.arguments() {
        if argument_seen {
            errors.push(syn::Error::new_spanned(
                &param.ty,
                "a tool with `input_schema` takes its arguments as one parameter, which \
                 receives the whole arguments object: take one `serde_json::Value`, \
                 `serde_json::Map<String, Value>` or `Deserialize` struct instead of \
                 several",
            ));
        }
        argument_seen = true;
        if let Some(span) = arg.attr.span {
            errors.push(syn::Error::new(
                span,
                "`#[arg]` has no effect with `input_schema`: the parameter receives the \
                 whole arguments object as the schema describes it; remove the attribute",
            ));
        } else if arg.description.is_some() {
            errors.push(syn::Error::new(
                param.ident.span(),
                "with `input_schema`, the parameter is not a property of its own, so its \
                 doc comment would describe nothing; put descriptions in the schema",
            ));
        }
    }
}

fn params(tool: &Tool, errors: &mut Errors) {
    let mut properties: Vec<&str> = Vec::new();
    let mut headers: Vec<String> = Vec::new();
    for (param, arg) in tool.arguments() {
        if let Some(header) = &arg.attr.header {
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
        if let Some(flatten) = arg.attr.flatten {
            if arg.attr.header.is_some() {
                errors.push(syn::Error::new(
                    flatten,
                    "a flattened parameter is not an argument of its own, so no header can \
                     mirror it; put `header` on the struct's field instead",
                ));
            } else if arg.attr.rename.is_some() || arg.attr.default.is_some() {
                errors.push(syn::Error::new(
                    flatten,
                    "`flatten` merges the struct's fields into the arguments, so it \
                     takes no `rename` or `default`; put those on the struct's fields",
                ));
            } else if arg.description.is_some() {
                errors.push(syn::Error::new(
                    flatten,
                    "a flattened parameter is not an argument of its own, so its doc \
                     comment would describe nothing; document the struct's fields instead",
                ));
            }
            continue;
        }
        if let Some(rename) = &arg.attr.rename
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
        if properties.contains(&arg.property.as_str()) {
            let span = arg
                .attr
                .rename
                .as_ref()
                .map_or_else(|| param.ident.span(), LitStr::span);
            errors.push(syn::Error::new(
                span,
                format!(
                    "two parameters are both named `{}` in the input schema; rename one \
                     with `#[arg(rename = \"...\")]`",
                    arg.property
                ),
            ));
        }
        properties.push(&arg.property);
    }
}

/// A tool's view is a `ui://` resource that names something, as the MCP Apps extension has it.
fn ui_uri(lit: &LitStr, errors: &mut Errors) {
    let value = lit.value();
    if let Err(problem) = rules::ui_uri(&value) {
        errors.push(syn::Error::new(
            lit.span(),
            format!(
                "`ui` is the `ui://` URI of the tool's view, such as `\"ui://notes/board.html\"`, \
                 and `{value:?}` is not one: {problem}"
            ),
        ));
    }
}

/// `visibility` lists `"model"`, `"app"` or both, each once.
fn visibility_list(visibility: &crate::attr::Visibility, errors: &mut Errors) {
    if visibility.entries.is_empty() {
        errors.push(syn::Error::new(
            visibility.span,
            "an empty `visibility` leaves no one who may call the tool: list `\"model\"`, \
             `\"app\"` or both, or remove it for both",
        ));
    }
    let mut seen: Vec<String> = Vec::new();
    for entry in &visibility.entries {
        let value = entry.value();
        if value != "model" && value != "app" {
            errors.push(syn::Error::new(
                entry.span(),
                format!(
                    "unknown visibility `{value}`; expected `\"model\"` (the model may call the \
                     tool) or `\"app\"` (the server's views may)"
                ),
            ));
        } else if seen.contains(&value) {
            errors.push(syn::Error::new(
                entry.span(),
                format!("visibility `{value}` is listed twice; keep one"),
            ));
        }
        seen.push(value);
    }
}

//! The rules on the attribute's options: names, texts, hints, lists, the view, completers and a
//! resource's URI template.

use proc_macro2::Span;
use syn::LitStr;
use toolwright_rules::{self as rules, MAX_TOOL_NAME_LEN, PROVIDER_RULE};

use crate::ast::Function;
use crate::attr::Visibility;
use crate::errors::Errors;
use crate::primitive::Primitive;

/// A tool's or a prompt's name follows SEP-986; a resource's is not empty.
pub(super) fn name(function: &Function<'_>, errors: &mut Errors) {
    let name = &function.name;
    let span = match &function.options.name {
        Some(lit) => lit.span(),
        None => function.func.sig.ident.span(),
    };
    match function.primitive {
        Primitive::Tool => {
            if let Err(reason) = rules::tool_name(name) {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "`{name}` is not a valid tool name: {reason}; tool names are 1 to \
                         {MAX_TOOL_NAME_LEN} of `A-Z a-z 0-9 _ - .` (SEP-986): choose one with \
                         `name = \"...\"`"
                    ),
                ));
            }
        }
        Primitive::Prompt => {
            if let Err(problem) = rules::tool_name(name) {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "invalid prompt name `{name}`: {problem}; a prompt's name is 1 to \
                         {MAX_TOOL_NAME_LEN} of `A-Z a-z 0-9 _ - .`"
                    ),
                ));
            }
        }
        Primitive::Resource => {
            if name.is_empty() {
                let span = function
                    .options
                    .name
                    .as_ref()
                    .map_or(Span::call_site(), LitStr::span);
                errors.push(syn::Error::new(span, "a resource's name cannot be empty"));
            }
        }
    }
}

/// A model chooses tools by their descriptions, and a user picks prompts by theirs, so each has
/// one. An option that could not be read may have been meant as the description.
pub(super) fn description(function: &Function<'_>, errors: &mut Errors) {
    if function.description.is_some() || function.options.incomplete {
        return;
    }
    let message = match function.primitive {
        Primitive::Tool => format!(
            "tool `{}` has no description: models choose tools by their descriptions; add a \
             `///` doc comment or `description = \"...\"`",
            function.name
        ),
        Primitive::Prompt => "a prompt needs a description, for the user who picks it: write a \
                              doc comment (`/// ...`) on the function, or \
                              `#[mcp_prompt(description = \"...\")]`"
            .to_owned(),
        // A client finds a resource by its URI.
        Primitive::Resource => return,
    };
    errors.push(syn::Error::new(function.func.sig.ident.span(), message));
}

/// A description or title given as an option says something.
pub(super) fn texts(function: &Function<'_>, errors: &mut Errors) {
    let options = function.options;
    for (lit, option) in [
        (&options.description, "description"),
        (&options.title, "title"),
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
pub(super) fn provider(function: &Function<'_>, errors: &mut Errors) {
    let (value, span, fix) = match (&function.options.provider, &function.package) {
        (Some(lit), _) => (lit.value(), lit.span(), ""),
        (None, Some(package)) => (
            package.clone(),
            function.func.sig.ident.span(),
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
pub(super) fn hints(function: &Function<'_>, errors: &mut Errors) {
    let options = function.options;
    if let (Some(read_only), Some(destructive)) = (options.read_only, options.destructive)
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

/// `blocking` is for a plain `fn`: an `async fn` waits instead of blocking.
pub(super) fn blocking(function: &Function<'_>, errors: &mut Errors) {
    let Some(flag) = function.options.blocking.filter(|flag| flag.value) else {
        return;
    };
    if !function.is_async() {
        return;
    }
    let message = match function.primitive {
        Primitive::Tool => format!(
            "`blocking` is for a plain `fn`, and `{}` is an `async fn`, which runs on the \
             runtime and must not block: make it a plain `fn`, or run its blocking part with \
             `tokio::task::spawn_blocking`",
            function.func.sig.ident
        ),
        Primitive::Prompt | Primitive::Resource => "an `async fn` never blocks: it waits \
                                                    instead, and other work goes on; remove \
                                                    `blocking`, or make the function a plain \
                                                    `fn`"
            .to_owned(),
    };
    errors.push(syn::Error::new(flag.span, message));
}

/// Each tag says something, once.
pub(super) fn tags(function: &Function<'_>, errors: &mut Errors) {
    let mut tags: Vec<String> = Vec::new();
    for tag in &function.options.tags {
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
pub(super) fn scopes(function: &Function<'_>, errors: &mut Errors) {
    let mut scopes: Vec<String> = Vec::new();
    for scope in &function.options.scopes {
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
pub(super) fn view(function: &Function<'_>, errors: &mut Errors) {
    if let Some(lit) = &function.options.ui {
        ui_uri(lit, errors);
    }
    if let Some(visibility) = &function.options.visibility {
        visibility_list(visibility, errors);
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
fn visibility_list(visibility: &Visibility, errors: &mut Errors) {
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

/// Each completer is named for a prompt's argument or a template's variable.
pub(super) fn completers(function: &Function<'_>, errors: &mut Errors) {
    let primitive = function.primitive;
    for (parameter, _) in &function.options.complete {
        if !function.values().any(|(_, value)| *parameter == value.name) {
            let short = primitive.short_value();
            let article = if short.starts_with(['a', 'e', 'i', 'o', 'u']) {
                "an"
            } else {
                "a"
            };
            errors.push(syn::Error::new(
                parameter.span(),
                format!(
                    "`complete` names `{parameter}`, which is not {article} {short} of this {}",
                    primitive.noun()
                ),
            ));
        }
    }
}

/// A resource has a URI, or a URI template whose variables are exactly the parameters read from
/// strings. An option that could not be read may have been meant as the URI.
pub(super) fn template(function: &Function<'_>, errors: &mut Errors) {
    let Some(template) = &function.template else {
        if !function.options.incomplete {
            errors.push(syn::Error::new(
                function.func.sig.ident.span(),
                "a resource needs a URI: `#[mcp_resource(uri = \"notes://tags\")]`, or a URI \
                 template whose variables are the function's parameters, \
                 `#[mcp_resource(uri = \"notes://{id}\")]`",
            ));
        }
        return;
    };
    let text = template.uri.value();
    let variables = match &template.variables {
        Ok(variables) => variables,
        Err(problem) => {
            errors.push(syn::Error::new(
                template.uri.span(),
                format!("invalid resource URI `{text}`: {problem}"),
            ));
            return;
        }
    };
    for (param, value) in function.values() {
        let name = &value.name;
        if variables.contains(name) {
            continue;
        }
        let message = if variables.is_empty() {
            format!(
                "`{name}` is not a variable of the URI `{text}`: a resource of a fixed URI takes \
                 no parameters but `State<T>`; write a template, such as `{text}/{{{name}}}`"
            )
        } else {
            format!(
                "`{name}` is not a variable of the URI template `{text}`, whose variables are {}",
                variables
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        errors.push(syn::Error::new(param.ident.span(), message));
    }
    for variable in variables {
        if !function.values().any(|(_, value)| value.name == *variable) {
            errors.push(syn::Error::new(
                template.uri.span(),
                format!(
                    "variable `{variable}` of `{text}` is not a parameter of the function: add \
                     `{variable}: String` (or a type that implements `FromStr`)"
                ),
            ));
        }
    }
}

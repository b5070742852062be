//! Tokens to options: the arguments of `#[mcp_tool(...)]`, `#[mcp_prompt(...)]` and
//! `#[mcp_resource(...)]`, and the `#[arg(...)]` helper attribute on a parameter. One reader of
//! `key = value` options serves them all; each attribute accepts its own set of keys. Rules that
//! involve more than one option live in `check`.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, FnArg, Ident, ItemFn, Lit, LitBool, LitStr, Path, Token};

use crate::errors::Errors;
use crate::primitive::Primitive;

/// The keys of `#[mcp_tool(...)]`, in the order a message lists them.
const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "title",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
    "tags",
    "scopes",
    "core",
    "blocking",
    "task",
    "timeout",
    "provider",
    "input_schema",
    "ui",
    "visibility",
    "crate",
];

const PROMPT_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "complete",
    "blocking",
    "crate",
];

const RESOURCE_KEYS: &[&str] = &[
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

/// The keys of the `#[arg(...)]` helper attribute, which every attribute reads; `check` says
/// which of them a prompt or a resource refuses, and why.
const ARG_KEYS: &[&str] = &["default", "rename", "flatten", "header"];

/// The options of one attribute, as written: every key of the three attributes, of which each
/// attribute accepts its own (`TOOL_KEYS`, `PROMPT_KEYS`, `RESOURCE_KEYS`); the others stay
/// unset.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    /// A plain `fn` that blocks, run on the blocking thread pool instead of the runtime.
    pub(crate) blocking: Option<Flag>,
    /// Where `toolwright` is, when the dependency is renamed.
    pub(crate) krate: Option<Path>,

    // A tool's.
    pub(crate) read_only: Option<Flag>,
    pub(crate) destructive: Option<Flag>,
    pub(crate) idempotent: Option<Flag>,
    pub(crate) open_world: Option<Flag>,
    pub(crate) tags: Vec<LitStr>,
    /// The OAuth scopes a caller's token must grant.
    pub(crate) scopes: Vec<LitStr>,
    pub(crate) core: Option<Flag>,
    pub(crate) provider: Option<LitStr>,
    /// The input schema as literal JSON, served unchanged instead of the derived one.
    pub(crate) input_schema: Option<LitStr>,
    /// The `ui://` URI of the tool's MCP Apps view.
    pub(crate) ui: Option<LitStr>,
    /// Who may call the tool (`"model"`, `"app"`); `None` when not written.
    pub(crate) visibility: Option<Visibility>,
    /// Whether the tool runs as an MCP task; `None` when not written, which is `Forbidden`.
    pub(crate) task: Option<TaskSupport>,
    /// How long a call may run, in nanoseconds; `None` when not written.
    pub(crate) timeout: Option<u64>,

    // A prompt's and a resource's.
    /// `complete(parameter = completer, ...)`: each parameter's name as written, and the path of
    /// the function that completes it.
    pub(crate) complete: Vec<(Ident, Path)>,

    // A resource's.
    /// The resource's URI, or URI template.
    pub(crate) uri: Option<LitStr>,
    pub(crate) mime_type: Option<LitStr>,
    pub(crate) audience: Vec<Audience>,
    /// From 0 (least) to 1 (most), and where it was written.
    pub(crate) priority: Option<(f64, Span)>,
    pub(crate) changes: Option<Flag>,

    /// Every key seen, so that a repeated one is reported once, on its second spelling.
    seen: Vec<String>,
    /// Whether an option could not be read (an unknown key, a malformed value). It may have been
    /// meant as the description or the URI, so a missing one is not reported on top of it.
    pub(crate) incomplete: bool,
}

/// A boolean option and where it was written.
#[derive(Clone, Copy)]
pub(crate) struct Flag {
    pub(crate) value: bool,
    pub(crate) span: Span,
}

/// `visibility = [...]` as written: the list's span, for a list with nothing in it, and its
/// entries.
pub(crate) struct Visibility {
    pub(crate) span: Span,
    pub(crate) entries: Vec<LitStr>,
}

/// Whom a resource is for, an entry of `audience = [...]`.
#[derive(Clone, Copy)]
pub(crate) enum Audience {
    User,
    Assistant,
}

/// Whether a tool runs as an MCP task, `task = "..."`: the runtime's `TaskSupport`, which this
/// crate cannot name.
#[derive(Clone, Copy)]
pub(crate) enum TaskSupport {
    Forbidden,
    Optional,
    Required,
}

/// The options of `#[arg(...)]` on one parameter.
#[derive(Default)]
pub(crate) struct ArgOptions {
    pub(crate) default: Option<Expr>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) flatten: Option<Span>,
    /// `header = "Name"`: the argument is mirrored in the HTTP header `Mcp-Param-Name`
    /// (`x-mcp-header`).
    pub(crate) header: Option<LitStr>,
    /// The first `#[arg]` attribute, for errors about the parameter as a whole.
    pub(crate) span: Option<Span>,
}

/// Reads the attribute's arguments, pushing every mistake into `errors` and keeping what parsed.
pub(crate) fn parse_options(
    primitive: Primitive,
    args: TokenStream,
    errors: &mut Errors,
) -> Options {
    let mut options = Options::default();
    let allowed = match primitive {
        Primitive::Tool => TOOL_KEYS,
        Primitive::Prompt => PROMPT_KEYS,
        Primitive::Resource => RESOURCE_KEYS,
    };
    let parser = syn::meta::parser(|meta| {
        let read = key(&meta, primitive.attribute(), allowed, &mut options.seen)
            .and_then(|key| options.option(&key, &meta));
        if let Err(err) = read {
            errors.push(err);
            options.incomplete = true;
            skip_value(&meta)?;
        }
        Ok(())
    });
    if let Err(err) = parser.parse2(args) {
        errors.push(err);
        options.incomplete = true;
    }
    options
}

/// Reads every `#[arg(...)]` among a parameter's attributes.
pub(crate) fn parse_arg(attrs: &[Attribute], errors: &mut Errors) -> ArgOptions {
    let mut arg = ArgOptions::default();
    let mut seen: Vec<String> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("arg")) {
        arg.span.get_or_insert(attr.path().segments[0].ident.span());
        let result = attr.parse_nested_meta(|meta| {
            let read =
                key(&meta, "arg", ARG_KEYS, &mut seen).and_then(|key| arg.option(&key, &meta));
            if let Err(err) = read {
                errors.push(err);
                skip_value(&meta)?;
            }
            Ok(())
        });
        if let Err(err) = result {
            errors.push(err);
        }
    }
    arg
}

/// The user's function as it is emitted: without the attributes on its parameters that only
/// this crate reads, `#[arg]` and the doc comments (which rustc refuses there).
pub(crate) fn without_helpers(func: &ItemFn) -> ItemFn {
    let mut func = func.clone();
    for input in &mut func.sig.inputs {
        if let FnArg::Typed(pat_type) = input {
            pat_type
                .attrs
                .retain(|a| !a.path().is_ident("doc") && !a.path().is_ident("arg"));
        }
    }
    func
}

/// The key of one option, once it is known to be one of `allowed` and not seen before.
fn key(
    meta: &ParseNestedMeta<'_>,
    attribute: &str,
    allowed: &[&str],
    seen: &mut Vec<String>,
) -> syn::Result<String> {
    // `crate` is a keyword, so it is not an identifier path.
    let key = if meta.path.is_ident("crate") {
        "crate".to_owned()
    } else {
        match meta.path.get_ident() {
            Some(ident) => ident.to_string(),
            None => {
                return Err(meta.error(format!(
                    "expected the name of an `{attribute}` option, one of {}",
                    expected(allowed)
                )));
            }
        }
    };
    if !allowed.contains(&key.as_str()) {
        return Err(meta.error(format!(
            "unknown `{attribute}` option `{key}`; expected one of {}",
            expected(allowed)
        )));
    }
    if seen.contains(&key) {
        return Err(meta.error(format!(
            "`{attribute}` option `{key}` is given twice; keep one"
        )));
    }
    seen.push(key.clone());
    Ok(key)
}

fn expected(keys: &[&str]) -> String {
    let quoted: Vec<String> = keys.iter().map(|k| format!("`{k}`")).collect();
    quoted.join(", ")
}

impl Options {
    fn option(&mut self, key: &str, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        match key {
            "name" => self.name = Some(string_value(meta, key)?),
            "title" => self.title = Some(string_value(meta, key)?),
            "description" => self.description = Some(string_value(meta, key)?),
            "blocking" => self.blocking = Some(flag(meta, key)?),
            "crate" => {
                let value = meta
                    .value()
                    .map_err(|_| meta.error("`crate` takes a path: `crate = my_toolwright`"))?;
                self.krate = Some(value.call(Path::parse_mod_style)?);
            }
            "read_only" => self.read_only = Some(flag(meta, key)?),
            "destructive" => self.destructive = Some(flag(meta, key)?),
            "idempotent" => self.idempotent = Some(flag(meta, key)?),
            "open_world" => self.open_world = Some(flag(meta, key)?),
            "core" => self.core = Some(flag(meta, key)?),
            "provider" => self.provider = Some(string_value(meta, key)?),
            "input_schema" => self.input_schema = Some(string_value(meta, key)?),
            "ui" => self.ui = Some(string_value(meta, key)?),
            "task" => self.task = Some(task(meta)?),
            "timeout" => self.timeout = Some(timeout(meta)?),
            "tags" => {
                let usage = "`tags` takes a list of strings: `tags = [\"notes\", \"search\"]`";
                self.tags = string_list(meta, usage)?.1;
            }
            "scopes" => {
                let usage = "`scopes` takes a list of the OAuth scopes a caller needs: \
                             `scopes = [\"notes:write\"]`";
                self.scopes = string_list(meta, usage)?.1;
            }
            "visibility" => {
                let usage = "`visibility` takes a list of who may call the tool: \
                             `visibility = [\"model\", \"app\"]`";
                let (span, entries) = string_list(meta, usage)?;
                self.visibility = Some(Visibility { span, entries });
            }
            "complete" => self.completers(meta)?,
            "uri" => self.uri = Some(string_value(meta, key)?),
            "mime_type" => self.mime_type = Some(string_value(meta, key)?),
            "changes" => self.changes = Some(flag(meta, key)?),
            "audience" => self.audience = audience(meta)?,
            "priority" => self.priority = Some(priority(meta)?),
            _ => unreachable!("every key of every attribute is matched above"),
        }
        Ok(())
    }

    fn completers(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let usage = "`complete` names a completer for each parameter: `complete(tag = tag_names)`";
        meta.parse_nested_meta(|inner| {
            let Some(parameter) = inner.path.get_ident().cloned() else {
                return Err(inner.error(usage));
            };
            let value = inner.value().map_err(|_| inner.error(usage))?;
            let path: Path = value.parse()?;
            if self.complete.iter().any(|(p, _)| *p == parameter) {
                return Err(inner.error(format!("`{parameter}` has a completer already; keep one")));
            }
            self.complete.push((parameter, path));
            Ok(())
        })
    }
}

impl ArgOptions {
    fn option(&mut self, key: &str, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        match key {
            "default" => {
                let value = meta.value().map_err(|_| {
                    meta.error("`default` takes the default value: `#[arg(default = 10)]`")
                })?;
                self.default = Some(value.parse()?);
            }
            "rename" => self.rename = Some(string_value(meta, key)?),
            "header" => self.header = Some(string_value(meta, key)?),
            "flatten" => {
                if meta.input.peek(Token![=]) {
                    return Err(meta.error("`flatten` stands alone: `#[arg(flatten)]`"));
                }
                self.flatten = Some(meta.path.segments[0].ident.span());
            }
            _ => unreachable!("every key of `arg` is matched above"),
        }
        Ok(())
    }
}

/// After a mistake, consume the option's value so the options after it are still read.
fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn string_value(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<LitStr> {
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` takes a string: `{key} = \"...\"`")))?;
    let expr: Expr = value.parse()?;
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )),
    }
}

/// `key` alone means true; `key = true` and `key = false` say it outright.
fn flag(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Flag> {
    let span = meta.path.segments[0].ident.span();
    if !meta.input.peek(Token![=]) {
        return Ok(Flag { value: true, span });
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(LitBool { value, .. }),
            ..
        }) => Ok(Flag { value, span }),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes `true` or `false`, or stands alone to mean `true`"),
        )),
    }
}

/// A list of string literals, and the list's span.
fn string_list(meta: &ParseNestedMeta<'_>, usage: &str) -> syn::Result<(Span, Vec<LitStr>)> {
    let value = meta.value().map_err(|_| meta.error(usage))?;
    let expr: Expr = value.parse()?;
    let Expr::Array(array) = expr else {
        return Err(syn::Error::new_spanned(expr, usage));
    };
    let span = array.bracket_token.span.join();
    let entries = array
        .elems
        .into_iter()
        .map(|elem| match elem {
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(lit), ..
            }) => Ok(lit),
            other => Err(syn::Error::new_spanned(other, usage)),
        })
        .collect::<syn::Result<_>>()?;
    Ok((span, entries))
}

/// `audience = ["user", "assistant"]`.
fn audience(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Audience>> {
    let usage = "`audience` lists whom the resource is for: `audience = [\"user\", \"assistant\"]`";
    let (_, entries) = string_list(meta, usage)?;
    entries
        .iter()
        .map(|entry| match entry.value().as_str() {
            "user" => Ok(Audience::User),
            "assistant" => Ok(Audience::Assistant),
            other => Err(syn::Error::new(
                entry.span(),
                format!("unknown audience `{other}`; expected `\"user\"` or `\"assistant\"`"),
            )),
        })
        .collect()
}

/// `task = "optional"`, `"required"` or `"forbidden"`.
fn task(meta: &ParseNestedMeta<'_>) -> syn::Result<TaskSupport> {
    let usage = "`task` takes a string, one of `\"optional\"`, `\"required\"` and \
                 `\"forbidden\"`: `task = \"optional\"`";
    let value = meta.value().map_err(|_| meta.error(usage))?;
    let lit = match value.parse::<Expr>()? {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit,
        other => {
            // `task = optional`: the value meant, without its quotes.
            let unquoted = match &other {
                Expr::Path(path) => path.path.get_ident().map(Ident::to_string),
                _ => None,
            };
            let message = match unquoted {
                Some(value) if ["optional", "required", "forbidden"].contains(&value.as_str()) => {
                    format!("`task` takes a string: `task = \"{value}\"`")
                }
                _ => usage.to_owned(),
            };
            return Err(syn::Error::new_spanned(other, message));
        }
    };
    match lit.value().as_str() {
        "forbidden" => Ok(TaskSupport::Forbidden),
        "optional" => Ok(TaskSupport::Optional),
        "required" => Ok(TaskSupport::Required),
        other => Err(syn::Error::new(
            lit.span(),
            format!(
                "unknown `task` value `{other}`; expected `\"optional\"` (the tool runs as a \
                 task when the client asks for one), `\"required\"` (only as a task) or \
                 `\"forbidden\"` (never, the default)"
            ),
        )),
    }
}

/// `timeout = "30s"`: a duration with its unit, more than zero, in nanoseconds.
fn timeout(meta: &ParseNestedMeta<'_>) -> syn::Result<u64> {
    let usage = "`timeout` takes a duration with its unit: `timeout = \"30s\"`, `\"2m\"`, \
                 `\"500ms\"`";
    let value = meta.value().map_err(|_| meta.error(usage))?;
    let lit = match value.parse::<Expr>()? {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(lit), ..
        }) => lit,
        Expr::Lit(syn::ExprLit {
            lit: Lit::Int(int), ..
        }) => {
            let message = format!(
                "`timeout` takes a duration with its unit, as a string: `timeout = \"{}s\"` \
                 for {} seconds",
                int.base10_digits(),
                int.base10_digits()
            );
            return Err(syn::Error::new(int.span(), message));
        }
        other => return Err(syn::Error::new_spanned(other, usage)),
    };
    let written = lit.value();
    let duration = humantime::parse_duration(&written).map_err(|error| {
        let why = match error {
            humantime::DurationError::UnknownUnit { unit, .. } => {
                format!(" (`{unit}` is no unit of time)")
            }
            _ => String::new(),
        };
        syn::Error::new(
            lit.span(),
            format!(
                "cannot read `{written}` as a duration{why}; write a number and a unit: \
                 `\"30s\"`, `\"2m\"`, `\"1h 30m\"`, `\"500ms\"`"
            ),
        )
    })?;
    if duration.is_zero() {
        return Err(syn::Error::new(
            lit.span(),
            "a `timeout` of zero would stop every call before it runs; give the time a call \
             may take, or leave `timeout` out for the server's limit",
        ));
    }
    u64::try_from(duration.as_nanos()).map_err(|_| {
        syn::Error::new(
            lit.span(),
            format!("a `timeout` of `{written}` is longer than a call can be bounded by"),
        )
    })
}

/// `priority = 0.5`: a number from 0 to 1, and where it was written.
fn priority(meta: &ParseNestedMeta<'_>) -> syn::Result<(f64, Span)> {
    let usage = "`priority` takes a number from 0 (least) to 1 (most): `priority = 0.5`";
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
    Ok((priority, expr.span()))
}

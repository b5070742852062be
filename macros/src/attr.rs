//! Tokens to options: the `#[mcp_tool(...)]` arguments and the `#[arg(...)]` parameter attribute.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::{Attribute, Expr, LitBool, LitStr, Path, Token};

use crate::errors::Errors;

/// The options of one `#[mcp_tool(...)]`, as written. Rules that involve more than one option
/// live in `check`.
#[derive(Default)]
pub(crate) struct ToolAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) read_only: Option<Flag>,
    pub(crate) destructive: Option<Flag>,
    pub(crate) idempotent: Option<Flag>,
    pub(crate) open_world: Option<Flag>,
    pub(crate) tags: Vec<LitStr>,
    /// The OAuth scopes a caller's token must grant.
    pub(crate) scopes: Vec<LitStr>,
    pub(crate) core: Option<Flag>,
    /// Runs a plain `fn` on the blocking thread pool instead of the runtime.
    pub(crate) blocking: Option<Flag>,
    pub(crate) provider: Option<LitStr>,
    pub(crate) krate: Option<Path>,
    /// The input schema as literal JSON, served unchanged instead of the derived one.
    pub(crate) input_schema: Option<LitStr>,
    /// The `ui://` URI of the tool's MCP Apps view.
    pub(crate) ui: Option<LitStr>,
    /// Who may call the tool (`"model"`, `"app"`); `None` when not written.
    pub(crate) visibility: Option<Visibility>,
    /// Every option seen, so a repeated one is reported once, on its second spelling.
    seen: Vec<String>,
    /// Whether an option could not be read (an unknown name, a malformed value). It may have been
    /// meant as the description, so a missing description is not reported on top of it.
    pub(crate) incomplete: bool,
}

/// `visibility = [...]` as written: the list's span, for a list with nothing in it, and its
/// entries.
pub(crate) struct Visibility {
    pub(crate) span: Span,
    pub(crate) entries: Vec<LitStr>,
}

/// A boolean option and where it was written.
#[derive(Clone, Copy)]
pub(crate) struct Flag {
    pub(crate) value: bool,
    pub(crate) span: Span,
}

const TOOL_OPTIONS: &[&str] = &[
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
    "provider",
    "input_schema",
    "ui",
    "visibility",
    "crate",
];

const ARG_OPTIONS: &[&str] = &["default", "rename", "flatten", "header"];

pub(crate) fn expected(options: &[&str]) -> String {
    let quoted: Vec<String> = options.iter().map(|o| format!("`{o}`")).collect();
    quoted.join(", ")
}

/// Parses the attribute's arguments, pushing every mistake into `errors` and keeping what parsed.
pub(crate) fn parse_tool_attr(args: TokenStream, errors: &mut Errors) -> ToolAttr {
    let mut attr = ToolAttr::default();
    let parser = syn::meta::parser(|meta| {
        if let Err(err) = attr.option(&meta) {
            errors.push(err);
            attr.incomplete = true;
            skip_value(&meta)?;
        }
        Ok(())
    });
    if let Err(err) = parser.parse2(args) {
        errors.push(err);
        attr.incomplete = true;
    }
    attr
}

impl ToolAttr {
    fn option(&mut self, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = option_name(meta)?;
        if !TOOL_OPTIONS.contains(&key.as_str()) {
            return Err(meta.error(format!(
                "unknown `mcp_tool` option `{key}`; expected one of {}",
                expected(TOOL_OPTIONS)
            )));
        }
        if self.seen.contains(&key) {
            return Err(meta.error(format!(
                "`mcp_tool` option `{key}` is given twice; keep one"
            )));
        }
        self.seen.push(key.clone());
        match key.as_str() {
            "name" => self.name = Some(string_value(meta, &key)?),
            "description" => self.description = Some(string_value(meta, &key)?),
            "title" => self.title = Some(string_value(meta, &key)?),
            "provider" => self.provider = Some(string_value(meta, &key)?),
            "input_schema" => self.input_schema = Some(string_value(meta, &key)?),
            "read_only" => self.read_only = Some(flag(meta, &key)?),
            "destructive" => self.destructive = Some(flag(meta, &key)?),
            "idempotent" => self.idempotent = Some(flag(meta, &key)?),
            "open_world" => self.open_world = Some(flag(meta, &key)?),
            "core" => self.core = Some(flag(meta, &key)?),
            "blocking" => self.blocking = Some(flag(meta, &key)?),
            "ui" => self.ui = Some(string_value(meta, &key)?),
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
            "crate" => {
                let value = meta
                    .value()
                    .map_err(|_| meta.error("`crate` takes a path: `crate = my_toolwright`"))?;
                self.krate = Some(value.call(Path::parse_mod_style)?);
            }
            _ => unreachable!("every name in TOOL_OPTIONS is matched above"),
        }
        Ok(())
    }
}

/// The option's name as written; `crate` is a keyword, so it is not an identifier path.
fn option_name(meta: &ParseNestedMeta<'_>) -> syn::Result<String> {
    if meta.path.is_ident("crate") {
        return Ok("crate".to_owned());
    }
    match meta.path.get_ident() {
        Some(ident) => Ok(ident.to_string()),
        None => Err(meta.error(format!(
            "expected an option name, one of {}",
            expected(TOOL_OPTIONS)
        ))),
    }
}

/// After a mistake, consume the option's value so the options after it are still read.
pub(crate) fn skip_value(meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if meta.input.peek(Token![=]) {
        meta.value()?.parse::<Expr>()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

pub(crate) fn string_value(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<LitStr> {
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` takes a string: `{key} = \"...\"`")))?;
    let expr: Expr = value.parse()?;
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(lit),
            ..
        }) => Ok(lit),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes a string literal: `{key} = \"...\"`"),
        )),
    }
}

/// `key` alone means true; `key = true` and `key = false` say it outright.
pub(crate) fn flag(meta: &ParseNestedMeta<'_>, key: &str) -> syn::Result<Flag> {
    let span = meta.path.segments[0].ident.span();
    if !meta.input.peek(Token![=]) {
        return Ok(Flag { value: true, span });
    }
    let expr: Expr = meta.value()?.parse()?;
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Bool(LitBool { value, .. }),
            ..
        }) => Ok(Flag { value, span }),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` takes `true` or `false`, or stands alone to mean `true`"),
        )),
    }
}

/// A list of string literals, and the list's span.
pub(crate) fn string_list(
    meta: &ParseNestedMeta<'_>,
    usage: &str,
) -> syn::Result<(Span, Vec<LitStr>)> {
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
                lit: syn::Lit::Str(lit),
                ..
            }) => Ok(lit),
            other => Err(syn::Error::new_spanned(other, usage)),
        })
        .collect::<syn::Result<_>>()?;
    Ok((span, entries))
}

/// The options of `#[arg(...)]` on one parameter.
#[derive(Default)]
pub(crate) struct ArgAttr {
    pub(crate) default: Option<Expr>,
    pub(crate) rename: Option<LitStr>,
    pub(crate) flatten: Option<Span>,
    /// `header = "Name"`: the argument is mirrored in the HTTP header `Mcp-Param-Name`
    /// (`x-mcp-header`).
    pub(crate) header: Option<LitStr>,
    /// The first `#[arg]` attribute, for errors about the parameter as a whole.
    pub(crate) span: Option<Span>,
}

/// Reads every `#[arg(...)]` among a parameter's attributes.
pub(crate) fn parse_arg_attrs(attrs: &[Attribute], errors: &mut Errors) -> ArgAttr {
    let mut arg = ArgAttr::default();
    let mut seen: Vec<String> = Vec::new();
    for attr in attrs.iter().filter(|a| a.path().is_ident("arg")) {
        arg.span.get_or_insert(attr.path().segments[0].ident.span());
        let result = attr.parse_nested_meta(|meta| {
            if let Err(err) = arg.option(&meta, &mut seen) {
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

impl ArgAttr {
    fn option(&mut self, meta: &ParseNestedMeta<'_>, seen: &mut Vec<String>) -> syn::Result<()> {
        let Some(key) = meta.path.get_ident().map(ToString::to_string) else {
            return Err(meta.error(format!(
                "expected an `arg` option, one of {}",
                expected(ARG_OPTIONS)
            )));
        };
        if !ARG_OPTIONS.contains(&key.as_str()) {
            return Err(meta.error(format!(
                "unknown `arg` option `{key}`; expected one of {}",
                expected(ARG_OPTIONS)
            )));
        }
        if seen.contains(&key) {
            return Err(meta.error(format!("`arg` option `{key}` is given twice; keep one")));
        }
        seen.push(key.clone());
        match key.as_str() {
            "default" => {
                let value = meta.value().map_err(|_| {
                    meta.error("`default` takes the default value: `#[arg(default = 10)]`")
                })?;
                self.default = Some(value.parse()?);
            }
            "rename" => self.rename = Some(string_value(meta, "rename")?),
            "header" => self.header = Some(string_value(meta, "header")?),
            "flatten" => {
                if meta.input.peek(Token![=]) {
                    return Err(meta.error("`flatten` stands alone: `#[arg(flatten)]`"));
                }
                self.flatten = Some(meta.path.segments[0].ident.span());
            }
            _ => unreachable!("every name in ARG_OPTIONS is matched above"),
        }
        Ok(())
    }
}

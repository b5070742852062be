//! The options `#[mcp_prompt]` and `#[mcp_resource]` share, tokens to options: names, texts,
//! completers, `blocking`, the crate's path; each attribute reads its own others.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::meta::ParseNestedMeta;
use syn::parse::Parser;
use syn::spanned::Spanned;
use syn::{Ident, ItemFn, LitStr, Path};

use crate::attr;
use crate::errors::Errors;
use crate::strings::{Kind, Param};

/// The options `#[mcp_prompt]` and `#[mcp_resource]` share, as written.
#[derive(Default)]
pub(crate) struct CommonAttr {
    pub(crate) name: Option<LitStr>,
    pub(crate) title: Option<LitStr>,
    pub(crate) description: Option<LitStr>,
    pub(crate) krate: Option<Path>,
    /// `complete(parameter = completer, ...)`: each parameter's name as written, and the path of
    /// the function that completes it.
    pub(crate) complete: Vec<(Ident, Path)>,
    /// `blocking`: a plain `fn` that blocks, run on the blocking thread pool.
    pub(crate) blocking: Option<attr::Flag>,
    seen: Vec<String>,
    /// An option could not be read; it may have been the description.
    pub(crate) incomplete: bool,
}

impl CommonAttr {
    /// Reads the options of `#[<attribute>(...)]`, those in `options`: the shared ones here, the
    /// others with `other(key, meta)`.
    pub(crate) fn parse(
        args: TokenStream,
        attribute: &str,
        options: &[&str],
        errors: &mut Errors,
        mut other: impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<()>,
    ) -> CommonAttr {
        let mut attr = CommonAttr::default();
        let parser = syn::meta::parser(|meta| {
            if let Err(err) = attr.option(&meta, attribute, options, &mut other) {
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

    fn option(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        attribute: &str,
        options: &[&str],
        other: &mut impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<()>,
    ) -> syn::Result<()> {
        let key = if meta.path.is_ident("crate") {
            "crate".to_owned()
        } else {
            meta.path
                .get_ident()
                .map(ToString::to_string)
                .unwrap_or_default()
        };
        if !options.contains(&key.as_str()) {
            return Err(meta.error(format!(
                "unknown `{attribute}` option `{key}`; expected one of {}",
                attr::expected(options)
            )));
        }
        if self.seen.contains(&key) {
            return Err(meta.error(format!(
                "`{attribute}` option `{key}` is given twice; keep one"
            )));
        }
        self.seen.push(key.clone());
        match key.as_str() {
            "complete" => self.completers(meta),
            "crate" => {
                let value = meta
                    .value()
                    .map_err(|_| meta.error("`crate` takes a path: `crate = my_toolwright`"))?;
                self.krate = Some(value.call(Path::parse_mod_style)?);
                Ok(())
            }
            "name" => {
                self.name = Some(attr::string_value(meta, &key)?);
                Ok(())
            }
            "title" => {
                self.title = Some(attr::string_value(meta, &key)?);
                Ok(())
            }
            "description" => {
                self.description = Some(attr::string_value(meta, &key)?);
                Ok(())
            }
            "blocking" => {
                self.blocking = Some(attr::flag(meta, &key)?);
                Ok(())
            }
            key => other(key, meta),
        }
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

    /// Whether the function runs on the blocking thread pool; a mistake for an `async fn`,
    /// which never blocks.
    pub(crate) fn blocks(&self, func: &ItemFn, errors: &mut Errors) -> bool {
        let Some(flag) = self.blocking.filter(|flag| flag.value) else {
            return false;
        };
        if func.sig.asyncness.is_some() {
            errors.push(syn::Error::new(
                flag.span,
                "an `async fn` never blocks: it waits instead, and other work goes on; remove \
                 `blocking`, or make the function a plain `fn`",
            ));
        }
        true
    }

    /// `krate::__private`, where generated code finds the runtime.
    pub(crate) fn private(&self) -> (Path, TokenStream) {
        let krate: Path = self
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::toolwright));
        let tw = quote!(#krate::__private);
        (krate, tw)
    }

    /// The completer named for the string parameter `name`, as an `Option<Completer>`.
    pub(crate) fn completer(&self, tw: &TokenStream, name: &str) -> TokenStream {
        match self.complete.iter().find(|(p, _)| *p == name) {
            Some((_, path)) => quote_spanned! {path.span()=>
                ::core::option::Option::Some::<#tw::Completer>(#path)
            },
            None => quote!(::core::option::Option::None),
        }
    }
}

/// A mistake for each completer named for something that is not a string parameter.
pub(crate) fn completers_named(
    attr: &CommonAttr,
    params: &[Param],
    kind: &Kind,
    errors: &mut Errors,
) {
    for (parameter, _) in &attr.complete {
        if !params
            .iter()
            .any(|p| p.text_name() == Some(&parameter.to_string()))
        {
            errors.push(syn::Error::new(
                parameter.span(),
                format!(
                    "`complete` names `{parameter}`, which is not {} {} of this {}",
                    if kind.short.starts_with(['a', 'e', 'i', 'o', 'u']) {
                        "an"
                    } else {
                        "a"
                    },
                    kind.short,
                    kind.item
                ),
            ));
        }
    }
}

//! A typed view of the annotated function: its parameters in their roles, its output, its docs.

use proc_macro2::Span;
use quote::quote_spanned;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, ItemFn, Pat, PathArguments, ReturnType, Type, TypePath,
    TypeReference,
};

use crate::attr::{ArgAttr, ToolAttr, parse_arg_attrs};
use crate::docs;
use crate::errors::Errors;

/// The function after parsing, with everything the expansion needs.
pub(crate) struct Tool {
    /// The user's function, with the parameter attributes only this macro understands removed.
    pub(crate) func: ItemFn,
    pub(crate) attr: ToolAttr,
    /// The tool's name on the wire.
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    /// The name of the package being compiled, which is the tool's provider unless `provider`
    /// says otherwise; `None` when the compiler runs outside Cargo.
    pub(crate) package: Option<String>,
    pub(crate) params: Vec<Param>,
    pub(crate) output: Output,
}

pub(crate) struct Param {
    pub(crate) ident: Ident,
    /// The type as the user wrote it; errors about the parameter point here.
    pub(crate) ty: Type,
    pub(crate) role: Role,
}

pub(crate) enum Role {
    /// The runtime's `Context`, passed by value or by reference; never part of the schema.
    Context {
        by_ref: bool,
    },
    /// Application state, `State<T>`, passed by value or by reference; never part of the schema.
    State {
        by_ref: bool,
    },
    Argument(Box<Argument>),
}

pub(crate) struct Argument {
    /// The owned type the argument is deserialised into: `&str` is read as `String`, `&[T]` as
    /// `Vec<T>`, `&Path` as `PathBuf`, `&T` as `T`.
    pub(crate) field_ty: Type,
    /// Whether the function takes a reference to the owned value.
    pub(crate) by_ref: bool,
    /// The property's name in the input schema.
    pub(crate) property: String,
    pub(crate) description: Option<String>,
    pub(crate) attr: ArgAttr,
}

pub(crate) enum Output {
    /// No return type, or `()`: an empty content list.
    Unit,
    /// Any other type, converted through `IntoOutput`.
    Value(Type),
    /// A type named `Result` (any path, so `anyhow::Result<T>` and `io::Result<T>` count): `Ok`
    /// is converted like a plain return, `Err` becomes a tool error. `ok` is `None` for `()`;
    /// `error` is `E` when written (`Result<T, E>`), for errors about it to point there.
    Result {
        ok: Option<Type>,
        error: Option<Box<Type>>,
        span: Span,
    },
}

impl Tool {
    /// The parameters that are arguments (not the context), in order.
    pub(crate) fn arguments(&self) -> impl Iterator<Item = (&Param, &Argument)> {
        self.params.iter().filter_map(|p| match &p.role {
            Role::Argument(arg) => Some((p, &**arg)),
            Role::Context { .. } | Role::State { .. } => None,
        })
    }

    pub(crate) fn from_fn(mut func: ItemFn, attr: ToolAttr, errors: &mut Errors) -> Tool {
        let mut params = Vec::new();
        for input in &mut func.sig.inputs {
            match input {
                FnArg::Receiver(receiver) => errors.push(syn::Error::new(
                    receiver.self_token.span,
                    "`#[mcp_tool]` goes on a free function, not a method: move the function out \
                     of the `impl` block and reach shared state another way",
                )),
                FnArg::Typed(pat_type) => {
                    let arg_attr = parse_arg_attrs(&pat_type.attrs, errors);
                    let description = docs::description(&pat_type.attrs);
                    pat_type
                        .attrs
                        .retain(|a| !a.path().is_ident("doc") && !a.path().is_ident("arg"));
                    if let Some(param) =
                        Param::new(&pat_type.pat, &pat_type.ty, arg_attr, description, errors)
                    {
                        params.push(param);
                    }
                }
            }
        }
        let name = name_of(attr.name.as_ref(), &func);
        let description = match &attr.description {
            Some(lit) => Some(lit.value()),
            None => docs::description(&func.attrs),
        };
        let output = Output::new(&func.sig.output, errors);
        Tool {
            func,
            attr,
            name,
            description,
            // Cargo sets it for the compiler, whose process runs this macro.
            package: std::env::var("CARGO_PKG_NAME").ok(),
            params,
            output,
        }
    }
}

/// The name on the wire: the one given, or the function's (without `r#`).
pub(crate) fn name_of(given: Option<&syn::LitStr>, func: &ItemFn) -> String {
    match given {
        Some(lit) => lit.value(),
        None => func
            .sig
            .ident
            .to_string()
            .trim_start_matches("r#")
            .to_owned(),
    }
}

impl Param {
    fn new(
        pat: &Pat,
        ty: &Type,
        attr: ArgAttr,
        description: Option<String>,
        errors: &mut Errors,
    ) -> Option<Param> {
        let ident = match pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => p.ident.clone(),
            other => {
                errors.push(syn::Error::new_spanned(
                    other,
                    "a tool parameter needs a plain name, which becomes the argument's name in \
                     the input schema: write `name: Type` and take the value apart in the body",
                ));
                return None;
            }
        };
        // The parameters the runtime supplies, by the name of their type.
        let supplied = match supplied_param(ty, "Context", false) {
            Some(by_ref) => Some(("Context", Role::Context { by_ref })),
            None => {
                supplied_param(ty, "State", true).map(|by_ref| ("State", Role::State { by_ref }))
            }
        };
        if let Some((name, role)) = supplied {
            if let Some(span) = attr.span {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "a `{name}` parameter is supplied by the runtime and takes no `#[arg]`; \
                         remove the attribute"
                    ),
                ));
            }
            return Some(Param {
                ident,
                ty: ty.clone(),
                role,
            });
        }
        let (field_ty, by_ref) = owned_type(ty, errors)?;
        let property = match &attr.rename {
            Some(lit) => lit.value(),
            None => ident.to_string().trim_start_matches("r#").to_owned(),
        };
        Some(Param {
            ident,
            ty: ty.clone(),
            role: Role::Argument(Box::new(Argument {
                field_ty,
                by_ref,
                property,
                description,
                attr,
            })),
        })
    }
}

/// `Some(by_ref)` when the type is written `Name` or `&Name` (any path ending in `Name`, with
/// generics when `generics` says so): a parameter the runtime supplies, `Context` or
/// `State<T>`. The expansion then asserts that it is toolwright's.
pub(crate) fn supplied_param(ty: &Type, name: &str, generics: bool) -> Option<bool> {
    let (inner, by_ref) = match ty {
        Type::Reference(TypeReference {
            elem,
            mutability: None,
            ..
        }) => (&**elem, true),
        other => (other, false),
    };
    match inner {
        Type::Path(TypePath {
            qself: None, path, ..
        }) => {
            let last = path.segments.last()?;
            (last.ident == name && (generics || last.arguments.is_none())).then_some(by_ref)
        }
        _ => None,
    }
}

/// The owned type to deserialise, and whether the function borrows it.
fn owned_type(ty: &Type, errors: &mut Errors) -> Option<(Type, bool)> {
    if let Some(span) = impl_trait(ty) {
        errors.push(syn::Error::new(
            span,
            "`impl Trait` cannot be a tool argument: the input schema is derived from the type; \
             name a concrete type that derives `Deserialize` and `JsonSchema`",
        ));
        return None;
    }
    let Type::Reference(reference) = ty else {
        return Some((ty.clone(), false));
    };
    if let Some(mutability) = reference.mutability {
        errors.push(syn::Error::new(
            mutability.span,
            "a tool argument cannot be borrowed mutably: the arguments belong to the call; take \
             the value (`T`) or a shared reference (`&T`)",
        ));
        return None;
    }
    let span = reference.elem.span();
    let owned: Type = match &*reference.elem {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => {
            syn::parse_quote_spanned!(span=> ::std::string::String)
        }
        Type::Slice(slice) => {
            let elem = &slice.elem;
            syn::parse2(quote_spanned!(span=> ::std::vec::Vec<#elem>)).ok()?
        }
        Type::Path(p) if p.qself.is_none() && is_path_type(p) => {
            syn::parse_quote_spanned!(span=> ::std::path::PathBuf)
        }
        elem => elem.clone(),
    };
    Some((owned, true))
}

/// `Path`, `path::Path` or `std::path::Path`: a `&Path` argument is read as a `PathBuf`.
fn is_path_type(p: &TypePath) -> bool {
    let segments: Vec<String> = p
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let segments: Vec<&str> = segments.iter().map(String::as_str).collect();
    matches!(
        segments.as_slice(),
        ["Path"] | ["path", "Path"] | ["std", "path", "Path"]
    )
}

/// Where `impl Trait` appears in a type, looking through references, slices and generics.
fn impl_trait(ty: &Type) -> Option<Span> {
    match ty {
        Type::ImplTrait(t) => Some(t.impl_token.span),
        Type::Reference(r) => impl_trait(&r.elem),
        Type::Slice(s) => impl_trait(&s.elem),
        Type::Array(a) => impl_trait(&a.elem),
        Type::Paren(p) => impl_trait(&p.elem),
        Type::Tuple(t) => t.elems.iter().find_map(impl_trait),
        Type::Path(p) => p.path.segments.iter().find_map(|seg| match &seg.arguments {
            PathArguments::AngleBracketed(args) => args.args.iter().find_map(|arg| match arg {
                GenericArgument::Type(t) => impl_trait(t),
                _ => None,
            }),
            _ => None,
        }),
        _ => None,
    }
}

impl Output {
    fn new(output: &ReturnType, errors: &mut Errors) -> Output {
        let ty = match output {
            ReturnType::Default => return Output::Unit,
            ReturnType::Type(_, ty) => &**ty,
        };
        if let Some(span) = impl_trait(ty) {
            errors.push(syn::Error::new(
                span,
                "a tool cannot return `impl Trait`: the output schema is derived from the return \
                 type; name a concrete type that derives `Serialize` and `JsonSchema`",
            ));
            return Output::Unit;
        }
        if is_unit(ty) {
            return Output::Unit;
        }
        if let Some((ok, error)) = result_parts(ty) {
            return Output::Result {
                ok: (!is_unit(ok)).then(|| ok.clone()),
                error: error.cloned().map(Box::new),
                span: ty.span(),
            };
        }
        Output::Value(ty.clone())
    }
}

/// `T` and, when written, `E` of a type named `Result` (any path, so `anyhow::Result<T>` and
/// `io::Result<T>` count).
pub(crate) fn result_parts(ty: &Type) -> Option<(&Type, Option<&Type>)> {
    let Type::Path(TypePath {
        qself: None, path, ..
    }) = ty
    else {
        return None;
    };
    let last = path.segments.last()?;
    let PathArguments::AngleBracketed(args) = &last.arguments else {
        return None;
    };
    if last.ident != "Result" {
        return None;
    }
    let Some(GenericArgument::Type(ok)) = args.args.first() else {
        return None;
    };
    let error = match args.args.get(1) {
        Some(GenericArgument::Type(error)) => Some(error),
        _ => None,
    };
    Some((ok, error))
}

fn is_unit(ty: &Type) -> bool {
    match ty {
        Type::Tuple(t) => t.elems.is_empty(),
        Type::Paren(p) => is_unit(&p.elem),
        _ => false,
    }
}

//! A typed view of the annotated function, borrowing the syntax tree, in the same terms for a
//! tool, a prompt and a resource: its parameters in their roles, its docs, its output, and a
//! resource's URI template. Only what makes the view impossible is an error here (a method, a
//! parameter without a plain name); the rules are in `check`.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, ItemFn, LitStr, Pat, PathArguments, ReturnType, Type, TypePath,
    TypeReference,
};
use toolwright_rules::template::{self, Part, TemplateProblem};

use crate::attr::{self, ArgOptions, Options};
use crate::docs;
use crate::errors::Errors;
use crate::primitive::Primitive;

/// The function after parsing, with everything the checks and the expansion need.
pub(crate) struct Function<'a> {
    pub(crate) primitive: Primitive,
    /// The user's function as written.
    pub(crate) func: &'a ItemFn,
    pub(crate) options: &'a Options,
    /// The name on the wire: the `name` option, or the function's.
    pub(crate) name: String,
    /// The `description` option, or the doc comment.
    pub(crate) description: Option<String>,
    /// The name of the package being compiled, which is a tool's provider unless `provider` says
    /// otherwise; `None` when the compiler runs outside Cargo.
    pub(crate) package: Option<String>,
    pub(crate) params: Vec<Param<'a>>,
    pub(crate) output: Output<'a>,
    /// A resource's URI, read as a template; `None` for a tool, a prompt, and a resource without
    /// `uri`.
    pub(crate) template: Option<Template<'a>>,
}

/// One parameter with a plain name.
pub(crate) struct Param<'a> {
    pub(crate) ident: &'a Ident,
    /// The type as the user wrote it; errors about the parameter point here.
    pub(crate) ty: &'a Type,
    /// Its `#[arg(...)]`.
    pub(crate) options: ArgOptions,
    /// Its doc comment.
    pub(crate) description: Option<String>,
    pub(crate) role: Role,
}

/// What the runtime passes for a parameter.
pub(crate) enum Role {
    /// The runtime's `Context`, `Context` or `&Context`; never part of the input.
    Context { by_ref: bool },
    /// Application state, `State<T>` or `&State<T>`; never part of the input.
    State { by_ref: bool },
    /// A value the client sends: a tool's argument, a prompt's argument, a template's variable.
    Value(Box<Value>),
}

/// A value the client sends, and how it is read.
pub(crate) struct Value {
    /// The name the client sends it under: the parameter's, or `#[arg(rename)]`.
    pub(crate) name: String,
    /// The owned type it is read into: `&str` is read as `String`, `&[T]` as `Vec<T>`, `&Path`
    /// as `PathBuf`, `&T` as `T`.
    pub(crate) owned: Type,
    /// The `T` of an owned type `Option<T>`: a prompt reads `T` from an argument that may be
    /// left out.
    pub(crate) optional: Option<Type>,
    /// Whether the function takes a reference to the owned value.
    pub(crate) by_ref: bool,
}

/// The return type.
pub(crate) enum Output<'a> {
    /// None written.
    Nothing,
    /// Any type but a `Result`, `()` included.
    Value(&'a Type),
    /// A type named `Result` (any path, so `anyhow::Result<T>` and `io::Result<T>` count): `Ok`
    /// is converted like a plain return, `Err` becomes an error the client reads. `error` is
    /// `E` when written (`Result<T, E>`), for errors about it to point there.
    Result {
        ok: &'a Type,
        error: Option<&'a Type>,
        /// The whole type, for errors about an `E` that is not written.
        ty: &'a Type,
    },
}

/// A resource's `uri`, read as an RFC 6570 template; a fixed URI is a template without
/// variables.
pub(crate) struct Template<'a> {
    pub(crate) uri: &'a LitStr,
    /// The variables in the template's order, or why the URI cannot be a resource's.
    pub(crate) variables: Result<Vec<String>, TemplateProblem>,
}

impl<'a> Function<'a> {
    pub(crate) fn from_syn(
        primitive: Primitive,
        func: &'a ItemFn,
        options: &'a Options,
        errors: &mut Errors,
    ) -> Function<'a> {
        let params = func
            .sig
            .inputs
            .iter()
            .filter_map(|input| Param::from_syn(primitive, input, errors))
            .collect();
        let name = match &options.name {
            Some(lit) => lit.value(),
            None => unraw(&func.sig.ident),
        };
        let description = match &options.description {
            Some(lit) => Some(lit.value()),
            None => docs::description(&func.attrs),
        };
        Function {
            primitive,
            func,
            options,
            name,
            description,
            // Cargo sets it for the compiler, whose process runs this macro.
            package: std::env::var("CARGO_PKG_NAME").ok(),
            params,
            output: Output::from_syn(&func.sig.output),
            template: options.uri.as_ref().map(Template::from_syn),
        }
    }

    /// The parameters the client sends, in order.
    pub(crate) fn values(&self) -> impl Iterator<Item = (&Param<'a>, &Value)> {
        self.params.iter().filter_map(|p| match &p.role {
            Role::Value(value) => Some((p, &**value)),
            Role::Context { .. } | Role::State { .. } => None,
        })
    }

    pub(crate) fn is_async(&self) -> bool {
        self.func.sig.asyncness.is_some()
    }

    /// Whether the function runs on the blocking thread pool.
    pub(crate) fn blocks(&self) -> bool {
        self.options.blocking.is_some_and(|flag| flag.value)
    }
}

impl<'a> Param<'a> {
    /// The parameter; `None`, with the mistake reported, when it is `self` or has no plain name.
    fn from_syn(primitive: Primitive, input: &'a FnArg, errors: &mut Errors) -> Option<Param<'a>> {
        let pat_type = match input {
            FnArg::Typed(pat_type) => pat_type,
            FnArg::Receiver(receiver) => {
                let message = match primitive {
                    Primitive::Tool => "`#[mcp_tool]` goes on a free function, not a method: move \
                                        the function out of the `impl` block and reach shared \
                                        state another way"
                        .to_owned(),
                    Primitive::Prompt | Primitive::Resource => format!(
                        "`#[{}]` goes on a free function, not a method: move it out of the \
                         `impl` block, and take shared state as `State<T>`",
                        primitive.attribute()
                    ),
                };
                errors.push(syn::Error::new(receiver.self_token.span, message));
                return None;
            }
        };
        let options = attr::parse_arg(&pat_type.attrs, errors);
        let description = docs::description(&pat_type.attrs);
        let ident = match &*pat_type.pat {
            Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => &p.ident,
            other => {
                let message = match primitive {
                    Primitive::Tool => "a tool parameter needs a plain name, which becomes the \
                                        argument's name in the input schema: write `name: Type` \
                                        and take the value apart in the body"
                        .to_owned(),
                    Primitive::Prompt | Primitive::Resource => format!(
                        "a {} parameter needs a plain name, which becomes the {}'s name: write \
                         `name: Type`",
                        primitive.noun(),
                        primitive.value()
                    ),
                };
                errors.push(syn::Error::new_spanned(other, message));
                return None;
            }
        };
        let ty = &*pat_type.ty;
        let role = if let Some(by_ref) = supplied(ty, "Context", false) {
            Role::Context { by_ref }
        } else if let Some(by_ref) = supplied(ty, "State", true) {
            Role::State { by_ref }
        } else {
            let (owned, by_ref) = owned_type(ty);
            let name = match &options.rename {
                Some(lit) => lit.value(),
                None => unraw(ident),
            };
            Role::Value(Box::new(Value {
                name,
                optional: option_inner(&owned).cloned(),
                owned,
                by_ref,
            }))
        };
        Some(Param {
            ident,
            ty,
            options,
            description,
            role,
        })
    }
}

impl<'a> Output<'a> {
    fn from_syn(output: &'a ReturnType) -> Output<'a> {
        let ty = match output {
            ReturnType::Default => return Output::Nothing,
            ReturnType::Type(_, ty) => &**ty,
        };
        match result_parts(ty) {
            Some((ok, error)) => Output::Result { ok, error, ty },
            None => Output::Value(ty),
        }
    }
}

impl<'a> Template<'a> {
    fn from_syn(uri: &'a LitStr) -> Template<'a> {
        let variables = template::parse(&uri.value()).map(|parts| {
            parts
                .iter()
                .filter_map(|part| match part {
                    Part::Variable { name, .. } => Some((*name).to_owned()),
                    Part::Literal(_) => None,
                })
                .collect()
        });
        Template { uri, variables }
    }
}

/// The identifier as the client sees it, without `r#`.
pub(crate) fn unraw(ident: &Ident) -> String {
    ident.to_string().trim_start_matches("r#").to_owned()
}

/// `Some(by_ref)` when the type is written `Name` or `&Name` (any path ending in `Name`, with
/// generics when `generics` says so): a parameter the runtime supplies, `Context` or
/// `State<T>`. The expansion then asserts that it is toolwright's.
fn supplied(ty: &Type, name: &str, generics: bool) -> Option<bool> {
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

/// The owned type to read, and whether the function borrows it (`&mut` included, which `check`
/// refuses).
fn owned_type(ty: &Type) -> (Type, bool) {
    let Type::Reference(reference) = ty else {
        return (ty.clone(), false);
    };
    let span = reference.elem.span();
    let owned: Type = match &*reference.elem {
        Type::Path(p) if p.qself.is_none() && p.path.is_ident("str") => {
            syn::parse_quote_spanned!(span=> ::std::string::String)
        }
        Type::Slice(slice) => {
            let elem = &slice.elem;
            syn::parse_quote_spanned!(span=> ::std::vec::Vec<#elem>)
        }
        Type::Path(p) if p.qself.is_none() && is_path_type(p) => {
            syn::parse_quote_spanned!(span=> ::std::path::PathBuf)
        }
        elem => elem.clone(),
    };
    (owned, true)
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

/// The `T` of `Option<T>`.
fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(TypePath {
        qself: None, path, ..
    }) = ty
    else {
        return None;
    };
    let segment = path.segments.last()?;
    if segment.ident != "Option" {
        return None;
    }
    match &segment.arguments {
        PathArguments::AngleBracketed(args) => match args.args.first()? {
            GenericArgument::Type(inner) if args.args.len() == 1 => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// `T` and, when written, `E` of a type named `Result`.
fn result_parts(ty: &Type) -> Option<(&Type, Option<&Type>)> {
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

/// Where `impl Trait` appears in a type, looking through references, slices and generics.
pub(crate) fn impl_trait(ty: &Type) -> Option<Span> {
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

/// `()`, parenthesised or not.
pub(crate) fn is_unit(ty: &Type) -> bool {
    match ty {
        Type::Tuple(t) => t.elems.is_empty(),
        Type::Paren(p) => is_unit(&p.elem),
        _ => false,
    }
}

/// The type without a leading `&` or `&mut`.
pub(crate) fn strip_reference(ty: &Type) -> &Type {
    match ty {
        Type::Reference(r) => &r.elem,
        other => other,
    }
}

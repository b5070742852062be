//! The rules, each a named check that pushes a spanned error: the signature's here, the
//! parameters' in `params`, the options' in `options`. Each primitive has its list of rules, and
//! every rule on it runs, so one build shows every mistake at once.

mod options;
mod params;

use syn::{GenericParam, Safety};

use crate::ast::{self, Function, Output};
use crate::errors::Errors;
use crate::primitive::Primitive;

type Rule = fn(&Function<'_>, &mut Errors);

const TOOL: &[Rule] = &[
    signature,
    params::supplied,
    params::one_context,
    params::value_types,
    params::tool_helpers,
    params::unique_names,
    params::literal_schema,
    output,
    options::name,
    options::description,
    options::texts,
    options::provider,
    options::hints,
    options::blocking,
    options::tags,
    options::scopes,
    options::view,
];

const PROMPT: &[Rule] = &[
    signature,
    params::supplied,
    params::value_types,
    params::string_helpers,
    output,
    options::name,
    options::description,
    options::completers,
    params::unique_names,
    options::blocking,
];

const RESOURCE: &[Rule] = &[
    signature,
    params::supplied,
    params::value_types,
    params::string_helpers,
    output,
    options::template,
    options::name,
    options::completers,
    params::unique_names,
    options::blocking,
];

/// Runs every rule of the function's primitive.
pub(crate) fn check(function: &Function<'_>, errors: &mut Errors) {
    let rules = match function.primitive {
        Primitive::Tool => TOOL,
        Primitive::Prompt => PROMPT,
        Primitive::Resource => RESOURCE,
    };
    for rule in rules {
        rule(function, errors);
    }
}

/// Qualifiers and generics that the signature cannot have, since the runtime calls the function
/// with inputs that are fixed at compile time.
fn signature(function: &Function<'_>, errors: &mut Errors) {
    let sig = &function.func.sig;
    let what = function.primitive.noun();
    let fixed = function.primitive.fixed();
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

/// The return type can become what the primitive returns: a tool's output schema is derived from
/// it, and a prompt or a resource returns something.
fn output(function: &Function<'_>, errors: &mut Errors) {
    let sig = &function.func.sig;
    match (function.primitive, &function.output) {
        (Primitive::Tool, Output::Value(ty) | Output::Result { ty, .. }) => {
            if let Some(span) = ast::impl_trait(ty) {
                errors.push(syn::Error::new(
                    span,
                    "a tool cannot return `impl Trait`: the output schema is derived from the \
                     return type; name a concrete type that derives `Serialize` and `JsonSchema`",
                ));
            }
        }
        (Primitive::Prompt, Output::Nothing) => errors.push(syn::Error::new(
            // Where the return type goes.
            sig.paren_token.span.close(),
            "a prompt returns its messages: text (`String`), a `PromptMessage` or a \
             `Vec<PromptMessage>`",
        )),
        (Primitive::Resource, Output::Nothing) => errors.push(syn::Error::new(
            sig.paren_token.span.close(),
            "a resource returns its contents: text (`String`), bytes (`Vec<u8>`), `Json<T>` or \
             `ResourceContents`",
        )),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use proc_macro2::TokenStream;
    use quote::quote;

    use crate::ast::Function;
    use crate::attr;
    use crate::errors::Errors;
    use crate::primitive::Primitive;

    /// Every mistake the options, the typed view and the rules find, in order.
    fn mistakes(primitive: Primitive, args: TokenStream, item: TokenStream) -> Vec<String> {
        let mut errors = Errors::default();
        let options = attr::parse_options(primitive, args, &mut errors);
        let func: syn::ItemFn = syn::parse2(item).unwrap();
        let function = Function::from_syn(primitive, &func, &options, &mut errors);
        super::check(&function, &mut errors);
        errors
            .take()
            .map(|error| error.into_iter().map(|e| e.to_string()).collect())
            .unwrap_or_default()
    }

    #[test]
    fn each_attribute_accepts_its_own_keys() {
        let found = mistakes(
            Primitive::Prompt,
            quote!(uri = "notes://tags"),
            quote!(
                fn greet() -> String {}
            ),
        );
        assert_eq!(
            found,
            [
                "unknown `mcp_prompt` option `uri`; expected one of `name`, `title`, \
              `description`, `complete`, `blocking`, `crate`"
            ]
        );
        let found = mistakes(
            Primitive::Resource,
            quote!(
                uri = "notes://{id}",
                audience = ["user"],
                priority = 1,
                changes
            ),
            quote!(
                fn note(id: u64) -> String {}
            ),
        );
        assert_eq!(found, Vec::<String>::new());
    }

    #[test]
    fn one_build_shows_every_mistake_in_the_primitives_words() {
        let found = mistakes(
            Primitive::Resource,
            quote!(uri = "notes://{id}", blocking),
            quote!(
                async fn note<T>(id: Option<u64>, extra: String) {}
            ),
        );
        assert_eq!(
            found,
            [
                "a resource cannot have generic type parameters: its URI is fixed at compile \
                 time; use concrete types",
                "a template variable cannot be optional: the template matches a URI only where \
                 each of its variables has a value; take `T`, not `Option<T>`",
                "a resource returns its contents: text (`String`), bytes (`Vec<u8>`), `Json<T>` \
                 or `ResourceContents`",
                "`extra` is not a variable of the URI template `notes://{id}`, whose variables \
                 are `id`",
                "an `async fn` never blocks: it waits instead, and other work goes on; remove \
                 `blocking`, or make the function a plain `fn`",
            ]
        );
    }

    #[test]
    fn task_takes_one_of_three_strings() {
        let task = |args: TokenStream| {
            mistakes(
                Primitive::Tool,
                args,
                quote! {
                    /// Export.
                    fn export() {}
                },
            )
        };
        for accepted in ["optional", "required", "forbidden"] {
            assert_eq!(task(quote!(task = #accepted)), Vec::<String>::new());
        }
        assert_eq!(
            task(quote!(task = "Optional")),
            [
                "unknown `task` value `Optional`; expected `\"optional\"` (the tool runs as a task \
                 when the client asks for one), `\"required\"` (only as a task) or `\"forbidden\"` \
                 (never, the default)"
            ]
        );
        let usage = "`task` takes a string, one of `\"optional\"`, `\"required\"` and \
                     `\"forbidden\"`: `task = \"optional\"`";
        assert_eq!(task(quote!(task = true)), [usage]);
        assert_eq!(task(quote!(task)), [usage]);
        assert_eq!(task(quote!(task = sometimes)), [usage]);
        assert_eq!(
            task(quote!(task = required)),
            ["`task` takes a string: `task = \"required\"`"]
        );
        // The options after a mistake are still read.
        assert_eq!(
            task(quote!(task = 1, tags = [2])),
            [
                usage,
                "`tags` takes a list of strings: `tags = [\"notes\", \"search\"]`"
            ]
        );
    }

    #[test]
    fn a_default_is_for_a_tools_argument_alone() {
        let tool = mistakes(
            Primitive::Tool,
            quote!(),
            quote! {
                /// Search.
                fn search(#[arg(default = 10, rename = "max")] limit: u32) {}
            },
        );
        assert_eq!(tool, Vec::<String>::new());
        let prompt = mistakes(
            Primitive::Prompt,
            quote!(),
            quote! {
                /// Search.
                fn search(#[arg(default = 10, rename = "max")] limit: u32) -> String {}
            },
        );
        assert_eq!(
            prompt,
            [
                "a prompt argument takes no default: make it `Option<T>` and choose the default \
              in the body"
            ]
        );
    }
}

//! Resources: what a server offers to be read by URI, `resources/read`, beside its tools.
//!
//! Put [`#[mcp_resource]`](crate::mcp_resource) on a function. A fixed URI
//! (`notes://tags`) is one resource, listed by `resources/list`; a URI template
//! (`notes://{id}`, RFC 6570) is a family of them, listed by `resources/templates/list`, whose
//! variables are the function's parameters. The function returns the contents: text, bytes,
//! [`Json`], [`ResourceContents`], or `None` when the URI names nothing. See
//! [`mcp_resource`](crate::mcp_resource) for the rules.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;

use crate::completion::Completer;
use crate::context::Context;
use crate::handler::BoxFuture;
use crate::prompt::Role;
use crate::state::FromState;

pub use crate::content::ResourceContents;

/// What a resource function returns: the contents of `resources/read`.
///
/// Implemented for text (`String`, `&str`), bytes (`Vec<u8>`, `&[u8]`, sent base64-encoded),
/// [`Json`], [`ResourceContents`] and `Vec<ResourceContents>`, and `Option` of any of them:
/// `None` says that the URI names no resource, which the client is told as "resource not
/// found". The media type declared in the attribute applies to contents that set none.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be returned from a resource",
    label = "a resource returns its contents",
    note = "return text (`String`, `&str`), bytes (`Vec<u8>`), `Json<T>`, `ResourceContents` or \
            `Vec<ResourceContents>`, or `Option<_>` of one (`None`: no such resource); \
            `Result<_, E>` with `E: Display` too"
)]
pub trait IntoContents {
    /// The contents, or why there are none.
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError>;
}

impl IntoContents for String {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::text(self)])
    }
}

impl IntoContents for &str {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::text(self)])
    }
}

impl IntoContents for Vec<u8> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::blob(self)])
    }
}

impl IntoContents for &[u8] {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![ResourceContents::blob(self)])
    }
}

impl IntoContents for ResourceContents {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(vec![self])
    }
}

impl IntoContents for Vec<ResourceContents> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        Ok(self)
    }
}

impl<T: IntoContents> IntoContents for Option<T> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        match self {
            Some(contents) => contents.into_contents(),
            None => Err(ResourceError::not_found(
                "the resource's function found nothing at this URI".to_owned(),
            )),
        }
    }
}

/// Contents serialised as JSON text, of media type `application/json`.
///
/// ```
/// use toolwright::resource::Json;
///
/// /// The notebook's tags, most used first.
/// #[toolwright::mcp_resource(uri = "notes://tags")]
/// fn tags() -> Json<Vec<&'static str>> {
///     Json(vec!["home", "work"])
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Json<T>(pub T);

impl<T: Serialize> IntoContents for Json<T> {
    fn into_contents(self) -> Result<Vec<ResourceContents>, ResourceError> {
        let text = serde_json::to_string(&self.0).map_err(|err| ResourceError {
            not_found: false,
            message: format!("its contents do not serialise as JSON: {err}"),
        })?;
        Ok(vec![
            ResourceContents::text(text).with_mime_type("application/json"),
        ])
    }
}

/// A type a template variable is read into. The variable is text of the URI, percent-decoded, so
/// any type that implements [`FromStr`] with an error that implements `Display` is one: `String`,
/// numbers, your own ids. A value that does not parse means the URI names no resource.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a template variable",
    label = "template variables are read from the URI's text",
    note = "take `String` (or `&str`), or a type that implements `FromStr` with an error that \
            implements `Display`"
)]
pub trait TemplateVariable: Sized {
    /// Reads the variable from its text.
    fn parse(text: &str) -> Result<Self, String>;
}

impl<T> TemplateVariable for T
where
    T: FromStr,
    T::Err: fmt::Display,
{
    fn parse(text: &str) -> Result<T, String> {
        text.parse().map_err(|err: T::Err| err.to_string())
    }
}

/// Why `resources/read` has no contents: the URI names no resource ("resource not found", -32002,
/// or -32602 under protocol 2026-07-28, with the URI in `data`), or reading it failed (-32603,
/// an internal error, with this text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceError {
    pub(crate) not_found: bool,
    pub(crate) message: String,
}

impl ResourceError {
    /// The URI names no resource.
    pub(crate) fn not_found(message: String) -> ResourceError {
        ResourceError {
            not_found: true,
            message,
        }
    }

    /// Whether the URI names no resource, rather than one that failed to be read.
    pub fn is_not_found(&self) -> bool {
        self.not_found
    }
}

impl fmt::Display for ResourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// What a resource function makes: its contents, or why there are none.
pub type Read = Result<Vec<ResourceContents>, ResourceError>;

/// One `resources/read` of a resource: the URI, and the values of its template's variables.
#[derive(Debug)]
pub struct ResourceRequest {
    pub(crate) uri: String,
    /// Percent-decoded, by name.
    pub(crate) variables: Vec<(&'static str, String)>,
}

impl ResourceRequest {
    /// The URI read.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

/// How a resource is read: the function `#[mcp_resource]` generates around the user's.
#[derive(Clone, Copy, Debug)]
pub enum ResourceHandler {
    /// A plain `fn`, run on the runtime.
    Sync(fn(&ResourceRequest, Context) -> Read),
    /// A plain `fn` that blocks, run on the blocking thread pool (`#[mcp_resource(blocking)]`).
    Blocking(fn(&ResourceRequest, Context) -> Read),
    /// An `async fn`.
    Async(fn(ResourceRequest, Context) -> BoxFuture<Read>),
}

/// One variable of a resource template.
#[derive(Clone, Copy, Debug)]
pub struct VariableInfo {
    /// Its name in the template.
    pub name: &'static str,
    /// What suggests its values as the user types it, if anything does.
    pub complete: Option<Completer>,
}

/// The protocol's hints about a resource, each left out when unset.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ResourceAnnotations {
    /// Whom the resource is for: the user, the model, or both; empty: not said.
    pub audience: &'static [Role],
    /// How much it matters, from 0 (least) to 1 (most).
    pub priority: Option<f64>,
}

/// Reads variable `name` of the request as `T`: a value that does not parse means the URI names
/// no resource of this template. Generated code calls it for each variable.
pub fn read_variable<T: TemplateVariable>(
    request: &ResourceRequest,
    name: &str,
) -> Result<T, ResourceError> {
    let Some((_, text)) = request.variables.iter().find(|(n, _)| *n == name) else {
        unreachable!("the template has every variable the function takes");
    };
    T::parse(text).map_err(|err| {
        ResourceError::not_found(format!("its variable `{name}` is `{text}`: {err}"))
    })
}

/// The application state a `State<T>` parameter of a resource takes.
pub fn take_resource_state<S: FromState>(ctx: &Context) -> Result<S, ResourceError> {
    S::from_states(ctx.states()).map_err(|message| ResourceError {
        not_found: false,
        message,
    })
}

/// The error a resource function returned, as `resources/read` answers it.
pub fn resource_failed<E: fmt::Display>(error: E) -> ResourceError {
    ResourceError {
        not_found: false,
        message: error.to_string(),
    }
}

//! MCP Apps (`io.modelcontextprotocol/ui`): tools that come with an interactive view.
//!
//! A view is an HTML page the host fetches with `resources/read` and shows in a sandboxed frame
//! next to the tool's result. Two things make one:
//!
//! - a **UI resource**, declared with [`ui_resource!`](crate::apps::ui_resource) from any crate and
//!   collected by the linker like tools: its `ui://` URI, its HTML, and the sandbox it asks for
//!   (the [`UiResource`] builder);
//! - a **tool** that names it: `#[mcp_tool(ui = "ui://notes/board.html")]`. A tool can also say
//!   whom hosts offer it to: `visibility = ["app"]` makes a tool for the server's views, kept
//!   from the model.
//!
//! ```
//! use toolwright::apps::UiResource;
//! use toolwright::mcp_tool;
//!
//! toolwright::apps::ui_resource!(
//!     UiResource::new("ui://clock/face.html", "<!doctype html><title>Clock</title><p id=t></p>")
//!         .title("Clock face")
//!         .prefers_border(true)
//! );
//!
//! /// The time now, shown on a clock face.
//! #[mcp_tool(read_only, ui = "ui://clock/face.html")]
//! fn show_time() -> String {
//!     "12:00".to_owned()
//! }
//! ```
//!
//! The server then declares the `resources` capability and the extension, serves the page
//! through `resources/list` and `resources/read` as `text/html;profile=mcp-app` with its sandbox
//! under `_meta.ui`, and adds `_meta.ui` to the tool in `tools/list`. At start, a tool whose
//! `ui` names no registered resource stops the server with [`Conflict::MissingUiResource`], and
//! two resources with one URI with [`Conflict::DuplicateResource`].
//!
//! # Who sees what
//!
//! A tool with a view still returns content a model can read (its text, its structured
//! content): hosts without the extension, and models, only see that. Tools whose visibility
//! leaves out `"model"` are listed only to clients that declared the extension (see
//! [`client_supports`]): other clients have no view that could call them, and calling one
//! from such a client is refused (-32602; -32021, a missing client capability, in 2026-07-28).
//! In the progressive catalog, `search_tools` never finds them and `call_tool` refuses them,
//! since both are the model's way in.
//!
//! Visibility is a promise hosts keep, not a lock: any client can declare the extension and
//! call a view-only tool. A tool that changes something checks what it is asked to do as any
//! other tool would.
//!
//! # Reading another server's tools
//!
//! [`ToolMeta::parse`] and [`ResourceMeta::parse`] read the `_meta` of any server's tools and
//! resources, for gateways and clients. They fail closed: a malformed link links nothing, and a
//! malformed visibility hides the tool from the model.
//!
//! [`Conflict::MissingUiResource`]: crate::registry::Conflict::MissingUiResource
//! [`Conflict::DuplicateResource`]: crate::registry::Conflict::DuplicateResource

use serde_json::{Map, Value, json};
use toolwright_rules as rules;

use crate::content::ResourceContents;
use crate::protocol::Client;

/// Declares an MCP Apps view: a [`UiResource`] served as a `ui://` resource,
/// collected by the linker like tools, from any crate of the binary. Tools name it with
/// `#[mcp_tool(ui = "ui://...")]`; see [the module](self).
///
/// The builder runs at compile time, so a URI outside `ui://` or a domain that is not an origin
/// fails the build.
///
/// ```
/// toolwright::apps::ui_resource!(
///     toolwright::apps::UiResource::new("ui://notes/board.html", "<!doctype html><title>Board</title>")
///         .title("Notes board")
///         .prefers_border(true)
/// );
/// ```
#[doc(inline)]
pub use crate::__ui_resource as ui_resource;

/// [`ui_resource!`]: a view submitted to the linker-collected registry.
#[doc(hidden)]
#[macro_export]
macro_rules! __ui_resource {
    ($resource:expr $(,)?) => {
        $crate::__private::inventory::submit! {
            $crate::__private::UiResourceRegistration {
                resource: $resource,
                location: $crate::__private::Location {
                    file: ::core::file!(),
                    line: ::core::line!(),
                    column: ::core::column!(),
                    module_path: ::core::module_path!(),
                },
            }
        }
    };
}

mod parse;

pub use parse::{CspDomains, ResourceMeta, ToolMeta};

/// The extension's identifier, the key under `capabilities.extensions`.
pub const EXTENSION_ID: &str = "io.modelcontextprotocol/ui";

/// The MIME type of a view: HTML, for the MCP Apps profile.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The URI scheme of views.
pub const SCHEME: &str = "ui://";

/// Whom hosts offer a tool to: the model, the server's views, or both (the default).
///
/// Hosts enforce it: they keep tools without `model` from the model, and refuse calls from a
/// view to tools without `app`. It is not access control on the server: see
/// [the module's docs](self#who-sees-what).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Visibility {
    /// The model may see and call the tool.
    pub model: bool,
    /// The server's views may call the tool.
    pub app: bool,
}

impl Visibility {
    /// Both the model and the views: what an absent `visibility` means.
    pub const ALL: Visibility = Visibility {
        model: true,
        app: true,
    };

    /// Only the views: hidden from the model.
    pub const APP_ONLY: Visibility = Visibility {
        model: false,
        app: true,
    };

    /// The protocol's list: `["model", "app"]`, or the part of it that holds.
    pub fn audiences(self) -> Vec<&'static str> {
        let mut audiences = Vec::with_capacity(2);
        if self.model {
            audiences.push("model");
        }
        if self.app {
            audiences.push("app");
        }
        audiences
    }
}

impl Default for Visibility {
    fn default() -> Visibility {
        Visibility::ALL
    }
}

/// What `#[mcp_tool(ui = ..., visibility = [...])]` registers: a tool's link to its view and
/// who may call it, each `None` when not written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ToolUi {
    /// The `ui://` URI of the tool's view.
    pub resource_uri: Option<&'static str>,
    /// Who may call the tool; `None` is both.
    pub visibility: Option<Visibility>,
}

impl ToolUi {
    /// No view and the default visibility: a tool as the protocol had it before the extension.
    pub const NONE: ToolUi = ToolUi {
        resource_uri: None,
        visibility: None,
    };

    /// Who may call the tool.
    pub fn visibility(&self) -> Visibility {
        self.visibility.unwrap_or_default()
    }

    /// The tool's `_meta.ui`, or `None` when there is nothing to say.
    pub(crate) fn meta(&self) -> Option<Value> {
        let mut ui = Map::new();
        if let Some(uri) = self.resource_uri {
            ui.insert("resourceUri".into(), json!(uri));
        }
        if let Some(visibility) = self.visibility {
            ui.insert("visibility".into(), json!(visibility.audiences()));
        }
        (!ui.is_empty()).then_some(Value::Object(ui))
    }
}

/// The sandbox permissions a view asks the host for; each is off unless asked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Permissions {
    /// `camera`.
    pub camera: bool,
    /// `microphone`.
    pub microphone: bool,
    /// `geolocation`.
    pub geolocation: bool,
    /// `clipboardWrite`.
    pub clipboard_write: bool,
}

impl Permissions {
    /// The protocol's names of the permissions asked for, in its order.
    pub fn names(self) -> Vec<&'static str> {
        [
            ("camera", self.camera),
            ("microphone", self.microphone),
            ("geolocation", self.geolocation),
            ("clipboardWrite", self.clipboard_write),
        ]
        .into_iter()
        .filter_map(|(name, asked)| asked.then_some(name))
        .collect()
    }

    /// The protocol's object: `{"camera": {}, ...}`.
    fn json(self) -> Map<String, Value> {
        self.names()
            .into_iter()
            .map(|name| (name.to_owned(), json!({})))
            .collect()
    }
}

/// A view: an HTML page served as a `ui://` resource, with the sandbox it asks for.
///
/// Built with `const fn`s, inside [`ui_resource!`](crate::apps::ui_resource), so every mistake the
/// builder can see (a URI outside `ui://`, a domain that is not an origin) fails the build.
/// What the view may reach starts at nothing, the host's default: each domain list adds
/// origins to one CSP directive, and hosts may restrict further but never loosen.
///
/// ```
/// use toolwright::apps::UiResource;
///
/// toolwright::apps::ui_resource!(
///     UiResource::new("ui://weather/map.html", "<!doctype html><title>Map</title>")
///         .name("weather-map")
///         .description("A map of the forecast")
///         .connect_domains(&["https://api.weather.example"])
///         .resource_domains(&["https://tiles.weather.example"])
///         .geolocation()
/// );
/// ```
#[derive(Clone, Copy, Debug)]
pub struct UiResource {
    uri: &'static str,
    html: &'static str,
    name: Option<&'static str>,
    title: Option<&'static str>,
    description: Option<&'static str>,
    connect_domains: &'static [&'static str],
    resource_domains: &'static [&'static str],
    frame_domains: &'static [&'static str],
    base_uri_domains: &'static [&'static str],
    permissions: Permissions,
    domain: Option<&'static str>,
    prefers_border: Option<bool>,
}

impl UiResource {
    /// The view at `uri`, with this HTML (typically `include_str!`). The URI is
    /// `ui://<server>/<view>`, both parts non-empty, in printable ASCII (percent-encode the
    /// rest), as `#[mcp_tool(ui = "...")]` requires too.
    ///
    /// # Panics
    ///
    /// When `uri` is not such a URI; inside [`ui_resource!`](crate::apps::ui_resource) that is a
    /// compile error.
    pub const fn new(uri: &'static str, html: &'static str) -> UiResource {
        if let Err(problem) = rules::ui_uri(uri) {
            panic!("{}", problem);
        }
        UiResource {
            uri,
            html,
            name: None,
            title: None,
            description: None,
            connect_domains: &[],
            resource_domains: &[],
            frame_domains: &[],
            base_uri_domains: &[],
            permissions: Permissions {
                camera: false,
                microphone: false,
                geolocation: false,
                clipboard_write: false,
            },
            domain: None,
            prefers_border: None,
        }
    }

    /// The resource's `name` in `resources/list`; default: its URI.
    pub const fn name(mut self, name: &'static str) -> UiResource {
        self.name = Some(name);
        self
    }

    /// A display name for people.
    pub const fn title(mut self, title: &'static str) -> UiResource {
        self.title = Some(title);
        self
    }

    /// What the view shows.
    pub const fn description(mut self, description: &'static str) -> UiResource {
        self.description = Some(description);
        self
    }

    /// Origins the view may connect to (`fetch`, WebSocket): CSP `connect-src`.
    ///
    /// # Panics
    ///
    /// When an entry is not an origin (see [`UiResource`]); a compile error in
    /// [`ui_resource!`](crate::apps::ui_resource).
    pub const fn connect_domains(mut self, origins: &'static [&'static str]) -> UiResource {
        check_origins(origins);
        self.connect_domains = origins;
        self
    }

    /// Origins the view may load scripts, styles, images, fonts and media from: CSP
    /// `script-src`, `style-src`, `img-src`, `font-src`, `media-src`.
    ///
    /// # Panics
    ///
    /// As [`connect_domains`](UiResource::connect_domains).
    pub const fn resource_domains(mut self, origins: &'static [&'static str]) -> UiResource {
        check_origins(origins);
        self.resource_domains = origins;
        self
    }

    /// Origins the view may frame: CSP `frame-src`.
    ///
    /// # Panics
    ///
    /// As [`connect_domains`](UiResource::connect_domains).
    pub const fn frame_domains(mut self, origins: &'static [&'static str]) -> UiResource {
        check_origins(origins);
        self.frame_domains = origins;
        self
    }

    /// Origins the view's `<base>` may name: CSP `base-uri`.
    ///
    /// # Panics
    ///
    /// As [`connect_domains`](UiResource::connect_domains).
    pub const fn base_uri_domains(mut self, origins: &'static [&'static str]) -> UiResource {
        check_origins(origins);
        self.base_uri_domains = origins;
        self
    }

    /// Asks for the camera.
    pub const fn camera(mut self) -> UiResource {
        self.permissions.camera = true;
        self
    }

    /// Asks for the microphone.
    pub const fn microphone(mut self) -> UiResource {
        self.permissions.microphone = true;
        self
    }

    /// Asks for the location.
    pub const fn geolocation(mut self) -> UiResource {
        self.permissions.geolocation = true;
        self
    }

    /// Asks to write to the clipboard.
    pub const fn clipboard_write(mut self) -> UiResource {
        self.permissions.clipboard_write = true;
        self
    }

    /// A dedicated origin for the view's sandbox, in the form the host asks for (for example
    /// `{hash}.claudemcpcontent.com`); hosts that do not know it ignore it.
    ///
    /// # Panics
    ///
    /// When `domain` is not a host name (`A-Z a-z 0-9 - .`, not empty).
    pub const fn domain(mut self, domain: &'static str) -> UiResource {
        if domain.is_empty() || !is_host(domain.as_bytes(), 0, domain.len()) {
            panic!("a UI resource's `domain` must be a host name: `A-Z a-z 0-9 - .`");
        }
        self.domain = Some(domain);
        self
    }

    /// Whether the host should draw a border around the view.
    pub const fn prefers_border(mut self, border: bool) -> UiResource {
        self.prefers_border = Some(border);
        self
    }

    /// The `ui://` URI.
    pub fn uri(&self) -> &'static str {
        self.uri
    }

    /// The HTML.
    pub fn html(&self) -> &'static str {
        self.html
    }

    /// The `name` in `resources/list`.
    pub fn resource_name(&self) -> &'static str {
        self.name.unwrap_or(self.uri)
    }

    /// The permissions asked for.
    pub fn permissions(&self) -> Permissions {
        self.permissions
    }

    /// The sandbox it asks for, as [`ResourceMeta::parse`] reads it back.
    pub fn meta(&self) -> ResourceMeta {
        let owned = |origins: &[&str]| origins.iter().map(|o| (*o).to_owned()).collect();
        ResourceMeta {
            csp: CspDomains {
                connect_domains: owned(self.connect_domains),
                resource_domains: owned(self.resource_domains),
                frame_domains: owned(self.frame_domains),
                base_uri_domains: owned(self.base_uri_domains),
            },
            permissions: self.permissions,
            domain: self.domain.map(str::to_owned),
            prefers_border: self.prefers_border,
        }
    }

    /// The resource as `resources/list` lists it.
    pub(crate) fn listed(&self) -> Value {
        let mut resource = Map::new();
        resource.insert("uri".into(), json!(self.uri));
        resource.insert("name".into(), json!(self.resource_name()));
        if let Some(title) = self.title {
            resource.insert("title".into(), json!(title));
        }
        if let Some(description) = self.description {
            resource.insert("description".into(), json!(description));
        }
        resource.insert("mimeType".into(), json!(MIME_TYPE));
        if let Some(ui) = self.meta().wire() {
            resource.insert("_meta".into(), json!({ "ui": ui }));
        }
        Value::Object(resource)
    }

    /// What `resources/read` of the view gives: its HTML, and the `_meta.ui` it asks for.
    pub(crate) fn contents(&self) -> ResourceContents {
        let contents = ResourceContents::text(self.html)
            .with_uri(self.uri)
            .with_mime_type(MIME_TYPE);
        match self.meta().wire() {
            Some(ui) => contents.with_meta("ui", ui),
            None => contents,
        }
    }
}

impl ResourceMeta {
    /// `_meta.ui` on the wire, as [`ResourceMeta::parse`] reads it back: only what is asked
    /// for, `None` when nothing is.
    fn wire(&self) -> Option<Value> {
        let mut csp = Map::new();
        for (key, origins) in [
            ("connectDomains", &self.csp.connect_domains),
            ("resourceDomains", &self.csp.resource_domains),
            ("frameDomains", &self.csp.frame_domains),
            ("baseUriDomains", &self.csp.base_uri_domains),
        ] {
            if !origins.is_empty() {
                csp.insert(key.into(), json!(origins));
            }
        }
        let mut ui = Map::new();
        if !csp.is_empty() {
            ui.insert("csp".into(), Value::Object(csp));
        }
        let permissions = self.permissions.json();
        if !permissions.is_empty() {
            ui.insert("permissions".into(), Value::Object(permissions));
        }
        if let Some(domain) = &self.domain {
            ui.insert("domain".into(), json!(domain));
        }
        if let Some(border) = self.prefers_border {
            ui.insert("prefersBorder".into(), json!(border));
        }
        (!ui.is_empty()).then_some(Value::Object(ui))
    }
}

/// Whether a client declared the extension in its capabilities (`initialize`'s, or a 2026-07-28
/// request's): `extensions["io.modelcontextprotocol/ui"].mimeTypes` lists [`MIME_TYPE`], as
/// hosts that show views declare it. A tool learns it from
/// [`Context::supports_apps`](crate::Context::supports_apps).
pub fn client_supports(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|extensions| extensions.get(EXTENSION_ID))
        .and_then(|ui| ui.get("mimeTypes"))
        .and_then(Value::as_array)
        .is_some_and(|types| types.iter().any(|t| t == MIME_TYPE))
}

/// Whether `client` declared the extension, and so may see and call the tools only views call.
pub(crate) fn declared_by(client: &Client) -> bool {
    client.capabilities.as_deref().is_some_and(client_supports)
}

/// What the server declares under `capabilities.extensions` when it has views.
pub(crate) fn server_capability() -> Value {
    json!({ EXTENSION_ID: { "mimeTypes": [MIME_TYPE] } })
}

/// Whether `bytes[from..to]` is a host name: letters, digits, `-` and `.`.
const fn is_host(bytes: &[u8], from: usize, to: usize) -> bool {
    let mut i = from;
    while i < to {
        let c = bytes[i];
        if !(c.is_ascii_alphanumeric() || c == b'-' || c == b'.') {
            return false;
        }
        i += 1;
    }
    true
}

/// Every entry is an origin, as CSP source expressions have them: a scheme (`https`, `wss`,
/// ...), `://`, a host whose first label may be `*` (`*.example.com`, never `*` alone) and an
/// optional port. No path, query, user or anything else that would widen or end the source.
const fn check_origins(origins: &[&str]) {
    let mut i = 0;
    while i < origins.len() {
        if !is_origin(origins[i].as_bytes()) {
            panic!(
                "a CSP domain must be an origin, a scheme and a host with an optional port: \
                 `https://api.example.com`, `wss://*.example.com:8443`"
            );
        }
        i += 1;
    }
}

const fn is_origin(origin: &[u8]) -> bool {
    // The scheme: a letter, then letters, digits, `+`, `-`, `.`.
    let mut i = 0;
    while i < origin.len() && origin[i] != b':' {
        let c = origin[i];
        let first = i == 0;
        if !(c.is_ascii_alphabetic()
            || (!first && (c.is_ascii_digit() || c == b'+' || c == b'-' || c == b'.')))
        {
            return false;
        }
        i += 1;
    }
    if i == 0 || i + 3 > origin.len() || origin[i + 1] != b'/' || origin[i + 2] != b'/' {
        return false;
    }
    let mut host = i + 3;
    // A wildcard stands for the first label only.
    if host + 1 < origin.len() && origin[host] == b'*' && origin[host + 1] == b'.' {
        host += 2;
    }
    let mut end = host;
    while end < origin.len() && origin[end] != b':' {
        end += 1;
    }
    if end == host || !is_host(origin, host, end) {
        return false;
    }
    if end == origin.len() {
        return true;
    }
    // A port: digits after the colon.
    let mut port = end + 1;
    if port == origin.len() {
        return false;
    }
    while port < origin.len() {
        if !origin[port].is_ascii_digit() {
            return false;
        }
        port += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_serves_only_what_it_asks_for() {
        let plain = UiResource::new("ui://a/b.html", "<p>hi</p>");
        assert_eq!(
            plain.listed(),
            json!({"uri": "ui://a/b.html", "name": "ui://a/b.html", "mimeType": MIME_TYPE})
        );
        assert_eq!(
            json!(plain.contents()),
            json!({"uri": "ui://a/b.html", "mimeType": MIME_TYPE, "text": "<p>hi</p>"})
        );

        let asking = UiResource::new("ui://a/b.html", "<p>hi</p>")
            .name("board")
            .connect_domains(&["https://api.example.com"])
            .frame_domains(&["https://*.example.com"])
            .camera()
            .clipboard_write()
            .domain("abc.example.com")
            .prefers_border(false);
        let ui = json!({
            "csp": {
                "connectDomains": ["https://api.example.com"],
                "frameDomains": ["https://*.example.com"],
            },
            "permissions": {"camera": {}, "clipboardWrite": {}},
            "domain": "abc.example.com",
            "prefersBorder": false,
        });
        assert_eq!(asking.listed()["_meta"]["ui"], ui);
        assert_eq!(json!(asking.contents())["_meta"]["ui"], ui);
        assert_eq!(asking.listed()["name"], "board");
        // What is served reads back as what was declared.
        let content_meta = json!(asking.contents())["_meta"].clone();
        assert_eq!(ResourceMeta::parse(&content_meta), Some(asking.meta()));
    }

    #[test]
    fn a_tool_says_only_what_was_written() {
        assert_eq!(ToolUi::NONE.meta(), None);
        let linked = ToolUi {
            resource_uri: Some("ui://a/b.html"),
            visibility: None,
        };
        assert_eq!(linked.meta(), Some(json!({"resourceUri": "ui://a/b.html"})));
        let app_only = ToolUi {
            resource_uri: None,
            visibility: Some(Visibility::APP_ONLY),
        };
        assert_eq!(app_only.meta(), Some(json!({"visibility": ["app"]})));
        assert_eq!(app_only.visibility(), Visibility::APP_ONLY);
        assert_eq!(ToolUi::NONE.visibility(), Visibility::ALL);
    }

    #[test]
    fn clients_declare_the_extension_with_its_mime_type() {
        let declared = |ui: Value| json!({"extensions": {EXTENSION_ID: ui}});
        assert!(client_supports(&declared(
            json!({"mimeTypes": [MIME_TYPE]})
        )));
        assert!(!client_supports(&declared(json!({}))));
        assert!(!client_supports(&declared(
            json!({"mimeTypes": ["text/html"]})
        )));
        assert!(!client_supports(&declared(json!({"mimeTypes": MIME_TYPE}))));
        assert!(!client_supports(&declared(json!(true))));
        assert!(!client_supports(&json!({"extensions": {}})));
        assert!(!client_supports(&json!({EXTENSION_ID: {}})));
        assert!(!client_supports(&Value::Null));
    }

    #[test]
    fn origins_are_checked() {
        for good in [
            "https://a.example",
            "wss://*.example.com:8443",
            "http://localhost:3000",
            "git+ssh://h",
        ] {
            assert!(is_origin(good.as_bytes()), "{good:?} refused");
        }
        for bad in [
            "example.com",
            "https://",
            "https://*",
            "*://a.example",
            "1x://a.example",
            "https://u@a.example",
            "https://a.example/path",
            "https://a.example?q",
            "https://a.example:",
            "https://a.example:80x",
            "https://a.*.example",
            "https://a.example; script-src *",
            "https://a.example 'unsafe-eval'",
            "",
        ] {
            assert!(!is_origin(bad.as_bytes()), "{bad:?} passed");
        }
        assert!(std::panic::catch_unwind(|| check_origins(&["https://a", "b"])).is_err());
    }

    #[test]
    fn view_uris_name_a_server_and_a_view() {
        let made = |uri: &'static str| std::panic::catch_unwind(|| UiResource::new(uri, ""));
        assert!(made("ui://notes/board.html").is_ok());
        assert!(made("ui://notes/a/b?x=1").is_ok());
        for bad in [
            "https://notes/board.html",
            "ui://",
            "ui://notes",
            "ui://notes/",
            "ui:///board.html",
            "ui://notes/board one.html",
            "ui://notes/b\u{e9}.html",
        ] {
            assert!(made(bad).is_err(), "{bad:?} passed");
        }
    }
}

//! Reading the extension's `_meta` from any server's tools and resources, for gateways and
//! clients. Tools fail closed (a malformed link links nothing, a malformed visibility hides the
//! tool from the model); resources fail soft (a mistyped entry is skipped), since their
//! metadata only ever narrows what a view may do.

use serde_json::{Map, Value};

use super::{Permissions, SCHEME, Visibility};

/// The `_meta` key that carried a tool's view before `_meta.ui.resourceUri`; read, never
/// written.
const DEPRECATED_RESOURCE_URI: &str = "ui/resourceUri";

/// What a tool's `_meta` says of its view.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ToolMeta {
    /// The view's `ui://` URI, when the tool has a well-formed one.
    pub resource_uri: Option<String>,
    /// Who may call the tool.
    pub visibility: Visibility,
}

impl ToolMeta {
    /// Reads a tool's `_meta` (the object under the tool's `"_meta"`; `Value::Null` when it has
    /// none).
    ///
    /// - The view is `_meta.ui.resourceUri`, or the deprecated `_meta["ui/resourceUri"]` when
    ///   the former is absent. A value that is present but is not a `ui://` URI naming
    ///   something (another scheme, or not a string at all: `null`, a number) links nothing,
    ///   and does not fall back to the deprecated key: metadata that says two things links
    ///   neither.
    /// - Visibility absent is both. A list enables exactly the audiences it names (unknown
    ///   names are ignored, for audiences to come); anything else but a list hides the tool
    ///   from the model, so that a mistyped list never shows a view-only tool to it.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::apps::{ToolMeta, Visibility};
    ///
    /// let meta = ToolMeta::parse(&json!({
    ///     "ui": {"resourceUri": "ui://notes/board.html", "visibility": ["app"]}
    /// }));
    /// assert_eq!(meta.resource_uri.as_deref(), Some("ui://notes/board.html"));
    /// assert_eq!(meta.visibility, Visibility::APP_ONLY);
    /// ```
    pub fn parse(meta: &Value) -> ToolMeta {
        let ui = meta.get("ui").and_then(Value::as_object);
        ToolMeta {
            resource_uri: resource_uri(meta, ui),
            visibility: visibility(ui),
        }
    }
}

fn resource_uri(meta: &Value, ui: Option<&Map<String, Value>>) -> Option<String> {
    let uri = match ui.and_then(|ui| ui.get("resourceUri")) {
        Some(canonical) => canonical,
        None => meta.get(DEPRECATED_RESOURCE_URI)?,
    };
    let uri = uri.as_str()?;
    (uri.len() > SCHEME.len() && uri.starts_with(SCHEME)).then(|| uri.to_owned())
}

fn visibility(ui: Option<&Map<String, Value>>) -> Visibility {
    match ui.and_then(|ui| ui.get("visibility")) {
        None => Visibility::ALL,
        Some(Value::Array(audiences)) => Visibility {
            model: audiences.iter().any(|a| a == "model"),
            app: audiences.iter().any(|a| a == "app"),
        },
        Some(_) => Visibility::APP_ONLY,
    }
}

/// The origins a view's content security policy allows, by directive; empty allows nothing.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CspDomains {
    /// `connectDomains`: `fetch`, WebSocket.
    pub connect_domains: Vec<String>,
    /// `resourceDomains`: scripts, styles, images, fonts, media.
    pub resource_domains: Vec<String>,
    /// `frameDomains`: nested frames.
    pub frame_domains: Vec<String>,
    /// `baseUriDomains`: `<base>`.
    pub base_uri_domains: Vec<String>,
}

/// What a view's resource says of its sandbox (`_meta.ui` of a `resources/list` entry or of a
/// `resources/read` content item). Hosts may restrict it further, never loosen it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ResourceMeta {
    /// The content security policy's origins.
    pub csp: CspDomains,
    /// The permissions asked for.
    pub permissions: Permissions,
    /// A dedicated sandbox origin.
    pub domain: Option<String>,
    /// Whether the view wants a border.
    pub prefers_border: Option<bool>,
}

impl ResourceMeta {
    /// Reads a resource's `_meta`; `None` when it has no `ui` object.
    ///
    /// Lists keep the server's order and skip entries that are not strings; a list that is not
    /// a list is empty. A permission is asked for when present and neither `null` nor `false`;
    /// unknown permissions are ignored.
    ///
    /// ```
    /// use serde_json::json;
    /// use toolwright::apps::ResourceMeta;
    ///
    /// let meta = ResourceMeta::parse(&json!({"ui": {
    ///     "csp": {"connectDomains": ["https://api.example.com", 42]},
    ///     "permissions": {"camera": {}, "microphone": false},
    /// }}))
    /// .unwrap();
    /// assert_eq!(meta.csp.connect_domains, ["https://api.example.com"]);
    /// assert!(meta.permissions.camera && !meta.permissions.microphone);
    /// ```
    pub fn parse(meta: &Value) -> Option<ResourceMeta> {
        let ui = meta.get("ui")?.as_object()?;
        let csp = ui.get("csp");
        let origins = |key: &str| -> Vec<String> {
            match csp.and_then(|csp| csp.get(key)) {
                Some(Value::Array(items)) => items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect(),
                _ => Vec::new(),
            }
        };
        let permissions = ui.get("permissions").and_then(Value::as_object);
        let asked = |key: &str| {
            permissions
                .and_then(|p| p.get(key))
                .is_some_and(|value| !value.is_null() && *value != Value::Bool(false))
        };
        Some(ResourceMeta {
            csp: CspDomains {
                connect_domains: origins("connectDomains"),
                resource_domains: origins("resourceDomains"),
                frame_domains: origins("frameDomains"),
                base_uri_domains: origins("baseUriDomains"),
            },
            permissions: Permissions {
                camera: asked("camera"),
                microphone: asked("microphone"),
                geolocation: asked("geolocation"),
                clipboard_write: asked("clipboardWrite"),
            },
            domain: ui.get("domain").and_then(Value::as_str).map(str::to_owned),
            prefers_border: ui.get("prefersBorder").and_then(Value::as_bool),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn uri(meta: Value) -> Option<String> {
        ToolMeta::parse(&meta).resource_uri
    }

    #[test]
    fn the_canonical_key_wins_and_a_bad_one_links_nothing() {
        assert_eq!(
            uri(json!({"ui": {"resourceUri": "ui://a/x.html"}})).as_deref(),
            Some("ui://a/x.html")
        );
        assert_eq!(
            uri(json!({"ui/resourceUri": "ui://legacy/x.html"})).as_deref(),
            Some("ui://legacy/x.html")
        );
        assert_eq!(
            uri(json!({"ui": {"resourceUri": "ui://new/x.html"}, "ui/resourceUri": "ui://old/x.html"}))
                .as_deref(),
            Some("ui://new/x.html")
        );
        // Present but wrong, or not even a string: no fallback to the deprecated key.
        for canonical in [json!("https://a/x.html"), json!(42), json!(null), json!({})] {
            assert_eq!(
                uri(json!({"ui": {"resourceUri": canonical}, "ui/resourceUri": "ui://old/x.html"})),
                None,
                "{canonical}"
            );
        }
        // A `ui` that is not an object has no canonical key: the deprecated one is read.
        assert_eq!(
            uri(json!({"ui": "ui://a/x.html", "ui/resourceUri": "ui://old/x.html"})).as_deref(),
            Some("ui://old/x.html")
        );
        for malformed in [
            Value::Null,
            json!({}),
            json!({"ui": "ui://a/x.html"}),
            json!({"ui": {}}),
            json!({"ui": {"resourceUri": 42}}),
            json!({"ui": {"resourceUri": ""}}),
            json!({"ui": {"resourceUri": "ui://"}}),
            json!({"ui": {"resourceUri": "file:///x.html"}}),
            json!({"ui/resourceUri": ["ui://a/x.html"]}),
        ] {
            assert_eq!(uri(malformed.clone()), None, "{malformed}");
        }
    }

    #[test]
    fn visibility_fails_closed() {
        let seen = |meta: Value| ToolMeta::parse(&meta).visibility;
        let (model, app) = (
            Visibility {
                model: true,
                app: false,
            },
            Visibility::APP_ONLY,
        );
        assert_eq!(seen(Value::Null), Visibility::ALL);
        assert_eq!(
            seen(json!({"ui": {"resourceUri": "ui://a/x"}})),
            Visibility::ALL
        );
        assert_eq!(
            seen(json!({"ui": {"visibility": ["model", "app"]}})),
            Visibility::ALL
        );
        assert_eq!(seen(json!({"ui": {"visibility": ["model"]}})), model);
        assert_eq!(seen(json!({"ui": {"visibility": ["app"]}})), app);
        assert_eq!(
            seen(json!({"ui": {"visibility": ["model", "hologram"]}})),
            model
        );
        assert_eq!(
            seen(json!({"ui": {"visibility": []}})),
            Visibility {
                model: false,
                app: false
            }
        );
        for malformed in [
            json!("model"),
            json!({"model": true}),
            json!(null),
            json!(1),
        ] {
            assert_eq!(seen(json!({"ui": {"visibility": malformed}})), app);
        }
    }

    #[test]
    fn resource_meta_skips_what_it_cannot_read() {
        let meta = ResourceMeta::parse(&json!({"ui": {
            "csp": {
                "connectDomains": ["https://api.example.com", 42, null, "wss://rt.example.com"],
                "resourceDomains": "https://cdn.example.com",
                "baseUriDomains": ["https://base.example.com"],
            },
            "permissions": {"camera": {}, "microphone": null, "geolocation": false,
                            "clipboardWrite": true, "teleport": {}},
            "domain": 7,
            "prefersBorder": true,
        }}))
        .expect("a ui object");
        assert_eq!(
            meta.csp,
            CspDomains {
                connect_domains: vec![
                    "https://api.example.com".into(),
                    "wss://rt.example.com".into()
                ],
                resource_domains: vec![],
                frame_domains: vec![],
                base_uri_domains: vec!["https://base.example.com".into()],
            }
        );
        assert_eq!(meta.permissions.names(), ["camera", "clipboardWrite"]);
        assert_eq!(meta.domain, None);
        assert_eq!(meta.prefers_border, Some(true));
    }

    #[test]
    fn resource_meta_needs_a_ui_object() {
        for meta in [
            Value::Null,
            json!({}),
            json!({"ui": "x"}),
            json!({"ui": []}),
            json!({"traceparent": "00-1-2-01"}),
        ] {
            assert_eq!(ResourceMeta::parse(&meta), None, "{meta}");
        }
        assert_eq!(
            ResourceMeta::parse(&json!({"ui": {}})),
            Some(ResourceMeta::default())
        );
    }
}

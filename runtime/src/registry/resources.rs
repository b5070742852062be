//! The resources a registry serves beside its tools: the MCP Apps views and the resources of
//! `#[mcp_resource]`, those of a fixed URI sorted by URI and the templates by how much of a URI
//! they fix; each URI declared once, each view a tool names declared.

use serde_json::{Map, Value, json};

use super::conflict::Conflict;
use super::tool::Tool;
use crate::apps::UiResource;
use crate::registration::{Location, ResourceRegistration, UiResourceRegistration};
use crate::template::{self, Part};

/// A resource of a fixed URI: a view, or one `#[mcp_resource]` made.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Fixed {
    View(&'static UiResourceRegistration),
    Function(&'static ResourceRegistration),
}

impl Fixed {
    /// The resource as `resources/list` describes it.
    pub(crate) fn descriptor(&self) -> Value {
        match self {
            Fixed::View(view) => view.resource.listed(),
            Fixed::Function(resource) => function_descriptor(resource, "uri"),
        }
    }

    pub(crate) fn uri(&self) -> &'static str {
        match self {
            Fixed::View(view) => view.resource.uri(),
            Fixed::Function(resource) => resource.uri,
        }
    }

    fn location(&self) -> Location {
        match self {
            Fixed::View(view) => view.location,
            Fixed::Function(resource) => resource.location,
        }
    }
}

/// A template of resources, read into its parts.
#[derive(Debug)]
pub(crate) struct Template {
    pub(crate) registration: &'static ResourceRegistration,
    parts: Vec<Part<'static>>,
}

/// What a URI names: a resource of that URI, or one of a template's, with the values of its
/// variables (percent-decoded, in the template's order).
#[derive(Debug)]
pub(crate) enum Found<'a> {
    Fixed(Fixed),
    Template(&'a Template, Vec<(&'static str, String)>),
}

/// Every resource of a registry.
#[derive(Debug, Default)]
pub(crate) struct Resources {
    /// Sorted by URI.
    fixed: Vec<Fixed>,
    /// Those that fix more of a URI first, then by template: a URI two templates match is read
    /// by the more specific one.
    templates: Vec<Template>,
}

impl Resources {
    /// The resources, after a conflict for each URI or template declared twice and for each
    /// tool whose view is not among them.
    pub(super) fn new(
        views: impl IntoIterator<Item = &'static UiResourceRegistration>,
        functions: impl IntoIterator<Item = &'static ResourceRegistration>,
        tools: &[Tool],
        conflicts: &mut Vec<Conflict>,
    ) -> Resources {
        let mut fixed: Vec<Fixed> = views.into_iter().map(Fixed::View).collect();
        let mut templates = Vec::new();
        for resource in functions {
            let parts = template::parse(resource.uri).unwrap_or_else(|problem| {
                panic!("invalid resource URI `{}`: {problem}", resource.uri)
            });
            if matches!(parts.as_slice(), [Part::Literal(_)]) {
                fixed.push(Fixed::Function(resource));
            } else {
                templates.push(Template {
                    registration: resource,
                    parts,
                });
            }
        }
        // Link order varies between builds; the URI (then the place) does not.
        let place = |l: Location| (l.file, l.line, l.column);
        fixed.sort_by_key(|r| (r.uri(), place(r.location())));
        for pair in fixed.windows(2) {
            if pair[0].uri() == pair[1].uri() {
                conflicts.push(Conflict::DuplicateResource {
                    uri: pair[0].uri().to_owned(),
                    first: pair[0].location(),
                    second: pair[1].location(),
                });
            }
        }
        templates.sort_by_key(|t| {
            let r = t.registration;
            (r.uri, place(r.location))
        });
        for pair in templates.windows(2) {
            let (a, b) = (pair[0].registration, pair[1].registration);
            if a.uri == b.uri {
                conflicts.push(Conflict::DuplicateResource {
                    uri: a.uri.to_owned(),
                    first: a.location,
                    second: b.location,
                });
            }
        }
        templates.sort_by_key(|t| std::cmp::Reverse(t.fixed_len()));
        let resources = Resources { fixed, templates };
        for tool in tools {
            let Some(uri) = tool.ui().resource_uri else {
                continue;
            };
            if resources.view(uri).is_none() {
                conflicts.push(Conflict::MissingUiResource {
                    tool: tool.wire_name().to_owned(),
                    uri: uri.to_owned(),
                    location: tool.location(),
                    declared: resources.views().map(|v| v.uri().to_owned()).collect(),
                });
            }
        }
        resources
    }

    /// Whether there are none: the server then has no `resources` capability.
    pub(crate) fn is_empty(&self) -> bool {
        self.fixed.is_empty() && self.templates.is_empty()
    }

    /// The resources of a fixed URI, sorted by URI.
    pub(crate) fn fixed(&self) -> &[Fixed] {
        &self.fixed
    }

    /// The templates, the more specific first.
    pub(crate) fn templates(&self) -> &[Template] {
        &self.templates
    }

    /// The views' registrations, sorted by URI.
    pub(super) fn view_registrations(
        &self,
    ) -> impl Iterator<Item = &'static UiResourceRegistration> + '_ {
        self.fixed.iter().filter_map(|r| match r {
            Fixed::View(view) => Some(*view),
            Fixed::Function(_) => None,
        })
    }

    /// The views, sorted by URI.
    pub(crate) fn views(&self) -> impl Iterator<Item = &'static UiResource> + '_ {
        self.view_registrations().map(|view| &view.resource)
    }

    /// The view with this URI.
    pub(crate) fn view(&self, uri: &str) -> Option<&'static UiResource> {
        match self.fixed_at(uri)? {
            Fixed::View(view) => Some(&view.resource),
            Fixed::Function(_) => None,
        }
    }

    /// What `uri` names: the resource of that URI, or else the first template that matches it.
    pub(crate) fn find(&self, uri: &str) -> Option<Found<'_>> {
        if let Some(fixed) = self.fixed_at(uri) {
            return Some(Found::Fixed(fixed));
        }
        self.templates
            .iter()
            .find_map(|t| t.matches(uri).map(|values| Found::Template(t, values)))
    }

    /// The templates, by URI template.
    pub(crate) fn templates_by_uri(&self) -> impl Iterator<Item = &Template> + '_ {
        let mut templates: Vec<&Template> = self.templates.iter().collect();
        templates.sort_by_key(|t| t.registration.uri);
        templates.into_iter()
    }

    /// The template written `uri_template`.
    pub(crate) fn template(&self, uri_template: &str) -> Option<&Template> {
        self.templates
            .iter()
            .find(|t| t.registration.uri == uri_template)
    }

    fn fixed_at(&self, uri: &str) -> Option<Fixed> {
        self.fixed
            .binary_search_by(|r| r.uri().cmp(uri))
            .ok()
            .map(|i| self.fixed[i])
    }

    /// Every resource function, fixed or template, for the checks at start.
    pub(crate) fn functions(&self) -> impl Iterator<Item = &'static ResourceRegistration> + '_ {
        let fixed = self.fixed.iter().filter_map(|r| match r {
            Fixed::Function(resource) => Some(*resource),
            Fixed::View(_) => None,
        });
        fixed.chain(self.templates.iter().map(|t| t.registration))
    }
}

impl Template {
    /// The template as `resources/templates/list` describes it.
    pub(crate) fn descriptor(&self) -> Value {
        function_descriptor(self.registration, "uriTemplate")
    }

    /// How many characters of a URI its literal text fixes.
    fn fixed_len(&self) -> usize {
        self.parts
            .iter()
            .map(|part| match part {
                Part::Literal(text) => text.len(),
                Part::Variable { .. } => 0,
            })
            .sum()
    }

    /// The values of the variables, when the template matches `uri` (RFC 6570 simple and
    /// reserved expansion, read backwards): each value percent-decoded.
    pub(crate) fn matches(&self, uri: &str) -> Option<Vec<(&'static str, String)>> {
        let mut raw = Vec::with_capacity(self.parts.len());
        if !match_parts(&self.parts, uri, &mut raw) {
            return None;
        }
        raw.into_iter()
            .map(|(name, text)| Some((name, percent_decode(text)?)))
            .collect()
    }
}

/// A resource or a template as a list describes it: `key` is `uri` or `uriTemplate`.
fn function_descriptor(resource: &ResourceRegistration, key: &str) -> Value {
    let mut entry = Map::new();
    entry.insert(key.to_owned(), json!(resource.uri));
    entry.insert("name".to_owned(), json!(resource.name));
    if let Some(title) = resource.title {
        entry.insert("title".to_owned(), json!(title));
    }
    if let Some(description) = resource.description {
        entry.insert("description".to_owned(), json!(description));
    }
    if let Some(mime_type) = resource.mime_type {
        entry.insert("mimeType".to_owned(), json!(mime_type));
    }
    let annotations = resource.annotations;
    let mut hints = Map::new();
    if !annotations.audience.is_empty() {
        hints.insert("audience".to_owned(), json!(annotations.audience));
    }
    if let Some(priority) = annotations.priority {
        hints.insert("priority".to_owned(), json!(priority));
    }
    if !hints.is_empty() {
        entry.insert("annotations".to_owned(), Value::Object(hints));
    }
    Value::Object(entry)
}

/// Matches `parts` against the whole of `uri`, pushing each variable's text onto `values`;
/// a variable takes as much as it can, and gives back what the parts after it need.
fn match_parts<'u>(
    parts: &[Part<'static>],
    uri: &'u str,
    values: &mut Vec<(&'static str, &'u str)>,
) -> bool {
    match parts.split_first() {
        None => uri.is_empty(),
        Some((Part::Literal(text), rest)) => uri
            .strip_prefix(text)
            .is_some_and(|after| match_parts(rest, after, values)),
        Some((Part::Variable { name, reserved }, rest)) => {
            let allowed = |b: u8| {
                b.is_ascii_alphanumeric()
                    || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%')
                    || (*reserved && b":/?#[]@!$&'()*+,;=".contains(&b))
            };
            let longest = uri.bytes().take_while(|b| allowed(*b)).count();
            for len in (1..=longest).rev() {
                values.push((name, &uri[..len]));
                if match_parts(rest, &uri[len..], values) {
                    return true;
                }
                values.pop();
            }
            false
        }
    }
}

/// `text` with its `%XX` escapes decoded, when they are well formed and make UTF-8.
fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            decoded.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn template(uri: &'static str) -> Vec<Part<'static>> {
        template::parse(uri).unwrap()
    }

    fn matched(uri_template: &'static str, uri: &str) -> Option<Vec<(&'static str, String)>> {
        let parts = template(uri_template);
        let mut raw = Vec::new();
        if !match_parts(&parts, uri, &mut raw) {
            return None;
        }
        raw.into_iter()
            .map(|(name, text)| Some((name, percent_decode(text)?)))
            .collect()
    }

    #[test]
    fn simple_variables_match_one_segment() {
        assert_eq!(
            matched("notes://{id}", "notes://42"),
            Some(vec![("id", "42".to_owned())])
        );
        assert_eq!(matched("notes://{id}", "notes://"), None);
        assert_eq!(matched("notes://{id}", "notes://4/2"), None);
        assert_eq!(matched("notes://{id}", "other://42"), None);
        assert_eq!(
            matched("test://template/{id}/data", "test://template/abc/data"),
            Some(vec![("id", "abc".to_owned())])
        );
        assert_eq!(
            matched("tags://{tag}", "tags://caf%C3%A9"),
            Some(vec![("tag", "café".to_owned())])
        );
        assert_eq!(matched("tags://{tag}", "tags://bad%C3"), None);
        assert_eq!(matched("tags://{tag}", "tags://bad%G1"), None);
    }

    #[test]
    fn variables_give_back_what_the_rest_needs() {
        assert_eq!(
            matched("v://{a}-{b}", "v://x-y-z"),
            Some(vec![("a", "x-y".to_owned()), ("b", "z".to_owned())])
        );
        assert_eq!(
            matched("file:///{+path}", "file:///src/lib.rs"),
            Some(vec![("path", "src/lib.rs".to_owned())])
        );
        assert_eq!(
            matched("repo://{owner}/{+path}.md", "repo://me/docs/a.md"),
            Some(vec![
                ("owner", "me".to_owned()),
                ("path", "docs/a".to_owned())
            ])
        );
    }
}

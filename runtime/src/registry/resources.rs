//! The resources a registry serves beside its tools: the MCP Apps views and the resources of
//! `#[mcp_resource]`, those of a fixed URI sorted by URI and the templates by how much of a URI
//! they fix; each URI declared once, each view a tool names declared.

use serde_json::{Map, Value, json};

use super::conflict::Conflict;
use super::tool::Tool;
use crate::apps::UiResource;
use crate::registration::{Location, ResourceRegistration, UiResourceRegistration};
use toolwright_rules::template::{self, Part};

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

impl Found<'_> {
    /// Whether what was found says it changes while the server runs, so that clients may
    /// subscribe to it.
    pub(crate) fn changes(&self) -> bool {
        match self {
            Found::Fixed(Fixed::Function(resource)) => resource.changes,
            Found::Template(template, _) => template.registration.changes,
            Found::Fixed(Fixed::View(_)) => false,
        }
    }
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
        for (i, a) in templates.iter().enumerate() {
            let overlaps =
                |b: &&Template| b.registration.uri != a.registration.uri && b.shape() == a.shape();
            if let Some(b) = templates[i + 1..].iter().find(overlaps) {
                conflicts.push(Conflict::OverlappingTemplates {
                    first: (a.registration.uri, a.registration.location),
                    second: (b.registration.uri, b.registration.location),
                });
            }
        }
        templates.sort_by_key(|t| (std::cmp::Reverse(t.fixed_len()), t.reserved()));
        let resources = Resources { fixed, templates };
        for tool in tools {
            let Some(uri) = tool.ui().resource_uri else {
                continue;
            };
            if resources.view(uri).is_none() {
                conflicts.push(Conflict::MissingUiResource {
                    tool: tool.wire_name().to_owned(),
                    uri: uri.to_owned(),
                    location: tool.origin(),
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
    /// reserved expansion, read backwards): each value percent-decoded. A simple variable's
    /// value holds no `/`, even percent-encoded: `{id}` names one segment.
    pub(crate) fn matches(&self, uri: &str) -> Option<Vec<(&'static str, String)>> {
        match_parts(&self.parts, uri)?
            .into_iter()
            .map(|(name, reserved, text)| {
                let value = percent_decode(text)?;
                (reserved || !value.contains('/')).then_some((name, value))
            })
            .collect()
    }

    /// How many of its variables are reserved expansions (`{+path}`): of two templates that fix
    /// as much of a URI, the one with fewer is the more specific.
    fn reserved(&self) -> usize {
        self.parts
            .iter()
            .filter(|part| matches!(part, Part::Variable { reserved: true, .. }))
            .count()
    }

    /// The template with its variables unnamed: two templates of one shape match the same URIs.
    fn shape(&self) -> Vec<Part<'static>> {
        self.parts
            .iter()
            .map(|part| match *part {
                Part::Variable { reserved, .. } => Part::Variable { name: "", reserved },
                literal => literal,
            })
            .collect()
    }
}

/// The text of each variable (its name, whether it is a reserved expansion, its raw text) when
/// `parts` match the whole of `uri`; a variable takes as much as it can, and gives back what the
/// parts after it need. In time linear in the URI for each part, whatever the URI: which offsets
/// can finish the match is worked out from the end first, then the variables are read from the
/// start.
#[allow(clippy::type_complexity)]
fn match_parts<'u>(
    parts: &[Part<'static>],
    uri: &'u str,
) -> Option<Vec<(&'static str, bool, &'u str)>> {
    let bytes = uri.as_bytes();
    let n = bytes.len();
    // `runs[r][o]`: how many bytes from `o` a simple (`r` = 0) or reserved (1) variable may take.
    let mut runs = [vec![0usize; n + 1], vec![0usize; n + 1]];
    for o in (0..n).rev() {
        for (r, run) in runs.iter_mut().enumerate() {
            run[o] = if allowed(bytes[o], r == 1) {
                run[o + 1] + 1
            } else {
                0
            };
        }
    }
    // `finish[i][o]`: parts `i..` match `uri[o..]`.
    let mut finish = vec![vec![false; n + 1]; parts.len() + 1];
    finish[parts.len()][n] = true;
    for (i, part) in parts.iter().enumerate().rev() {
        let (before, after) = finish.split_at_mut(i + 1);
        let (here, next) = (&mut before[i], &after[0]);
        match part {
            Part::Literal(text) => {
                for o in 0..=n {
                    here[o] = bytes[o..].starts_with(text.as_bytes()) && next[o + text.len()];
                }
            }
            Part::Variable { reserved, .. } => {
                // `later[o]`: the first offset from `o` on where the rest can finish.
                let mut later = vec![usize::MAX; n + 2];
                for o in (0..=n).rev() {
                    later[o] = if next[o] { o } else { later[o + 1] };
                }
                let run = &runs[usize::from(*reserved)];
                for o in 0..n {
                    here[o] = later[o + 1] <= o + run[o];
                }
            }
        }
    }
    if !finish[0][0] {
        return None;
    }
    let mut values = Vec::new();
    let mut at = 0;
    for (i, part) in parts.iter().enumerate() {
        match part {
            Part::Literal(text) => at += text.len(),
            Part::Variable { name, reserved } => {
                let run = runs[usize::from(*reserved)][at];
                let len = (1..=run).rev().find(|len| finish[i + 1][at + len])?;
                values.push((*name, *reserved, &uri[at..at + len]));
                at += len;
            }
        }
    }
    Some(values)
}

/// Whether a variable's text may hold `b`: unreserved characters and percent-encoded octets,
/// and the reserved characters too in a reserved expansion.
fn allowed(b: u8, reserved: bool) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(b, b'-' | b'.' | b'_' | b'~' | b'%')
        || (reserved && b":/?#[]@!$&'()*+,;=".contains(&b))
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

    fn matched(uri_template: &'static str, uri: &str) -> Option<Vec<(&'static str, String)>> {
        let registration = Box::leak(Box::new(ResourceRegistration {
            uri: uri_template,
            ..crate::fixtures::resource("test://unused")
        }));
        Template {
            registration,
            parts: template::parse(uri_template).unwrap(),
        }
        .matches(uri)
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
        // One segment, even percent-encoded: `{id}` cannot be walked out of.
        assert_eq!(matched("notes://{id}", "notes://..%2F..%2Fetc"), None);
        assert_eq!(
            matched("file:///{+path}", "file:///a%2Fb"),
            Some(vec![("path", "a/b".to_owned())])
        );
    }

    #[test]
    fn a_long_uri_is_matched_in_linear_time() {
        // Backtracking would try every split of the dashes between the two variables, and
        // then each split again for the third.
        let uri = format!("v://{}", "-".repeat(200_000));
        assert_eq!(matched("v://{a}-{b}-{c}.x", &uri), None);
        let long = format!("v://{}-z.x", "-".repeat(100_000));
        let found = matched("v://{a}-{b}.x", &long).unwrap();
        assert_eq!(found[1], ("b", "z".to_owned()));
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

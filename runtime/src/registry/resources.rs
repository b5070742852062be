//! The MCP Apps views a registry serves beside its tools: sorted by URI, each declared once, each
//! one a tool names declared.

use super::conflict::Conflict;
use super::tool::Tool;
use crate::registration::UiResourceRegistration;

/// The UI resources sorted by URI, after a conflict for each duplicate and for each tool whose
/// view is not among them.
pub(super) fn sorted(
    resources: impl IntoIterator<Item = &'static UiResourceRegistration>,
    tools: &[Tool],
    conflicts: &mut Vec<Conflict>,
) -> Vec<&'static UiResourceRegistration> {
    let mut resources: Vec<_> = resources.into_iter().collect();
    // Link order varies between builds; the URI (then the place) does not.
    resources.sort_by_key(|r| {
        let l = r.location;
        (r.resource.uri(), l.file, l.line, l.column)
    });
    for pair in resources.windows(2) {
        if pair[0].resource.uri() == pair[1].resource.uri() {
            conflicts.push(Conflict::DuplicateUiResource {
                uri: pair[0].resource.uri().to_owned(),
                first: pair[0].location,
                second: pair[1].location,
            });
        }
    }
    for tool in tools {
        let Some(uri) = tool.ui().resource_uri else {
            continue;
        };
        if find(&resources, uri).is_none() {
            conflicts.push(Conflict::MissingUiResource {
                tool: tool.wire_name().to_owned(),
                uri: uri.to_owned(),
                location: tool.location(),
                declared: resources
                    .iter()
                    .map(|r| r.resource.uri().to_owned())
                    .collect(),
            });
        }
    }
    resources
}

/// The resource with this URI among resources sorted by URI.
pub(super) fn find(
    resources: &[&'static UiResourceRegistration],
    uri: &str,
) -> Option<&'static UiResourceRegistration> {
    resources
        .binary_search_by(|r| r.resource.uri().cmp(uri))
        .ok()
        .map(|i| resources[i])
}

//! Registrations made by hand for the library's own tests, as `#[mcp_tool]` and
//! `#[mcp_resource]` would make them.

use crate::apps::ToolUi;
use crate::handler::Handler;
use crate::registration::{
    Annotations, InputSchema, Location, ResourceRegistration, ToolRegistration,
};
use crate::resource::{ResourceAnnotations, ResourceHandler};
use crate::tasks::TaskSupport;

/// A registration as the library's tests make them by hand: this name and description, no
/// title, hints, tags or view, never a task, no time limit, provider `test`, any object as arguments, no
/// output schema, and a handler that returns nothing. Change fields with struct update syntax.
pub(crate) fn tool(name: &'static str, description: &'static str) -> ToolRegistration {
    ToolRegistration {
        name,
        title: None,
        description,
        annotations: Annotations::default(),
        tags: &[],
        scopes: &[],
        core: false,
        provider: "test",
        ui: ToolUi::NONE,
        task: TaskSupport::Forbidden,
        timeout: None,
        input_schema: InputSchema::Literal(r#"{"type": "object"}"#),
        output_schema: |_| None,
        states: &[],
        handler: Handler::Blocking(|_, _| crate::handler::Output::Empty),
        location: Location {
            file: file!(),
            line: line!(),
            column: column!(),
            module_path: module_path!(),
        },
    }
}

/// A resource as the library's tests make them by hand: this URI, named `test`, that reads
/// as empty text.
pub(crate) fn resource(uri: &'static str) -> ResourceRegistration {
    ResourceRegistration {
        uri,
        name: "test",
        title: None,
        description: None,
        mime_type: None,
        annotations: ResourceAnnotations::default(),
        variables: &[],
        changes: false,
        states: &[],
        handler: ResourceHandler::Sync(|_, _| Ok(Vec::new())),
        location: Location {
            file: file!(),
            line: line!(),
            column: column!(),
            module_path: module_path!(),
        },
    }
}

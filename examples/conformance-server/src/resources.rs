//! The resource fixtures of the conformance suite: a text and a binary resource, a template, and
//! a resource that changes, which clients may subscribe to.

use serde_json::{Value, json};
use toolwright::content::ResourceContents;
use toolwright::mcp_resource;
use toolwright::resource::Json;

/// A static text resource for testing.
#[mcp_resource(
    uri = "test://static-text",
    name = "static-text",
    title = "Static Text Resource",
    mime_type = "text/plain"
)]
fn static_text() -> &'static str {
    "This is the content of the static text resource."
}

/// A static binary resource (image) for testing.
#[mcp_resource(
    uri = "test://static-binary",
    name = "static-binary",
    title = "Static Binary Resource",
    mime_type = "image/png"
)]
fn static_binary() -> ResourceContents {
    ResourceContents::blob(crate::PNG)
}

/// A resource template with parameter substitution.
#[mcp_resource(
    uri = "test://template/{id}/data",
    name = "template",
    title = "Resource Template",
    mime_type = "application/json"
)]
fn template(id: String) -> Json<Value> {
    Json(json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}))
}

/// A resource that changes while the server runs, which clients may subscribe to.
#[mcp_resource(
    uri = "test://watched-resource",
    name = "watched-resource",
    title = "Watched Resource",
    mime_type = "text/plain",
    changes
)]
fn watched_resource() -> &'static str {
    "Watched resource content"
}

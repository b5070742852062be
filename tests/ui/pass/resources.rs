use toolwright::content::ResourceContents;
use toolwright::resource::Json;
use toolwright::{State, mcp_resource};

struct Names(Vec<String>);

/// The names, as JSON.
#[mcp_resource(uri = "names://all", mime_type = "application/json", audience = ["user", "assistant"], priority = 1)]
fn all(names: &State<Names>) -> Json<&[String]> {
    // Borrowed from the state, which outlives the call.
    Json(names.0.clone().leak())
}

/// One name, by its place in the list.
#[mcp_resource(uri = "names://{index}", changes)]
async fn one(names: State<Names>, index: usize) -> Option<String> {
    names.0.get(index).cloned()
}

/// A file under a folder, at any depth.
#[mcp_resource(uri = "file:///{+path}", name = "file", title = "A file")]
fn file(#[arg(rename = "path")] relative: &str) -> Result<ResourceContents, std::io::Error> {
    Ok(ResourceContents::blob(relative.as_bytes()).with_mime_type("application/octet-stream"))
}

fn main() {}

//! Makes the manifest of the notes tools at build time, for `main` to serve, and refuses a build
//! that breaks their contract with the snapshot `mcp-manifest.json`.

fn main() {
    toolwright::build::emit!(notes_tools);
}

//! A server with 1,000 tools, for trying the progressive catalog: the tools of `catalog-tools`,
//! ten areas of an imagined product, a hundred tools each.
//!
//! ```text
//! cargo run -p catalog-server -- --catalog progressive   # search_tools, call_tool and the core tools
//! cargo run -p catalog-server                            # all 1,000 tools in tools/list
//! cargo run -p catalog-server -- --print-manifest        # the tools as clients see them
//! ```
//!
//! Its build script makes the manifest, so start-up derives no schema. Built with the
//! `semantic` feature and a model (`TOOLWRIGHT_EMBEDDING_MODEL` set for `cargo build`), it makes
//! the tools' vectors too: `--embedding-model` then embeds none of them at start, and the first
//! `search_tools` is ranked by meaning.
//!
//! `.ci/catalog_check.py` drives the progressive mode with the official Python MCP SDK client.

use std::process::ExitCode;

fn main() -> ExitCode {
    let server = toolwright::server!(catalog_tools)
        .embedded_manifest(toolwright::build::embedded_manifest!())
        .instructions(
            "An imagined company's internal tools: help desk tickets, code repositories, \
             calendar, billing, storage, chat, CRM, monitoring, documentation and HR. Search the \
             catalog for what a task needs before calling; ids come from the list_ and search_ \
             tools of each area.",
        );
    #[cfg(feature = "semantic")]
    let server = server.embedded_vectors(toolwright::build::embedded_vectors!());
    server.run()
}

//! Serves the notes tools over MCP on stdio.
//!
//! ```text
//! cargo run -p notes-server                           # notes in memory
//! cargo run -p notes-server -- --data notes.json      # notes kept in a file
//! cargo run -p notes-server -- --print-manifest       # the tools as clients see them
//! cargo run -p notes-server -- --diff old.json        # what changed since, and whether it breaks
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

/// An MCP server for a notebook: add, search, tag, edit and export notes.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Keep the notes in this file (created on the first change); without it they live in
    /// memory and are gone when the server stops.
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,

    #[command(flatten)]
    server: toolwright::ServerArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if let Err(err) = notes_tools::open(args.data.as_deref()) {
        eprintln!("error: cannot open the notebook: {err}");
        return ExitCode::FAILURE;
    }
    if args.server.serves() {
        eprintln!("{}", connection_help(&args));
    }
    toolwright::server!()
        .instructions(
            "A notebook. Search or list notes before adding one, to avoid duplicates; ids come \
             from list_notes and search_notes.",
        )
        .run_with(&args.server)
}

/// What the server says on stderr at start: where the notes are and how to connect a client.
fn connection_help(args: &Args) -> String {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "notes-server".to_owned());
    let storage = match &args.data {
        Some(path) => format!("notes are kept in {}", path.display()),
        None => "notes live in memory (use --data FILE to keep them)".to_owned(),
    };
    let mut command_args = String::new();
    if let Some(path) = &args.data {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        command_args = format!(r#", "args": ["--data", {:?}]"#, path.display().to_string());
    }
    format!(
        "notes-server: MCP over stdio; {storage}.\n\
         It speaks to an MCP client on stdin/stdout, not to a terminal. To connect one:\n  \
         - MCP Inspector: npx @modelcontextprotocol/inspector {exe}\n  \
         - Claude Desktop, Cursor, VS Code (mcpServers): {{\"notes\": {{\"command\": {exe:?}{command_args}}}}}\n  \
         - Claude Code: claude mcp add notes -- {exe}\n\
         To see the tools without a client: notes-server --print-manifest [--profile openai|anthropic|gemini]"
    )
}

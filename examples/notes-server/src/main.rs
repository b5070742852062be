//! Serves the notes tools over MCP on stdio, or over HTTP with `--http`.
//!
//! ```text
//! cargo run -p notes-server                           # notes in memory
//! cargo run -p notes-server -- --data notes.db        # notes kept in a SQLite database
//! cargo run -p notes-server -- --http 127.0.0.1:8080  # over HTTP, at http://127.0.0.1:8080/mcp
//! cargo run -p notes-server -- --print-manifest       # the tools as clients see them
//! cargo run -p notes-server -- --diff old.json        # what changed since, and whether it breaks
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use notes_tools::Notebook;

/// An MCP server for a notebook: add, search, tag, edit and export notes.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Keep the notes in this SQLite database (created if it does not exist), which several
    /// servers may share; without it they live in memory and are gone when the server stops.
    #[arg(long, value_name = "FILE")]
    data: Option<PathBuf>,

    #[command(flatten)]
    server: toolwright::cli::ServerArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut server = toolwright::server!(notes_tools)
        .embedded_manifest(toolwright::build::embedded_manifest!())
        .instructions(
            "A notebook. Search or list notes before adding one, to avoid duplicates; ids come \
             from list_notes and search_notes.",
        );
    // The tools' vectors, when the build was given a model (`TOOLWRIGHT_EMBEDDING_MODEL` set
    // for `cargo build --features semantic`): `--embedding-model` then embeds nothing at start.
    #[cfg(feature = "semantic")]
    {
        server = server.embedded_vectors(toolwright::build::embedded_vectors!());
    }
    // The notebook is the tools' state; printing or comparing the manifest needs none.
    if args.server.serves() {
        let notebook = match Notebook::open(args.data.as_deref()) {
            Ok(notebook) => notebook,
            Err(err) => {
                eprintln!("error: cannot open the notebook: {err}");
                return ExitCode::FAILURE;
            }
        };
        server = server.state(notebook);
    }
    if let Some(help) = connection_help(&args) {
        eprintln!("{help}");
    }
    server.run_with(&args.server)
}

/// What the server says on stderr at start: where the notes are and how to connect a client;
/// nothing when it does not serve, or cannot serve what is asked (`--http` without the feature,
/// an option of HTTP serving without `--http`).
fn connection_help(args: &Args) -> Option<String> {
    if !args.server.serves()
        || (args.server.http.is_some() && !cfg!(feature = "http"))
        || args.server.http_only().is_some()
    {
        return None;
    }
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "notes-server".to_owned());
    let storage = match &args.data {
        Some(path) => format!("notes are kept in {}", path.display()),
        None => "notes live in memory (use --data FILE to keep them)".to_owned(),
    };
    if let Some(addr) = &args.server.http {
        let access = match (&args.server.oauth.oauth_issuer, &args.server.token) {
            (Some(issuer), _) if !issuer.is_empty() => Access::OAuth(issuer),
            (_, Some(token)) if !token.is_empty() => Access::Token,
            _ => Access::Open,
        };
        return Some(http_help(addr, &storage, &access));
    }
    let mut command_args = String::new();
    if let Some(path) = &args.data {
        let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
        command_args = format!(r#", "args": ["--data", {:?}]"#, path.display().to_string());
    }
    Some(format!(
        "notes-server: MCP over stdio; {storage}.\n\
         It speaks to an MCP client on stdin/stdout, not to a terminal. To connect one:\n  \
         - MCP Inspector: npx @modelcontextprotocol/inspector {exe}\n  \
         - Claude Desktop, Cursor, VS Code (mcpServers): {{\"notes\": {{\"command\": {exe:?}{command_args}}}}}\n  \
         - Claude Code: claude mcp add notes -- {exe}\n\
         To see the tools without a client: notes-server --print-manifest [--profile openai|anthropic|gemini]"
    ))
}

/// Who may call over HTTP.
enum Access<'a> {
    Open,
    Token,
    /// Holders of access tokens this issuer grants.
    OAuth(&'a str),
}

/// The start message when serving over HTTP: the URL, and how to point a client at it.
fn http_help(addr: &str, storage: &str, access: &Access<'_>) -> String {
    // A server on every interface is reached from this machine through the loopback address.
    let local = match addr.rsplit_once(':') {
        Some(("0.0.0.0", port)) => format!("127.0.0.1:{port}"),
        Some(("[::]", port)) => format!("[::1]:{port}"),
        _ => addr.to_owned(),
    };
    let url = format!("http://{local}/mcp");
    let port_note = if local.ends_with(":0") {
        " (port 0: the port the system picks is logged below)"
    } else {
        ""
    };
    let header = match access {
        Access::Token => r#" --header "Authorization: Bearer $TOOLWRIGHT_TOKEN""#,
        Access::Open | Access::OAuth(_) => "",
    };
    let tokens = match access {
        Access::OAuth(issuer) => format!(
            "Every request needs an access token from {issuer}: a client finds it from the \
             server's 401 and its metadata, and the writing tools need the scope notes:write.\n"
        ),
        Access::Open | Access::Token => String::new(),
    };
    format!(
        "notes-server: MCP over HTTP at {url}{port_note}; {storage}.\n\
         {tokens}To connect a client:\n  \
         - MCP Inspector: npx @modelcontextprotocol/inspector, then Streamable HTTP and the URL\n  \
         - Cursor, VS Code (mcpServers): {{\"notes\": {{\"type\": \"http\", \"url\": {url:?}}}}}\n  \
         - Claude Code: claude mcp add --transport http notes {url}{header}\n\
         Stop it with Ctrl-C."
    )
}

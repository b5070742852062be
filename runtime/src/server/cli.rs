//! The command line every server understands: print the manifest, diff it, or serve.

use std::path::PathBuf;
use std::process::ExitCode;

use serde_json::Value;

use super::{Server, init_logging};
use crate::manifest::{Severity, diff};
use crate::schema::{Profile, render};

/// The options every toolwright server understands, for its command line.
///
/// [`Server::run`] reads them from the process's arguments. A binary with options of its own
/// flattens them into its `clap` parser and passes them to [`Server::run_with`]:
///
/// ```no_run
/// use clap::Parser;
///
/// #[derive(Parser)]
/// struct Args {
///     /// Where the data lives.
///     #[arg(long)]
///     data: Option<std::path::PathBuf>,
///     #[command(flatten)]
///     server: toolwright::ServerArgs,
/// }
///
/// fn main() -> std::process::ExitCode {
///     let args = Args::parse();
///     toolwright::server!().run_with(&args.server)
/// }
/// ```
#[derive(Clone, Debug, Default, clap::Args)]
#[non_exhaustive]
pub struct ServerArgs {
    /// Print the manifest (the tools as `tools/list` serves them) as JSON and exit, without
    /// serving.
    #[arg(long)]
    pub print_manifest: bool,

    /// With --print-manifest, render the manifest for one client's rules: mcp (the protocol, the
    /// default), openai, anthropic or gemini.
    #[arg(long, value_name = "PROFILE", requires = "print_manifest")]
    pub profile: Option<Profile>,

    /// Compare the manifest with an earlier one (a file --print-manifest wrote), print the
    /// changes, and exit with 1 when any of them breaks callers, 0 otherwise.
    #[arg(long, value_name = "OLD.json", conflicts_with = "print_manifest")]
    pub diff: Option<PathBuf>,
}

impl ServerArgs {
    /// Whether these options ask to serve, rather than to print something and exit.
    pub fn serves(&self) -> bool {
        !self.print_manifest && self.diff.is_none()
    }
}

#[derive(clap::Parser)]
#[command(about = "An MCP server: serves its tools on stdio.")]
struct Cli {
    #[command(flatten)]
    server: ServerArgs,
}

impl Server {
    /// Reads [`ServerArgs`] from the process's arguments, then prints the manifest, diffs it, or
    /// serves on stdio (see [`run_stdio`](Server::run_stdio)).
    pub fn run(self) -> ExitCode {
        let cli = <Cli as clap::Parser>::parse();
        self.run_with(&cli.server)
    }

    /// Prints the manifest, diffs it, or serves on stdio, as `args` say.
    pub fn run_with(mut self, args: &ServerArgs) -> ExitCode {
        if args.serves() {
            return self.run_stdio();
        }
        init_logging();
        let registry = match self.take_registry() {
            Ok(registry) => registry,
            Err(err) => {
                eprintln!("error: {err}");
                return ExitCode::FAILURE;
            }
        };
        for note in registry.manifest().notes() {
            eprintln!("note: {note}");
        }
        let manifest = registry.manifest().as_json();
        match &args.diff {
            Some(old) => print_diff(old, manifest),
            None => print_manifest(manifest, args.profile.unwrap_or(Profile::Mcp)),
        }
    }
}

fn print_manifest(manifest: &Value, profile: Profile) -> ExitCode {
    let rendering = match render(manifest, profile) {
        Ok(rendering) => rendering,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::FAILURE;
        }
    };
    for report in rendering.reports() {
        eprintln!("note: {report}");
    }
    let text = serde_json::to_string_pretty(rendering.document()).expect("JSON serialises");
    println!("{text}");
    ExitCode::SUCCESS
}

/// Exit status 2 is for a file that cannot be read as a manifest; 1 for a breaking change.
fn print_diff(old_path: &PathBuf, new: &Value) -> ExitCode {
    let old = match std::fs::read(old_path)
        .map_err(|e| e.to_string())
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).map_err(|e| e.to_string()))
    {
        Ok(old) if old.get("tools").is_some_and(Value::is_array) => old,
        Ok(_) => {
            eprintln!(
                "error: {} is not a manifest: expected {{\"tools\": [...]}}",
                old_path.display()
            );
            return ExitCode::from(2);
        }
        Err(err) => {
            eprintln!("error: cannot read {}: {err}", old_path.display());
            return ExitCode::from(2);
        }
    };
    let changes = diff(&old, new);
    for change in &changes {
        println!("{change}");
    }
    let count = |s: Severity| changes.iter().filter(|c| c.severity == s).count();
    let breaking = count(Severity::Breaking);
    if changes.is_empty() {
        println!("no changes");
    } else {
        println!(
            "{} change{}: {breaking} breaking, {} additive, {} cosmetic",
            changes.len(),
            if changes.len() == 1 { "" } else { "s" },
            count(Severity::Additive),
            count(Severity::Cosmetic),
        );
    }
    if breaking > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

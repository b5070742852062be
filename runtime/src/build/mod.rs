//! For a server's build script: emit the manifest for the binary to embed, and guard the tools'
//! contract with a committed snapshot.
//!
//! The server crate lists its tools crate under `[build-dependencies]` as well as
//! `[dependencies]`, and its `build.rs` names it to [`emit!`]:
//!
//! ```ignore
//! // build.rs
//! fn main() {
//!     toolwright::build::emit!(notes_tools);
//! }
//! ```
//!
//! and `main` serves the manifest the build made, so start-up derives no schema:
//!
//! ```ignore
//! // src/main.rs
//! fn main() -> std::process::ExitCode {
//!     toolwright::server!(notes_tools)
//!         .embedded_manifest(toolwright::build::embedded_manifest!())
//!         .run()
//! }
//! ```
//!
//! Cargo builds a build script's dependencies unoptimised unless told otherwise, and so
//! compiles the tools crate and toolwright twice in a release build. With the same toolwright
//! features on both sides and `[profile.release.build-override]` set to the release profile's
//! `opt-level` and `codegen-units` (both written out, `codegen-units = 16` in
//! `[profile.release]` too), they are compiled once, and a rebuild costs no more than one
//! deriving the schemas at start.
//!
//! The build also writes an index of the manifest's tools after its JSON ([`EMBEDDED`]): where
//! each tool lies, and what start-up compares with the tool linked in. Start-up reads the index,
//! not the JSON, so serving 1,000 tools costs about as much as serving a handful.
//!
//! With toolwright's `semantic` feature in the build script's dependencies and an embedding model
//! given (`TOOLWRIGHT_EMBEDDING_MODEL` set for the build, or `Guard::embedding_model`), the
//! build makes the tools' vectors too, for `embedded_vectors!` and
//! `Server::embedded_vectors`: the server then embeds nothing
//! at start, and its first search is ranked by meaning. A build embeds only the tools whose text
//! changed since the last one (the earlier vectors are kept in `OUT_DIR`).
//!
//! [`emit!`] compares the tools with the snapshot, `mcp-manifest.json` beside the crate's
//! `Cargo.toml` (commit it), using [`diff`]:
//!
//! - no change: nothing to do;
//! - additive and cosmetic changes: the snapshot is rewritten, and a `cargo:warning` says so;
//! - a breaking change fails the build with a report naming each tool and change, unless the
//!   crate's version is a new major one (a new minor one while `0.x`) against the version the
//!   snapshot records, or `TOOLWRIGHT_ACCEPT_BREAKING=1` is set for one build; the snapshot is
//!   then rewritten;
//! - with `CI` set, a snapshot that would be written fails the build instead, so that the
//!   snapshot a pull request needs gets committed with it.
//!
//! The snapshot is compared by content, so line endings and formatting do not matter. When the
//! build rewrites it, Cargo sees the file changed and runs the build script once more on the next
//! build, which then finds it current.
//!
//! Nothing is compared, only emitted, when `TOOLWRIGHT_SKIP_GUARD` is set, or when the crate is
//! built from a package Cargo unpacked (a dependency from a registry, `cargo package`'s check):
//! the snapshot is then not the developer's to update.
//!
//! A crate without a build script runs the same comparison from a test with
//! [`Guard::check`].

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::manifest::{Change, Severity, diff};
use crate::registry::{Registry, RegistryError};

/// The environment variable that accepts breaking changes for one build.
pub const ACCEPT_BREAKING: &str = "TOOLWRIGHT_ACCEPT_BREAKING";

/// The environment variable that turns the comparison off: the manifest is still emitted.
pub const SKIP: &str = "TOOLWRIGHT_SKIP_GUARD";

/// The snapshot's file name, beside the crate's `Cargo.toml` unless [`Guard::snapshot`] says
/// otherwise.
pub const SNAPSHOT: &str = "mcp-manifest.json";

/// The manifest's file name in `OUT_DIR`: its compact JSON, as `tools/list` sends it, without
/// the package and version the snapshot records.
pub const COMPACT: &str = "mcp-manifest.compact.json";

/// The file in `OUT_DIR` that [`embedded_manifest!`](crate::build::embedded_manifest) includes: the
/// manifest's JSON followed by an index of its tools, which start-up reads instead of parsing
/// the JSON ([`Registry::embedded_bytes`](crate::registry::Registry::embedded_bytes)). It is not JSON; read [`COMPACT`] for that.
pub const EMBEDDED: &str = "mcp-manifest.embedded";

/// The file in `OUT_DIR` that [`embedded_vectors!`](crate::build::embedded_vectors) includes:
/// the tools' vectors by the model [`Guard::embedding_model`] names (the `semantic` feature), in
/// the format of a [`VectorCache`](crate::search::VectorCache) file; without a model, none.
#[cfg(feature = "semantic")]
pub const VECTORS: &str = "mcp-vectors.bin";

/// The environment variable naming the embedding model's folder, at build time as at run time:
/// the default of [`Guard::embedding_model`].
#[cfg(feature = "semantic")]
pub const EMBEDDING_MODEL: &str = "TOOLWRIGHT_EMBEDDING_MODEL";

/// For a build script: checks the tools of the crates it names against the snapshot and emits
/// the manifest, as [`Guard::emit`] does with the defaults (the snapshot `mcp-manifest.json`
/// beside the crate's `Cargo.toml`).
///
/// ```ignore
/// // build.rs, with `notes_tools` under [build-dependencies]
/// fn main() {
///     toolwright::build::emit!(notes_tools);
/// }
/// ```
///
/// Naming the crates is what keeps them in the build script: the linker drops a crate nothing
/// refers to, and its tools with it. A build script that configures a [`Guard`] instead refers
/// to the crates itself, with `use notes_tools as _;`.
#[doc(inline)]
pub use crate::__build_emit as emit;

/// [`emit!`]: refers to each crate named, then emits the manifest.
#[doc(hidden)]
#[macro_export]
macro_rules! __build_emit {
    ($($tools:ident),* $(,)?) => {{
        $(
            // Refers to the crate, so that the linker keeps it and the tools it registers.
            #[allow(unused_imports)]
            use $tools as _;
        )*
        $crate::build::Guard::new().emit()
    }};
}

/// The manifest [`emit!`] wrote for this crate at build time, as `&'static [u8]`, for
/// [`Server::embedded_manifest`](crate::Server::embedded_manifest): its JSON, followed by an index of its tools that start-up reads
/// instead of the JSON ([`EMBEDDED`]). A crate whose build script does not emit a
/// manifest does not compile with it.
///
/// ```ignore
/// toolwright::server!(notes_tools)
///     .embedded_manifest(toolwright::build::embedded_manifest!())
///     .run()
/// ```
#[doc(inline)]
pub use crate::__embedded_manifest as embedded_manifest;

/// [`embedded_manifest!`]: the manifest the build script emitted, as bytes.
#[doc(hidden)]
#[macro_export]
macro_rules! __embedded_manifest {
    () => {
        ::core::include_bytes!(::core::env!(
            "TOOLWRIGHT_MANIFEST",
            "no MCP manifest was made for this crate: call `toolwright::build::emit!(tools_crate)` \
             from its build.rs, with the tools crate under [build-dependencies]"
        ))
        .as_slice()
    };
}

/// The tools' vectors [`emit!`] made for this crate at build time, as `&'static [u8]`, for
/// [`Server::embedded_vectors`](crate::Server::embedded_vectors): a server starts with them and
/// embeds only the tools changed since. The build script's toolwright needs the `semantic`
/// feature, and a model ([`Guard::embedding_model`], or [`EMBEDDING_MODEL`] set for the build);
/// without a model the bytes hold no vector, and every tool is embedded at start.
///
/// ```ignore
/// toolwright::server!(notes_tools)
///     .embedded_manifest(toolwright::build::embedded_manifest!())
///     .embedder(Embedder::from_dir("models/all-MiniLM-L6-v2")?)
///     .embedded_vectors(toolwright::build::embedded_vectors!())
///     .run()
/// ```
#[cfg(feature = "semantic")]
#[doc(inline)]
pub use crate::__embedded_vectors as embedded_vectors;

/// [`embedded_vectors!`]: the vectors the build script made, as bytes.
#[cfg(feature = "semantic")]
#[doc(hidden)]
#[macro_export]
macro_rules! __embedded_vectors {
    () => {
        ::core::include_bytes!(::core::env!(
            "TOOLWRIGHT_VECTORS",
            "no tool vectors were made for this crate: call `toolwright::build::emit!(tools_crate)` \
             from its build.rs, with the `semantic` feature of toolwright under [build-dependencies]"
        ))
        .as_slice()
    };
}

/// The comparison of a crate's tools with its committed snapshot.
#[derive(Debug, Default)]
#[must_use]
pub struct Guard {
    snapshot: Option<PathBuf>,
    #[cfg(feature = "semantic")]
    embedding_model: Option<PathBuf>,
    /// Whether the tools are left uncompared with a snapshot.
    uncompared: bool,
    registry: Option<Registry>,
    namespaced: bool,
    package: Option<(String, String)>,
    ci: Option<bool>,
    accept_breaking: Option<bool>,
}

/// What [`Guard::check`] did.
#[derive(Debug)]
#[non_exhaustive]
pub enum Checked {
    /// The snapshot describes the tools and the version already.
    Unchanged,
    /// Nothing was compared: [`SKIP`] is set, [`Guard::compared`] said not to, or the crate is
    /// built from a package (a registry download, `cargo package`'s check), where the snapshot
    /// is not the developer's to update.
    Skipped,
    /// There was no snapshot: it was written.
    Created {
        /// Where.
        snapshot: PathBuf,
    },
    /// The snapshot was rewritten: these changes are additive or cosmetic, or the breaking ones
    /// were accepted (a new major version, or [`ACCEPT_BREAKING`]). No change at all means only
    /// the version changed.
    Updated {
        /// Where.
        snapshot: PathBuf,
        /// What changed, breaking first.
        changes: Vec<Change>,
    },
}

/// Why [`Guard::check`] refused the tools.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GuardError {
    /// The tools conflict, so there is no manifest.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// A change breaks callers, and the version does not say so.
    #[error("{}", breaking_report(.package, .version, .snapshot_version, .snapshot, .changes))]
    Breaking {
        /// The crate.
        package: String,
        /// Its version now.
        version: String,
        /// The version the snapshot records.
        snapshot_version: String,
        /// The snapshot.
        snapshot: PathBuf,
        /// Every change, breaking first.
        changes: Vec<Change>,
    },
    /// `CI` is set and the snapshot does not describe the tools.
    #[error("{}", stale_report(.snapshot, .changes, *.missing))]
    Stale {
        /// The snapshot.
        snapshot: PathBuf,
        /// What changed, breaking first.
        changes: Vec<Change>,
        /// Whether there is no snapshot at all.
        missing: bool,
    },
    /// The snapshot cannot be read as one.
    #[error("{} is not a manifest snapshot: {reason}", .snapshot.display())]
    Snapshot {
        /// The file.
        snapshot: PathBuf,
        /// Why.
        reason: String,
    },
    /// A file could not be read or written.
    #[error("cannot {action} {}: {source}", .path.display())]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// What the system said.
        source: io::Error,
    },
    /// No tool is linked in, so there is no contract to guard: the tools crate was dropped by the
    /// linker.
    #[error(
        "no MCP tool is linked into the build script: name the tools crates, as in \
         `toolwright::build::emit!(notes_tools)`, since the linker drops a crate nothing refers \
         to; each must be under [build-dependencies] too"
    )]
    NoTools,
    /// The tools' vectors could not be made with the embedding model given.
    #[cfg(feature = "semantic")]
    #[error("cannot make the tools' vectors with the model in {}: {source}", .model.display())]
    Vectors {
        /// The model's folder.
        model: PathBuf,
        /// Why.
        source: crate::search::EmbedderError,
    },
    /// Cargo did not set a variable the check needs: it runs outside a build script or test.
    #[error(
        "the environment variable {0} is not set: run this from a build script or a test, or \
         name the package and the snapshot with Guard::package and Guard::snapshot"
    )]
    Environment(&'static str),
}

mod snapshot;
#[cfg(feature = "semantic")]
mod vectors;

use snapshot::{contract, is_new_major, next_major, read_snapshot, snapshot_text};

impl Guard {
    /// The defaults: every tool linked in, the snapshot `mcp-manifest.json` in the directory of
    /// the crate being built (`CARGO_MANIFEST_DIR`), the package's name and version from Cargo.
    pub fn new() -> Guard {
        Guard::default()
    }

    /// Compares with this snapshot instead; a relative path is relative to the crate's
    /// directory.
    pub fn snapshot(mut self, path: impl Into<PathBuf>) -> Guard {
        self.snapshot = Some(path.into());
        self
    }

    /// Checks these tools instead of every tool linked in.
    pub fn registry(mut self, registry: Registry) -> Guard {
        self.registry = Some(registry);
        self
    }

    /// Makes the tools' vectors with the model in `dir` (`config.json`, `model.safetensors`,
    /// `tokenizer.json`), for [`embedded_vectors!`](crate::build::embedded_vectors); by default
    /// the folder [`EMBEDDING_MODEL`] names, if set. Only the tools changed since the last
    /// build are embedded. The `semantic` feature.
    #[cfg(feature = "semantic")]
    pub fn embedding_model(mut self, dir: impl Into<PathBuf>) -> Guard {
        self.embedding_model = Some(dir.into());
        self
    }

    /// Whether the tools are compared with the snapshot (the default), or only emitted, as with
    /// [`SKIP`] set: for tools a build generates from tables, whose contract is the tables'.
    pub fn compared(mut self, compared: bool) -> Guard {
        self.uncompared = !compared;
        self
    }

    /// Checks the tools as a [namespaced](crate::Server::namespaced) server serves them.
    pub fn namespaced(mut self) -> Guard {
        self.namespaced = true;
        self
    }

    /// The package whose contract this is, instead of `CARGO_PKG_NAME` and
    /// `CARGO_PKG_VERSION`.
    pub fn package(mut self, name: impl Into<String>, version: impl Into<String>) -> Guard {
        self.package = Some((name.into(), version.into()));
        self
    }

    /// Whether a snapshot that needs writing is an error rather than written; by default,
    /// whether the `CI` environment variable is set (to anything but empty, `0` or `false`).
    pub fn ci(mut self, ci: bool) -> Guard {
        self.ci = Some(ci);
        self
    }

    /// Whether breaking changes are accepted whatever the version; by default, whether
    /// [`ACCEPT_BREAKING`] is set (to anything but empty, `0` or `false`).
    pub fn accept_breaking(mut self, accept: bool) -> Guard {
        self.accept_breaking = Some(accept);
        self
    }

    /// For a build script: checks the tools against the snapshot ([`Guard::check`]), writes the
    /// manifest to `OUT_DIR` ([`COMPACT`], and [`EMBEDDED`] for
    /// [`embedded_manifest!`](crate::build::embedded_manifest), which the `TOOLWRIGHT_MANIFEST` variable
    /// it sets for the crate names), and tells Cargo when to run again. A refusal is printed with
    /// what to do, and fails the build.
    pub fn emit(self) {
        let snapshot = match self.snapshot_path() {
            Ok(path) => path,
            Err(err) => fail(&err),
        };
        println!("cargo:rerun-if-changed={}", snapshot.display());
        println!("cargo:rerun-if-env-changed={ACCEPT_BREAKING}");
        println!("cargo:rerun-if-env-changed=CI");
        println!("cargo:rerun-if-env-changed={SKIP}");
        #[cfg(feature = "semantic")]
        let embedding_model = self.embedding_model.clone();
        let (outcome, registry) = match self.run() {
            Ok(done) => done,
            Err(err) => fail(&err),
        };
        match &outcome {
            Checked::Unchanged | Checked::Skipped => {}
            Checked::Created { snapshot } => println!(
                "cargo:warning=wrote the MCP manifest snapshot {}: commit it",
                snapshot.display()
            ),
            Checked::Updated { snapshot, changes } => {
                println!(
                    "cargo:warning=updated the MCP manifest snapshot {} ({}): commit it",
                    snapshot.display(),
                    summary(changes)
                );
                for change in changes {
                    println!("cargo:warning=  {change}");
                }
            }
        }
        let Some(out_dir) = std::env::var_os("OUT_DIR") else {
            fail(&GuardError::Environment("OUT_DIR"));
        };
        let out_dir = Path::new(&out_dir);
        let embedded = out_dir.join(EMBEDDED);
        for (path, bytes) in [
            (out_dir.join(COMPACT), registry.manifest().as_bytes()),
            (embedded.clone(), &registry.embedded_bytes()),
        ] {
            if let Err(err) = write_if_changed(&path, bytes) {
                fail(&err);
            }
        }
        println!("cargo:rustc-env=TOOLWRIGHT_MANIFEST={}", embedded.display());
        #[cfg(feature = "semantic")]
        if let Err(err) = vectors::emit(&registry, embedding_model, out_dir) {
            fail(&err);
        }
    }

    /// Compares the tools with the snapshot as [`Guard::emit`] does, and writes the snapshot
    /// when that is what the build would do: when there is none, or the changes are accepted.
    /// With `CI` set it writes nothing, and a snapshot that needs writing is an error.
    ///
    /// ```no_run
    /// #[test]
    /// fn the_tools_keep_their_contract() {
    ///     if let Err(err) = toolwright::build::Guard::new().check() {
    ///         panic!("{err}");
    ///     }
    /// }
    /// ```
    pub fn check(self) -> Result<Checked, GuardError> {
        self.run().map(|(outcome, _)| outcome)
    }

    fn snapshot_path(&self) -> Result<PathBuf, GuardError> {
        let path = self
            .snapshot
            .clone()
            .unwrap_or_else(|| PathBuf::from(SNAPSHOT));
        if path.is_absolute() {
            return Ok(path);
        }
        let dir = std::env::var_os("CARGO_MANIFEST_DIR")
            .ok_or(GuardError::Environment("CARGO_MANIFEST_DIR"))?;
        Ok(Path::new(&dir).join(path))
    }

    /// The outcome, and the tools compared.
    fn run(mut self) -> Result<(Checked, Registry), GuardError> {
        let snapshot = self.snapshot_path()?;
        let (package, version) = match self.package.take() {
            Some(package) => package,
            None => (
                std::env::var("CARGO_PKG_NAME")
                    .map_err(|_| GuardError::Environment("CARGO_PKG_NAME"))?,
                std::env::var("CARGO_PKG_VERSION")
                    .map_err(|_| GuardError::Environment("CARGO_PKG_VERSION"))?,
            ),
        };
        let registry = match self.registry.take() {
            Some(registry) => registry,
            None => Registry::collect()?,
        }
        .namespaced_if(self.namespaced)?;
        if registry.is_empty() {
            return Err(GuardError::NoTools);
        }
        let manifest = registry.manifest();
        if self.uncompared || flag(SKIP) || is_unpacked(&package, &version) {
            return Ok((Checked::Skipped, registry));
        }
        let text = snapshot_text(&package, &version, manifest.as_json());
        let ci = self.ci.unwrap_or_else(|| flag("CI"));
        let accept_breaking = self
            .accept_breaking
            .unwrap_or_else(|| flag(ACCEPT_BREAKING));
        let old = match std::fs::read_to_string(&snapshot) {
            Ok(old) => old,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                if ci {
                    return Err(GuardError::Stale {
                        snapshot,
                        changes: Vec::new(),
                        missing: true,
                    });
                }
                write(&snapshot, text.as_bytes())?;
                return Ok((Checked::Created { snapshot }, registry));
            }
            Err(source) => {
                return Err(GuardError::Io {
                    action: "read",
                    path: snapshot,
                    source,
                });
            }
        };
        if old == text {
            return Ok((Checked::Unchanged, registry));
        }
        let (old_json, snapshot_version) = read_snapshot(&snapshot, &old)?;
        // Only the layout differs (line endings of a checkout, another formatter): the contract
        // is the same, so the file is left as it is.
        if snapshot_version == version
            && old_json.get("package").and_then(Value::as_str) == Some(package.as_str())
            && contract(&old_json) == *manifest.as_json()
        {
            return Ok((Checked::Unchanged, registry));
        }
        let changes = diff(&old_json, manifest.as_json());
        let breaking = changes.iter().any(|c| c.severity == Severity::Breaking);
        if breaking && !accept_breaking && !is_new_major(&version, &snapshot_version) {
            return Err(GuardError::Breaking {
                package,
                version,
                snapshot_version,
                snapshot,
                changes,
            });
        }
        if ci {
            return Err(GuardError::Stale {
                snapshot,
                changes,
                missing: false,
            });
        }
        write(&snapshot, text.as_bytes())?;
        Ok((Checked::Updated { snapshot, changes }, registry))
    }
}

/// Whether the crate being built is a package Cargo unpacked, in a directory named
/// `<name>-<version>`: a dependency downloaded from a registry, or `cargo package` checking
/// its archive. A developer's checkout is not named so.
fn is_unpacked(package: &str, version: &str) -> bool {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .is_some_and(|dir| is_package_dir(Path::new(&dir), package, version))
}

fn is_package_dir(dir: &Path, package: &str, version: &str) -> bool {
    dir.file_name()
        .is_some_and(|name| name.to_str() == Some(&format!("{package}-{version}")))
}

/// Whether an environment variable is set to something other than empty, `0` or `false`.
fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|value| !matches!(value.trim(), "" | "0" | "false"))
}

/// Writes the file whole or not at all: the bytes go to a file beside it, renamed over it, so
/// that a build running at the same time never reads half of it.
fn write(path: &Path, bytes: &[u8]) -> Result<(), GuardError> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(format!(".{}.tmp", std::process::id()));
    let partial = PathBuf::from(partial);
    std::fs::write(&partial, bytes)
        .and_then(|()| std::fs::rename(&partial, path))
        .map_err(|source| {
            let _ = std::fs::remove_file(&partial);
            GuardError::Io {
                action: "write",
                path: path.to_owned(),
                source,
            }
        })
}

/// Writes the file unless it holds these bytes already, so that what depends on it is not
/// rebuilt for nothing.
fn write_if_changed(path: &Path, bytes: &[u8]) -> Result<(), GuardError> {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    write(path, bytes)
}

/// Prints the refusal for Cargo to show, and fails the build script.
fn fail(err: &GuardError) -> ! {
    eprintln!("error: {err}");
    std::process::exit(1);
}

/// What changed, in one line (`2 changes: 0 breaking, 1 additive, 1 cosmetic`), or that only the
/// version did.
fn summary(changes: &[Change]) -> String {
    if changes.is_empty() {
        "the version changed".to_owned()
    } else {
        Change::summary(changes)
    }
}

struct Lines<'a>(&'a [Change]);

impl fmt::Display for Lines<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for change in self.0 {
            writeln!(f, "  - {change}")?;
        }
        Ok(())
    }
}

fn breaking_report(
    package: &str,
    version: &str,
    snapshot_version: &str,
    snapshot: &Path,
    changes: &[Change],
) -> String {
    format!(
        "the MCP tools of {package} {version} break callers of the contract in {} ({}):\n{}\
         To accept these changes, either raise the version of {package} above {snapshot_version} \
         to a new major release ({}), which the snapshot will then record, or build once with \
         {ACCEPT_BREAKING}=1; otherwise, undo the breaking changes.",
        snapshot.display(),
        summary(changes),
        Lines(changes),
        next_major(snapshot_version),
    )
}

fn stale_report(snapshot: &Path, changes: &[Change], missing: bool) -> String {
    if missing {
        return format!(
            "there is no MCP manifest snapshot {}, and CI is set, so it is not written: build \
             without CI to write it, then commit it",
            snapshot.display()
        );
    }
    format!(
        "the MCP manifest snapshot {} is out of date ({}), and CI is set, so it is not \
         rewritten:\n{}Build without CI to update it, then commit it.",
        snapshot.display(),
        summary(changes),
        Lines(changes),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_major_release_is_the_one_cargo_lets_break() {
        assert!(is_new_major("2.0.0", "1.9.3"));
        assert!(is_new_major("0.3.0", "0.2.9"));
        assert!(is_new_major("0.0.4", "0.0.3"));
        assert!(is_new_major("1.0.0-rc.1", "0.9.0"));
        assert!(!is_new_major("1.5.0", "1.4.0"));
        assert!(!is_new_major("0.2.5", "0.2.4"));
        assert!(!is_new_major("1.0.0", "1.0.0"));
        assert!(!is_new_major("1.0", "0.1.0"));
        assert_eq!(next_major("1.4.2"), "2.0.0");
        assert_eq!(next_major("0.2.7"), "0.3.0");
        assert_eq!(next_major("0.0.3"), "0.0.4");
    }

    #[test]
    fn unpacked_packages_are_told_from_checkouts() {
        let registry = Path::new("/home/u/.cargo/registry/src/index.crates.io-1/notes-0.3.1");
        assert!(is_package_dir(registry, "notes", "0.3.1"));
        assert!(is_package_dir(
            Path::new("/w/target/package/notes-0.3.1"),
            "notes",
            "0.3.1"
        ));
        assert!(!is_package_dir(Path::new("/w/notes"), "notes", "0.3.1"));
        assert!(!is_package_dir(
            Path::new("/w/notes-0.3.0"),
            "notes",
            "0.3.1"
        ));
    }

    #[test]
    fn the_snapshot_is_pretty_json_with_the_package_first() {
        let text = snapshot_text(
            "notes",
            "0.1.0",
            &serde_json::json!({"tools": [{"name": "a"}]}),
        );
        assert_eq!(
            text,
            "{\n  \"package\": \"notes\",\n  \"version\": \"0.1.0\",\n  \"tools\": [\n    {\n      \
             \"name\": \"a\"\n    }\n  ]\n}\n"
        );
    }
}

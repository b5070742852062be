//! The benchmark's own Cargo workspace: building the servers, their binaries, compile times.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use crate::server::Server;
use crate::stats::Samples;

/// Where the benchmark lives and builds.
pub(crate) struct Workspace {
    /// `bench/`, holding the workspace's `Cargo.toml`.
    root: PathBuf,
    /// The target directory the harness itself was built in.
    target: PathBuf,
    cargo: OsString,
}

impl Workspace {
    /// The workspace this harness was built from, and the target directory it runs from.
    pub(crate) fn locate() -> io::Result<Workspace> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("the harness is a member of the bench workspace")
            .to_owned();
        // The harness runs as <target>/release/harness: the servers are built beside it.
        let exe = std::env::current_exe()?;
        let target = exe
            .parent()
            .and_then(Path::parent)
            .ok_or_else(|| io::Error::other("the harness is not in <target>/release"))?
            .to_owned();
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        Ok(Workspace {
            root,
            target,
            cargo,
        })
    }

    /// The repository that holds `bench/`.
    pub(crate) fn repository(&self) -> &Path {
        self.root.parent().expect("bench/ is inside the repository")
    }

    /// `bench/`.
    pub(crate) fn root(&self) -> &Path {
        &self.root
    }

    /// Where the servers built for `tools` tools live: a target directory of their own, so
    /// that each count has binaries made for it.
    fn target_for(&self, tools: usize) -> PathBuf {
        self.target.join(format!("tools-{tools}"))
    }

    /// Builds every server with `tools` tools, in release mode.
    pub(crate) fn build_servers(&self, tools: usize) -> io::Result<()> {
        self.cargo_build(&Server::STARTED, tools, &self.target_for(tools))
    }

    /// Builds these servers with `tools` tools, in release mode.
    pub(crate) fn build(&self, servers: &[Server], tools: usize) -> io::Result<()> {
        self.cargo_build(servers, tools, &self.target_for(tools))
    }

    /// A server's release binary, as built by [`build_servers`](Workspace::build_servers).
    pub(crate) fn binary(&self, server: Server, tools: usize) -> PathBuf {
        self.target_for(tools)
            .join("release")
            .join(server.package())
    }

    /// Builds a toolwright server with `tools` tools and none of toolwright's default
    /// features, in a target directory of its own; returns its binary.
    pub(crate) fn build_without_defaults(
        &self,
        server: Server,
        tools: usize,
    ) -> io::Result<PathBuf> {
        self.build_variant(
            server,
            tools,
            "no-default-features",
            &["--no-default-features"],
        )
    }

    /// Builds a server with `tools` tools and the cargo `flags`, in a target directory of its
    /// own named by `variant`; returns its binary.
    pub(crate) fn build_variant(
        &self,
        server: Server,
        tools: usize,
        variant: &str,
        flags: &[&str],
    ) -> io::Result<PathBuf> {
        let target = self.target.join(format!("tools-{tools}-{variant}"));
        self.cargo_build_packages(&[server.package()], tools, &target, flags)?;
        Ok(target.join("release").join(server.package()))
    }

    /// Builds `toolwright-gateway` from the repository's own workspace, in release mode, in a
    /// target directory of its own; returns its binary.
    pub(crate) fn build_gateway(&self) -> io::Result<PathBuf> {
        let target = self.target.join("gateway");
        self.cargo(
            &self.repository().join("Cargo.toml"),
            &[Server::Gateway.package()],
            0,
            &target,
            &[],
        )?;
        Ok(target.join("release").join(Server::Gateway.package()))
    }

    /// A server binary's size in bytes after `strip`.
    pub(crate) fn stripped_size(&self, server: Server, tools: usize) -> io::Result<u64> {
        self.stripped(&self.binary(server, tools))
    }

    /// A binary's size in bytes after `strip` (the stripped copy beside it).
    pub(crate) fn stripped(&self, binary: &Path) -> io::Result<u64> {
        let mut stripped = binary.as_os_str().to_owned();
        stripped.push(".stripped");
        let status = Command::new("strip")
            .arg("-o")
            .arg(&stripped)
            .arg(binary)
            .status()?;
        if !status.success() {
            return Err(io::Error::other(format!("strip failed: {status}")));
        }
        Ok(std::fs::metadata(&stripped)?.len())
    }

    /// Builds `server` with `tools` tools from the repository's tree at `commit` (unpacked with
    /// `git archive` in the target directory), in release mode; returns its binary.
    pub(crate) fn build_at(
        &self,
        commit: &str,
        server: Server,
        tools: usize,
    ) -> io::Result<PathBuf> {
        let source = self.target.join(format!("at-{commit}"));
        if !source.join("bench").join("Cargo.toml").exists() {
            std::fs::create_dir_all(&source)?;
            let mut archive = Command::new("git")
                .arg("-C")
                .arg(self.repository())
                .args(["archive", "--format=tar", commit])
                .stdout(std::process::Stdio::piped())
                .spawn()?;
            let tar = archive.stdout.take().expect("stdout is piped");
            let unpacked = Command::new("tar")
                .arg("-x")
                .arg("-C")
                .arg(&source)
                .stdin(tar)
                .status()?;
            let archived = archive.wait()?;
            if !archived.success() || !unpacked.success() {
                return Err(io::Error::other(format!(
                    "the tree at {commit} could not be unpacked (git archive: {archived}, tar: \
                     {unpacked})"
                )));
            }
        }
        let target = self.target.join(format!("at-{commit}-tools-{tools}"));
        self.cargo(
            &source.join("bench").join("Cargo.toml"),
            &[server.package()],
            tools,
            &target,
            &[],
        )?;
        Ok(target.join("release").join(server.package()))
    }

    /// How long `cargo build --release -p <server>` takes after the file that holds a server's
    /// `tools` tools is touched, everything else built: `runs` times each, in turn. For
    /// toolwright deriving at start and rmcp that is the server's `src/main.rs`; for the
    /// embedded manifest, the tools crate's `src/lib.rs`, which its build script links too.
    pub(crate) fn compile_times(
        &self,
        servers: [Server; 3],
        tools: usize,
        runs: usize,
    ) -> io::Result<[Samples; 3]> {
        let target = self.target.join(format!("compile-{tools}"));
        // Untimed: the dependencies and the build scripts.
        self.cargo_build(&servers, tools, &target)?;
        let mut times: [Samples; 3] = Default::default();
        for run in 0..runs {
            for server in Server::in_turn(servers, run) {
                let source = match server {
                    Server::Embedded => "toolwright-bench-tools/src/lib.rs".to_owned(),
                    _ => format!("{}/src/main.rs", server.package()),
                };
                File::options()
                    .write(true)
                    .open(self.root.join("servers").join(source))?
                    .set_modified(SystemTime::now())?;
                let start = Instant::now();
                self.cargo_build(&[server], tools, &target)?;
                let index = servers
                    .iter()
                    .position(|s| *s == server)
                    .expect("one of them");
                times[index].push(start.elapsed());
            }
        }
        Ok(times)
    }

    fn cargo_build(&self, servers: &[Server], tools: usize, target: &Path) -> io::Result<()> {
        let mut packages: Vec<&str> = servers.iter().map(|server| server.package()).collect();
        packages.dedup();
        self.cargo_build_packages(&packages, tools, target, &[])
    }

    fn cargo_build_packages(
        &self,
        packages: &[&str],
        tools: usize,
        target: &Path,
        flags: &[&str],
    ) -> io::Result<()> {
        self.cargo(
            &self.root.join("Cargo.toml"),
            packages,
            tools,
            target,
            flags,
        )
    }

    /// `cargo build --release` of `packages` of the workspace at `manifest`.
    fn cargo(
        &self,
        manifest: &Path,
        packages: &[&str],
        tools: usize,
        target: &Path,
        flags: &[&str],
    ) -> io::Result<()> {
        let mut command = Command::new(&self.cargo);
        command
            .args(["build", "--release", "--quiet"])
            .args(flags)
            .arg("--manifest-path")
            .arg(manifest)
            .arg("--target-dir")
            .arg(target)
            .env("BENCH_TOOL_COUNT", tools.to_string());
        for package in packages {
            command.args(["-p", package]);
        }
        let status = command.status()?;
        if !status.success() {
            return Err(io::Error::other(format!("cargo build failed: {status}")));
        }
        Ok(())
    }
}

//! The benchmark's own Cargo workspace: building the servers, their binaries, compile times.

use std::ffi::OsString;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Instant, SystemTime};

use crate::server::Framework;
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

    /// Builds both servers with `tools` tools each, in release mode, beside the harness.
    pub(crate) fn build_servers(&self, tools: usize) -> io::Result<()> {
        self.cargo_build(&Framework::BOTH, tools, &self.target)
    }

    /// A server's release binary, as built by [`build_servers`](Workspace::build_servers).
    pub(crate) fn binary(&self, framework: Framework) -> PathBuf {
        self.target.join("release").join(framework.package())
    }

    /// A server binary's size in bytes as built (release profile: symbols kept, debug info
    /// stripped) and after `strip`.
    pub(crate) fn binary_sizes(&self, framework: Framework) -> io::Result<(u64, u64)> {
        let binary = self.binary(framework);
        let stripped_dir = self.target.join("bench-stripped");
        std::fs::create_dir_all(&stripped_dir)?;
        let stripped = stripped_dir.join(framework.package());
        let status = Command::new("strip")
            .arg("-o")
            .arg(&stripped)
            .arg(&binary)
            .status()?;
        if !status.success() {
            return Err(io::Error::other(format!("strip failed: {status}")));
        }
        Ok((
            std::fs::metadata(&binary)?.len(),
            std::fs::metadata(&stripped)?.len(),
        ))
    }

    /// How long `cargo build --release -p <server>` takes to rebuild a server of `tools` tools
    /// after its source is touched, its dependencies built: `runs` times each, alternating.
    ///
    /// Builds in a target directory of its own, so the 1,000-tool binaries stay as they are.
    pub(crate) fn compile_times(&self, tools: usize, runs: usize) -> io::Result<[Samples; 2]> {
        let target = self.target.join(format!("compile-{tools}"));
        // Untimed: the dependencies and the build scripts.
        self.cargo_build(&Framework::BOTH, tools, &target)?;
        let mut times: [Samples; 2] = Default::default();
        for run in 0..runs {
            for framework in Framework::in_turn(run) {
                let source = self
                    .root
                    .join("servers")
                    .join(framework.package())
                    .join("src/main.rs");
                File::options()
                    .write(true)
                    .open(&source)?
                    .set_modified(SystemTime::now())?;
                let start = Instant::now();
                self.cargo_build(&[framework], tools, &target)?;
                times[framework.index()].push(start.elapsed());
            }
        }
        Ok(times)
    }

    /// Builds these packages with `tools` tools each, in release mode, beside the harness.
    pub(crate) fn build_packages(&self, packages: &[&str], tools: usize) -> io::Result<()> {
        self.cargo_build_packages(packages, tools, &self.target)
    }

    /// A package's release binary, as built by [`build_packages`](Workspace::build_packages).
    pub(crate) fn package_binary(&self, package: &str) -> PathBuf {
        self.target.join("release").join(package)
    }

    fn cargo_build(&self, servers: &[Framework], tools: usize, target: &Path) -> io::Result<()> {
        let packages: Vec<&str> = servers.iter().map(|server| server.package()).collect();
        self.cargo_build_packages(&packages, tools, target)
    }

    fn cargo_build_packages(
        &self,
        packages: &[&str],
        tools: usize,
        target: &Path,
    ) -> io::Result<()> {
        let mut command = Command::new(&self.cargo);
        command
            .args(["build", "--release", "--quiet", "--manifest-path"])
            .arg(self.root.join("Cargo.toml"))
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

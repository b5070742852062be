//! Node.js programs the tests start: the `node` to run, and a folder of packages installed from
//! its lock file.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Held while a folder is checked and installed: the tests of one binary run at once, and
/// `npm ci` begins by removing `node_modules`, which would pull the files from under a program
/// another test already runs from there.
static INSTALLING: Mutex<()> = Mutex::new(());

/// The `node` to run: `TOOLWRIGHT_NODE`, or the one on the `PATH`.
pub fn node() -> String {
    std::env::var("TOOLWRIGHT_NODE").unwrap_or_else(|_| "node".to_owned())
}

/// The folder `source` (a `package.json`, its `package-lock.json` and the other `files`)
/// copied to `dir`, with its packages installed by `npm ci` when the lock file changed or
/// `marker` (a path under `dir`) is missing. `what` names the tests, for the message of an
/// `npm` that cannot run.
///
/// # Panics
///
/// If the files cannot be copied, or `npm ci` cannot run or fails.
pub fn installed(source: &Path, dir: &Path, files: &[&str], marker: &str, what: &str) -> PathBuf {
    let _installing = INSTALLING.lock().unwrap_or_else(|e| e.into_inner());
    std::fs::create_dir_all(dir).unwrap();
    let lock = std::fs::read(source.join("package-lock.json")).unwrap();
    let current = std::fs::read(dir.join("package-lock.json")).ok();
    for file in ["package.json", "package-lock.json"].iter().chain(files) {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    if current.as_ref() != Some(&lock) || !dir.join(marker).exists() {
        let npm = Path::new(&node()).with_file_name("npm");
        let npm = if npm.exists() {
            npm
        } else {
            PathBuf::from("npm")
        };
        let status = Command::new(&npm)
            .args(["ci", "--no-audit", "--no-fund", "--silent"])
            .current_dir(dir)
            .status()
            .unwrap_or_else(|err| {
                panic!(
                    "{what} need Node.js, and cannot run `{}`: {err}; install Node.js 20 or \
                     later with npm, or name the binary in TOOLWRIGHT_NODE",
                    npm.display()
                )
            });
        assert!(
            status.success(),
            "`npm ci` in {} failed: {status}",
            dir.display()
        );
    }
    dir.to_owned()
}

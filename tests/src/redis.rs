//! A Redis server of a test's own, for the tests of what replicas share through Redis.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A Redis server of its own on a free port of 127.0.0.1, keeping what it is told in an
/// append-only file under `dir` so that a restart loses nothing; stopped when dropped. The
/// binary is `redis-server` on the `PATH`, or the one `TOOLWRIGHT_REDIS_SERVER` names.
#[derive(Debug)]
pub struct Redis {
    port: u16,
    dir: PathBuf,
    child: Option<Child>,
}

impl Redis {
    /// Starts one keeping its files in a fresh directory under `tmp` (a test's
    /// `CARGO_TARGET_TMPDIR`), and waits until it answers.
    ///
    /// # Panics
    ///
    /// When the binary cannot be started, saying what to install; when it does not answer
    /// within 10 seconds.
    pub fn start(tmp: impl AsRef<Path>) -> Redis {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tmp.as_ref().join(format!("redis-{port}"));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut redis = Redis {
            port,
            dir,
            child: None,
        };
        redis.run();
        redis
    }

    /// Its URL: `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Starts the server, and waits until it answers.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn run(&mut self) {
        let binary =
            std::env::var("TOOLWRIGHT_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_owned());
        let child = Command::new(&binary)
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--appendonly", "yes", "--save", ""])
            // `DEBUG SET-ACTIVE-EXPIRE`, from this machine only: a test that counts keys holds
            // expired ones until it has counted them.
            .args(["--enable-debug-command", "local"])
            .arg("--dir")
            .arg(&self.dir)
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| {
                panic!(
                    "these tests start `{binary}`: install Redis (Debian: apt-get install \
                     redis-server) or name the binary in TOOLWRIGHT_REDIS_SERVER ({err})"
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Stops the server (SIGKILL), as a crash would.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.stop();
    }
}

//! A server under test, spawned as a child process and spoken to over its stdin and stdout, one
//! JSON-RPC message a line, as an MCP client does.

use std::fmt;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

/// The protocol version the harness asks for; both servers speak it.
pub(crate) const PROTOCOL_VERSION: &str = "2025-11-25";

/// Servers still running, by process id, so the watchdog can end them.
static RUNNING: Mutex<Vec<u32>> = Mutex::new(Vec::new());

/// Ends every server still running (the watchdog's last act).
pub(crate) fn kill_running() {
    let pids = RUNNING.lock().unwrap_or_else(|e| e.into_inner()).clone();
    for pid in pids {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
}

/// A server under test: a binary and how it is started.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Server {
    /// toolwright, its schemas derived at start (`toolwright-bench-server`).
    Toolwright,
    /// toolwright serving the manifest its build made (`toolwright-embedded-bench-server`).
    Embedded,
    /// rmcp on `stdio()`: tokio's `stdin()` and `stdout()`.
    Rmcp,
    /// rmcp on `stdio_pipes()`: the pipes reopened non-blocking, on tokio's reactor.
    RmcpPipes,
    /// `toolwright-gateway` mounting `toolwright-bench-server` (its configuration named by
    /// `TOOLWRIGHT_GATEWAY_CONFIG`).
    Gateway,
    /// FastMCP's proxy mounting `toolwright-bench-server` (`servers/fastmcp-proxy/proxy.py`,
    /// run by the Python `TOOLWRIGHT_FASTMCP_PYTHON` names).
    FastmcpProxy,
}

impl Server {
    /// The servers of every runtime measure: toolwright and rmcp's two transports.
    pub(crate) const COMPARED: [Server; 3] = [Server::Toolwright, Server::Rmcp, Server::RmcpPipes];

    /// The servers whose start is timed: both toolwright variants and rmcp's two transports.
    pub(crate) const STARTED: [Server; 4] = [
        Server::Toolwright,
        Server::Embedded,
        Server::Rmcp,
        Server::RmcpPipes,
    ];

    /// The package, and binary, of its benchmark server.
    pub(crate) fn package(self) -> &'static str {
        match self {
            Server::Toolwright => "toolwright-bench-server",
            Server::Embedded => "toolwright-embedded-bench-server",
            Server::Rmcp | Server::RmcpPipes => "rmcp-bench-server",
            Server::Gateway => "toolwright-gateway",
            Server::FastmcpProxy => "fastmcp-proxy",
        }
    }

    fn args(self) -> &'static [&'static str] {
        match self {
            Server::RmcpPipes => &["--pipes"],
            _ => &[],
        }
    }

    /// `servers` in an order that turns with `round`, so that none always goes first.
    pub(crate) fn in_turn<const N: usize>(servers: [Server; N], round: usize) -> [Server; N] {
        std::array::from_fn(|i| servers[(i + round) % N])
    }
}

impl fmt::Display for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Server::Toolwright => "toolwright",
            Server::Embedded => "toolwright (embedded manifest)",
            Server::Rmcp => "rmcp stdio()",
            Server::RmcpPipes => "rmcp stdio_pipes()",
            Server::Gateway => "toolwright-gateway",
            Server::FastmcpProxy => "FastMCP proxy",
        })
    }
}

/// A running server and the client's end of its pipes.
pub(crate) struct Connection {
    server: Server,
    child: Child,
    stdin: Option<BufWriter<ChildStdin>>,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    next_id: u64,
    /// When the last line was read, before it was parsed.
    last_read: Instant,
}

impl Connection {
    /// Starts the server at `binary`, pinned to the first CPU if asked (with `taskset`). Its
    /// logs are limited to warnings and discarded, the same for every server.
    pub(crate) fn spawn(server: Server, binary: &Path, pinned: bool) -> io::Result<Connection> {
        Connection::spawn_with(server, binary, pinned, &[])
    }

    /// [`spawn`](Connection::spawn), with the variables `env` set for the server.
    pub(crate) fn spawn_with(
        server: Server,
        binary: &Path,
        pinned: bool,
        env: &[(&str, &str)],
    ) -> io::Result<Connection> {
        Connection::spawn_with_args(server, binary, pinned, server.args(), env)
    }

    /// [`spawn_with`](Connection::spawn_with), with `args` instead of the server's own.
    pub(crate) fn spawn_with_args(
        server: Server,
        binary: &Path,
        pinned: bool,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> io::Result<Connection> {
        let mut command = if pinned {
            let mut command = Command::new("taskset");
            command.args(["-c", "0"]).arg(binary);
            command
        } else {
            Command::new(binary)
        };
        let mut child = command
            .args(args)
            .env("RUST_LOG", "warn")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        RUNNING
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(child.id());
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        Ok(Connection {
            server,
            child,
            stdin: Some(BufWriter::new(stdin)),
            // A 1,000-tool list is about a megabyte on one line: read it in few calls.
            stdout: BufReader::with_capacity(1 << 20, stdout),
            line: Vec::new(),
            next_id: 1,
            last_read: Instant::now(),
        })
    }

    /// The handshake: `initialize`, checked, then `notifications/initialized`.
    pub(crate) fn initialize(&mut self) -> io::Result<()> {
        self.initialize_timed().map(drop)
    }

    /// The handshake, and when the `initialize` answer was read.
    fn initialize_timed(&mut self) -> io::Result<(Instant, ())> {
        let params = format!(
            r#"{{"protocolVersion":"{PROTOCOL_VERSION}","capabilities":{{}},"clientInfo":{{"name":"toolwright-bench-harness","version":"0"}}}}"#
        );
        let (_, response) = self.round_trip("initialize", &params)?;
        let answered = self.last_read;
        let version = response.pointer("/result/protocolVersion");
        if version.and_then(Value::as_str) != Some(PROTOCOL_VERSION) {
            return Err(self.unexpected("initialize", &response));
        }
        self.write_line(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)?;
        self.flush()?;
        Ok((answered, ()))
    }

    /// Sends one request and waits for its response: the time from just before the request is
    /// written to just after the response's line is read, and the response.
    pub(crate) fn round_trip(
        &mut self,
        method: &str,
        params: &str,
    ) -> io::Result<(Duration, Value)> {
        let start = Instant::now();
        let id = self.send(method, params)?;
        self.flush()?;
        loop {
            self.read_line()?;
            let elapsed = start.elapsed();
            let message: Value = serde_json::from_slice(&self.line).map_err(io::Error::other)?;
            // Anything else (a notification) is skipped.
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                return Ok((elapsed, message));
            }
        }
    }

    /// The handshake, for a connection spawned at `start`: the time from `start` to the
    /// `initialize` answer's last byte read (before the harness parses it).
    pub(crate) fn first_answer(&mut self, start: Instant) -> io::Result<Duration> {
        let (answered, _) = self.initialize_timed()?;
        Ok(answered.duration_since(start))
    }

    /// A request whose response must be a result, not an error nor an `isError` tool result.
    pub(crate) fn call(&mut self, method: &str, params: &str) -> io::Result<(Duration, Value)> {
        let (elapsed, response) = self.round_trip(method, params)?;
        if !is_success(&response) {
            return Err(self.unexpected(method, &response));
        }
        Ok((elapsed, response))
    }

    /// Sends `calls` copies of one request, keeping up to `window` of them in flight, and reads
    /// every response: the time from the first request written to the last response read.
    ///
    /// The window keeps both pipes far from full (64 small messages each way), so the client
    /// never blocks writing while the server blocks writing too.
    pub(crate) fn pipelined(
        &mut self,
        method: &str,
        params: &str,
        calls: usize,
        window: usize,
    ) -> io::Result<Duration> {
        let first_id = self.next_id;
        let mut answered = vec![false; calls];
        let (mut sent, mut received) = (0, 0);
        let start = Instant::now();
        while received < calls {
            while sent < calls && sent - received < window {
                self.send(method, params)?;
                sent += 1;
            }
            self.flush()?;
            self.read_line()?;
            let message: Value = serde_json::from_slice(&self.line).map_err(io::Error::other)?;
            let Some(id) = message.get("id").and_then(Value::as_u64) else {
                continue;
            };
            let slot = id
                .checked_sub(first_id)
                .and_then(|i| answered.get_mut(i as usize))
                .filter(|done| !**done);
            match slot {
                Some(done) if is_success(&message) => *done = true,
                _ => return Err(self.unexpected(method, &message)),
            }
            received += 1;
        }
        Ok(start.elapsed())
    }

    /// The server's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's peak resident memory so far (`VmHWM`), in bytes.
    pub(crate) fn peak_memory(&self) -> io::Result<u64> {
        Ok(self.status_kib("VmHWM")? * 1024)
    }

    /// A figure in KiB from the server's `/proc/<pid>/status` (`VmHWM`, `RssAnon`, ...).
    pub(crate) fn status_kib(&self, field: &str) -> io::Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        status
            .lines()
            .find_map(|line| line.strip_prefix(field)?.strip_prefix(':'))
            .and_then(|rest| rest.trim().strip_suffix("kB"))
            .and_then(|kib| kib.trim().parse::<u64>().ok())
            .ok_or_else(|| io::Error::other(format!("no {field} in /proc/<pid>/status")))
    }

    /// The CPU time each of the server's threads has had so far, with its id and name (see
    /// [`thread_cpu_times`]).
    pub(crate) fn cpu_times(&self) -> io::Result<Vec<(String, String, Duration)>> {
        thread_cpu_times(self.child.id())
    }

    /// Closes the server's input, as a client that is done does, and waits up to five seconds
    /// for it to exit.
    pub(crate) fn close(mut self) -> io::Result<()> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait()? {
                return if status.success() {
                    Ok(())
                } else {
                    Err(io::Error::other(format!(
                        "{} exited with {status}",
                        self.server
                    )))
                };
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Err(io::Error::other(format!(
            "{} did not exit within 5 s of its input closing",
            self.server
        )))
    }

    fn send(&mut self, method: &str, params: &str) -> io::Result<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let message =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#);
        self.write_line(message.as_bytes())?;
        Ok(id)
    }

    fn write_line(&mut self, message: &[u8]) -> io::Result<()> {
        let stdin = self.stdin.as_mut().expect("the input is open");
        stdin.write_all(message)?;
        stdin.write_all(b"\n")
    }

    fn flush(&mut self) -> io::Result<()> {
        self.stdin.as_mut().expect("the input is open").flush()
    }

    fn read_line(&mut self) -> io::Result<()> {
        self.line.clear();
        if self.stdout.read_until(b'\n', &mut self.line)? == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                format!("{} closed its output", self.server),
            ));
        }
        self.last_read = Instant::now();
        Ok(())
    }

    fn unexpected(&self, method: &str, response: &Value) -> io::Error {
        let mut text = response.to_string();
        text.truncate(500);
        io::Error::other(format!(
            "{}: unexpected answer to `{method}`: {text}",
            self.server
        ))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
        let mut running = RUNNING.lock().unwrap_or_else(|e| e.into_inner());
        running.retain(|&pid| pid != self.child.id());
    }
}

/// A JSON-RPC result that is not a tool's `isError` result.
fn is_success(response: &Value) -> bool {
    response
        .get("result")
        .is_some_and(|result| result.get("isError") != Some(&Value::Bool(true)))
}

/// The CPU time each thread of the process `pid` has had so far, with its id and name: the
/// first figure of each `/proc/<pid>/task/<tid>/schedstat` (nanoseconds), and `comm`.
pub(crate) fn thread_cpu_times(pid: u32) -> io::Result<Vec<(String, String, Duration)>> {
    let mut threads = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let task = task?.path();
        let schedstat = std::fs::read_to_string(task.join("schedstat"))?;
        let nanos = schedstat
            .split_whitespace()
            .next()
            .and_then(|on_cpu| on_cpu.parse::<u64>().ok())
            .ok_or_else(|| io::Error::other("a schedstat not understood"))?;
        let name = std::fs::read_to_string(task.join("comm"))?;
        let id = task.file_name().map(|id| id.to_string_lossy().into_owned());
        threads.push((
            id.unwrap_or_default(),
            name.trim().to_owned(),
            Duration::from_nanos(nanos),
        ));
    }
    Ok(threads)
}

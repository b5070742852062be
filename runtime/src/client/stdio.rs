//! A server started as a child process, spoken to on its standard input and output, a message a
//! line; its standard error logged.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::process::ChildStdin;
use tokio::sync::{Mutex as AsyncMutex, oneshot, watch};

use super::endpoint::Command;
use super::link::{Inbound, Inbox, Link, Outgoing};
use futures_util::future::BoxFuture;

/// The longest line read from a server: 64 MiB. A longer one is dropped, and logged.
const MAX_LINE: usize = 64 << 20;

/// How long a process that closed its output has to be seen exiting, so that requests it
/// leaves unanswered can say how it ended.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A running server's pipes.
pub(crate) struct Pipe {
    stdin: AsyncMutex<Option<ChildStdin>>,
    /// How the process ended, once it has.
    exited: watch::Receiver<Option<String>>,
    /// Kills the process: sent, or dropped with the pipe.
    kill: std::sync::Mutex<Option<oneshot::Sender<()>>>,
}

impl Pipe {
    /// Starts `command` for the server `name`, whose messages go to `inbox`.
    pub(crate) fn start(name: &str, command: &Command, inbox: Inbox) -> std::io::Result<Pipe> {
        let mut spawn = tokio::process::Command::new(&command.program);
        spawn
            .args(&command.args)
            .envs(command.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &command.dir {
            spawn.current_dir(dir);
        }
        let mut child = spawn.spawn()?;
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let server = name.to_owned();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::info!(target: "toolwright::client", server = %server, "{line}");
            }
        });
        // The process is the watcher's: it says how it ended, and kills it when told to, or
        // when the pipe is dropped.
        let (kill, killed) = oneshot::channel::<()>();
        let (exit, exited) = watch::channel(None);
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                _ = killed => {
                    let _ = child.start_kill();
                    child.wait().await
                }
            };
            let _ = exit.send(Some(match status {
                Ok(status) => format!("the process exited ({status})"),
                Err(error) => format!("the process was lost: {error}"),
            }));
        });
        let server = name.to_owned();
        let mut exit_seen = exited.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(stdout);
            let mut line = Vec::new();
            let ended = loop {
                line.clear();
                match read_line(&mut reader, &mut line).await {
                    Ok(0) => break "its standard output closed".to_owned(),
                    Ok(_) if line.len() > MAX_LINE => {
                        tracing::warn!(
                            target: "toolwright::client",
                            server = %server,
                            "a line of {} bytes dropped: more than the {MAX_LINE} a message may be",
                            line.len()
                        );
                    }
                    Ok(_) => {
                        let message = std::mem::take(&mut line);
                        if !message.iter().all(u8::is_ascii_whitespace)
                            && inbox
                                .send(Inbound::Message {
                                    bytes: message,
                                    related: None,
                                })
                                .is_err()
                        {
                            return;
                        }
                    }
                    Err(error) => break format!("reading its standard output failed: {error}"),
                }
            };
            // Its output closes as it exits: how it exited says more.
            let status = tokio::time::timeout(EXIT_GRACE, exit_seen.wait_for(Option::is_some))
                .await
                .ok()
                .and_then(|status| status.ok().and_then(|status| status.clone()));
            let ended = status.unwrap_or(ended);
            let _ = inbox.send(Inbound::Ended(ended));
        });
        Ok(Pipe {
            stdin: AsyncMutex::new(Some(stdin)),
            exited,
            kill: std::sync::Mutex::new(Some(kill)),
        })
    }
}

/// Reads up to a newline into `line`, without it; reading on past `MAX_LINE` bytes only to find
/// the line's end, keeping none of them.
async fn read_line(
    reader: &mut BufReader<tokio::process::ChildStdout>,
    line: &mut Vec<u8>,
) -> std::io::Result<usize> {
    let mut total = 0;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(total);
        }
        let (taken, done) = match memchr::memchr(b'\n', buffer) {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        let keep = if done { taken - 1 } else { taken };
        if line.len() <= MAX_LINE {
            line.extend_from_slice(&buffer[..keep]);
        }
        total += taken;
        reader.consume(taken);
        if done {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(total);
        }
    }
}

impl Link for Pipe {
    fn send(&self, message: Outgoing) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move {
            let mut stdin = self.stdin.lock().await;
            let Some(pipe) = stdin.as_mut() else {
                return Err("the connection is closed".to_owned());
            };
            let mut bytes = message.bytes;
            bytes.push(b'\n');
            let written = async {
                pipe.write_all(&bytes).await?;
                pipe.flush().await
            };
            written
                .await
                .map_err(|error| format!("writing to its standard input failed: {error}"))
        })
    }

    fn abandon(&self, _id: i64) {}

    fn settled(&self, _version: &'static str, _stateless: bool) {}

    fn close(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Closing its input is how a stdio server is told to stop; one that does not, in
            // a second, is killed.
            self.stdin.lock().await.take();
            let mut exited = self.exited.clone();
            let exited_in_time =
                tokio::time::timeout(Duration::from_secs(1), exited.wait_for(Option::is_some))
                    .await
                    .is_ok();
            if !exited_in_time {
                let kill = self.kill.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(kill) = kill {
                    let _ = kill.send(());
                }
                let _ = exited.wait_for(Option::is_some).await.map(drop);
            }
        })
    }
}

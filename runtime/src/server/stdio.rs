//! The stdio transport: newline-delimited messages on any reader and writer.

use std::io;
use std::sync::Arc;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use super::Limits;
use super::dispatch::{Dispatcher, Session, Step};
use super::jsonrpc::{self, INVALID_REQUEST};

/// Serves one connection until the input ends, then gives the calls under way the grace period
/// to finish and send their answers, and stops those still running.
pub(crate) async fn serve<R, W>(
    dispatcher: Arc<Dispatcher>,
    input: R,
    output: W,
    limits: Limits,
) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outgoing, incoming) = mpsc::unbounded_channel::<Vec<u8>>();
    let writer = tokio::spawn(write_all(incoming, output));
    let session = Arc::new(Session::new());
    let mut reader = BufReader::new(input);
    let mut line = Vec::new();
    let mut calls = JoinSet::new();
    loop {
        // Reap finished calls as we go, so a long session does not keep them all.
        while calls.try_join_next().is_some() {}
        let frame = match next_frame(&mut reader, limits.max_message_size, &mut line).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break,
            Err(err) => {
                tracing::error!(error = %err, "reading the input failed");
                break;
            }
        };
        let step = match frame {
            Frame::Line if line.iter().all(u8::is_ascii_whitespace) => continue,
            Frame::Line => dispatcher.handle(&session, &line, &outgoing),
            Frame::TooLong(size) => {
                let limit = limits.max_message_size;
                tracing::warn!(size, limit, "message refused: too large");
                Step::Reply(jsonrpc::error(
                    &serde_json::Value::Null,
                    INVALID_REQUEST,
                    &format!("message of {size} bytes refused: the limit is {limit} bytes"),
                ))
            }
        };
        match step {
            Step::Reply(bytes) => {
                let _ = outgoing.send(bytes);
            }
            Step::Nothing => {}
            Step::Call(call) => {
                let outgoing = outgoing.clone();
                let slots = Arc::clone(&limits.calls);
                calls.spawn(async move {
                    // The semaphore is never closed, so the permit always comes.
                    let _permit = slots.acquire_owned().await;
                    if let Some(bytes) = call.await {
                        let _ = outgoing.send(bytes);
                    }
                });
            }
        }
    }
    // Nobody is left to answer the requests calls sent to the client: they stop waiting.
    session.close();
    let drained = tokio::time::timeout(limits.shutdown_grace, async {
        while calls.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::warn!(
            calls = calls.len(),
            grace = ?limits.shutdown_grace,
            "the input closed; calls still running after the grace period are stopped"
        );
        calls.shutdown().await;
    }
    drop(session);
    drop(outgoing);
    writer.await.map_err(io::Error::other)?
}

async fn write_all<W: AsyncWrite + Unpin>(
    mut incoming: mpsc::UnboundedReceiver<Vec<u8>>,
    mut output: W,
) -> io::Result<()> {
    while let Some(mut message) = incoming.recv().await {
        // A tool's request to end its event stream (`Context::close_sse_stream`): stdio has none.
        if message.is_empty() {
            continue;
        }
        message.push(b'\n');
        let written = match output.write_all(&message).await {
            Ok(()) => output.flush().await,
            Err(err) => Err(err),
        };
        if let Err(err) = written {
            // The client went away: nobody is left to answer, which is no failure of ours.
            if err.kind() == io::ErrorKind::BrokenPipe {
                tracing::info!("the client closed the connection");
                return Ok(());
            }
            return Err(err);
        }
    }
    match output.shutdown().await {
        Err(err) if err.kind() != io::ErrorKind::BrokenPipe => Err(err),
        _ => Ok(()),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Frame {
    /// A whole line is in the buffer, without its line ending.
    Line,
    /// A line longer than the limit, of this many bytes, was skipped.
    TooLong(usize),
}

/// Reads up to the next newline without ever holding more than `max` bytes of it.
async fn next_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max: usize,
    line: &mut Vec<u8>,
) -> io::Result<Option<Frame>> {
    line.clear();
    let mut size = 0usize;
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(match (size, too_long) {
                (0, _) => None,
                (_, true) => Some(Frame::TooLong(size)),
                (_, false) => Some(Frame::Line),
            });
        }
        let (chunk, used, ends) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        size += chunk.len();
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        reader.consume(used);
        if ends {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(if too_long {
                Frame::TooLong(size)
            } else {
                Frame::Line
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn frames_are_split_on_newlines_and_bounded() {
        let input = b"{\"a\":1}\r\n0123456789abcdef\nshort\nlast".to_vec();
        let mut reader = BufReader::with_capacity(4, &input[..]);
        let mut line = Vec::new();
        assert_eq!(
            next_frame(&mut reader, 10, &mut line).await.unwrap(),
            Some(Frame::Line)
        );
        assert_eq!(line, b"{\"a\":1}");
        assert_eq!(
            next_frame(&mut reader, 10, &mut line).await.unwrap(),
            Some(Frame::TooLong(16))
        );
        assert_eq!(
            next_frame(&mut reader, 10, &mut line).await.unwrap(),
            Some(Frame::Line)
        );
        assert_eq!(line, b"short");
        assert_eq!(
            next_frame(&mut reader, 10, &mut line).await.unwrap(),
            Some(Frame::Line)
        );
        assert_eq!(line, b"last");
        assert_eq!(next_frame(&mut reader, 10, &mut line).await.unwrap(), None);
    }
}

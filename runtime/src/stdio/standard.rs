//! Standard input and output as non-blocking pipes or sockets.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::pin::Pin;
use std::task::{Context, Poll};

use rustix::fs::{FileType, OFlags};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// The pipe capacity asked for standard output: room for a large `tools/list` answer in one
/// write, so the client reads it without waiting for the server to be scheduled again. The
/// kernel's default ceiling for unprivileged processes is this size; when it refuses, the
/// pipe keeps its capacity.
#[cfg(any(target_os = "linux", target_os = "android"))]
const PIPE_CAPACITY: usize = 1024 * 1024;

/// Standard input and output ready for the reactor.
pub(super) struct Pipes {
    pub(super) input: Box<dyn AsyncRead + Unpin + Send>,
    pub(super) output: Box<dyn AsyncWrite + Unpin + Send>,
    /// Puts the descriptors back in blocking mode when dropped.
    pub(super) restore: Restore,
}

/// Descriptors this process made non-blocking; dropping it makes them blocking again, as the
/// process found them, for whoever shares them.
pub(super) struct Restore(Vec<OwnedFd>);

impl Drop for Restore {
    fn drop(&mut self) {
        for fd in &self.0 {
            let _ = rustix::io::ioctl_fionbio(fd, false);
        }
    }
}

impl Pipes {
    /// Standard input and output when both are pipes or sockets that nothing else of this
    /// process writes to; `None` (use tokio's `stdin()` and `stdout()`) otherwise.
    ///
    /// Non-blocking mode belongs to the open file, which standard error may share (`2>&1`):
    /// a log line written to a non-blocking pipe could be lost, so such a setup is left alone.
    pub(super) fn open() -> Option<Pipes> {
        let stdin = io::stdin().as_fd().try_clone_to_owned().ok()?;
        let stdout = io::stdout().as_fd().try_clone_to_owned().ok()?;
        let stderr = identity(io::stderr().as_fd());
        let (input_kind, input_id) = describe(stdin.as_fd())?;
        let (output_kind, output_id) = describe(stdout.as_fd())?;
        if stderr.is_some_and(|(_, err)| err == input_id || err == output_id) {
            return None;
        }
        let mut restore = Vec::new();
        for fd in [&stdin, &stdout] {
            let flags = rustix::fs::fcntl_getfl(fd).ok()?;
            if !flags.contains(OFlags::NONBLOCK) {
                restore.push(fd.try_clone().ok()?);
            }
        }
        let restore = Restore(restore);
        let input: Box<dyn AsyncRead + Unpin + Send> = match input_kind {
            FileKind::Pipe => Box::new(Eager::new(pipe::Receiver::from_owned_fd(stdin).ok()?)),
            FileKind::Socket => Box::new(Eager::new(socket(stdin)?)),
        };
        let output: Box<dyn AsyncWrite + Unpin + Send> = match output_kind {
            FileKind::Pipe => {
                #[cfg(any(target_os = "linux", target_os = "android"))]
                let _ = rustix::pipe::fcntl_setpipe_size(&stdout, PIPE_CAPACITY);
                Box::new(pipe::Sender::from_owned_fd(stdout).ok()?)
            }
            FileKind::Socket => Box::new(socket(stdout)?),
        };
        Some(Pipes {
            input,
            output,
            restore,
        })
    }
}

#[derive(Clone, Copy)]
enum FileKind {
    Pipe,
    Socket,
}

/// What a descriptor is, and which file: `None` for anything but a pipe or a socket.
fn describe(fd: BorrowedFd<'_>) -> Option<(FileKind, (u64, u64))> {
    match identity(fd)? {
        (FileType::Fifo, id) => Some((FileKind::Pipe, id)),
        (FileType::Socket, id) => Some((FileKind::Socket, id)),
        _ => None,
    }
}

/// The file type, device and inode of an open descriptor.
fn identity(fd: BorrowedFd<'_>) -> Option<(FileType, (u64, u64))> {
    let stat = rustix::fs::fstat(fd).ok()?;
    #[allow(clippy::useless_conversion, clippy::unnecessary_cast)]
    let id = (stat.st_dev as u64, stat.st_ino as u64);
    Some((FileType::from_raw_mode(stat.st_mode), id))
}

/// The most one eager read takes.
const EAGER_READ: usize = 16 * 1024;

/// A non-blocking pipe or socket on the reactor, read at once whatever the reactor last
/// said of it: a connection that polls for its client's next message, keeping its thread,
/// sees it come without the reactor being polled in between (which only happens when the
/// thread goes back to the runtime).
///
/// When the reactor says the input is readable, it is read as the reactor's readiness is read
/// (a read that finds nothing clears it); else the task is registered to be woken first, and
/// the input read anyway. A message read eagerly leaves behind the readiness its arrival set,
/// once the reactor has seen it: the next wait's read clears it, and is the only read that
/// wait makes, where the eager read and then tokio's made two that found nothing. (A wait that
/// begins before the reactor has seen the message reads eagerly, is woken by the late event
/// and reads again: two reads, where there were three.) A read is never skipped for readiness
/// cleared by a read that came before it: tokio clears only the readiness a read saw, not one
/// the reactor set since.
///
/// An eager read goes into a buffer of its own, zeroed once, and what it read is copied on:
/// the caller's buffer is uninitialised at every read (`poll_read_buf` makes it so), and
/// zeroing it before each attempt, most of which find nothing while the connection polls,
/// would cost more than copying the few hundred bytes of a message.
struct Eager<T> {
    io: T,
    scratch: Box<[u8]>,
}

impl<T> Eager<T> {
    fn new(io: T) -> Eager<T> {
        Eager {
            io,
            scratch: vec![0; EAGER_READ].into_boxed_slice(),
        }
    }
}

/// A descriptor on the reactor, read as the reactor's readiness is: what a pipe and a socket
/// share.
trait OnReactor: AsFd {
    /// Ready when the reactor says it is readable; else the task is registered to be woken.
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>>;

    /// Reads when the reactor says it is readable, clearing the readiness it saw when nothing
    /// is there; `WouldBlock` without reading, else.
    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize>;
}

impl OnReactor for pipe::Receiver {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        pipe::Receiver::poll_read_ready(self, cx)
    }

    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        pipe::Receiver::try_read(self, buf)
    }
}

impl OnReactor for tokio::net::UnixStream {
    fn poll_read_ready(&self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        tokio::net::UnixStream::poll_read_ready(self, cx)
    }

    fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        tokio::net::UnixStream::try_read(self, buf)
    }
}

impl<T: OnReactor + Unpin> AsyncRead for Eager<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let room = buf.remaining().min(EAGER_READ);
        if room == 0 {
            return Poll::Ready(Ok(()));
        }
        let Eager { io, scratch } = &mut *self;
        let scratch = &mut scratch[..room];
        // Whether a read since this poll began found nothing, the readiness it saw cleared.
        let mut found_nothing = false;
        loop {
            let read = match io.poll_read_ready(cx) {
                Poll::Ready(Ok(())) => io.try_read(scratch),
                Poll::Ready(Err(err)) => return Poll::Ready(Err(err)),
                // Registered to be woken: a message that comes from now on wakes the task.
                Poll::Pending if found_nothing => return Poll::Pending,
                Poll::Pending => match rustix::io::read(io.as_fd(), &mut *scratch) {
                    Err(rustix::io::Errno::AGAIN) => return Poll::Pending,
                    read => read.map_err(io::Error::from),
                },
            };
            match read {
                Ok(n) => {
                    buf.put_slice(&scratch[..n]);
                    return Poll::Ready(Ok(()));
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => found_nothing = true,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }
}

/// A stream socket on the reactor; reading and writing it is the same as a pipe's.
fn socket(fd: OwnedFd) -> Option<tokio::net::UnixStream> {
    let stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(stream).ok()
}

//! The connection's input: lines of at most a limit, polled for between a quick client's
//! messages.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::{Buf, Bytes, BytesMut};
use tokio::io::AsyncRead;

/// How much of the input is read at a time, at least.
const READ_BUFFER: usize = 64 * 1024;

/// One message of the input.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Frame {
    /// A line, without its line ending (`\n` or `\r\n`).
    Line(Bytes),
    /// A line longer than the limit: refused as soon as the limit is passed, and the rest of it
    /// skipped without being kept.
    TooLong,
}

impl Frame {
    /// A line taken without its newline: without its `\r` too, if it ended in `\r\n`.
    fn line(mut line: BytesMut) -> Frame {
        if line.last() == Some(&b'\r') {
            line.truncate(line.len() - 1);
        }
        Frame::Line(line.freeze())
    }
}

/// A client whose last message came within this many busy-poll times of the one before is
/// polled for: with the default 50 µs, within 1 ms. Polling then costs at most a twentieth of
/// the time between messages; a client slower than that is never polled for.
const QUICK_CLIENT: u32 = 20;

/// A yield of the CPU that takes this long let another thread run: the CPU the server polls on
/// is shared, with the client or with other work.
const SHARED_CPU: Duration = Duration::from_micros(5);

/// How many waits go without polling once polling found its CPU shared: then polling is tried
/// again, in case the scheduler has moved things since.
const UNPOLLED_WHEN_SHARED: u32 = 64;

/// Splits the input into lines of at most a limit: each line is a slice of the buffer it was
/// read into, not a copy, found with `memchr` (a request in 2026-07-28 is some 400 bytes, and a
/// byte-at-a-time search for its newline was a tenth of a stdio server's work). What was searched
/// is not searched again when more comes.
///
/// When the client's last message came quickly, it polls for the next during the busy-poll time
/// (see `Stdio::busy_poll`) before the thread sleeps: the connection's task keeps its thread,
/// retrying the read between yields of the CPU to other threads. Only an input read without the
/// reactor (standard input's pipes and sockets, see `Eager`) sees anything come meanwhile;
/// other inputs are served with no busy-poll time.
pub(super) struct Reader {
    buffer: BytesMut,
    /// The longest line taken, without its line ending.
    max_length: usize,
    /// How much of the buffer holds no newline, searched before the last read.
    searched: usize,
    /// Whether the line under way is too long: the rest of it is skipped, up to its newline.
    skipping: bool,
    busy_poll: Duration,
    /// Whether the last wait for input was shorter than [`QUICK_CLIENT`] busy-poll times.
    quick_client: bool,
    /// How many more waits go without polling, since polling found the CPU shared.
    unpolled: u32,
    /// When the wait for input under way began.
    waiting: Option<Instant>,
    /// Whether this wait polls.
    polling: bool,
}

impl Reader {
    pub(super) fn new(max_message_size: usize, busy_poll: Duration) -> Reader {
        Reader {
            buffer: BytesMut::with_capacity(READ_BUFFER),
            max_length: max_message_size,
            searched: 0,
            skipping: false,
            busy_poll,
            quick_client: true,
            unpolled: 0,
            waiting: None,
            polling: false,
        }
    }

    /// The next message in what was read, if it is all there. A line longer than the limit is
    /// [`Frame::TooLong`] as soon as more than the limit has come without a newline.
    pub(super) fn decode(&mut self) -> Option<Frame> {
        if self.skipping {
            match memchr::memchr(b'\n', &self.buffer) {
                Some(end) => {
                    self.buffer.advance(end + 1);
                    self.skipping = false;
                }
                None => {
                    self.buffer.clear();
                    return None;
                }
            }
        }
        // Only as far as a line of the limit's length and its newline can reach.
        let within = self.buffer.len().min(self.max_length.saturating_add(1));
        let searched = self.searched.min(within);
        match memchr::memchr(b'\n', &self.buffer[searched..within]) {
            Some(at) => {
                self.searched = 0;
                let mut line = self.buffer.split_to(searched + at + 1);
                line.truncate(searched + at);
                Some(Frame::line(line))
            }
            None if self.buffer.len() > self.max_length => {
                // The rest of the line, to its newline, goes at the next decode: what follows
                // it may be in the buffer already.
                self.searched = 0;
                self.skipping = true;
                Some(Frame::TooLong)
            }
            None => {
                self.searched = within;
                None
            }
        }
    }

    /// The last message, which may lack its newline, once the input has ended.
    pub(super) fn decode_eof(&mut self) -> Option<Frame> {
        if let Some(frame) = self.decode() {
            return Some(frame);
        }
        // A line being skipped has left nothing in the buffer once `decode` finds no frame.
        if self.buffer.is_empty() {
            return None;
        }
        self.searched = 0;
        Some(Frame::line(self.buffer.split()))
    }

    /// Reads more of the input: how much, 0 once it has ended.
    pub(super) fn poll_fill<R: AsyncRead + Unpin>(
        &mut self,
        cx: &mut Context<'_>,
        input: &mut R,
    ) -> Poll<io::Result<usize>> {
        let since = *self.waiting.get_or_insert_with(|| {
            self.polling = if !self.quick_client || self.busy_poll.is_zero() {
                false
            } else if self.unpolled > 0 {
                self.unpolled -= 1;
                false
            } else {
                true
            };
            Instant::now()
        });
        self.buffer.reserve(READ_BUFFER);
        let read = ready!(tokio_util::io::poll_read_buf(
            Pin::new(input),
            cx,
            &mut self.buffer
        ));
        self.waiting = None;
        if !self.busy_poll.is_zero() {
            self.quick_client = since.elapsed() <= self.busy_poll * QUICK_CLIENT;
        }
        Poll::Ready(read)
    }

    /// Whether to read again at once rather than sleep: while the busy-poll time of this wait
    /// lasts, after a yield of the CPU, as long as that yield let no other thread run. When one
    /// ran, the CPU is shared and polling takes its time: sleeping serves such a client best.
    pub(super) fn poll_again(&mut self) -> bool {
        let Some(since) = self.waiting else {
            return false;
        };
        if !self.polling || since.elapsed() >= self.busy_poll {
            return false;
        }
        let yielding = Instant::now();
        std::thread::yield_now();
        if yielding.elapsed() >= SHARED_CPU {
            self.unpolled = UNPOLLED_WHEN_SHARED;
            self.polling = false;
            return false;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;

    use tokio::io::AsyncWriteExt;

    use super::*;

    #[tokio::test]
    async fn frames_are_split_on_newlines_and_bounded() {
        let input = b"{\"a\":1}\r\n0123456789abcdef\nshort\n0123456789\nlast".to_vec();
        // Read a few bytes at a time, as a slow client's messages arrive.
        let frames = frames(&input, 4, 10, Duration::from_micros(50)).await;
        assert_eq!(
            frames,
            [
                line(b"{\"a\":1}"),
                Frame::TooLong,
                line(b"short"),
                line(b"0123456789"),
                line(b"last"),
            ]
        );
    }

    #[tokio::test]
    async fn a_long_line_is_skipped_to_its_newline_across_reads() {
        let mut input = b"x".repeat(100);
        input.extend_from_slice(b"\n{\"b\":2}\r\n");
        input.extend_from_slice(&b"y".repeat(30));
        input.extend_from_slice(b"\nend\r");
        let frames = frames(&input, 7, 16, Duration::ZERO).await;
        assert_eq!(
            frames,
            [
                Frame::TooLong,
                line(b"{\"b\":2}"),
                Frame::TooLong,
                line(b"end")
            ]
        );
    }

    #[tokio::test]
    async fn lines_read_whole_at_once_come_out_one_by_one() {
        let mut input = b"a\n\n".to_vec();
        input.extend_from_slice(&b"z".repeat(40));
        input.extend_from_slice(b"\nbb\n");
        let frames = frames(&input, 256, 16, Duration::ZERO).await;
        assert_eq!(frames, [line(b"a"), line(b""), Frame::TooLong, line(b"bb")]);
    }

    fn line(text: &'static [u8]) -> Frame {
        Frame::Line(Bytes::from_static(text))
    }

    /// Every frame of `input`, given at most `chunk` bytes per read, with lines of at most `limit`
    /// bytes, by a reader polling for `busy_poll` (zero: it never polls) before it sleeps.
    async fn frames(input: &[u8], chunk: usize, limit: usize, busy_poll: Duration) -> Vec<Frame> {
        let mut input = tokio_test_input(input, chunk);
        let mut reader = Reader::new(limit, busy_poll);
        let mut frames = Vec::new();
        while let Some(frame) = next(&mut reader, &mut input).await.unwrap() {
            frames.push(frame);
        }
        frames
    }

    /// The reader's next frame, as the connection reads it.
    async fn next(
        reader: &mut Reader,
        input: &mut (impl AsyncRead + Unpin),
    ) -> io::Result<Option<Frame>> {
        poll_fn(|cx| {
            loop {
                if let Some(frame) = reader.decode() {
                    return Poll::Ready(Ok(Some(frame)));
                }
                if ready!(reader.poll_fill(cx, input))? == 0 {
                    return Poll::Ready(Ok(reader.decode_eof()));
                }
            }
        })
        .await
    }

    /// `bytes` as an input that gives at most `chunk` bytes per read.
    fn tokio_test_input(bytes: &[u8], chunk: usize) -> impl AsyncRead + Unpin {
        let (mut writer, reader) = tokio::io::duplex(chunk);
        let bytes = bytes.to_vec();
        tokio::spawn(async move {
            for piece in bytes.chunks(chunk) {
                writer.write_all(piece).await.unwrap();
            }
        });
        reader
    }
}

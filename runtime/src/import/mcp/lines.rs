//! A stdio server's output, one message per line, each line at most a
//! bound: a longer one is dropped as it is read, and in its place comes a
//! JSON-RPC error for its id, so that the call it answered fails at once
//! instead of waiting for its timeout.
//!
//! rmcp's line transport drops a line over its own cap (16 MiB) too, but
//! without a word: the call waits until it times out. This sits between
//! the child's stdout and that transport, with a bound below rmcp's cap.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use serde_json::json;
use tokio::io::{AsyncRead, ReadBuf};

use crate::util::json_id::IdScanner;

/// How much of the child's output is read at a time: a pipe's buffer.
const READ_BYTES: usize = 64 * 1024;

/// The child's output with every line over `limit` bytes replaced.
pub(super) struct BoundedLines<R> {
    inner: R,
    limit: usize,
    /// The start of the line being read, until its end shows it fits.
    line: Vec<u8>,
    /// A line over the limit being dropped, its id looked for.
    skipping: Option<IdScanner>,
    /// Whole lines (or their replacements) ready to hand on, and how much
    /// of them was handed on.
    ready: Vec<u8>,
    handed: usize,
    /// What was read from `inner` and not looked at yet.
    chunk: Box<[u8]>,
    eof: bool,
}

impl<R> BoundedLines<R> {
    pub(super) fn new(inner: R, limit: usize) -> Self {
        BoundedLines {
            inner,
            limit,
            line: Vec::new(),
            skipping: None,
            ready: Vec::new(),
            handed: 0,
            chunk: vec![0; READ_BYTES].into_boxed_slice(),
            eof: false,
        }
    }

    /// Takes in `bytes`, read from the child: whole lines that fit go to
    /// `ready`, each line over the limit goes as its replacement.
    fn take_in(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let newline = bytes.iter().position(|&b| b == b'\n');
            let taken = newline.map_or(bytes.len(), |at| at + 1);
            let (piece, rest) = bytes.split_at(taken);
            bytes = rest;
            if let Some(scanner) = &mut self.skipping {
                scanner.feed(piece);
            } else if self.line.len() + newline.unwrap_or(taken) > self.limit {
                let mut scanner = IdScanner::default();
                scanner.feed(&self.line);
                scanner.feed(piece);
                self.line = Vec::new();
                self.skipping = Some(scanner);
            } else {
                self.line.extend_from_slice(piece);
            }
            if newline.is_none() {
                continue;
            }
            match self.skipping.take() {
                Some(scanner) => self.replace(scanner),
                None if self.ready.is_empty() => std::mem::swap(&mut self.ready, &mut self.line),
                None => {
                    self.ready.extend_from_slice(&self.line);
                    self.line.clear();
                }
            }
        }
    }

    /// Puts the error that stands for a dropped line in `ready`: for its
    /// id, or nothing when it has none (a notification, or an id past
    /// reading), which is only logged.
    fn replace(&mut self, scanner: IdScanner) {
        let limit = self.limit;
        let Some(id) = scanner.id() else {
            tracing::warn!(
                limit,
                "a message from an upstream over the limit was dropped"
            );
            return;
        };
        let message = format!(
            "the upstream's answer is over the limit of {limit} bytes (`max_response`); \
             it was dropped unread"
        );
        let error = json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": -32603, "message": message},
        });
        tracing::warn!(
            limit,
            "an answer from an upstream over the limit was dropped"
        );
        if let Ok(text) = serde_json::to_vec(&error) {
            self.ready.extend_from_slice(&text);
            self.ready.push(b'\n');
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for BoundedLines<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        loop {
            if this.handed < this.ready.len() {
                let left = &this.ready[this.handed..];
                let n = left.len().min(buf.remaining());
                buf.put_slice(&left[..n]);
                this.handed += n;
                if this.handed == this.ready.len() {
                    this.ready.clear();
                    this.handed = 0;
                }
                return Poll::Ready(Ok(()));
            }
            if this.eof {
                // A last line without its newline is no message: handed
                // on as it is (the transport drops it), if it fits.
                if this.skipping.take().is_none() && !this.line.is_empty() {
                    std::mem::swap(&mut this.ready, &mut this.line);
                    continue;
                }
                return Poll::Ready(Ok(()));
            }
            let mut read = ReadBuf::new(&mut this.chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let n = read.filled().len();
            if n == 0 {
                this.eof = true;
                continue;
            }
            let chunk = std::mem::take(&mut this.chunk);
            this.take_in(&chunk[..n]);
            this.chunk = chunk;
        }
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::BoundedLines;

    async fn through(input: &[u8], limit: usize) -> String {
        let mut lines = BoundedLines::new(input, limit);
        let mut out = String::new();
        lines.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn lines_that_fit_pass_as_they_are_and_a_longer_one_becomes_an_error_for_its_id() {
        let fits = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n";
        assert_eq!(through(fits.as_bytes(), 64).await, fits);
        let big = format!(
            "{{\"result\":{{\"text\":\"{}\"}},\"jsonrpc\":\"2.0\",\"id\":7}}\n",
            "x".repeat(300_000)
        );
        let input = format!("{fits}{big}{fits}");
        let out = through(input.as_bytes(), 1024).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{out:.300}");
        assert_eq!((lines[0], lines[2]), (fits.trim_end(), fits.trim_end()));
        let error: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(error["id"], 7);
        assert_eq!(error["error"]["code"], -32603);
        let message = error["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("over the limit of 1024 bytes"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn a_long_notification_is_dropped_and_a_last_line_without_newline_kept() {
        let note = format!(
            "{{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":\"{}\"}}\n",
            "y".repeat(5_000)
        );
        let input = format!("{note}{{\"partial\":");
        assert_eq!(through(input.as_bytes(), 1024).await, "{\"partial\":");
    }
}

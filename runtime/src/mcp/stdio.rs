//! The stdio transport: one JSON-RPC message per line, each at most
//! [`StdioOptions::max_message_bytes`], and an answer to every request the
//! server cannot read.
//!
//! rmcp's own line transport drops a line that is not JSON, and one over its
//! 16 MiB cap, without a word, so the client waits for an answer that never
//! comes; JSON that is not a message it answers without the request's id.
//! This one answers as JSON-RPC says: -32700 for a line that is not JSON,
//! -32600 for JSON that is not a message and for a line over the limit,
//! with the request's id when it can be read. It never answers a
//! notification or a response, so two peers that answer each other's
//! garbage cannot start a storm. The rest is rmcp's behaviour: a leading
//! byte order mark, a trailing `\r` and blank lines are skipped, and a last
//! line without its newline is not a message.

use std::any::Any;
use std::io;
use std::sync::Arc;

use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use serde::Serialize;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::jsonrpc::{self, Reply, Unreadable};
use super::{McpServer, ServeError};
use crate::util::json_id::{BYTE_ORDER_MARK, IdScanner};

/// The default [`StdioOptions::max_message_bytes`]: 1 MiB, as
/// [`HttpOptions::max_body_bytes`](super::HttpOptions::max_body_bytes).
const DEFAULT_MAX_MESSAGE_BYTES: usize = 1024 * 1024;

/// How much of stdin is read at a time: a pipe's buffer on Linux.
const READ_BUFFER_BYTES: usize = 64 * 1024;

/// What the output buffer keeps of its capacity after a large message.
const KEPT_OUTPUT_BYTES: usize = 64 * 1024;

/// Options of the stdio transport ([`McpServer::serve_stdio_with`],
/// [`McpServer::serve_stream`]): start from `default()` and change what
/// differs.
///
/// ```
/// use toolwright::mcp::{HttpOptions, StdioOptions};
///
/// let options = StdioOptions::default().max_message_bytes(256 * 1024);
/// assert_eq!(options.max_message_bytes, 256 * 1024);
/// // By default a message may be as large over stdio as over HTTP.
/// assert_eq!(
///     StdioOptions::default().max_message_bytes,
///     HttpOptions::default().max_body_bytes,
/// );
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct StdioOptions {
    /// A longer message (a line, without its newline) is skipped without
    /// being kept in memory and answered -32600, with its id when it is
    /// found (default 1 MiB).
    pub max_message_bytes: usize,
}

impl Default for StdioOptions {
    fn default() -> Self {
        StdioOptions {
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl StdioOptions {
    /// The largest message accepted, in bytes.
    pub fn max_message_bytes(mut self, bytes: usize) -> Self {
        self.max_message_bytes = bytes;
        self
    }
}

impl<C: Any + Send + Sync> McpServer<C> {
    /// Serves one client on stdin/stdout with a fixed context, until the
    /// client closes the stream, with the default [`StdioOptions`].
    ///
    /// ```no_run
    /// use toolwright::mcp::McpServer;
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let executor = Executor::new(Catalog::discover()?, Container::default())?;
    /// // stdio: one process, one user, so one fixed context.
    /// McpServer::<()>::new(executor, "notes", "1.0.0").serve_stdio(()).await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_stdio(self, ctx: C) -> Result<(), ServeError> {
        self.serve_stdio_with(ctx, StdioOptions::default()).await
    }

    /// Serves one client on stdin/stdout with a fixed context and `options`,
    /// until the client closes the stream.
    ///
    /// ```no_run
    /// use toolwright::mcp::{McpServer, StdioOptions};
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let executor = Executor::new(Catalog::discover()?, Container::default())?;
    /// let options = StdioOptions::default().max_message_bytes(64 * 1024);
    /// McpServer::<()>::new(executor, "notes", "1.0.0")
    ///     .serve_stdio_with((), options)
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_stdio_with(self, ctx: C, options: StdioOptions) -> Result<(), ServeError> {
        let (stdin, stdout) = rmcp::transport::stdio();
        self.serve_stream(ctx, stdin, stdout, options).await
    }

    /// Serves one client with a fixed context as stdio does, on any byte
    /// streams: messages are read from `read` and written to `write`, one
    /// per line. Ends when `read` does.
    ///
    /// A line that is not JSON is answered -32700, and the session goes on:
    ///
    /// ```
    /// use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    /// use toolwright::mcp::{McpServer, StdioOptions};
    /// use toolwright::{Catalog, Container, Executor};
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let executor = Executor::new(Catalog::builder().build()?, Container::default())?;
    /// let server = McpServer::<()>::new(executor, "demo", "0.1.0");
    /// let (server_side, client_side) = tokio::io::duplex(64 * 1024);
    /// let (read, write) = tokio::io::split(server_side);
    /// tokio::spawn(server.serve_stream((), read, write, StdioOptions::default()));
    ///
    /// let (replies, mut requests) = tokio::io::split(client_side);
    /// requests.write_all(b"{\"jsonrpc\": \"2.0\", \"id\": 1, oops\n").await?;
    /// let reply = BufReader::new(replies).lines().next_line().await?.unwrap();
    /// let reply: serde_json::Value = serde_json::from_str(&reply)?;
    /// assert_eq!(reply["id"], serde_json::Value::Null);
    /// assert_eq!(reply["error"]["code"], -32700);
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_stream<R, W>(
        self,
        ctx: C,
        read: R,
        write: W,
        options: StdioOptions,
    ) -> Result<(), ServeError>
    where
        R: AsyncRead + Send + Unpin + 'static,
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let transport = LineTransport::new(read, write, options.max_message_bytes);
        let running = self
            .handler(ctx)
            .serve(transport)
            .await
            .map_err(|e| ServeError::new("starting the stdio session failed", e))?;
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| ServeError::new("the stdio session failed", e))
    }
}

/// JSON-RPC messages as lines of a byte stream, for the server side.
struct LineTransport<R, W> {
    read: BufReader<R>,
    /// The line read so far. It outlives a `receive` that is cancelled (the
    /// service polls it in a `select!`), so the next one goes on with it.
    line: Vec<u8>,
    max_message_bytes: usize,
    /// Looks for the id while the rest of a line over the limit is skipped.
    skipping: Option<IdScanner>,
    /// An answer `receive` owes the client for a line it could not read.
    owed: Owed,
    /// Shared with the sends in flight, so that lines never interleave.
    output: Arc<Mutex<Option<Output<W>>>>,
}

/// An answer that `receive` has yet to write, kept across cancellations.
enum Owed {
    Nothing,
    /// Not yet in the output buffer.
    Reply(Reply),
    /// In the output buffer, perhaps not yet written out.
    Flush,
}

/// What one bounded read of a line found.
enum LineRead {
    /// A whole line is in `line`.
    Line,
    /// A line over the limit was skipped; its id, if found.
    Oversized(Option<RequestId>),
    /// The peer closed the stream.
    Eof,
    Io(io::Error),
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> LineTransport<R, W> {
    fn new(read: R, write: W, max_message_bytes: usize) -> Self {
        LineTransport {
            read: BufReader::with_capacity(READ_BUFFER_BYTES, read),
            line: Vec::new(),
            max_message_bytes,
            skipping: None,
            owed: Owed::Nothing,
            output: Arc::new(Mutex::new(Some(Output {
                write,
                buffer: Vec::new(),
                written: 0,
            }))),
        }
    }

    /// Reads one line into `line`, never letting it grow past the limit:
    /// the rest of a longer line is read and dropped, looking for its id.
    ///
    /// Cancellation loses nothing: `fill_buf` consumes nothing, and what is
    /// taken from the buffer is consumed in the same synchronous step.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let available = match self.read.fill_buf().await {
                Ok(available) => available,
                Err(e) => return LineRead::Io(e),
            };
            if available.is_empty() {
                return LineRead::Eof;
            }
            let newline = available.iter().position(|&b| b == b'\n');
            let taken = newline.map_or(available.len(), |at| at + 1);
            let chunk = &available[..taken];
            if let Some(scanner) = &mut self.skipping {
                scanner.feed(chunk);
            } else if self.line.len() + newline.unwrap_or(taken) > self.max_message_bytes {
                let mut scanner = IdScanner::default();
                scanner.feed(&self.line);
                scanner.feed(chunk);
                self.line.clear();
                self.skipping = Some(scanner);
            } else {
                self.line.extend_from_slice(chunk);
            }
            self.read.consume(taken);
            if newline.is_some() {
                return match self.skipping.take() {
                    Some(scanner) => LineRead::Oversized(scanner.id()),
                    None => LineRead::Line,
                };
            }
        }
    }

    /// Writes the answer owed, if any. Cancelled, it goes on next time
    /// from where it was: a reply put in the output buffer stays there.
    async fn write_owed(&mut self) -> io::Result<()> {
        if matches!(self.owed, Owed::Nothing) {
            return Ok(());
        }
        let mut output = self.output.lock().await;
        let output = output.as_mut().ok_or_else(closed)?;
        if let Owed::Reply(reply) = &self.owed {
            output.push(reply)?;
            self.owed = Owed::Flush;
        }
        output.flush().await?;
        self.owed = Owed::Nothing;
        Ok(())
    }
}

impl<R, W> Transport<RoleServer> for LineTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        message: ServerJsonRpcMessage,
    ) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let output = self.output.clone();
        async move {
            let mut output = output.lock().await;
            let output = output.as_mut().ok_or_else(closed)?;
            output.push(&message)?;
            output.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if let Err(e) = self.write_owed().await {
                tracing::error!("cannot answer an unreadable MCP message: {e}");
                return None;
            }
            match self.read_line().await {
                LineRead::Line => {}
                LineRead::Oversized(id) => {
                    let limit = self.max_message_bytes;
                    tracing::debug!(limit, "an incoming MCP message is over the limit");
                    let message =
                        format!("Invalid request: the message is over the limit of {limit} bytes");
                    self.owed =
                        Owed::Reply(Reply::new(id, ErrorData::invalid_request(message, None)));
                    continue;
                }
                // A last line without its newline is not a message.
                LineRead::Eof => return None,
                LineRead::Io(e) => {
                    tracing::error!("cannot read MCP messages: {e}");
                    return None;
                }
            }
            let read = read_message(&self.line);
            self.line.clear();
            match read {
                Read::Message(message) => return Some(message),
                Read::Skip => {}
                Read::Refuse(reply) => self.owed = Owed::Reply(reply),
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        drop(self.output.lock().await.take());
        Ok(())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the transport is closed")
}

/// The writing half, with the bytes not yet written: a write cancelled
/// halfway leaves the rest of its line for the next writer to finish first.
struct Output<W> {
    write: W,
    buffer: Vec<u8>,
    /// How much of `buffer` is written.
    written: usize,
}

impl<W: AsyncWrite + Unpin> Output<W> {
    /// Appends `message` as a line.
    fn push(&mut self, message: &impl Serialize) -> io::Result<()> {
        let start = self.buffer.len();
        if let Err(e) = serde_json::to_writer(&mut self.buffer, message) {
            self.buffer.truncate(start);
            return Err(e.into());
        }
        self.buffer.push(b'\n');
        Ok(())
    }

    /// Writes out what is buffered.
    async fn flush(&mut self) -> io::Result<()> {
        while self.written < self.buffer.len() {
            match self.write.write(&self.buffer[self.written..]).await? {
                0 => return Err(io::ErrorKind::WriteZero.into()),
                n => self.written += n,
            }
        }
        self.buffer.clear();
        self.buffer.shrink_to(KEPT_OUTPUT_BYTES);
        self.written = 0;
        self.write.flush().await
    }
}

/// What a line is.
#[expect(
    clippy::large_enum_variant,
    reason = "moved once, to `receive`; a box would cost every message an allocation"
)]
enum Read {
    Message(ClientJsonRpcMessage),
    /// Nothing to answer: a blank line, or a notification or response
    /// that is not readable.
    Skip,
    Refuse(Reply),
}

/// Reads one line (its newline included) as a client's message.
fn read_message(line: &[u8]) -> Read {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(BYTE_ORDER_MARK).unwrap_or(line);
    if line.trim_ascii().is_empty() {
        return Read::Skip;
    }
    let error = match serde_json::from_slice(line) {
        Ok(message) => return Read::Message(message),
        Err(error) => error,
    };
    match jsonrpc::unreadable(line, &error) {
        Unreadable::Answer(reply) => Read::Refuse(reply),
        Unreadable::Unanswered => Read::Skip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreadable_lines_get_the_answers_json_rpc_gives() {
        let answer = |line: &[u8]| match read_message(line) {
            Read::Refuse(reply) => Some(serde_json::to_value(&reply).unwrap()),
            Read::Skip => None,
            Read::Message(message) => panic!("{line:?} read as {message:?}"),
        };
        let lines: [&[u8]; 4] = [b"nope", b"{\"id\":1,", b"\"\xff\"", b"\xff\xfe"];
        for line in lines {
            let reply = answer(line).unwrap();
            assert_eq!(reply["error"]["code"], -32700, "{line:?}: {reply}");
            assert!(reply["id"].is_null(), "{line:?}: {reply}");
        }
        for (line, id) in [
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, None),
            ("42", None),
            (r#"{"id":3}"#, Some(3)),
            (r#"{"id":3,"method":"ping"}"#, Some(3)),
            (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, Some(3)),
            (r#"{"jsonrpc":"2.0","id":[3],"method":"ping"}"#, None),
        ] {
            let reply = answer(line.as_bytes()).unwrap();
            assert_eq!(reply["error"]["code"], -32600, "{line}: {reply}");
            assert_eq!(reply["id"], serde_json::json!(id), "{line}: {reply}");
        }
        // Never answered: blank lines, notifications and responses.
        for line in [
            "",
            " \r\n",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized","params":7}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":[1],"error":{"code":1,"message":"no"}}"#,
        ] {
            assert!(answer(line.as_bytes()).is_none(), "{line}");
        }
    }
}

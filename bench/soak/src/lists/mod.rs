//! `soak lists`: the resident memory of a server answering `tools/list`
//! for many tools to many clients at once (issue #39: unpaged, one answer
//! held every tool, and concurrent lists each held one).
//!
//! The server runs in a process of its own (this binary again, with
//! `--serve`), so that its memory is measured apart from the clients',
//! which hold and parse every answer they read.

mod client;
mod server;

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::Barrier;
use tokio::task::JoinSet;

use self::client::{Listing, Session};
use crate::memory::resident_bytes_of;
use crate::report::grouped;

type BoxError = Box<dyn Error + Send + Sync>;

const USAGE: &str = "\
usage: soak lists [--tools N] [--clients N] [--rounds N] [--page-size N] [--cold]

  --tools N       dynamic tools the server lists, about 2 KB each (default 5,008)
  --clients N     concurrent MCP sessions, each on its own connection (default 20)
  --rounds N      full listings per client, all clients in step (default 5)
  --page-size N   the server's page size (default toolwright::mcp::DEFAULT_PAGE_SIZE;
                  100000 answers 5,008 tools in one page, as before pages)
  --cold          no list alone first: the clients' first lists find the
                  server's description of the tools not yet built";

/// How often the server's memory is read while the lists run.
const SAMPLE_EVERY: Duration = Duration::from_millis(1);

/// What the command line asked for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    tools: usize,
    clients: usize,
    rounds: usize,
    page_size: usize,
    /// No list alone before the concurrent ones.
    cold: bool,
    /// Be the server (the measuring process starts it so).
    serve: bool,
}

impl Options {
    /// Parses the arguments after `lists`; `Ok(None)` for `--help`.
    fn parse(args: impl IntoIterator<Item = String>) -> Result<Option<Options>, String> {
        let mut options = Options {
            tools: 5008,
            clients: 20,
            rounds: 5,
            page_size: toolwright::mcp::DEFAULT_PAGE_SIZE,
            cold: false,
            serve: false,
        };
        let mut args = args.into_iter();
        while let Some(flag) = args.next() {
            match flag.as_str() {
                "-h" | "--help" => return Ok(None),
                "--cold" => {
                    options.cold = true;
                    continue;
                }
                "--serve" => {
                    options.serve = true;
                    continue;
                }
                _ => {}
            }
            let value = args
                .next()
                .ok_or_else(|| format!("`{flag}` needs a value"))?;
            let number = value
                .replace('_', "")
                .parse::<usize>()
                .ok()
                .filter(|n| *n > 0)
                .ok_or_else(|| format!("`{flag} {value}`: expected a positive whole number"))?;
            match flag.as_str() {
                "--tools" => options.tools = number,
                "--clients" => options.clients = number,
                "--rounds" => options.rounds = number,
                "--page-size" => options.page_size = number,
                _ => return Err(format!("unknown option `{flag}`")),
            }
        }
        Ok(Some(options))
    }

    /// The arguments that start a server for these options.
    fn server_args(&self) -> Vec<String> {
        let (tools, page_size) = (self.tools.to_string(), self.page_size.to_string());
        [
            "lists",
            "--serve",
            "--tools",
            &tools,
            "--page-size",
            &page_size,
        ]
        .map(String::from)
        .to_vec()
    }
}

/// Runs `soak lists` with the arguments after `lists`.
pub(crate) fn main(args: impl IntoIterator<Item = String>) -> ExitCode {
    let options = match Options::parse(args) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("soak lists: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let ran = if options.serve {
        server::serve(options)
    } else {
        measure(options).map(|report| report.print())
    };
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("soak lists: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The serving process, ended when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    /// Starts this binary as the server and reads its URL.
    fn start(options: &Options) -> Result<Server, BoxError> {
        let mut child = Command::new(std::env::current_exe()?)
            .args(options.server_args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()?;
        let stdout = child.stdout.take().ok_or("the server has no stdout")?;
        // Dropped on error: the child is ended with it.
        let mut server = Server {
            child,
            url: String::new(),
        };
        BufReader::new(stdout).read_line(&mut server.url)?;
        server.url.truncate(server.url.trim_end().len());
        if server.url.is_empty() {
            return Err("the server ended before it listened".into());
        }
        Ok(server)
    }

    /// The server's resident bytes now; 0 where they cannot be read.
    fn resident(&self) -> u64 {
        resident_bytes_of(self.child.id()).unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Everything a run measured; memory in bytes, of the server.
#[derive(Debug)]
struct Report {
    options: Options,
    /// One client's listing (all listings saw the same pages).
    listing: Listing,
    /// With the tools registered, before the first session.
    start: u64,
    /// After one list alone, unless `--cold`.
    alone: Option<u64>,
    /// Between rounds, with every client's listing of the round done.
    rounds: Vec<u64>,
    /// The most seen while the lists ran.
    peak: u64,
    /// After every session closed.
    end: u64,
    elapsed: Duration,
}

/// Starts the server, runs the clients, and reads the server's memory
/// before, during (continuously, for the peak, and between rounds) and after.
fn measure(options: Options) -> Result<Report, BoxError> {
    let server = Arc::new(Server::start(&options)?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let start = server.resident();
    let sampling = Arc::new(AtomicBool::new(true));
    let peak = Arc::new(AtomicU64::new(start));
    let sampler = std::thread::spawn({
        let (server, sampling, peak) = (server.clone(), sampling.clone(), peak.clone());
        move || {
            while sampling.load(Ordering::Relaxed) {
                peak.fetch_max(server.resident(), Ordering::Relaxed);
                std::thread::sleep(SAMPLE_EVERY);
            }
        }
    });
    let started = Instant::now();
    let listed = runtime.block_on(list_concurrently(&options, &server));
    let elapsed = started.elapsed();
    sampling.store(false, Ordering::Relaxed);
    sampler.join().map_err(|_| "the memory sampler panicked")?;
    let (alone, listing, rounds) = listed?;
    Ok(Report {
        options,
        listing,
        start,
        alone,
        rounds,
        peak: peak.load(Ordering::Relaxed),
        end: server.resident(),
        elapsed,
    })
}

/// Unless `--cold`, lists once alone; then opens a session per client,
/// has every client list all tools in each round, in step, and closes the
/// sessions. Answers the server's memory after the lone list, one
/// client's listing, and the server's memory after each round.
async fn list_concurrently(
    options: &Options,
    server: &Arc<Server>,
) -> Result<(Option<u64>, Listing, Vec<u64>), BoxError> {
    // The server builds its description of the tools at the first list and
    // keeps it: listing once first shows that apart from what concurrent
    // lists add.
    let alone = if options.cold {
        None
    } else {
        let session = Session::open(&server.url).await?;
        session.list_all().await?;
        session.close().await?;
        Some(server.resident())
    };
    let barrier = Arc::new(Barrier::new(options.clients));
    let rounds = Arc::new(Mutex::new(Vec::new()));
    let mut clients = JoinSet::new();
    for _ in 0..options.clients {
        let (options, server) = (*options, server.clone());
        let (barrier, rounds) = (barrier.clone(), rounds.clone());
        clients.spawn(async move {
            let session = Session::open(&server.url).await?;
            let mut listing = Listing::default();
            for _ in 0..options.rounds {
                listing = session.list_all().await?;
                if listing.tools != options.tools {
                    return Err(format!(
                        "a listing saw {} tools of {}",
                        listing.tools, options.tools
                    )
                    .into());
                }
                // Every client's round is done before the reading, and
                // the next round starts after it.
                if barrier.wait().await.is_leader() {
                    let mut rounds = rounds.lock().unwrap_or_else(|e| e.into_inner());
                    rounds.push(server.resident());
                }
                barrier.wait().await;
            }
            session.close().await?;
            Ok::<_, BoxError>(listing)
        });
    }
    let mut listing = Listing::default();
    while let Some(joined) = clients.join_next().await {
        listing = joined??;
    }
    let rounds = std::mem::take(&mut *rounds.lock().unwrap_or_else(|e| e.into_inner()));
    Ok((alone, listing, rounds))
}

impl Report {
    fn print(&self) {
        let Options {
            tools,
            clients,
            rounds,
            page_size,
            ..
        } = self.options;
        let listing = &self.listing;
        println!(
            "toolwright soak lists: {} tools, page size {}, {clients} concurrent clients, \
             {rounds} rounds in {:.2} s",
            grouped(tools as u64),
            grouped(page_size as u64),
            self.elapsed.as_secs_f64(),
        );
        println!(
            "a full list: {} pages, {} bytes; the largest answer {} bytes",
            listing.pages,
            grouped(listing.bytes as u64),
            grouped(listing.largest as u64),
        );
        println!("\nthe server's resident memory (VmRSS)");
        println!(
            "  {:<10} {}  tools registered, no session yet",
            "start",
            mib(self.start)
        );
        if let Some(alone) = self.alone {
            println!(
                "  {:<10} {}  after one client's list, alone",
                "one list",
                mib(alone)
            );
        }
        for (round, bytes) in self.rounds.iter().enumerate() {
            println!("  {:<10} {}", format!("round {}", round + 1), mib(*bytes));
        }
        println!(
            "  {:<10} {}  the most read while the lists ran (every {} ms)",
            "peak",
            mib(self.peak),
            SAMPLE_EVERY.as_millis(),
        );
        println!("  {:<10} {}  every session closed", "end", mib(self.end));
    }
}

/// Bytes as MiB, one decimal.
fn mib(bytes: u64) -> String {
    format!("{:>7.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

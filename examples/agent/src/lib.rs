//! A rig agent over the shop's tools, against any OpenAI-compatible
//! endpoint: reads run, a write waits for a manager's approval, and the
//! run resumes once a person decides.
//!
//! `cargo run -p agent` needs `AGENT_BASE_URL` (the endpoint's base, such
//! as `http://localhost:11434/v1` for a local server; `--features tls` for
//! `https://`), and reads `AGENT_MODEL` (default `gpt-4o-mini`) and
//! `AGENT_API_KEY`. The prompt is the command line's arguments. The agent
//! acts for `alice` on a fresh in-memory shop; when a write of hers waits,
//! `bob`, a manager of her tenant, approves it here (in an application a
//! person would), and the run resumes.

use rig_agent::AgentBuilder;
use rig_core::providers::openai::OpenAIConfig;
use shop::{Shop, open_database};
use toolwright_rig::{Outcome, RigTools};

/// Where the model is and how to ask it.
#[derive(Debug, Clone)]
pub struct Config {
    /// The endpoint's base URL, up to and including `/v1`.
    pub base_url: String,
    /// The model's name there.
    pub model: String,
    /// The API key (any text for servers that want none).
    pub api_key: String,
}

impl Config {
    /// The configuration in `AGENT_BASE_URL`, `AGENT_MODEL` and
    /// `AGENT_API_KEY`; `None` without a base URL.
    pub fn from_env() -> Option<Config> {
        Some(Config {
            base_url: std::env::var("AGENT_BASE_URL").ok()?,
            model: std::env::var("AGENT_MODEL").unwrap_or_else(|_| "gpt-4o-mini".to_owned()),
            api_key: std::env::var("AGENT_API_KEY").unwrap_or_else(|_| "none".to_owned()),
        })
    }
}

/// Everything that could go wrong, as one boxed error.
pub type AnyError = Box<dyn std::error::Error + Send + Sync>;

/// The most model turns a run (or a resumed run) takes.
const MAX_TURNS: usize = 8;

/// Runs `prompt` as alice, with bob approving what waits; returns what the
/// example prints, line by line.
pub async fn run(config: &Config, prompt: &str) -> Result<Vec<String>, AnyError> {
    let mut said = Vec::new();
    let shop = Shop::new(open_database("sqlite::memory:").await?).await?;
    let alice = shop.caller("alice").await?;
    let bob = shop.caller("bob").await?;
    let tools = RigTools::new(shop.executor_for(&alice.actor), alice);
    let client = OpenAIConfig::new(&config.api_key)
        .with_base_url(&config.base_url)
        .client();
    let agent = AgentBuilder::new(client.chat(&config.model))
        .preamble(
            "You help alice (tenant 1) with the shop's products and orders. \
             A write may wait for a manager's approval; say so when it does.",
        )
        .dynamic_tools(tools.tools()?)
        .build();

    let mut outcome = tools.run(agent.prompt(prompt).max_turns(MAX_TURNS)).await?;
    let mut decided = Vec::new();
    // A person decides each waiting write; then the run goes on.
    while let Outcome::Deferred(deferred) = outcome {
        for request in deferred.requests() {
            let id = request.id.ok_or("a write waited with no ledger request")?;
            said.push(format!(
                "waits: {} {} (request {id})",
                request.name, request.arguments
            ));
            shop.approve(id, &bob, "approved by the example").await?;
            said.push(format!("bob approves request {id}"));
            decided.push(id);
        }
        let resumed = tools.resume(&agent, deferred, MAX_TURNS).await?;
        outcome = tools.run(resumed).await?;
    }
    if let Outcome::Done(response) = outcome {
        said.push(format!("agent: {}", response.output()));
    }
    // How each approved write ended, from the ledger.
    for id in decided {
        let approval = shop.approvals.get(id).await?;
        let ended = approval.settlement.map_or("not run", |s| s.as_str());
        said.push(format!("request {id}: {} ({ended})", approval.status));
    }
    Ok(said)
}

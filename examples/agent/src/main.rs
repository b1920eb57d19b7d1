//! `AGENT_BASE_URL=http://localhost:11434/v1 cargo run -p agent -- "Order two anvils."`

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    let Some(config) = agent::Config::from_env() else {
        eprintln!(
            "agent: set AGENT_BASE_URL to an OpenAI-compatible endpoint (e.g. http://localhost:11434/v1), \
             and optionally AGENT_MODEL and AGENT_API_KEY"
        );
        return ExitCode::from(2);
    };
    let words: Vec<String> = std::env::args().skip(1).collect();
    let prompt = if words.is_empty() {
        "What does the anvil cost? Then order two anvils.".to_owned()
    } else {
        words.join(" ")
    };
    match agent::run(&config, &prompt).await {
        Ok(lines) => {
            for line in lines {
                println!("{line}");
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("agent: {error}");
            ExitCode::FAILURE
        }
    }
}

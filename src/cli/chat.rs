//! `humanoid chat`: one reply to one prompt, streamed to stdout.

use std::io::Write;

use anyhow::Result;
use clap::Args;
use humanoid::llm::{Event, GenerateRequest, Message, Prompt, Request, Response, Sampling};

use super::ModelArgs;

#[derive(Args, Debug)]
pub struct ChatArgs {
    /// The user's message.
    pub prompt: String,
    #[command(flatten)]
    pub model: ModelArgs,
    /// A system message before the prompt.
    #[arg(long)]
    pub system: Option<String>,
    /// Most tokens in the reply.
    #[arg(long, default_value_t = 256)]
    pub max_tokens: usize,
    /// Sampling temperature (0 = greedy).
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
    /// Seed of the sampler.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Stop before this string (repeatable).
    #[arg(long)]
    pub stop: Vec<String>,
}

pub fn run(a: ChatArgs) -> Result<()> {
    let (_, mut engine) = a.model.load()?;
    let mut messages = Vec::new();
    if let Some(s) = &a.system {
        messages.push(Message::system(s.clone()));
    }
    messages.push(Message::user(a.prompt.clone()));
    let mut req = GenerateRequest::new(Prompt::Chat(messages), a.max_tokens);
    req.sampling = if a.temperature > 0.0 {
        Sampling::temperature(a.temperature)
    } else {
        Sampling::greedy()
    };
    req.seed = a.seed;
    req.stop = a.stop.clone();
    let mut out = std::io::stdout().lock();
    let started = std::time::Instant::now();
    let res = engine
        .run(vec![Request::Generate(req)], |e| {
            if let Event::Text { delta, .. } = e {
                let _ = out.write_all(delta.as_bytes());
                let _ = out.flush();
            }
        })
        .remove(0)?;
    writeln!(out)?;
    if let Response::Generated(g) = res {
        let secs = started.elapsed().as_secs_f64();
        tracing::info!(
            prompt_tokens = g.prompt_tokens,
            generated = g.generated_tokens,
            finish = ?g.finish,
            "{:.1} tokens/s overall",
            g.generated_tokens as f64 / secs
        );
    }
    Ok(())
}

//! `humanoid bench sim`: wall time of simulation steps as the number of agents grows
//! (generated towns of 2, 4, 8, 16 agents), or of a given world.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use humanoid::embed::Embedder;
use humanoid::model_store::sha256_file;
use humanoid::sim::{ModelInfo, Run, RunConfig, RuntimeParts};
use humanoid::world::World;
use serde::Serialize;

use super::ModelArgs;

/// Arguments of `bench sim`.
#[derive(Args, Debug)]
pub struct BenchSimArgs {
    /// Agent counts of the generated towns.
    #[arg(long, value_delimiter = ',', default_value = "2,4,8,16")]
    pub agents: Vec<usize>,
    /// A world file to measure instead of generated towns.
    #[arg(long)]
    pub world: Option<PathBuf>,
    /// Steps simulated per size (from 06:00, so the day's planning is included).
    #[arg(long, default_value_t = 8)]
    pub steps: u64,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

#[derive(Serialize)]
struct Row {
    world: String,
    agents: usize,
    steps: u64,
    seconds: f64,
    seconds_per_step: f64,
    seconds_per_agent_step: f64,
    calls_per_agent_step: f64,
    prompt_tokens_per_agent_step: f64,
    generated_tokens_per_agent_step: f64,
    reused_prompt_share: f64,
    mean_batch: f64,
}

/// Runs `bench sim`.
pub fn run(a: BenchSimArgs) -> Result<()> {
    let (resolved, engine) = a.model.load()?;
    let sha256 = sha256_file(&resolved.path)?;
    let embedder = Embedder::load_default(true).context("loading the embedding model")?;
    let embed_dir = embedder.dir().display().to_string();
    let parts = RuntimeParts::new(engine, Box::new(embedder));
    let rt = parts.runtime();
    let worlds: Vec<(String, World)> = match &a.world {
        Some(p) => vec![(p.display().to_string(), World::load(p)?)],
        None => a
            .agents
            .iter()
            .map(|&n| (format!("generated-{n}"), World::generated(n, a.seed)))
            .collect(),
    };
    let mut rows = Vec::new();
    for (label, world) in worlds {
        let tmp = tempfile_dir()?;
        let steps = a.steps.min(u64::from(world.steps_per_day()));
        let config = RunConfig {
            version: env!("CARGO_PKG_VERSION").to_string(),
            world_file: label.clone(),
            world_source: world.to_toml(),
            model: ModelInfo {
                spec: resolved.name.clone(),
                path: resolved.path.display().to_string(),
                sha256: sha256.clone(),
            },
            embed_model: embed_dir.clone(),
            seed: a.seed,
            device: a.model.device.to_string(),
            threads: rayon::current_num_threads(),
            max_num_seqs: a.model.max_num_seqs,
            max_batched_tokens: a.model.max_batched_tokens,
            context: a.model.context,
            days: 1,
            steps,
            conditions: Vec::new(),
            injections: Vec::new(),
            backend: None,
        };
        let before = parts.engine.borrow().stats().clone();
        let t0 = Instant::now();
        let mut run = Run::create(&tmp.join("run"), config, &rt, &mut |_| {})?;
        while !run.finished() {
            let p = run.step(&rt, &mut |_| {})?;
            eprint!("\r{label}: step {}/{}   ", p.step, p.steps);
        }
        eprintln!();
        let secs = t0.elapsed().as_secs_f64();
        let after = parts.engine.borrow().stats().clone();
        let c = &run.sim.state.counters;
        let agent_steps = c.agent_steps.max(1) as f64;
        let prompt = (after.prompt_tokens - before.prompt_tokens) as f64;
        let reused = (after.reused_prompt_tokens - before.reused_prompt_tokens) as f64;
        let fsteps = (after.forward_steps - before.forward_steps).max(1) as f64;
        rows.push(Row {
            world: label,
            agents: world.agents.len(),
            steps,
            seconds: secs,
            seconds_per_step: secs / steps.max(1) as f64,
            seconds_per_agent_step: secs / agent_steps,
            calls_per_agent_step: c.model_calls as f64 / agent_steps,
            prompt_tokens_per_agent_step: c.prompt_tokens as f64 / agent_steps,
            generated_tokens_per_agent_step: c.generated_tokens as f64 / agent_steps,
            reused_prompt_share: reused / prompt.max(1.0),
            mean_batch: (after.batched_seqs - before.batched_seqs) as f64 / fsteps,
        });
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    println!(
        "{:<22} {:>6} {:>6} {:>9} {:>10} {:>12} {:>11} {:>12} {:>8} {:>7}",
        "world",
        "agents",
        "steps",
        "seconds",
        "s/step",
        "s/agent-step",
        "calls/a-s",
        "prompt tok/a-s",
        "reused",
        "batch"
    );
    for r in &rows {
        println!(
            "{:<22} {:>6} {:>6} {:>9.1} {:>10.2} {:>12.2} {:>11.1} {:>12.0} {:>7.0}% {:>7.1}",
            r.world,
            r.agents,
            r.steps,
            r.seconds,
            r.seconds_per_step,
            r.seconds_per_agent_step,
            r.calls_per_agent_step,
            r.prompt_tokens_per_agent_step,
            100.0 * r.reused_prompt_share,
            r.mean_batch
        );
    }
    Ok(())
}

fn tempfile_dir() -> Result<PathBuf> {
    let base = std::env::temp_dir().join(format!(
        "humanoid-bench-sim-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    Ok(base)
}

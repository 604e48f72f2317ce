//! `humanoid bench sim`: wall time of simulation steps as the number of agents grows
//! (generated towns of 2, 4, 8, 16 agents, or any sizes), or of a given world; in-process
//! or through a remote server (`--backend openai`).

use std::cell::Cell;
use std::path::PathBuf;
use std::rc::Rc;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::Args;
use humanoid::embed::Embedder;
use humanoid::llm::{
    Engine, EngineStats, Event, Inference, LlmError, Prompt, Request, Response, Tokenizer,
};
use humanoid::sim::{Run, RunConfig, RuntimeParts};
use humanoid::world::World;
use serde::Serialize;

use super::remote::BackendArgs;
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
    #[command(flatten)]
    pub backend: BackendArgs,
}

/// Batches the simulation sent: calls of the backend and the requests in them.
#[derive(Default)]
struct BatchCount {
    batches: Cell<u64>,
    requests: Cell<u64>,
    largest: Cell<u64>,
}

/// A backend that counts the batches it is given, and otherwise passes everything through.
struct Counted {
    inner: Box<dyn Inference>,
    count: Rc<BatchCount>,
}

impl Inference for Counted {
    fn run(
        &mut self,
        requests: Vec<Request>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Vec<std::result::Result<Response, LlmError>> {
        let n = requests.len() as u64;
        let c = &self.count;
        c.batches.set(c.batches.get() + 1);
        c.requests.set(c.requests.get() + n);
        c.largest.set(c.largest.get().max(n));
        self.inner.run(requests, on_event)
    }
    fn prompt_tokens(&self, prompt: &Prompt) -> std::result::Result<Vec<u32>, LlmError> {
        self.inner.prompt_tokens(prompt)
    }
    fn context_budget(&self) -> usize {
        self.inner.context_budget()
    }
    fn tokenizer(&self) -> &Tokenizer {
        self.inner.tokenizer()
    }
    fn stats(&self) -> &EngineStats {
        self.inner.stats()
    }
    fn failure(&self) -> Option<String> {
        self.inner.failure()
    }
    fn as_engine(&self) -> Option<&Engine> {
        self.inner.as_engine()
    }
}

#[derive(Serialize)]
struct Row {
    world: String,
    backend: String,
    agents: usize,
    steps: u64,
    seconds: f64,
    seconds_per_sim_hour: f64,
    seconds_per_step: f64,
    seconds_per_agent_step: f64,
    calls_per_agent_step: f64,
    prompt_tokens_per_agent_step: f64,
    generated_tokens_per_agent_step: f64,
    reused_prompt_share: f64,
    /// Requests per batch the simulation sent (the tick's batch size), mean and largest.
    requests_per_batch: f64,
    largest_batch: u64,
    /// In-process: sequences per forward step; remote: HTTP requests per batch.
    mean_batch: f64,
    /// In-process: `mean_batch` over --max-num-seqs; remote: HTTP requests per batch over
    /// --max-inflight (at most 1).
    occupancy: f64,
}

/// Runs `bench sim`.
pub fn run(a: BenchSimArgs) -> Result<()> {
    let remote = a
        .backend
        .remote(a.model.model.as_deref(), a.model.context)?;
    let opened = super::remote::open(remote.as_ref(), &a.model)?;
    let (label, slots) = match &remote {
        Some(cfg) => (format!("remote {}", opened.info.path), cfg.max_inflight),
        None => ("in-process".to_string(), a.model.max_num_seqs),
    };
    let (backend, model, yes_threshold) = (opened.inference, opened.info, opened.yes_threshold);
    let count = Rc::new(BatchCount::default());
    let backend = Box::new(Counted {
        inner: backend,
        count: count.clone(),
    });
    let embedder = Embedder::load_default(true).context("loading the embedding model")?;
    let embed_dir = embedder.dir().display().to_string();
    let parts = RuntimeParts::with_backend(backend, Box::new(embedder));
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
    for (world_label, world) in worlds {
        let tmp = tempfile_dir()?;
        let steps = a.steps.min(u64::from(world.steps_per_day()));
        let config = RunConfig {
            version: env!("CARGO_PKG_VERSION").to_string(),
            world_file: world_label.clone(),
            world_source: world.to_toml(),
            model: model.clone(),
            embed_model: embed_dir.clone(),
            seed: a.seed,
            device: match remote {
                Some(_) => "remote".into(),
                None => a.model.device.to_string(),
            },
            weights: a.model.weights.as_str().into(),
            threads: rayon::current_num_threads(),
            max_num_seqs: a.model.max_num_seqs,
            max_batched_tokens: a.model.max_batched_tokens,
            context: a.model.context,
            days: 1,
            steps,
            conditions: Vec::new(),
            injections: Vec::new(),
            yes_threshold: yes_threshold.clone(),
            backend: remote.clone(),
        };
        let before = parts.engine.borrow().stats().clone();
        let (batches0, requests0) = (count.batches.get(), count.requests.get());
        count.largest.set(0);
        let t0 = Instant::now();
        let mut run = Run::create(&tmp.join("run"), config, &rt, &mut |_| {})?;
        while !run.finished() {
            let p = run.step(&rt, &mut |_| {})?;
            eprint!("\r{world_label} ({label}): step {}/{}   ", p.step, p.steps);
        }
        eprintln!();
        let secs = t0.elapsed().as_secs_f64();
        let after = parts.engine.borrow().stats().clone();
        let c = &run.sim.state.counters;
        let agent_steps = c.agent_steps.max(1) as f64;
        let prompt = (after.prompt_tokens - before.prompt_tokens) as f64;
        let reused = (after.reused_prompt_tokens - before.reused_prompt_tokens) as f64;
        let fsteps = (after.forward_steps - before.forward_steps).max(1) as f64;
        let mean_batch = (after.batched_seqs - before.batched_seqs) as f64 / fsteps;
        let batches = (count.batches.get() - batches0).max(1) as f64;
        let hours = steps as f64 * f64::from(world.step_minutes) / 60.0;
        rows.push(Row {
            world: world_label,
            backend: label.clone(),
            agents: world.agents.len(),
            steps,
            seconds: secs,
            seconds_per_sim_hour: secs / hours.max(f64::MIN_POSITIVE),
            seconds_per_step: secs / steps.max(1) as f64,
            seconds_per_agent_step: secs / agent_steps,
            calls_per_agent_step: c.model_calls as f64 / agent_steps,
            prompt_tokens_per_agent_step: c.prompt_tokens as f64 / agent_steps,
            generated_tokens_per_agent_step: c.generated_tokens as f64 / agent_steps,
            reused_prompt_share: reused / prompt.max(1.0),
            requests_per_batch: (count.requests.get() - requests0) as f64 / batches,
            largest_batch: count.largest.get(),
            mean_batch,
            occupancy: (mean_batch / slots.max(1) as f64).min(1.0),
        });
        let _ = std::fs::remove_dir_all(&tmp);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
        return Ok(());
    }
    println!("{label}, {}", model.spec);
    println!(
        "{:<14} {:>6} {:>6} {:>9} {:>9} {:>12} {:>9} {:>10} {:>7} {:>9} {:>7} {:>9}",
        "world",
        "agents",
        "steps",
        "seconds",
        "s/sim-h",
        "s/agent-step",
        "calls/a-s",
        "prompt/a-s",
        "reused",
        "req/batch",
        "largest",
        "seqs/step"
    );
    for r in &rows {
        println!(
            "{:<14} {:>6} {:>6} {:>9.1} {:>9.1} {:>12.2} {:>9.1} {:>10.0} {:>6.0}% {:>9.1} {:>7} {:>4.1} {:>3.0}%",
            r.world,
            r.agents,
            r.steps,
            r.seconds,
            r.seconds_per_sim_hour,
            r.seconds_per_agent_step,
            r.calls_per_agent_step,
            r.prompt_tokens_per_agent_step,
            100.0 * r.reused_prompt_share,
            r.requests_per_batch,
            r.largest_batch,
            r.mean_batch,
            100.0 * r.occupancy
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

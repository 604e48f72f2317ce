//! Subcommands, one module each; this file holds the argument definitions and dispatch.

mod bench_llm;
mod bench_memory;
mod bench_models;
mod bench_sim;
mod chat;
mod eval;
mod eval_converse;
mod eval_place;
mod eval_replan;
mod eval_steps;
mod experiment;
mod inspect;
mod interview;
mod memlog;
mod models;
mod remote;
mod run;
mod serve_llm;
mod spawn;
mod validate;
mod view;
mod world;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use humanoid::llm::model::WeightFormat;
use humanoid::llm::{DeviceChoice, Engine, EngineOptions};
use humanoid::model_store::{self, ModelSpec, ResolvedModel};

/// Offline simulator of LLM-driven humanoid agents, with a batched in-process GGUF engine.
#[derive(Parser, Debug)]
#[command(name = "humanoid", version, about)]
pub struct Cli {
    /// More logging (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Print a model's architecture, quantization, sizes, special tokens and chat template.
    InspectModel(inspect::InspectArgs),
    /// Answer one prompt, streaming the reply.
    Chat(chat::ChatArgs),
    /// Simulate a world: every agent's day, batched on the in-process model, into a run directory.
    Run(run::RunArgs),
    /// Continue an interrupted run from its last complete step.
    Resume(run::ResumeArgs),
    /// Check that every field of a run's state files is well-formed.
    Check(run::CheckArgs),
    /// Serve the run viewer (map replay and dashboard) for a run or a folder of runs.
    Serve(view::ServeArgs),
    /// Write the run viewer as one self-contained HTML file.
    Report(view::ReportArgs),
    /// Serve the chat model over an OpenAI-compatible HTTP API (for `run --backend openai`
    /// and other tools).
    ServeLlm(serve_llm::ServeLlmArgs),
    /// World files: generate synthetic towns, import worlds of the original Humanoid Agents.
    #[command(subcommand)]
    World(world::WorldCommand),
    /// Evaluate runs: annotation sheets and agreement with human labels, information diffusion.
    #[command(subcommand)]
    Eval(eval::EvalCommand),
    /// Ask an agent of a run questions, answered from its retrieved memories.
    Interview(interview::InterviewArgs),
    /// The papers' experiments: ablations of needs, emotions and closeness over seeds.
    #[command(subcommand)]
    Experiment(experiment::ExperimentCommand),
    /// Check world files (syntax, fields, ranges, names, locations) without loading a model.
    Validate(validate::ValidateArgs),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// List or fetch the models described by the manifests in models/.
    #[command(subcommand)]
    Models(models::ModelsCommand),
}

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Engine speed: prefill, decode at batch 1/4/16, choose calls/s, load time, memory.
    Llm(bench_llm::BenchLlmArgs),
    /// Memory: embeddings/s at batch 1 and 32, retrieval latency and recall@10 (HNSW vs exact).
    Memory(bench_memory::BenchMemoryArgs),
    /// Simulation: wall time per step as the number of agents grows (generated towns).
    Sim(bench_sim::BenchSimArgs),
    /// The same world and seed on several models: speed, batching, fallbacks, memory and
    /// (with labels) agreement with annotators, in one table.
    Models(bench_models::BenchModelsArgs),
}

/// Options shared by every command that loads a chat model.
#[derive(Args, Debug, Clone)]
pub struct ModelArgs {
    /// A manifest name (see `humanoid models list`), a .gguf path, or hf:OWNER/REPO/FILE.
    #[arg(long, short = 'm')]
    pub model: Option<String>,
    /// Worker threads for the CPU kernels (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Where the model runs: cpu (our kernels), cuda[:N] or metal[:N] (a GPU build), or
    /// tensor-cpu (the GPU code path on the CPU, for comparison).
    #[arg(long, default_value = "cpu")]
    pub device: DeviceChoice,
    /// Most sequences in one forward step.
    #[arg(long, default_value_t = 64)]
    pub max_num_seqs: usize,
    /// Most tokens in one forward step (longer prompts prefill in chunks).
    #[arg(long, default_value_t = 1024)]
    pub max_batched_tokens: usize,
    /// Longest prompt + reply, in tokens.
    #[arg(long, default_value_t = 4096)]
    pub context: usize,
    /// Memory for reusing prompt prefixes across calls (keys and values, MiB; 0 disables).
    #[arg(long, default_value_t = humanoid::llm::DEFAULT_PREFIX_CACHE_MIB)]
    pub prefix_cache_mib: usize,
    /// How weights are held: quantized (the file's Q4_K/Q6_K blocks where a kernel multiplies
    /// them, the rest as Q8_0), q8 (every matrix requantized to Q8_0) or f32 (exact, large).
    #[arg(long, default_value = "quantized", value_parser = parse_weights)]
    pub weights: WeightFormat,
}

pub(crate) fn parse_weights(s: &str) -> std::result::Result<WeightFormat, String> {
    WeightFormat::parse(s).ok_or_else(|| format!("`{s}` is not one of quantized, q8, f32"))
}

impl ModelArgs {
    /// Resolves the model (fetching a default one if absent) and loads it.
    pub fn load(&self) -> Result<(ResolvedModel, Engine)> {
        if let Some(n) = self.threads {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build_global()
                .ok();
        }
        let resolved = resolve_model(self.model.as_deref())?;
        let mut opts = EngineOptions::default();
        opts.limits.max_num_seqs = self.max_num_seqs.max(1);
        opts.limits.max_batched_tokens = self.max_batched_tokens.max(1);
        opts.context_budget = self.context.max(2);
        opts.device = self.device;
        opts.weight_format = self.weights;
        opts.prefix_cache_bytes = self.prefix_cache_mib.saturating_mul(1 << 20);
        let engine = Engine::load(&resolved.path, opts)
            .with_context(|| format!("loading model {}", resolved.path.display()))?;
        Ok((resolved, engine))
    }
}

/// Resolves a `--model` value (or the default chat model) to a file, fetching defaults.
pub fn resolve_model(spec: Option<&str>) -> Result<ResolvedModel> {
    let spec = match spec {
        Some(s) => ModelSpec::parse(s)?,
        None => model_store::default_chat_model()?,
    };
    Ok(model_store::resolve(
        &spec,
        &model_store::models_dir(),
        true,
    )?)
}

/// Sets up logging to stderr.
pub fn init_tracing(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

/// Runs a parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::InspectModel(a) => inspect::run(a),
        Command::Chat(a) => chat::run(a),
        Command::Bench(BenchCommand::Llm(a)) => bench_llm::run(a),
        Command::Bench(BenchCommand::Memory(a)) => bench_memory::run(a),
        Command::Bench(BenchCommand::Sim(a)) => bench_sim::run(a),
        Command::Bench(BenchCommand::Models(a)) => bench_models::run(a),
        Command::Models(c) => models::run(c),
        Command::Validate(a) => validate::run(a),
        Command::Serve(a) => view::serve(a),
        Command::World(c) => world::run(c),
        Command::Eval(c) => eval::run(c),
        Command::Experiment(c) => experiment::run(c),
        Command::Interview(a) => interview::run(a),
        Command::Report(a) => view::report(a),
        Command::ServeLlm(a) => serve_llm::run(a),
        Command::Run(a) => run::run(a),
        Command::Resume(a) => run::resume(a),
        Command::Check(a) => run::check(a),
    }
}

/// Resident and peak memory of this process, in bytes (Linux; zeros elsewhere).
pub fn memory_usage() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The bundled Lin family world: `worlds/lin-family.toml` in the current folder if there,
/// else the crate's own.
pub fn bundled_world() -> std::path::PathBuf {
    let local = std::path::PathBuf::from("worlds/lin-family.toml");
    if local.is_file() {
        return local;
    }
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/lin-family.toml")
}

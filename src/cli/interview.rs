//! `humanoid interview DIR --agent NAME "question"`: an agent of a run answers questions
//! from its retrieved memories.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use humanoid::embed::Embedder;
use humanoid::eval::{interview, Answer, InterviewOptions, Snapshot};
use humanoid::llm::Inference;
use humanoid::model_store::sha256_file;
use humanoid::sim::RunConfig;

use super::ModelArgs;

/// Arguments of `interview`.
#[derive(Args, Debug)]
pub struct InterviewArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// The question (or give many with --batch).
    pub question: Option<String>,
    /// The agent to interview (its name as in the world file).
    #[arg(long)]
    pub agent: String,
    /// A file of questions, one a line (blank lines and lines starting with # are
    /// skipped), all answered in one batch.
    #[arg(long)]
    pub batch: Option<PathBuf>,
    /// Interview the agent as it was at the end of this step: 0-based, as events.jsonl's
    /// `step` counts (step S is the S+1-th state file). Default: the last completed step.
    #[arg(long, value_name = "STEP")]
    pub at: Option<u64>,
    /// Memories retrieved per question (recency + importance + relevance).
    #[arg(long, default_value_t = humanoid::eval::interview::DEFAULT_MEMORIES)]
    pub memories: usize,
    /// Print one JSON object: each question, its answer and the memories retrieved, with
    /// their scores.
    #[arg(long)]
    pub json: bool,
    /// The chat model defaults to the one the run used (config.json).
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Reads a questions file: one question a line, blank lines and `#` comments skipped.
pub fn read_questions(path: &Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("--batch {}: cannot read it", path.display()))?;
    let questions: Vec<String> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect();
    if questions.is_empty() {
        bail!(
            "--batch {}: no questions (one a line; blank lines and # comments are skipped)",
            path.display()
        );
    }
    Ok(questions)
}

/// Loads the chat model a run used (unless `model.model` names another) and the run's
/// embedder; returns the model's file or server with them. A run on a remote server
/// (`--backend openai`) connects to it again. A recorded model file that is gone is
/// resolved again from its spec; one whose sha256 changed is used with a warning.
pub fn load_for_run(
    config: &RunConfig,
    mut model: ModelArgs,
) -> Result<(String, Box<dyn Inference>, Embedder)> {
    let recorded = model.model.is_none();
    let embedder = || {
        Embedder::load(Path::new(&config.embed_model))
            .or_else(|_| Embedder::load_default(true))
            .context("loading the embedding model")
    };
    if let (true, Some(remote)) = (recorded, &config.backend) {
        let client = super::remote::connect(remote.clone())?;
        let name = format!("{} at {}", remote.model, client.url());
        return Ok((name, Box::new(client), embedder()?));
    }
    if recorded {
        let path = Path::new(&config.model.path);
        model.model = Some(if path.is_file() {
            config.model.path.clone()
        } else {
            config.model.spec.clone()
        });
    }
    model
        .device
        .candle_device()
        .with_context(|| format!("--device {}", model.device))?;
    let (resolved, engine) = model.load()?;
    if recorded {
        let sha = sha256_file(&resolved.path)?;
        if sha != config.model.sha256 {
            tracing::warn!(
                "{}: sha256 {sha} differs from the run's {}: answers come from another model",
                resolved.path.display(),
                config.model.sha256
            );
        }
    }
    let name = resolved.path.display().to_string();
    Ok((name, Box::new(engine), embedder()?))
}

/// Runs `interview`.
pub fn run(a: InterviewArgs) -> Result<()> {
    let mut questions: Vec<String> = a.question.iter().map(|q| q.trim().to_string()).collect();
    if questions.iter().any(String::is_empty) {
        bail!("the question is empty");
    }
    if let Some(path) = &a.batch {
        questions.extend(read_questions(path)?);
    }
    if questions.is_empty() {
        bail!("no question: give one after the run directory, or a file with --batch");
    }
    // Everything about the run is checked before a model loads.
    let snapshot = Snapshot::load(&a.dir, a.at)?;
    let agent = snapshot.agent_index(&a.agent)?;
    let name = snapshot.world.agents[agent].name.clone();
    let (model, mut engine, mut embedder) = load_for_run(&snapshot.config, a.model)?;
    eprintln!(
        "interview: {name} at {} ({}) in {} on {model}",
        snapshot.time_label(),
        step_label(&snapshot),
        a.dir.display()
    );
    let opts = InterviewOptions {
        memories: a.memories,
    };
    let answers = interview(
        engine.as_mut(),
        &mut embedder,
        &snapshot,
        agent,
        &questions,
        &opts,
    )?;
    if a.json {
        let out = serde_json::json!({
            "run": a.dir.display().to_string(),
            "agent": name,
            "step": snapshot.step,
            "time": snapshot.time_label(),
            "model": model,
            "answers": answers,
        });
        println!("{}", serde_json::to_string(&out)?);
    } else {
        print!("{}", text(&answers));
    }
    Ok(())
}

/// "step 3 of 4", "before the first step".
pub fn step_label(s: &Snapshot) -> String {
    match s.step {
        Some(step) => format!("step {step}, {} completed", s.completed),
        None => "before the first step".into(),
    }
}

fn answer_text(a: &Answer) -> String {
    match &a.fallback {
        None => a.answer.clone(),
        Some(why) => format!("(no answer: {why})"),
    }
}

/// One answer alone; several as question and answer pairs.
fn text(answers: &[Answer]) -> String {
    if let [one] = answers {
        return format!("{}\n", answer_text(one));
    }
    answers
        .iter()
        .map(|a| format!("Q: {}\nA: {}\n\n", a.question, answer_text(a)))
        .collect()
}

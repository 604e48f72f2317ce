//! `humanoid eval`: agreement of a run's judgements with human labels (annotation sheets),
//! and information diffusion.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use humanoid::eval::{self, sheet, DiffusionReport, ScoreReport, Snapshot};

use super::interview::{load_for_run, step_label};
use super::ModelArgs;

/// `humanoid eval ...`.
#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// Write a run's annotation sheet (CSV) and the annotators' instructions next to it.
    Export(ExportArgs),
    /// Score annotators' sheets against the run: majority vote, F1, Fleiss' kappa.
    Score(ScoreArgs),
    /// Who knows a fact at the end of a run (every agent interviewed, yes/no through the
    /// model's choose), and the relationship network density at the start and end.
    ///
    /// Density (Generative Agents' η): agent A knows agent B when A has a relationship to B
    /// with closeness at least --min-closeness (0: any relationship). "density" is the
    /// share of ordered pairs (A, B) where A knows B; "mutual" is the share of pairs who
    /// both know each other, the paper's 2|E| / (|V|(|V| - 1)).
    Diffusion(DiffusionArgs),
}

/// Arguments of `eval export`.
#[derive(Args, Debug)]
pub struct ExportArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// The sheet to write (NAME.instructions.txt goes next to it).
    #[arg(long, short = 'o')]
    pub out: PathBuf,
}

/// Arguments of `eval score`.
#[derive(Args, Debug)]
pub struct ScoreArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// The annotators' sheets (copies of the export with the label_ columns filled in).
    #[arg(long, num_args = 1.., required = true)]
    pub labels: Vec<PathBuf>,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `eval diffusion`.
#[derive(Args, Debug)]
pub struct DiffusionArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// The fact, e.g. "Sam is running for mayor" (each agent is asked "Do you know about
    /// this: FACT? Answer yes or no."; P(yes) > 0.5 counts as knowing it).
    #[arg(long)]
    pub fact: String,
    /// Interview at the end of this step (0-based; default: the last completed step).
    #[arg(long, value_name = "STEP")]
    pub at: Option<u64>,
    /// Least closeness (0-30) of a relationship that counts as knowing someone.
    #[arg(long, default_value_t = 0)]
    pub min_closeness: u8,
    /// Memories retrieved for the fact, per agent.
    #[arg(long, default_value_t = humanoid::eval::interview::DEFAULT_MEMORIES)]
    pub memories: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The chat model defaults to the one the run used (config.json).
    #[command(flatten)]
    pub model: ModelArgs,
}

/// Runs an `eval` subcommand.
pub fn run(c: EvalCommand) -> Result<()> {
    match c {
        EvalCommand::Export(a) => export(a),
        EvalCommand::Score(a) => score(a),
        EvalCommand::Diffusion(a) => diffusion(a),
    }
}

fn diffusion(a: DiffusionArgs) -> Result<()> {
    if a.fact.trim().is_empty() {
        anyhow::bail!("--fact is empty");
    }
    let snapshot = Snapshot::load(&a.dir, a.at)?;
    let (model, mut engine, mut embedder) = load_for_run(&snapshot.config, a.model)?;
    eprintln!(
        "diffusion: {} agents at {} ({}) in {} on {model}",
        snapshot.agents.len(),
        snapshot.time_label(),
        step_label(&snapshot),
        a.dir.display()
    );
    let report = eval::diffusion(
        engine.as_mut(),
        &mut embedder,
        &snapshot,
        &a.fact,
        a.memories,
        a.min_closeness,
    )?;
    if a.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", diffusion_table(&report));
    }
    Ok(())
}

/// The diffusion report as a text table.
fn diffusion_table(r: &DiffusionReport) -> String {
    let width = r
        .agents
        .iter()
        .map(|a| a.agent.len())
        .max()
        .unwrap_or(5)
        .max(5);
    let mut s = format!(
        "fact: {}
asked at {}: {}
",
        r.fact, r.time, r.question
    );
    s.push_str(&format!(
        "{:<width$} {:>6} {:>6} {:>8}\n",
        "agent", "P(yes)", "knows", "injected"
    ));
    for a in &r.agents {
        let knows = if a.fallback.is_some() {
            "?"
        } else if a.knows {
            "yes"
        } else {
            "no"
        };
        let injected = if a.injected.is_empty() { "" } else { "yes" };
        s.push_str(&format!(
            "{:<width$} {:>6.3} {:>6} {:>8}\n",
            a.agent, a.p_yes, knows, injected
        ));
    }
    s.push_str(&format!(
        "knows the fact: {} of {} agents ({:.1}%)\n",
        r.knowing,
        r.agents.len(),
        100.0 * r.share_knowing
    ));
    let d = &r.density;
    s.push_str(&format!(
        "network density (A knows B: a relationship with closeness >= {}):\n",
        d.min_closeness
    ));
    for (when, x) in [("start", &d.start), ("end", &d.end)] {
        s.push_str(&format!(
            "  {when:<5} {} ({} of {} ordered pairs), mutual {}\n",
            num(x.density),
            x.edges,
            x.pairs,
            num(x.mutual_density)
        ));
    }
    if r.agents.iter().any(|a| a.fallback.is_some()) {
        s.push_str("(?: the model's answer was unusable; counted as P(yes) = 0)\n");
    }
    s
}

fn export(a: ExportArgs) -> Result<()> {
    let (items, instructions) = eval::export(&a.dir, &a.out)?;
    let conversations = items
        .iter()
        .filter(|i| i.kind == sheet::ItemKind::Conversation)
        .count();
    println!(
        "wrote {} ({} activities, {conversations} conversations)",
        a.out.display(),
        items.len() - conversations
    );
    println!("instructions for annotators: {}", instructions.display());
    Ok(())
}

fn score(a: ScoreArgs) -> Result<()> {
    let items = eval::items_from_run(&a.dir)?;
    let sheets = a
        .labels
        .iter()
        .map(|p| eval::read_labels(p, &items))
        .collect::<Result<Vec<_>, _>>()?;
    let report = eval::score(&items, &sheets);
    if a.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", table(&report));
    }
    Ok(())
}

fn num(v: Option<f64>) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.3}"))
}

/// The report as a text table.
fn table(r: &ScoreReport) -> String {
    let mut s = format!("{} items, {} annotators\n", r.items, r.annotators);
    s.push_str(&format!(
        "{:<10} {:>6} {:>6} {:>5} {:>8} {:>6} {:>7} {:>7} {:>10} {:>10}\n",
        "dimension",
        "items",
        "scored",
        "ties",
        "missing",
        "F1",
        "kappa",
        "k-items",
        "pred. yes",
        "annot. yes"
    ));
    for d in &r.dimensions {
        s.push_str(&format!(
            "{:<10} {:>6} {:>6} {:>5} {:>8} {:>6} {:>7} {:>7} {:>10} {:>10}\n",
            d.dimension,
            d.items,
            d.scored,
            d.ties,
            d.all_missing,
            num(d.f1),
            num(d.kappa),
            d.kappa_items,
            num(d.predicted_positive),
            num(d.annotated_positive)
        ));
    }
    s.push_str("(ties and items no annotator labelled are skipped; \"-\": undefined)\n");
    s
}

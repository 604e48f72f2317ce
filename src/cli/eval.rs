//! `humanoid eval`: agreement of a run's judgements with human labels (annotation sheets).

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};
use humanoid::eval::{self, sheet, ScoreReport};

/// `humanoid eval ...`.
#[derive(Subcommand, Debug)]
pub enum EvalCommand {
    /// Write a run's annotation sheet (CSV) and the annotators' instructions next to it.
    Export(ExportArgs),
    /// Score annotators' sheets against the run: majority vote, F1, Fleiss' kappa.
    Score(ScoreArgs),
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

/// Runs an `eval` subcommand.
pub fn run(c: EvalCommand) -> Result<()> {
    match c {
        EvalCommand::Export(a) => export(a),
        EvalCommand::Score(a) => score(a),
    }
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

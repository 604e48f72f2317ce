//! `humanoid eval steps`: the quality report's step rule against hand-labelled steps.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

/// Arguments of `eval steps`.
#[derive(Args, Debug)]
pub struct StepsArgs {
    /// A CSV with the columns agent, time, plan (the agent's day plan, one "hh:mm am:
    /// activity" per line; empty: the agent's plan of its row before), activity and fits
    /// (yes/no).
    pub file: PathBuf,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// Scores the step rule of `check --quality` (a step about as like its day-plan line as any
/// other line, by the embedding model) against the labels; no chat model is loaded.
pub fn steps(a: StepsArgs) -> Result<()> {
    use humanoid::eval::step_check::{read_step_items, step_score};
    let items = read_step_items(&a.file)?;
    let mut embedder = humanoid::embed::Embedder::load_default(true)
        .map_err(|e| anyhow::anyhow!("loading the embedding model: {e}"))?;
    let Some(s) = step_score(&items, &mut embedder) else {
        bail!("the embedding model failed (see the log)");
    };
    if s.off_flagged.total == 0 || s.fitting_kept.total == 0 {
        bail!(
            "{}: the rule judged {} steps labelled off and {} labelled fitting; scoring needs both",
            a.file.display(),
            s.off_flagged.total,
            s.fitting_kept.total
        );
    }
    if a.json {
        println!("{}", serde_json::to_string(&s)?);
        return Ok(());
    }
    println!(
        "the step rule of check --quality on {} steps ({} not judged):\n  off steps flagged     {:.3} ({} of {})\n  fitting steps kept    {:.3} ({} of {})\n  balanced accuracy     {:.3}\n  flagged               {} (labelled off: {})",
        items.len(),
        s.not_judged,
        s.off_flagged.share,
        s.off_flagged.good,
        s.off_flagged.total,
        s.fitting_kept.share,
        s.fitting_kept.good,
        s.fitting_kept.total,
        s.balanced,
        s.flagged,
        s.off_flagged.total,
    );
    println!(
        "the simulation's fault (the rule, the other line's cosine at least {}):\n  off steps flagged     {:.3} ({} of {})\n  fitting steps kept    {:.3} ({} of {})",
        humanoid::agent::plan::line_fit::FAULT_FLOOR,
        s.off_faulted.share,
        s.off_faulted.good,
        s.off_faulted.total,
        s.fitting_unfaulted.share,
        s.fitting_unfaulted.good,
        s.fitting_unfaulted.total,
    );
    for (what, share) in [
        ("off step kept", &s.off_flagged),
        ("fitting step flagged", &s.fitting_kept),
    ] {
        for e in &share.examples {
            println!("  {what}: {e}");
        }
    }
    Ok(())
}

//! `humanoid eval replan`: the plan-change question against labels.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use super::eval::LabelledArgs;

/// Arguments of `eval replan`.
#[derive(Args, Debug)]
pub struct ReplanArgs {
    /// A CSV with `agent`, `time` and `plan` columns (plan lines separated by `;`) and
    /// optional `emotion`, `needs` ("fullness=1 energy=0"), `place` and `change` (yes/no).
    pub file: PathBuf,
    /// Thresholds on P(yes) to score (comma-separated; default: the run's, and 0.5).
    #[arg(long, value_delimiter = ',')]
    pub threshold: Vec<f32>,
    #[command(flatten)]
    pub set: LabelledArgs,
}

pub fn replan(a: ReplanArgs) -> Result<()> {
    use humanoid::eval::replan;
    use humanoid::world::World;
    let world_path = a.set.world_path();
    let world = World::load(&world_path)?;
    let items = replan::read_items(&a.file, &world)?;
    if let Some(t) = a.threshold.iter().find(|t| !(**t > 0.0 && **t < 1.0)) {
        bail!("--threshold {t}: must be between 0 and 1");
    }
    let (resolved, mut engine) = a.set.model.load()?;
    let run_threshold = resolved
        .manifest
        .as_ref()
        .map_or(0.5, |m| m.yes_threshold.change_plan());
    let mut thresholds = a.threshold.clone();
    if thresholds.is_empty() {
        thresholds.push(run_threshold);
        if run_threshold != 0.5 {
            thresholds.push(0.5);
        }
    }
    let model = resolved
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bar = indicatif::ProgressBar::new(items.len() as u64).with_style(
        indicatif::ProgressStyle::with_template("asking {pos}/{len} plans {bar:30} {eta}")
            .expect("a valid template"),
    );
    let asked = replan::ask_items(&mut engine, &world, &items, a.set.batch, &mut |n| {
        bar.set_position(n as u64)
    });
    bar.finish_and_clear();
    let r = replan::report(&model, &world, &items, &asked, &thresholds, run_threshold);
    if a.set.json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(());
    }
    println!(
        "{} plans asked of {} in {}; {} fallbacks (kept the plan); a run changes the plan above P(yes) {}",
        r.items, r.model, world.name, r.fallbacks, r.run_threshold
    );
    let labelled = r.thresholds.iter().any(|t| t.score.is_some());
    if !labelled {
        println!("line | agent | time | feeling | P(yes)");
        for x in &r.answers {
            let p = x.p_yes.map_or("fallback".into(), |p| format!("{p:.3}"));
            println!(
                "{} | {} | {} | {} | {p}",
                x.line, x.agent, x.time, x.feeling
            );
        }
        return Ok(());
    }
    println!(
        "{:>9} {:>5} {:>8} {:>6} {:>8} {:>8} {:>9} {:>9}",
        "threshold", "items", "micro-F1", "yes-F1", "pred yes", "lab yes", "const F1", "const yF1"
    );
    for t in &r.thresholds {
        if let Some(s) = &t.score {
            println!(
                "{:>9} {:>5} {:>8.3} {:>6.3} {:>8.3} {:>8.3} {:>9.3} {:>9.3}",
                t.threshold,
                s.items,
                s.micro_f1,
                s.yes_f1,
                s.predicted_yes,
                s.labelled_yes,
                s.constant_micro_f1,
                s.constant_yes_f1
            );
        }
    }
    Ok(())
}

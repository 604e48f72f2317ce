//! `humanoid eval place`: the location walk against labelled places.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;

use super::eval::LabelledArgs;

/// Arguments of `eval place`.
#[derive(Args, Debug)]
pub struct PlaceArgs {
    /// A CSV with `activity` and `places` columns (leaf paths separated by `;`) and
    /// optional `agent`, `time` and `from` columns.
    pub file: PathBuf,
    /// Weights of the relevance prior to score (comma-separated; default: a run's).
    #[arg(long, value_delimiter = ',')]
    pub prior: Vec<f32>,
    /// Powers of the model's probabilities to score (0: the prior alone; default: a run's).
    #[arg(long, value_delimiter = ',')]
    pub sharpness: Vec<f32>,
    /// Factors on another agent's room to score (1: no penalty; default: a run's).
    #[arg(long, value_delimiter = ',')]
    pub others: Vec<f32>,
    /// Stay ratios to score (default: a run's).
    #[arg(long, value_delimiter = ',')]
    pub stay: Vec<f32>,
    /// Factors on a place the activity names to score (1: none; default: a run's).
    #[arg(long, value_delimiter = ',')]
    pub named: Vec<f32>,
    /// Stay ratios between buildings (the top level) to score (default: a run's).
    #[arg(long, value_delimiter = ',')]
    pub building_stay: Vec<f32>,
    /// How the questions put the options: numbered (as a run asks) or names. Several,
    /// comma-separated, are each asked in full.
    #[arg(long, value_delimiter = ',', default_value = "numbered")]
    pub prompt: Vec<humanoid::agent::place::PlacePrompt>,
    /// List the items whose place does not fit (for the first weights).
    #[arg(long)]
    pub misses: bool,
    /// Score the quality report's place rule (`check --quality`: the place about as like
    /// the activity as the most like place, by the embedding model, or one the activity
    /// names) against the labels instead: no chat model is loaded.
    #[arg(long)]
    pub checker: bool,
    /// Keep the model's answers in this file: read them when it holds the answers to these
    /// questions of this model (no model is then loaded), else ask and write them. The walk's
    /// rules and weights can then be tuned in seconds. One `--prompt` only.
    #[arg(long)]
    pub answers: Option<PathBuf>,
    #[command(flatten)]
    pub set: LabelledArgs,
}

pub fn place(a: PlaceArgs) -> Result<()> {
    use humanoid::agent::place::PlaceWeights;
    use humanoid::eval::place::{self, PlaceReport};
    use humanoid::eval::place_kept;
    use humanoid::world::World;
    let world_path = a.set.world_path();
    let world = World::load(&world_path)?;
    let items = place::read_items(&a.file, &world)?;
    if a.checker {
        return checker(&world, &items, a.set.json);
    }
    let run = PlaceWeights::default();
    let or_run = |v: &[f32], d: f32| if v.is_empty() { vec![d] } else { v.to_vec() };
    let mut grid = Vec::new();
    for &prior in &or_run(&a.prior, run.prior) {
        for &sharpness in &or_run(&a.sharpness, run.sharpness) {
            for &stay_ratio in &or_run(&a.stay, run.stay_ratio) {
                for &others_room in &or_run(&a.others, run.others_room) {
                    for &named in &or_run(&a.named, run.named) {
                        for &building_stay in &or_run(&a.building_stay, run.building_stay) {
                            grid.push(PlaceWeights {
                                prior,
                                sharpness,
                                stay_ratio,
                                others_room,
                                named,
                                building_stay,
                            });
                        }
                    }
                }
            }
        }
    }
    if let Some(w) = grid.iter().find(|w| {
        !(w.prior.is_finite()
            && w.sharpness >= 0.0
            && (0.0..=1.0).contains(&w.stay_ratio)
            && (0.0..=1.0).contains(&w.others_room)
            && (0.0..=1.0).contains(&w.building_stay)
            && w.named >= 1.0
            && w.named.is_finite())
    }) {
        bail!(
            "weights prior={} sharpness={} stay={} others={} named={} building stay={}: the prior must be a number, the sharpness at least 0, the stay ratios and the others' room factor within 0..1, the named factor at least 1",
            w.prior, w.sharpness, w.stay_ratio, w.others_room, w.named, w.building_stay
        );
    }
    if a.answers.is_some() && a.prompt.len() > 1 {
        bail!("--answers keeps the answers of one --prompt; name one");
    }
    let resolved = super::resolve_model(a.set.model.model.as_deref())?;
    let model = resolved
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Kept answers are of this file held this way on this device (answers differ slightly
    // between weight formats and devices).
    let kept_model = format!(
        "{model} ({} weights, {})",
        a.set.model.weights.as_str(),
        a.set.model.device
    );
    let mut loaded = None;
    let mut reports = Vec::new();
    for &prompt in &a.prompt {
        let kept = match &a.answers {
            Some(path) => place_kept::read(path, &kept_model, &world, &items, prompt)?,
            None => None,
        };
        let answers = match kept {
            Some(answers) => answers,
            None => {
                if loaded.is_none() {
                    let (_, engine) = a.set.model.load()?;
                    let embedder = humanoid::embed::Embedder::load_default(true)
                        .map_err(|e| anyhow::anyhow!("loading the embedding model: {e}"))?;
                    loaded = Some((engine, embedder));
                }
                let (engine, embedder) = loaded.as_mut().expect("loaded above");
                let bar = indicatif::ProgressBar::new(items.len() as u64).with_style(
                    indicatif::ProgressStyle::with_template(&format!(
                        "placing ({prompt}) {{pos}}/{{len}} activities {{bar:30}} {{eta}}"
                    ))
                    .expect("a valid template"),
                );
                let answers = place::ask_items(
                    engine,
                    Some(embedder),
                    &world,
                    &items,
                    prompt,
                    a.set.batch,
                    &mut |n| bar.set_position(n as u64),
                )?;
                bar.finish_and_clear();
                if let Some(path) = &a.answers {
                    place_kept::write(path, &kept_model, &world, &items, prompt, &answers)?;
                }
                answers
            }
        };
        reports.push(PlaceReport {
            model: model.clone(),
            prompt,
            world: world_path.display().to_string(),
            items: items.len(),
            failed_questions: answers
                .iter()
                .map(|x| x.model.values().filter(|p| p.is_none()).count())
                .sum(),
            stay_baseline: place::stay_baseline(&items),
            scores: grid
                .iter()
                .map(|&w| place::score(&world, &items, &answers, w))
                .collect(),
        });
    }
    if a.set.json {
        match reports.as_slice() {
            [one] => println!("{}", serde_json::to_string(one)?),
            many => println!("{}", serde_json::to_string(many)?),
        }
        return Ok(());
    }
    for report in &reports {
        print!("{}", place_table(report, a.misses));
    }
    Ok(())
}

/// The place report as text: one row per weights, then the misses of the first if asked.
fn place_table(r: &humanoid::eval::place::PlaceReport, misses: bool) -> String {
    use std::fmt::Write;
    let mut out = format!(
        "{} on {}, questions as {} ({} items, {} failed questions); staying put fits {:.3}\n",
        r.model, r.world, r.prompt, r.items, r.failed_questions, r.stay_baseline
    );
    let _ = writeln!(
        out,
        "{:>6} {:>9} {:>5} {:>6} {:>5} {:>8} {:>6} {:>9} {:>6}",
        "prior", "sharpness", "stay", "others", "named", "bld stay", "fits", "building", "stays"
    );
    for s in &r.scores {
        let w = s.weights;
        let _ = writeln!(
            out,
            "{:>6} {:>9} {:>5} {:>6} {:>5} {:>8} {:>6.3} {:>9.3} {:>6.3}",
            w.prior,
            w.sharpness,
            w.stay_ratio,
            w.others_room,
            w.named,
            w.building_stay,
            s.fits,
            s.building,
            s.stays
        );
    }
    if let Some(s) = r.scores.first().filter(|_| misses) {
        let w = s.weights;
        let _ = writeln!(
            out,
            "places that do not fit (prior {}, sharpness {}, stay {}, others {}, named {}, building stay {}):",
            w.prior, w.sharpness, w.stay_ratio, w.others_room, w.named, w.building_stay
        );
        for (line, activity, got) in &s.misses {
            let _ = writeln!(out, "  line {line}: {activity} -> {got}");
        }
    }
    out
}

/// `eval place --checker`: the quality report's place rule against the labels.
fn checker(
    world: &humanoid::world::World,
    items: &[humanoid::eval::place::PlaceItem],
    json: bool,
) -> Result<()> {
    let mut embedder = humanoid::embed::Embedder::load_default(true)
        .map_err(|e| anyhow::anyhow!("loading the embedding model: {e}"))?;
    let Some(s) = humanoid::eval::place_check::checker_score(world, items, &mut embedder) else {
        bail!("the embedding model failed (see the log)");
    };
    if json {
        println!("{}", serde_json::to_string(&s)?);
        return Ok(());
    }
    println!(
        "the place rule of check --quality on {} items:\n  fitting places accepted {:.3} ({} of {})\n  other places flagged    {:.3} ({} of {})\n  balanced accuracy       {:.3}",
        items.len(),
        s.fitting_accepted.share,
        s.fitting_accepted.good,
        s.fitting_accepted.total,
        s.others_flagged.share,
        s.others_flagged.good,
        s.others_flagged.total,
        s.balanced
    );
    for (what, share) in [
        ("fitting places flagged", &s.fitting_accepted),
        ("other places accepted", &s.others_flagged),
    ] {
        for e in &share.examples {
            println!("  {what}: {e}");
        }
    }
    Ok(())
}

//! `humanoid eval`: agreement of a run's judgements with human labels (annotation sheets),
//! and information diffusion.

use std::path::PathBuf;

use anyhow::{bail, Result};
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
    /// Ask a model the questions a run asks about each activity of a CSV (its emotion and
    /// the five needs' yes/no, through choose) in one agent's context, and score the answers
    /// against the CSV's label columns (fullness, social, fun, health, energy: yes/no;
    /// emotion) next to a constant answer. Without labels, print the judgements.
    Judge(JudgeArgs),
    /// Ask a model the location walk's questions about each activity of a labelled CSV
    /// (columns agent, time, from, activity, places) and score the places the walk reaches
    /// against the labels, under the run's weights or others (the relevance prior, the
    /// model's sharpness, the stay ratio), next to staying put.
    Place(super::eval_place::PlaceArgs),
    /// Ask a model whether an agent changes its plan (the run's yes/no question) for each
    /// row of a CSV (agent, time, emotion, needs, place, plan from then on) and score the
    /// answers against a `change` label column at several thresholds on P(yes).
    Replan(super::eval_replan::ReplanArgs),
    /// Talk a run's conversations again with the current prompts (and any model): each
    /// pair as it was at its step (state, relationships, memories), seeded as the run was;
    /// print both transcripts and the quality report's figures for both (utterances about
    /// something in the situation, in the speaker's voice, not repeats).
    Converse(super::eval_converse::ConverseArgs),
    /// Score the quality report's step rule (a 15-minute step about as like its day-plan
    /// line as any other line, by the embedding model) against a CSV of hand-labelled steps
    /// (columns agent, time, plan, activity, fits); no chat model is loaded.
    Steps(super::eval_steps::StepsArgs),
}

/// The arguments every labelled-set evaluation takes (`eval judge`, `place` and `replan`).
#[derive(Args, Debug)]
pub struct LabelledArgs {
    /// The world whose agents and places the rows are asked about (default: the Lin family).
    #[arg(long)]
    pub world: Option<PathBuf>,
    /// Rows per engine batch.
    #[arg(long, default_value_t = 8)]
    pub batch: usize,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

impl LabelledArgs {
    /// `--world`, or the bundled Lin family.
    pub fn world_path(&self) -> PathBuf {
        self.world.clone().unwrap_or_else(super::bundled_world)
    }
}

/// Arguments of `eval judge`.
#[derive(Args, Debug)]
pub struct JudgeArgs {
    /// A CSV with an `activity` column and optional label columns.
    pub file: PathBuf,
    /// The agent (default: the world's first).
    #[arg(long)]
    pub agent: Option<String>,
    /// The time of the world's first day, e.g. "10:00 am" (the default).
    #[arg(long, default_value = "10:00 am")]
    pub at: String,
    /// plain: as a run decides (the more probable option; for a need, P(yes) above the
    /// model's threshold, 0.5 unless its manifest tunes it); calibrated: each option's
    /// probability divided by its probability for content-free activities (Zhao et al. 2021).
    /// Several, comma-separated, are scored from the same model answers.
    #[arg(long, default_value = "plain", value_delimiter = ',')]
    pub method: Vec<humanoid::eval::judge::Method>,
    /// How the questions are put: plain (after the agent's context, as a run asks unless
    /// told otherwise) or examples (after solved examples). Several, comma-separated, are
    /// each asked in full. Default: a run's.
    #[arg(long, value_delimiter = ',')]
    pub prompt: Vec<humanoid::agent::act::JudgePrompt>,
    /// Thresholds on P(yes) for the plain method instead of the model manifest's
    /// `yes_threshold`, e.g. `fun=0.6,health=0.55` (a need not named takes 0.5).
    #[arg(long, value_delimiter = ',', value_parser = parse_threshold)]
    pub yes_threshold: Option<Vec<(String, f32)>>,
    #[command(flatten)]
    pub set: LabelledArgs,
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
        EvalCommand::Judge(a) => judge(a),
        EvalCommand::Place(a) => super::eval_place::place(a),
        EvalCommand::Replan(a) => super::eval_replan::replan(a),
        EvalCommand::Converse(a) => super::eval_converse::converse(a),
        EvalCommand::Steps(a) => super::eval_steps::steps(a),
    }
}

/// Reads `NEED=P` of `--yes-threshold`.
fn parse_threshold(s: &str) -> std::result::Result<(String, f32), String> {
    let (need, p) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?}: expected NEED=P, e.g. fun=0.6"))?;
    let p = p
        .trim()
        .parse::<f32>()
        .map_err(|e| format!("{s:?}: {p:?} is not a number ({e})"))?;
    Ok((need.trim().to_string(), p))
}

fn judge(a: JudgeArgs) -> Result<()> {
    use humanoid::eval::judge::{self, JudgeContext, JudgeReport};
    use humanoid::world::YesThresholds;
    use humanoid::world::{clock, World};
    let items = judge::read_items(&a.file)?;
    let world_path = a.set.world_path();
    let world = World::load(&world_path)?;
    let agent = match &a.agent {
        Some(n) => world.agent_index(n).ok_or_else(|| {
            anyhow::anyhow!(
                "--agent {n:?}: no such agent in {} (agents: {})",
                world_path.display(),
                world.agent_list()
            )
        })?,
        None => 0,
    };
    let minutes = clock::parse_time(&a.at)
        .ok_or_else(|| anyhow::anyhow!("--at {:?}: expected a time like \"10:00 am\"", a.at))?;
    // Checked before the model loads, so a bad value fails at once.
    let given = a
        .yes_threshold
        .as_ref()
        .map(|pairs| YesThresholds(pairs.iter().cloned().collect()));
    if let Some((need, why)) = given.as_ref().and_then(YesThresholds::invalid) {
        bail!("--yes-threshold {need}: {why}");
    }
    let (resolved, mut engine) = a.set.model.load()?;
    let yes_threshold = match given {
        Some(t) => t,
        None => resolved
            .manifest
            .as_ref()
            .map(|m| m.yes_threshold.clone())
            .unwrap_or_default(),
    };
    let model = resolved
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let prompts = if a.prompt.is_empty() {
        vec![judge::RUN_JUDGE_PROMPT]
    } else {
        a.prompt.clone()
    };
    let mut reports = Vec::new();
    for prompt in prompts {
        let ctx = JudgeContext {
            world: &world,
            agent,
            date: world.start_date,
            minutes,
            prompt,
        };
        let bar = indicatif::ProgressBar::new(items.len() as u64).with_style(
            indicatif::ProgressStyle::with_template(&format!(
                "judging ({prompt}) {{pos}}/{{len}} activities {{bar:30}} {{eta}}"
            ))
            .expect("a valid template"),
        );
        let reference = a
            .method
            .contains(&judge::Method::Calibrated)
            .then(|| judge::content_free_reference(&mut engine, &ctx));
        let asked = judge::ask_items(&mut engine, &ctx, &items, a.set.batch, &mut |n| {
            bar.set_position(n as u64)
        });
        bar.finish_and_clear();
        for &method in &a.method {
            let judged = judge::decide(
                &items,
                &asked,
                method,
                reference.as_deref(),
                yes_threshold.per_need(),
            );
            reports.push(JudgeReport {
                model: model.clone(),
                method,
                prompt,
                agent: world.agents[agent].name.clone(),
                at: format!(
                    "{} {}",
                    clock::format_date(world.start_date),
                    clock::format_time(minutes)
                ),
                items: items.len(),
                yes_threshold: match method {
                    judge::Method::Plain => yes_threshold.clone(),
                    judge::Method::Calibrated => YesThresholds::default(),
                },
                fallbacks: judged.iter().filter(|j| j.fallback.is_some()).count(),
                dimensions: judge::scores(&items, &judged),
                judgements: judged,
            });
        }
    }
    if a.set.json {
        match reports.as_slice() {
            [one] => println!("{}", serde_json::to_string(one)?),
            many => println!("{}", serde_json::to_string(many)?),
        }
    } else {
        for r in &reports {
            print!("{}", judge_table(r));
        }
    }
    Ok(())
}

/// The judge report as text: the scores per labelled dimension, or the judgements.
fn judge_table(r: &humanoid::eval::judge::JudgeReport) -> String {
    let mut s = format!(
        "{} activities judged by {} ({}, {} questions) as {} at {}; {} fallbacks\n",
        r.items, r.model, r.method, r.prompt, r.agent, r.at, r.fallbacks
    );
    if !r.yes_threshold.is_empty() {
        let t: Vec<String> = r
            .yes_threshold
            .0
            .iter()
            .map(|(n, p)| format!("{n} {p}"))
            .collect();
        s.push_str(&format!("yes above P(yes) {} (else 0.5)\n", t.join(", ")));
    }
    if r.dimensions.is_empty() {
        s.push_str("activity | fullness social fun health energy (P(yes)) | emotion\n");
        for j in &r.judgements {
            let p: Vec<String> = j.p_yes.iter().map(|p| format!("{p:.2}")).collect();
            s.push_str(&format!(
                "{} | {} | {}\n",
                j.activity,
                p.join(" "),
                j.emotion().as_str()
            ));
        }
        return s;
    }
    s.push_str(&format!(
        "{:<9} {:>5} {:>8} {:>6} {:>8} {:>8} {:>9} {:>9}\n",
        "dimension", "items", "micro-F1", "yes-F1", "pred yes", "lab yes", "const F1", "const yF1"
    ));
    let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    for (name, v) in &r.dimensions {
        if name == "emotion" {
            continue;
        }
        s.push_str(&format!(
            "{:<9} {:>5} {:>8.3} {:>6.3} {:>8.3} {:>8.3} {:>9.3} {:>9.3}\n",
            name,
            v["items"],
            f(v, "micro_f1"),
            f(v, "yes_f1"),
            f(v, "predicted_yes"),
            f(v, "labelled_yes"),
            f(v, "constant_micro_f1"),
            f(v, "constant_yes_f1")
        ));
    }
    if let Some(v) = r.dimensions.get("emotion") {
        s.push_str(&format!(
            "{:<9} {:>5} {:>8.3} {:>6} {:>8} {:>8} {:>9.3}\n",
            "emotion",
            v["items"],
            f(v, "micro_f1"),
            "",
            "",
            "",
            f(v, "constant_micro_f1")
        ));
        s.push_str("emotion confusion (label: predicted counts):\n");
        if let Some(m) = v["confusion"].as_object() {
            for (label, row) in m {
                let cells: Vec<String> = row
                    .as_object()
                    .map(|r| r.iter().map(|(p, n)| format!("{p} {n}")).collect())
                    .unwrap_or_default();
                s.push_str(&format!("  {label}: {}\n", cells.join(", ")));
            }
        }
    }
    s
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

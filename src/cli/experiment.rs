//! `humanoid experiment ablation`: the Humanoid Agents paper's ablations (Table 2) as one
//! command: the same world and seeds run in a normal and an altered setting, then compared.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{ArgGroup, Args, Subcommand};
use humanoid::eval::ablation::{compare, measure_run, Comparison, RunMeasures, Spread};
use humanoid::sim::RunDir;
use humanoid::world::{Condition, Need, World, CLOSENESS_MAX};
use serde::{Deserialize, Serialize};

use super::spawn::{run_child, RunSpec};
use super::ModelArgs;

/// `humanoid experiment ...`.
#[derive(Subcommand, Debug)]
pub enum ExperimentCommand {
    /// Run a world normally and with one need at 0, the emotion held, or every closeness
    /// set, over several seeds, and compare what the agents did.
    Ablation(AblationArgs),
}

/// Arguments of `experiment ablation`.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("what").required(true).args(["need", "emotion", "closeness"])))]
pub struct AblationArgs {
    /// The world file.
    pub world: PathBuf,
    /// Start this need at 0 for every agent; reports the hours spent on activities that
    /// satisfy it, normal vs ablated. Several needs (comma-separated, or `all`) share the
    /// normal runs: the paper's Table 2 in one command.
    #[arg(long, num_args = 1.., value_delimiter = ',')]
    pub need: Option<Vec<String>>,
    /// Hold every agent's emotion at this one all run; reports the hours spent on each
    /// need, normal vs held.
    #[arg(long)]
    pub emotion: Option<String>,
    /// Set every closeness to each of these levels (default 0,5,10,15); reports the number
    /// of conversations and the share that every participant enjoyed.
    #[arg(long, num_args = 0.., value_delimiter = ',')]
    pub closeness: Option<Vec<u8>>,
    /// Simulated days per run.
    #[arg(long, default_value_t = 1)]
    pub days: u32,
    /// Stop each run after this many steps (default: all of the days).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Number of seeds per setting.
    #[arg(long, default_value_t = 3)]
    pub seeds: u64,
    /// The first seed (the seeds are consecutive).
    #[arg(long, default_value_t = 0)]
    pub first_seed: u64,
    /// Experiment directory: one run per setting and seed, and ablation.json (default:
    /// runs/ablation-WORLD-WHAT). Running the command again continues an interrupted one.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub model: ModelArgs,
}

/// One setting's runs.
#[derive(Serialize)]
struct SettingRuns {
    setting: String,
    conditions: Vec<String>,
    runs: Vec<(u64, PathBuf, RunMeasures)>,
}

/// What the report compares.
#[derive(Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Findings {
    Needs {
        needs: Vec<NeedRow>,
    },
    Emotion {
        emotion: String,
        hours_by_need: Vec<(String, Comparison)>,
    },
    Closeness {
        levels: Vec<ClosenessRow>,
    },
}

/// One need's hours, normal vs that need starting at 0.
#[derive(Serialize)]
struct NeedRow {
    need: String,
    hours: Comparison,
}

#[derive(Serialize)]
struct ClosenessRow {
    closeness: u8,
    conversations: Option<Spread>,
    positive_share: Option<Spread>,
}

/// Runs `experiment`.
pub fn run(c: ExperimentCommand) -> Result<()> {
    match c {
        ExperimentCommand::Ablation(a) => ablation(a),
    }
}

fn condition(s: &str) -> Result<Condition> {
    s.parse::<Condition>().map_err(anyhow::Error::from)
}

fn ablation(a: AblationArgs) -> Result<()> {
    let world = World::load(&a.world)?;
    if a.seeds == 0 {
        bail!("--seeds 0: at least one seed is needed");
    }
    let (what, settings) = settings(&a)?;
    let out = a.out.clone().unwrap_or_else(|| {
        let stem = a.world.file_stem().unwrap_or_default().to_string_lossy();
        PathBuf::from("runs").join(format!("ablation-{stem}-{what}"))
    });
    let seeds: Vec<u64> = (a.first_seed..a.first_seed + a.seeds).collect();
    let total = settings.len() * seeds.len();
    eprintln!(
        "ablation of {what} on {}: {} settings × {} seeds -> {}",
        world.name,
        settings.len(),
        seeds.len(),
        out.display()
    );
    // Seeds outermost: after each seed every setting has a run, so an interrupted
    // experiment already compares all of them.
    let mut results: Vec<SettingRuns> = settings
        .iter()
        .map(|(setting, conds)| SettingRuns {
            setting: setting.clone(),
            conditions: conds.clone(),
            runs: Vec::new(),
        })
        .collect();
    for (j, &seed) in seeds.iter().enumerate() {
        for (k, s) in results.iter_mut().enumerate() {
            let dir = out.join(&s.setting).join(format!("seed-{seed}"));
            eprintln!(
                "[{}/{total}] {}, seed {seed}: {}",
                j * settings.len() + k + 1,
                s.setting,
                dir.display()
            );
            let spec = KeptSpec {
                seed,
                conditions: s.conditions.clone(),
                days: a.days,
                steps: a.steps,
                model: a.model.model.clone(),
            };
            let m = match kept_measures(&dir, &spec)? {
                Some(m) => {
                    eprintln!("  only its measures are kept ({KEPT}), used as they are");
                    m
                }
                None => {
                    let child = run_child(&RunSpec {
                        world: &a.world,
                        out: dir.clone(),
                        seed,
                        days: Some(a.days),
                        steps: a.steps,
                        conditions: s.conditions.clone(),
                        model: &a.model,
                    })?;
                    if child.reused {
                        eprintln!("  already complete, kept");
                    }
                    let m = measure_run(&dir)
                        .with_context(|| format!("measuring {}", dir.display()))?;
                    keep_measures(&dir, spec, &m)?;
                    m
                }
            };
            s.runs.push((seed, dir, m));
        }
    }
    let findings = findings(&a, &results)?;
    let report = serde_json::json!({
        "world": world.name,
        "days": a.days,
        "steps": a.steps,
        "seeds": seeds,
        "settings": results,
        "findings": findings,
    });
    let path = out.join("ablation.json");
    std::fs::write(&path, serde_json::to_string_pretty(&report)?)
        .with_context(|| format!("writing {}", path.display()))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_findings(&findings, &results);
        println!("runs and ablation.json: {}", out.display());
    }
    Ok(())
}

/// What an experiment keeps of each measured run beside it, `SETTING/seed-S/measures.json`:
/// a few hundred bytes that report the run again once its own files (tens of MB) are gone,
/// so that a long experiment's seeds can be run in several sittings or on several machines
/// and the results kept with the code. A finished run present is always measured afresh.
const KEPT: &str = "measures.json";

/// What defines a kept run: a kept file is used only for the same spec.
#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct KeptSpec {
    seed: u64,
    conditions: Vec<String>,
    days: u32,
    steps: Option<u64>,
    /// `--model` as given (`None`: the default).
    model: Option<String>,
}

/// The contents of `measures.json`.
#[derive(Serialize, Deserialize)]
struct Kept {
    spec: KeptSpec,
    /// The program version and model file that made the run (for the reader).
    version: String,
    model_sha256: String,
    measures: RunMeasures,
}

/// The kept measures of `dir` when it holds no run but a `measures.json` for `spec`.
fn kept_measures(dir: &std::path::Path, spec: &KeptSpec) -> Result<Option<RunMeasures>> {
    let path = dir.join(KEPT);
    if RunDir::new(dir).is_run() || !path.is_file() {
        return Ok(None);
    }
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let kept: Kept = serde_json::from_str(&text)
        .with_context(|| format!("{}: not an experiment's kept measures", path.display()))?;
    if kept.spec != *spec {
        bail!(
            "{}: kept measures of another run ({:?}), not of {:?}; remove the file or choose another --out",
            path.display(),
            kept.spec,
            spec
        );
    }
    Ok(Some(kept.measures))
}

/// Writes `measures.json` beside the run in `dir`.
fn keep_measures(dir: &std::path::Path, spec: KeptSpec, m: &RunMeasures) -> Result<()> {
    let config = RunDir::new(dir).read_config()?;
    let kept = Kept {
        spec,
        version: config.version,
        model_sha256: config.model.sha256,
        measures: m.clone(),
    };
    let path = dir.join(KEPT);
    std::fs::write(&path, serde_json::to_string_pretty(&kept)?)
        .with_context(|| format!("writing {}", path.display()))
}

/// Settings to run: each a name and its `--condition` values.
type Settings = Vec<(String, Vec<String>)>;

/// The settings to run and a name for what is ablated.
fn settings(a: &AblationArgs) -> Result<(String, Settings)> {
    let normal = ("normal".to_string(), Vec::new());
    if let Some(names) = &a.need {
        let needs = needs(names)?;
        let what = needs
            .iter()
            .map(|n| n.as_str())
            .collect::<Vec<_>>()
            .join("-");
        let mut settings = vec![normal];
        for n in needs {
            let c = condition(&format!("{}=0", n.as_str()))?.to_string();
            settings.push((c.clone(), vec![c]));
        }
        return Ok((what, settings));
    }
    if let Some(e) = &a.emotion {
        let c = condition(&format!("emotion={}", e.trim()))
            .with_context(|| format!("--emotion {e}"))?;
        let c = c.to_string();
        return Ok((c.clone(), vec![normal, (c.clone(), vec![c])]));
    }
    let mut levels = a.closeness.clone().unwrap_or_default();
    if levels.is_empty() {
        levels = vec![0, 5, 10, 15];
    }
    if let Some(l) = levels.iter().find(|&&l| l > CLOSENESS_MAX) {
        bail!("--closeness {l}: must be 0–{CLOSENESS_MAX}");
    }
    levels.sort_unstable();
    levels.dedup();
    let s = levels
        .iter()
        .map(|l| {
            let c = format!("closeness={l}");
            (c.clone(), vec![c])
        })
        .collect();
    Ok(("closeness".into(), s))
}

fn findings(a: &AblationArgs, results: &[SettingRuns]) -> Result<Findings> {
    let values = |s: &SettingRuns, f: &dyn Fn(&RunMeasures) -> f64| -> Vec<f64> {
        s.runs.iter().map(|(_, _, m)| f(m)).collect()
    };
    if let Some(names) = &a.need {
        let rows = needs(names)?
            .into_iter()
            .zip(&results[1..])
            .map(|(need, treated)| NeedRow {
                need: need.as_str().into(),
                hours: compare(
                    &values(&results[0], &|m| m.hours_on(need)),
                    &values(treated, &|m| m.hours_on(need)),
                ),
            })
            .collect();
        return Ok(Findings::Needs { needs: rows });
    }
    if a.emotion.is_some() {
        let hours_by_need = Need::ALL
            .iter()
            .map(|&need| {
                let c = compare(
                    &values(&results[0], &|m| m.hours_on(need)),
                    &values(&results[1], &|m| m.hours_on(need)),
                );
                (need.as_str().to_string(), c)
            })
            .collect();
        return Ok(Findings::Emotion {
            emotion: results[1].setting.clone(),
            hours_by_need,
        });
    }
    let levels = results
        .iter()
        .map(|s| ClosenessRow {
            closeness: s.setting["closeness=".len()..].parse().unwrap_or(0),
            conversations: Spread::of(&values(s, &|m| m.conversations as f64)),
            positive_share: Spread::of(
                &s.runs
                    .iter()
                    .filter_map(|(_, _, m)| m.positive_share())
                    .collect::<Vec<_>>(),
            ),
        })
        .collect();
    Ok(Findings::Closeness { levels })
}

/// The needs `--need` names (`all`: the five), each once, in the order given.
fn needs(names: &[String]) -> Result<Vec<Need>> {
    let mut out: Vec<Need> = Vec::new();
    for n in names.iter().map(|n| n.trim()) {
        let add: Vec<Need> = if n == "all" {
            Need::ALL.to_vec()
        } else {
            condition(&format!("{n}=0")).with_context(|| format!("--need {n}"))?;
            vec![n.parse().map_err(|e| anyhow::anyhow!("--need {n}: {e}"))?]
        };
        for need in add {
            if !out.contains(&need) {
                out.push(need);
            }
        }
    }
    if out.is_empty() {
        bail!("--need: name at least one need (fullness, social, fun, health, energy or all)");
    }
    Ok(out)
}

fn spread(s: Option<Spread>, unit: &str) -> String {
    s.map_or("n/a".into(), |s| {
        format!("{:.2} ± {:.2}{unit}", s.mean, s.sd)
    })
}

fn increase(c: &Comparison) -> String {
    let mean = c
        .increase_pct
        .map_or("n/a (normal is 0)".into(), |p| format!("{p:+.0}%"));
    match c.per_seed_increase_pct {
        Some(s) => format!(
            "{mean} (per seed {:+.0}% ± {:.0}%, n={})",
            s.mean, s.sd, s.n
        ),
        None => mean,
    }
}

fn print_findings(f: &Findings, results: &[SettingRuns]) {
    let seeds = results.first().map_or(0, |s| s.runs.len());
    match f {
        Findings::Needs { needs } => {
            println!(
                "hours per agent on activities that satisfy the need (mean ± sd over {seeds} seeds):"
            );
            println!(
                "  {:<9} {:<16} {:<16} increase",
                "need", results[0].setting, "need at 0"
            );
            for r in needs {
                println!(
                    "  {:<9} {:<16} {:<16} {}",
                    r.need,
                    spread(r.hours.normal, " h"),
                    spread(r.hours.treated, " h"),
                    increase(&r.hours)
                );
            }
        }
        Findings::Emotion {
            emotion,
            hours_by_need,
        } => {
            println!("hours per agent on activities that satisfy each need, normal vs {emotion} (mean ± sd over {seeds} seeds):");
            for (need, c) in hours_by_need {
                println!(
                    "  {need:<9} {:<16} {:<16} {}",
                    spread(c.normal, " h"),
                    spread(c.treated, " h"),
                    increase(c)
                );
            }
        }
        Findings::Closeness { levels } => {
            println!("conversations by starting closeness (mean ± sd over {seeds} seeds):");
            for r in levels {
                println!(
                    "  closeness {:>2}: {:<16} conversations, positive share {}",
                    r.closeness,
                    spread(r.conversations, ""),
                    spread(r.positive_share, "")
                );
            }
        }
    }
}

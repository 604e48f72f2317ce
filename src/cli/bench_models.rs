//! `humanoid bench models`: the same world and seed on several models, one run each (in a
//! child process, so each model's peak memory is its own), compared in one table.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;
use humanoid::eval;
use humanoid::llm::config::Config;
use humanoid::llm::gguf::GgufFile;
use serde::Serialize;
use serde_json::Value;

use super::spawn::{run_child, RunSpec};
use super::ModelArgs;

/// Arguments of `bench models`.
#[derive(Args, Debug)]
pub struct BenchModelsArgs {
    /// The world to run on every model.
    #[arg(long)]
    pub world: PathBuf,
    /// The models: manifest names, .gguf paths or hf:OWNER/REPO/FILE.
    #[arg(long, num_args = 1.., required = true)]
    pub models: Vec<String>,
    /// Simulated days per run.
    #[arg(long, default_value_t = 1)]
    pub days: u32,
    /// Stop each run after this many steps (default: all of the days).
    #[arg(long)]
    pub steps: Option<u64>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Benchmark directory: one run per model, each run's annotation sheet under sheets/,
    /// and models.csv / models.json (default: runs/bench-models-WORLD-seedS). Running the
    /// command again keeps finished runs and resumes an interrupted one.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Annotators' sheets: a folder with one subfolder per model (named as the model's run
    /// folder) holding filled-in copies of that run's sheet; adds agreement (micro-F1).
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// A labelled activity CSV (as `eval judge` reads): each model answers the run's own need
    /// and emotion questions about every activity, scored against the labels.
    #[arg(long)]
    pub judge: Option<PathBuf>,
    /// Print one JSON array instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Settings shared by every model (`--model` is ignored: see `--models`).
    #[command(flatten)]
    pub model: ModelArgs,
}

/// One model's row.
#[derive(Clone, Debug, Serialize)]
pub struct ModelRow {
    pub model: String,
    pub architecture: String,
    /// The weight type of most parameters.
    pub quant: String,
    pub parameters: usize,
    pub size_bytes: u64,
    pub device: String,
    pub wall_seconds: f64,
    pub agent_steps: u64,
    pub agent_steps_per_minute: f64,
    /// Prompt tokens (computed or reused) per second of the run.
    pub prompt_tok_s: f64,
    pub generated_tok_s: f64,
    pub choose_calls_s: f64,
    /// Mean sequences per forward step.
    pub batch_occupancy: f64,
    pub model_calls: u64,
    pub fallbacks: u64,
    /// Fallbacks per model call.
    pub fallback_rate: f64,
    /// Peak resident memory of the run's process (`None` for a run made earlier).
    pub peak_rss_bytes: Option<u64>,
    /// Mean micro-F1 over the scored dimensions against the annotators' majority.
    pub agreement_f1: Option<f64>,
    /// Per dimension, when labels were given.
    pub agreement: Option<BTreeMap<String, Option<f64>>>,
    /// Mean micro-F1 of `eval judge` on the `--judge` label set over its dimensions.
    pub judge_f1: Option<f64>,
    /// `eval judge`'s micro-F1 per dimension, with `--judge`.
    pub judge: Option<BTreeMap<String, f64>>,
    pub run_dir: PathBuf,
}

/// A folder name for a model spec.
fn slug(spec: &str) -> String {
    let base = Path::new(spec.trim_start_matches("hf:"))
        .file_stem()
        .map_or(spec.to_string(), |s| s.to_string_lossy().into_owned());
    base.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Runs `bench models`.
pub fn run(a: BenchModelsArgs) -> Result<()> {
    humanoid::world::World::load(&a.world)?;
    let slugs: Vec<String> = a.models.iter().map(|m| slug(m)).collect();
    for (i, s) in slugs.iter().enumerate() {
        if slugs[..i].contains(s) {
            bail!("--models: two models would share the run folder {s:?}; give each once");
        }
    }
    if let Some(l) = &a.labels {
        if !l.is_dir() {
            bail!("--labels {}: not a folder", l.display());
        }
    }
    if let Some(j) = &a.judge {
        // Read (and so checked) before any run starts.
        humanoid::eval::judge::read_items(j).with_context(|| format!("--judge {}", j.display()))?;
    }
    // Every model resolves (and is fetched) before any run starts.
    for m in &a.models {
        super::resolve_model(Some(m)).with_context(|| format!("--models {m}"))?;
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let stem = a.world.file_stem().unwrap_or_default().to_string_lossy();
        PathBuf::from("runs").join(format!("bench-models-{stem}-seed{}", a.seed))
    });
    let mut rows = Vec::new();
    for (k, (spec, slug)) in a.models.iter().zip(&slugs).enumerate() {
        let dir = out.join(slug);
        eprintln!("[{}/{}] {spec}: {}", k + 1, a.models.len(), dir.display());
        let mut margs = a.model.clone();
        margs.model = Some(spec.clone());
        let child = run_child(&RunSpec {
            world: &a.world,
            out: dir.clone(),
            seed: a.seed,
            days: Some(a.days),
            steps: a.steps,
            conditions: Vec::new(),
            model: &margs,
        })?;
        let sheets = out.join("sheets");
        std::fs::create_dir_all(&sheets)
            .with_context(|| format!("creating {}", sheets.display()))?;
        let sheet = sheets.join(format!("{slug}.csv"));
        eval::export(&dir, &sheet).with_context(|| format!("writing {}", sheet.display()))?;
        let labels = a.labels.as_ref().map(|l| l.join(slug));
        let mut row = model_row(spec, &dir, child.peak_rss, labels.as_deref())?;
        if let Some(file) = &a.judge {
            eprintln!(
                "[{}/{}] {spec}: eval judge {}",
                k + 1,
                a.models.len(),
                file.display()
            );
            let report = super::spawn::judge_child(file, &margs)?;
            let dims: BTreeMap<String, f64> = report["dimensions"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter_map(|(k, v)| Some((k.clone(), v["micro_f1"].as_f64()?)))
                        .collect()
                })
                .unwrap_or_default();
            row.judge_f1 =
                (!dims.is_empty()).then(|| dims.values().sum::<f64>() / dims.len() as f64);
            row.judge = Some(dims);
        }
        rows.push(row);
    }
    write_outputs(&out, &rows)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rows)?);
    } else {
        print!("{}", table(&rows));
        println!(
            "runs, sheets/ and models.csv, models.json: {}",
            out.display()
        );
    }
    Ok(())
}

fn read_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))
}

fn num(v: &Value, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

/// Reads one finished run into a row.
fn model_row(
    spec: &str,
    dir: &Path,
    peak_rss: Option<u64>,
    labels: Option<&Path>,
) -> Result<ModelRow> {
    let run = humanoid::sim::RunDir::open(dir)?;
    let config = run.read_config()?;
    let summary = read_json(&run.summary_path())?;
    let g = GgufFile::open(Path::new(&config.model.path))?;
    let cfg = Config::from_gguf(&g)?;
    let mut by_type: BTreeMap<String, u64> = BTreeMap::new();
    for info in g.content().tensor_infos.values() {
        *by_type.entry(format!("{:?}", info.ggml_dtype)).or_default() +=
            info.shape.elem_count() as u64;
    }
    let quant = by_type
        .iter()
        .max_by_key(|(_, n)| **n)
        .map_or("?".into(), |(t, _)| t.clone());
    let wall = num(&summary, &["extra", "wall_seconds"]);
    let per_s = |x: f64| if wall > 0.0 { x / wall } else { 0.0 };
    let counters = |k: &str| num(&summary, &["counters", k]) as u64;
    let engine = |k: &str| num(&summary, &["extra", "engine", k]);
    let agent_steps = counters("agent_steps");
    let model_calls = counters("model_calls");
    let fallbacks = counters("fallbacks");
    let (agreement_f1, agreement) = match labels {
        Some(l) => agreement(dir, l)?,
        None => (None, None),
    };
    Ok(ModelRow {
        model: spec.to_string(),
        architecture: cfg.arch_name.clone(),
        quant,
        parameters: cfg.parameter_count(),
        size_bytes: g.file_len(),
        device: config.device.clone(),
        wall_seconds: wall,
        agent_steps,
        agent_steps_per_minute: per_s(agent_steps as f64) * 60.0,
        prompt_tok_s: per_s(engine("prompt_tokens")),
        generated_tok_s: per_s(engine("generated_tokens")),
        choose_calls_s: per_s(engine("choose_calls")),
        batch_occupancy: engine("batched_seqs") / engine("forward_steps").max(1.0),
        model_calls,
        fallbacks,
        fallback_rate: fallbacks as f64 / model_calls.max(1) as f64,
        peak_rss_bytes: peak_rss,
        agreement_f1,
        agreement,
        judge_f1: None,
        judge: None,
        run_dir: dir.to_path_buf(),
    })
}

type Agreement = (Option<f64>, Option<BTreeMap<String, Option<f64>>>);

/// Scores the sheets in `labels` (every .csv) against the run in `dir`; nothing when the
/// folder is absent or holds no sheet.
fn agreement(dir: &Path, labels: &Path) -> Result<Agreement> {
    let Ok(entries) = std::fs::read_dir(labels) else {
        return Ok((None, None));
    };
    let mut sheets: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "csv"))
        .collect();
    if sheets.is_empty() {
        return Ok((None, None));
    }
    sheets.sort();
    let items = eval::items_from_run(dir)?;
    let labelled = sheets
        .iter()
        .map(|p| eval::read_labels(p, &items))
        .collect::<Result<Vec<_>, _>>()?;
    let report = eval::score(&items, &labelled);
    let per: BTreeMap<String, Option<f64>> = report
        .dimensions
        .iter()
        .map(|d| (d.dimension.clone(), d.f1))
        .collect();
    let scored: Vec<f64> = per.values().flatten().copied().collect();
    let mean = (!scored.is_empty()).then(|| scored.iter().sum::<f64>() / scored.len() as f64);
    Ok((mean, Some(per)))
}

fn mib(b: Option<u64>) -> String {
    b.map_or("-".into(), |b| {
        format!("{:.0}", b as f64 / (1 << 20) as f64)
    })
}

/// The rows as a text table.
fn table(rows: &[ModelRow]) -> String {
    let mut s = format!(
        "{:<28} {:<8} {:<6} {:>7} {:>7} {:<7} {:>8} {:>9} {:>8} {:>8} {:>8} {:>6} {:>8} {:>8} {:>6} {:>6}\n",
        "model", "arch", "quant", "params", "MiB", "device", "wall s", "steps/min",
        "prompt/s", "gen/s", "choose/s", "occup", "fallback", "peak MiB", "F1", "judge"
    );
    for r in rows {
        s.push_str(&format!(
            "{:<28} {:<8} {:<6} {:>6.0}M {:>7.0} {:<7} {:>8.1} {:>9.2} {:>8.0} {:>8.1} {:>8.2} {:>6.1} {:>7.2}% {:>8} {:>6} {:>6}\n",
            r.model,
            r.architecture,
            r.quant,
            r.parameters as f64 / 1e6,
            r.size_bytes as f64 / (1 << 20) as f64,
            r.device,
            r.wall_seconds,
            r.agent_steps_per_minute,
            r.prompt_tok_s,
            r.generated_tok_s,
            r.choose_calls_s,
            r.batch_occupancy,
            r.fallback_rate * 100.0,
            mib(r.peak_rss_bytes),
            r.agreement_f1.map_or("-".into(), |f| format!("{f:.3}")),
            r.judge_f1.map_or("-".into(), |f| format!("{f:.3}")),
        ));
    }
    s
}

/// Writes models.json and models.csv into `out`.
fn write_outputs(out: &Path, rows: &[ModelRow]) -> Result<()> {
    let json = out.join("models.json");
    std::fs::write(&json, serde_json::to_string_pretty(rows)?)
        .with_context(|| format!("writing {}", json.display()))?;
    let path = out.join("models.csv");
    let mut w =
        csv::Writer::from_path(&path).with_context(|| format!("writing {}", path.display()))?;
    w.write_record([
        "model",
        "architecture",
        "quant",
        "parameters",
        "size_bytes",
        "device",
        "wall_seconds",
        "agent_steps",
        "agent_steps_per_minute",
        "prompt_tok_s",
        "generated_tok_s",
        "choose_calls_s",
        "batch_occupancy",
        "model_calls",
        "fallbacks",
        "fallback_rate",
        "peak_rss_bytes",
        "agreement_f1",
        "judge_f1",
        "run_dir",
    ])?;
    for r in rows {
        let opt = |v: Option<String>| v.unwrap_or_default();
        w.write_record([
            r.model.clone(),
            r.architecture.clone(),
            r.quant.clone(),
            r.parameters.to_string(),
            r.size_bytes.to_string(),
            r.device.clone(),
            format!("{:.3}", r.wall_seconds),
            r.agent_steps.to_string(),
            format!("{:.3}", r.agent_steps_per_minute),
            format!("{:.2}", r.prompt_tok_s),
            format!("{:.2}", r.generated_tok_s),
            format!("{:.3}", r.choose_calls_s),
            format!("{:.3}", r.batch_occupancy),
            r.model_calls.to_string(),
            r.fallbacks.to_string(),
            format!("{:.5}", r.fallback_rate),
            opt(r.peak_rss_bytes.map(|b| b.to_string())),
            opt(r.agreement_f1.map(|f| format!("{f:.4}"))),
            opt(r.judge_f1.map(|f| format!("{f:.4}"))),
            r.run_dir.display().to_string(),
        ])?;
    }
    w.flush()
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_name_models_by_file() {
        assert_eq!(slug("smollm2-135m"), "smollm2-135m");
        assert_eq!(slug("/m/SmolLM2-135M.Q4_1.gguf"), "SmolLM2-135M.Q4_1");
        assert_eq!(slug("hf:owner/repo/gemma 3.gguf"), "gemma_3");
    }
}

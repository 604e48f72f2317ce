//! `humanoid run WORLD`, `humanoid resume DIR` and `humanoid check DIR`.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use humanoid::embed::Embedder;
use humanoid::llm::model::WeightFormat;
use humanoid::llm::{DeviceChoice, Engine, Inference};
use humanoid::model_store::sha256_file;
use humanoid::report::{check_run, check_run_steps};
use humanoid::sim::lock::RunLock;
use humanoid::sim::{Injection, Run, RunConfig, RunDir, Runtime, RuntimeParts, SimError};
use humanoid::world::{Condition, World};
use indicatif::{ProgressBar, ProgressStyle};

use super::ModelArgs;

/// Arguments of `run`.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The world file (see worlds/).
    pub world: PathBuf,
    /// Simulated days (default: the world's `days`).
    #[arg(long)]
    pub days: Option<u32>,
    /// Stop after this many 15-minute steps (default: all of the days).
    #[arg(long)]
    pub steps: Option<u64>,
    /// Seed of the run: the same seed, model and settings give identical output.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Run directory (default: runs/WORLD-seedS-TIMESTAMP); must be absent or empty.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Start condition, repeatable: a need (`fullness=0`), an emotion held all run
    /// (`emotion=sad`) or every closeness (`closeness=0`).
    #[arg(long = "condition")]
    pub conditions: Vec<String>,
    /// Plant a thought in an agent before the first step, repeatable: "AGENT: text" (the
    /// papers' inner voice, e.g. "Eddy Lin: Sam is running for mayor"). Stored as a
    /// `thought` memory of importance 10 and recorded in config.json.
    #[arg(long = "inject", value_name = "AGENT: TEXT")]
    pub injections: Vec<String>,
    #[command(flatten)]
    pub model: ModelArgs,
    #[command(flatten)]
    pub backend: super::remote::BackendArgs,
}

/// Arguments of `resume`.
#[derive(Args, Debug)]
pub struct ResumeArgs {
    /// The run directory of an interrupted run.
    pub dir: PathBuf,
    /// Worker threads for the CPU kernels (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Run on another device than the run started on (the rest of the run will then differ
    /// slightly from an uninterrupted one).
    #[arg(long)]
    pub device: Option<DeviceChoice>,
    /// For a run on a remote server: its URL now, if it moved (default: the recorded one).
    #[arg(long)]
    pub url: Option<String>,
    /// Memory for reusing prompt prefixes across calls (keys and values, MiB; 0 disables).
    /// Changes speed, never results, so a resumed run may use another budget.
    #[arg(long, default_value_t = humanoid::llm::DEFAULT_PREFIX_CACHE_MIB)]
    pub prefix_cache_mib: usize,
}

/// Arguments of `check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// A run directory, or a folder of state files alone (such as the original Humanoid
    /// Agents writes; then pass --world).
    pub dir: PathBuf,
    /// The world to check a folder of state files without config.json against (a run
    /// directory has its own; `humanoid world import` converts the original's world).
    #[arg(long, value_name = "WORLD.toml")]
    pub world: Option<PathBuf>,
    /// Also report whether the days make sense: distinct plan lines, activities in the
    /// world's script and that are actions, no sleep in the day, places that fit the activity
    /// (by the embedding model, or named by it), utterances without speaker labels or stage directions.
    #[arg(long)]
    pub quality: bool,
    /// With --quality, print the quality report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

fn default_out(world: &Path, seed: u64) -> PathBuf {
    let stem = world
        .file_stem()
        .map_or("run".into(), |s| s.to_string_lossy().into_owned());
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    PathBuf::from("runs").join(format!("{stem}-seed{seed}-{secs}"))
}

/// Runs `run`.
pub fn run(a: RunArgs) -> Result<()> {
    let world = World::load(&a.world)?;
    let conditions = a
        .conditions
        .iter()
        .map(|c| {
            c.parse::<Condition>()
                .map_err(|e| anyhow::anyhow!("--condition {c}: {e}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let injections = a
        .injections
        .iter()
        .map(|i| Injection::parse(i, &world))
        .collect::<Result<Vec<_>, _>>()?;
    let days = a.days.unwrap_or(world.days);
    if !(1..=365).contains(&days) {
        bail!("--days {days}: must be 1–365, as in a world file");
    }
    let all_steps = u64::from(days) * u64::from(world.steps_per_day());
    let steps = a.steps.unwrap_or(all_steps).min(all_steps);
    let out = a
        .out
        .clone()
        .unwrap_or_else(|| default_out(&a.world, a.seed));
    if RunLock::is_held(&out) {
        bail!(
            "{} is in use by another process (a run or resume is writing it)",
            out.display()
        );
    }
    if std::fs::read_dir(&out).is_ok_and(|mut d| d.next().is_some()) {
        bail!(
            "{} already exists and is not empty: choose another --out, or `humanoid resume {}` to continue it",
            out.display(),
            out.display()
        );
    }
    if out.exists() && !out.is_dir() {
        bail!("--out {}: exists and is not a folder", out.display());
    }
    let remote = a
        .backend
        .remote(a.model.model.as_deref(), a.model.context)?;
    let super::remote::Opened {
        inference: backend,
        info: model,
        name: model_name,
        device,
        yes_threshold,
    } = super::remote::open(remote.as_ref(), &a.model)?;
    let embedder = Embedder::load_default(true).context("loading the embedding model")?;
    let config = RunConfig {
        version: env!("CARGO_PKG_VERSION").to_string(),
        world_file: a.world.display().to_string(),
        world_source: world.source.clone(),
        model,
        embed_model: embedder.dir().display().to_string(),
        seed: a.seed,
        device,
        weights: a.model.weights.as_str().into(),
        threads: rayon::current_num_threads(),
        max_num_seqs: a.model.max_num_seqs,
        max_batched_tokens: a.model.max_batched_tokens,
        context: a.model.context,
        days,
        steps,
        conditions: conditions.iter().map(ToString::to_string).collect(),
        injections,
        yes_threshold,
        backend: remote,
    };
    eprintln!(
        "run: {} ({} agents, {} steps) on {} with seed {} -> {}",
        world.name,
        world.agents.len(),
        steps,
        model_name,
        a.seed,
        out.display()
    );
    let parts = RuntimeParts::with_backend(prompt_logged(backend)?, Box::new(embedder));
    let rt = parts.runtime();
    let run = Run::create(&out, config, &rt, &mut |_| {})?;
    drive(run, &rt)
}

/// `backend`, writing each request and answer to the file `HUMANOID_PROMPT_LOG` names
/// (appended to, so a resumed run continues it), if set.
fn prompt_logged(backend: Box<dyn Inference>) -> Result<Box<dyn Inference>> {
    let Some(path) = std::env::var_os("HUMANOID_PROMPT_LOG") else {
        return Ok(backend);
    };
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .with_context(|| {
            format!(
                "HUMANOID_PROMPT_LOG: opening {}",
                Path::new(&path).display()
            )
        })?;
    let out = Box::new(std::io::BufWriter::new(file));
    Ok(Box::new(humanoid::llm::prompt_log::PromptLog::new(
        backend, out,
    )))
}

/// Runs `resume`.
pub fn resume(a: ResumeArgs) -> Result<()> {
    let files = RunDir::open(&a.dir)?;
    let cfg_path = files.config_path();
    let config = files.read_config()?;
    if config.backend.is_none() {
        check_model_file(&config)?;
    } else if a.device.is_some() {
        bail!("--device: the run's model runs on a remote server");
    }
    // A run killed while it was being created has no checkpoint: it starts again.
    let opened = if files.has_checkpoint() {
        let run = Run::open(&a.dir)?;
        if run.finished() {
            eprintln!("{}: the run is already complete", a.dir.display());
            return report(&run, 0.0);
        }
        Some(run)
    } else if RunLock::is_held(&a.dir) {
        bail!("{} is in use by another process", a.dir.display());
    } else {
        None
    };
    let mut config = config;
    let backend: Box<dyn Inference> = match &mut config.backend {
        Some(remote) => {
            if let Some(url) = &a.url {
                remote.url = url.clone();
            }
            Box::new(super::remote::connect(remote.clone())?)
        }
        None => Box::new(local_engine(&a, &config, &cfg_path)?),
    };
    let embedder = Embedder::load(Path::new(&config.embed_model))
        .or_else(|_| Embedder::load_default(true))
        .context("loading the embedding model")?;
    let parts = RuntimeParts::with_backend(prompt_logged(backend)?, Box::new(embedder));
    let rt = parts.runtime();
    let run = match opened {
        Some(run) => run,
        None => {
            eprintln!(
                "resume: {} stopped before its first checkpoint: starting it again",
                a.dir.display()
            );
            files.clear_unstarted()?;
            Run::create(&a.dir, config, &rt, &mut |_| {})?
        }
    };
    eprintln!(
        "resume: {} at step {} of {}",
        a.dir.display(),
        run.sim.state.step,
        run.sim.state.end_step
    );
    drive(run, &rt)
}

/// Fails unless the run's model file is still the one it started with.
fn check_model_file(config: &RunConfig) -> Result<()> {
    let sha = sha256_file(Path::new(&config.model.path))
        .with_context(|| format!("the run's model {}", config.model.path))?;
    if sha != config.model.sha256 {
        bail!(
            "{}: sha256 {} differs from the run's {}: resuming with another model would not reproduce the run",
            config.model.path,
            sha,
            config.model.sha256
        );
    }
    Ok(())
}

/// The in-process engine a resumed run continues on.
fn local_engine(a: &ResumeArgs, config: &RunConfig, cfg_path: &Path) -> Result<Engine> {
    let recorded: DeviceChoice = config
        .device
        .parse()
        .with_context(|| format!("{}: field `device`", cfg_path.display()))?;
    let device = a.device.unwrap_or(recorded);
    if device != recorded {
        eprintln!(
            "resume: on {device} instead of the run's {recorded}: later steps will differ slightly from an uninterrupted run"
        );
    }
    let args = ModelArgs {
        model: Some(config.model.path.clone()),
        threads: a.threads,
        device,
        max_num_seqs: config.max_num_seqs,
        max_batched_tokens: config.max_batched_tokens,
        context: config.context,
        prefix_cache_mib: a.prefix_cache_mib,
        weights: WeightFormat::parse(&config.weights).with_context(|| {
            format!(
                "{}: field `weights`: `{}` is not one of quantized, q8, f32",
                cfg_path.display(),
                config.weights
            )
        })?,
    };
    let (_, engine) = args.load()?;
    Ok(engine)
}

fn tokens_per_second(engine: &RefCell<Box<dyn Inference>>, start: (u64, Instant)) -> f64 {
    let s = engine.borrow().stats().clone();
    let done = s.prompt_tokens + s.generated_tokens - start.0;
    done as f64 / start.1.elapsed().as_secs_f64().max(1e-9)
}

/// Runs the remaining steps with a progress bar, then checks and summarises the run.
fn drive(mut run: Run, rt: &Runtime<'_>) -> Result<()> {
    let agents = run.sim.state.agents.len() as u64;
    let total = run.sim.state.end_step * agents;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{msg} [{bar:30}] {pos}/{len} agent-steps, {elapsed} elapsed, ETA {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    bar.set_position(run.sim.state.step * agents);
    let stats = rt.engine.borrow().stats().clone();
    let start = (stats.prompt_tokens + stats.generated_tokens, Instant::now());
    let started = Instant::now();
    let mut step_log =
        std::env::var_os("HUMANOID_STEP_LOG").and_then(|p| std::fs::File::create(p).ok());
    let mut mem_log = super::memlog::MemLog::from_env();
    while !run.finished() {
        let before = run.sim.state.step;
        let p = run.step(rt, &mut |e| {
            if let (
                Some(f),
                humanoid::llm::Event::Step {
                    seqs,
                    tokens,
                    elapsed,
                },
            ) = (&mut step_log, e)
            {
                use std::io::Write;
                let _ = writeln!(f, "{seqs} {tokens} {}", elapsed.as_secs_f64());
            }
        });
        let p = match p {
            Err(e @ SimError::Backend(_)) => {
                bar.abandon();
                bail!(
                    "{e}\nstep {} of {} was not applied; the steps before it are saved: `humanoid resume {}` continues the run",
                    before + 1,
                    run.sim.state.end_step,
                    run.dir.display()
                );
            }
            other => other?,
        };
        if let Some(engine) = rt.engine.borrow().as_engine() {
            mem_log.sample(p.step, engine, &run.sim);
        }
        bar.set_position(p.step * agents);
        bar.set_message(format!(
            "{} | {:.0} tok/s",
            p.sim_time,
            tokens_per_second(rt.engine, start)
        ));
    }
    bar.finish();
    let secs = started.elapsed().as_secs_f64();
    report(&run, secs)?;
    let engine_stats = rt.engine.borrow().stats().clone();
    let check = check_run(&run.dir, &run.sim.world)?;
    run.finish(serde_json::json!({
        "wall_seconds": secs,
        "engine": engine_stats,
        "check": {"agent_states": check.agent_states, "well_formed": check.well_formed,
                  "problems": check.problems.len()},
    }))?;
    Ok(())
}

/// Prints the well-formedness rate and the fallback count of a run.
fn report(run: &Run, secs: f64) -> Result<()> {
    let check = check_run(&run.dir, &run.sim.world)?;
    let c = &run.sim.state.counters;
    let calls = c.model_calls.max(1);
    println!("run directory: {}", run.dir.display());
    if secs > 0.0 {
        println!(
            "wall time: {:.1} s for {} agent-steps ({:.2} s per agent-step)",
            secs,
            c.agent_steps,
            secs / c.agent_steps.max(1) as f64
        );
    }
    println!(
        "model calls: {} ({} generate, {} choose), {:.1} per agent-step; tokens: {} prompt, {} generated; longest prompt {} tokens",
        c.model_calls,
        c.generate_calls,
        c.choose_calls,
        c.model_calls as f64 / c.agent_steps.max(1) as f64,
        c.prompt_tokens,
        c.generated_tokens,
        c.max_prompt_tokens
    );
    println!(
        "well-formed: {:.1}% of {} agent states in {} state files ({} problems)",
        check.percent(),
        check.agent_states,
        check.state_files,
        check.problems.len()
    );
    for p in check.problems.iter().take(10) {
        println!("  {p}");
    }
    println!(
        "fallbacks: {} of {} model calls ({:.2}%); conversations: {}; reflections: {}",
        c.fallbacks,
        c.model_calls,
        100.0 * c.fallbacks as f64 / calls as f64,
        c.conversations,
        c.reflections
    );
    Ok(())
}

/// Prints the quality report of the run in `a.dir`.
fn print_quality(a: &CheckArgs, world: &humanoid::world::World) -> Result<()> {
    let states: Vec<_> = RunDir::new(&a.dir)
        .read_states()?
        .into_iter()
        .filter_map(|(_, s)| s.ok())
        .collect();
    let mut embedder = humanoid::embed::Embedder::load_default(true)
        .map_err(|e| eprintln!("quality: no embedding model ({e}); places are not judged"))
        .ok();
    let q = humanoid::report::quality(
        world,
        &states,
        embedder
            .as_mut()
            .map(|e| e as &mut dyn humanoid::memory::TextEmbedder),
    );
    if a.json {
        println!("{}", serde_json::to_string(&q)?);
        return Ok(());
    }
    println!("quality (share of good cases; 1.000 is clean):");
    let row = |name: &str, s: &humanoid::report::quality::Share| {
        println!("  {name:<34} {:.3} ({} of {})", s.share, s.good, s.total);
        for e in &s.examples {
            println!("      e.g. {e}");
        }
    };
    row("distinct day-plan lines", &q.distinct_plan_lines);
    row("activities in the script", &q.activities_in_script);
    row("activities that are actions", &q.activities_are_actions);
    row("activities that end whole", &q.whole_activities);
    row("no sleep 08:00-20:00", &q.no_sleep_in_the_day);
    row("asleep when the plan sleeps", &q.asleep_when_planned);
    row(
        "no wake-up or breakfast after noon",
        &q.no_restart_after_noon,
    );
    row(
        "activities under way not restarted",
        &q.going_on_not_restarted,
    );
    row(
        "steps of a day-plan line not gone back to",
        &q.steps_not_gone_back_to,
    );
    row("steps of their own plan line", &q.steps_of_their_line);
    if let Some(p) = &q.steps_like_their_line {
        row("steps like their own plan line", p);
    }
    row("place follows the day plan", &q.place_follows_plan);
    row("urgent needs met within the hour", &q.urgent_needs_met);
    if let Some(p) = &q.place_fits_activity {
        row("place fits the activity", p);
    }
    row("utterances without labels", &q.clean_utterances);
    row("utterances in the speaker's voice", &q.own_voice_utterances);
    row("utterances that say something new", &q.fresh_utterances);
    row("utterances about something", &q.utterances_about_something);
    Ok(())
}

/// Runs `check`.
pub fn check(a: CheckArgs) -> Result<()> {
    let folder = RunDir::new(&a.dir);
    let (world, report, planned) = if folder.is_state_folder() {
        let Some(path) = &a.world else {
            bail!(
                "{}: state files without config.json (such as the original Humanoid Agents \
                 writes): pass --world WORLD.toml to check them against a world (`humanoid \
                 world import` converts the original's map and agents)",
                a.dir.display()
            );
        };
        let world = World::load(path)?;
        let report =
            check_run(&a.dir, &world).with_context(|| format!("checking {}", a.dir.display()))?;
        (world, report, None)
    } else {
        if a.world.is_some() {
            bail!(
                "{}: a run directory is checked against the world in its config.json; \
                 --world is for a folder of state files alone",
                a.dir.display()
            );
        }
        let config = RunDir::open(&a.dir)?.read_config()?;
        let world = config.world()?;
        let report = check_run_steps(&a.dir, &world, config.steps)
            .with_context(|| format!("checking {}", a.dir.display()))?;
        (world, report, Some(config.steps))
    };
    // With `--quality --json` stdout is the one JSON object; the rest goes to stderr.
    let say = |line: String| {
        if a.quality && a.json {
            eprintln!("{line}");
        } else {
            println!("{line}");
        }
    };
    say(format!(
        "well-formed: {:.1}% of {} agent states ({} state files{})",
        report.percent(),
        report.agent_states + report.missing_agent_states,
        report.state_files,
        planned.map_or_else(
            || format!(" checked against {}", world.name),
            |p| format!(" of {p} planned steps")
        )
    ));
    for p in &report.problems {
        say(format!("  {p}"));
    }
    let list = |names: &[String]| -> String {
        let shown: Vec<&str> = names.iter().take(10).map(String::as_str).collect();
        let more = names.len().saturating_sub(shown.len());
        let tail = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        format!("{}{tail}", shown.join(", "))
    };
    if !report.missing.is_empty() {
        say(format!(
            "  missing {} state files of planned steps (an unfinished run: `humanoid resume {}`): {}",
            report.missing.len(),
            a.dir.display(),
            list(&report.missing)
        ));
    }
    if !report.extra.is_empty() {
        say(format!(
            "  {} state files of no planned step: {}",
            report.extra.len(),
            list(&report.extra)
        ));
    }
    if a.quality {
        print_quality(&a, &world)?;
    }
    if !report.is_clean() {
        bail!(
            "{} problems, {} missing and {} extra state files",
            report.problems.len(),
            report.missing.len(),
            report.extra.len()
        );
    }
    Ok(())
}

//! A run: its configuration and its simulation, stepped and saved in a [`RunDir`] so that a
//! kill at any point resumes from the last complete step.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::checkpoint;
use super::error::{io_err, Result, SimError};
use super::events::{EventLog, LogEvent};
use super::inject::{self, Injection};
use super::lock::RunLock;
use super::run_dir::RunDir;
use super::tick::{Counters, Runtime, Sim, SimState};
use crate::agent::AgentState;
use crate::llm::Event;
use crate::memory::{MemoryStream, StreamConfig};
use crate::remote::RemoteConfig;
use crate::world::{Condition, World, YesThresholds};

/// The chat model a run used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelInfo {
    /// What the user asked for (`smollm2-135m`, a path, `hf:...`).
    pub spec: String,
    pub path: String,
    pub sha256: String,
}

/// Everything that defines a run; written once as `config.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// Version of humanoid that started the run.
    pub version: String,
    /// The world file as given, and its text as read (a resumed run uses the text).
    pub world_file: String,
    pub world_source: String,
    pub model: ModelInfo,
    pub embed_model: String,
    pub seed: u64,
    pub device: String,
    /// How the chat model's weights were held (`quantized`, `q8` or `f32`); runs from before
    /// the field were made with `q8`.
    #[serde(default = "weights_of_older_runs")]
    pub weights: String,
    pub threads: usize,
    pub max_num_seqs: usize,
    pub max_batched_tokens: usize,
    pub context: usize,
    pub days: u32,
    /// Steps the run takes (all days unless `--steps` cut it short).
    pub steps: u64,
    pub conditions: Vec<String>,
    /// Thoughts planted before the first step (`--inject`), in the order given.
    #[serde(default)]
    pub injections: Vec<Injection>,
    /// The chat model's need thresholds (its manifest's `yes_threshold`); absent: 0.5 each.
    #[serde(default, skip_serializing_if = "YesThresholds::is_empty")]
    pub yes_threshold: YesThresholds,
    /// The remote server the chat model ran on (`--backend openai`); absent in-process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backend: Option<RemoteConfig>,
}

fn weights_of_older_runs() -> String {
    "q8".into()
}

impl RunConfig {
    /// The world this configuration describes, with its conditions applied.
    pub fn world(&self) -> Result<World> {
        let mut world = World::parse(&self.world_source, Path::new(&self.world_file))?;
        world.days = self.days;
        let conditions = self.parsed_conditions()?;
        world.apply_conditions(&conditions);
        Ok(world)
    }

    fn parsed_conditions(&self) -> Result<Vec<Condition>> {
        self.conditions
            .iter()
            .map(|c| {
                c.parse::<Condition>()
                    .map_err(|e| SimError::Invalid(format!("condition {c:?}: {e}")))
            })
            .collect()
    }
}

/// Progress after a step, for progress bars.
#[derive(Clone, Debug)]
pub struct Progress {
    pub step: u64,
    pub steps: u64,
    pub agents: usize,
    /// "Tuesday Jan 03 2023 06:15 am".
    pub sim_time: String,
    pub counters: Counters,
}

/// An open run directory with its simulation.
pub struct Run {
    pub dir: PathBuf,
    files: RunDir,
    pub config: RunConfig,
    pub sim: Sim,
    events: EventLog,
    _lock: RunLock,
}

fn write_json(path: &Path, value: &impl Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|e| SimError::Invalid(e.to_string()))?;
    let tmp = path.with_extension("json.tmp");
    std::fs::write(&tmp, text).map_err(io_err(&tmp))?;
    std::fs::rename(&tmp, path).map_err(io_err(path))
}

/// An error if the backend has stopped serving (its answers of this step are not usable).
fn backend_ok(rt: &Runtime<'_>) -> Result<()> {
    match rt.engine.borrow().failure() {
        Some(e) => Err(SimError::Backend(e)),
        None => Ok(()),
    }
}

impl Run {
    /// Creates a run in `dir` (absent or empty): writes the config, stores every agent's
    /// description as seed memories (importance rated by the model), plants the config's
    /// injected thoughts and writes a first checkpoint. The world and the injections are
    /// checked before anything is written.
    pub fn create(
        dir: &Path,
        config: RunConfig,
        rt: &Runtime<'_>,
        on_event: &mut dyn FnMut(&Event),
    ) -> Result<Run> {
        let world = config.world()?;
        inject::check(&config.injections, &world)?;
        if dir.exists() {
            let mut entries = std::fs::read_dir(dir).map_err(io_err(dir))?;
            if RunLock::is_held(dir) {
                // Say who is writing it rather than only that it is not empty.
                RunLock::acquire(dir)?;
            }
            if entries.next().is_some() {
                return Err(SimError::Invalid(format!(
                    "{} already exists and is not empty: choose another --out, or `humanoid resume {}` to continue it",
                    dir.display(),
                    dir.display()
                )));
            }
        }
        std::fs::create_dir_all(dir).map_err(io_err(dir))?;
        let lock = RunLock::acquire(dir)?;
        let files = RunDir::new(dir);
        files.create_states_dir()?;
        let frozen = config
            .parsed_conditions()?
            .iter()
            .any(|c| matches!(c, Condition::Emotion(_)));
        let agents: Vec<AgentState> = world
            .agents
            .iter()
            .map(|a| AgentState::from_spec(a, frozen))
            .collect();
        let dim = rt.embedder.borrow().dim();
        let memories = (0..agents.len())
            .map(|_| MemoryStream::new(dim, StreamConfig::default()))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        write_json(&files.config_path(), &config)?;
        let state = SimState {
            step: 0,
            end_step: config.steps,
            seed: config.seed,
            agents,
            last_talk: Vec::new(),
            counters: Counters::default(),
        };
        let mut sim = Sim {
            world,
            state,
            memories,
            yes_threshold: config.yes_threshold.per_need(),
            change_threshold: config.yes_threshold.change_plan(),
        };
        let mut events = EventLog::open(&files.events_path(), 0)?;
        let mut first = vec![LogEvent::new(
            0,
            &sim.world.start_date.format("%Y-%m-%d").to_string(),
            &crate::world::clock::format_time(sim.world.day_start),
            None,
            serde_json::json!({"type": "run_start", "config": &config}),
        )];
        first.extend(sim.seed_memories(rt, on_event));
        first.extend(sim.inject(rt, &config.injections)?);
        backend_ok(rt)?;
        events.append(&first)?;
        events.flush()?;
        checkpoint::write(
            &files.checkpoint_path(),
            &sim.state,
            &sim.memories,
            events.len(),
        )?;
        Ok(Run {
            dir: dir.to_path_buf(),
            files,
            config,
            sim,
            events,
            _lock: lock,
        })
    }

    /// Opens an interrupted run at its last complete step (events written after it are cut).
    pub fn open(dir: &Path) -> Result<Run> {
        let files = RunDir::open(dir)?;
        let lock = RunLock::acquire(dir)?;
        let config = files.read_config()?;
        let world = config.world()?;
        let ck = checkpoint::read(&files.checkpoint_path())?;
        if ck.state.agents.len() != world.agents.len() {
            return Err(SimError::Corrupt {
                path: files.checkpoint_path(),
                reason: "the checkpoint's agents do not match the world".into(),
            });
        }
        let events = EventLog::open(&files.events_path(), ck.events_len)?;
        let yes_threshold = config.yes_threshold.per_need();
        let change_threshold = config.yes_threshold.change_plan();
        Ok(Run {
            dir: dir.to_path_buf(),
            files,
            config,
            sim: Sim {
                world,
                state: ck.state,
                memories: ck.memories,
                yes_threshold,
                change_threshold,
            },
            events,
            _lock: lock,
        })
    }

    /// Whether every step has run.
    pub fn finished(&self) -> bool {
        self.sim.state.step >= self.sim.state.end_step
    }

    /// Runs the next step: tick, state file, events, checkpoint (in that order, so a kill
    /// at any point resumes from the last complete step). If the model backend stopped
    /// serving during the tick nothing is written: the step is not applied, and this `Run`
    /// must be dropped (resume continues from the last checkpoint).
    pub fn step(&mut self, rt: &Runtime<'_>, on_event: &mut dyn FnMut(&Event)) -> Result<Progress> {
        let out = self.sim.tick(rt, on_event);
        backend_ok(rt)?;
        write_json(&self.files.state_path(&out.file_name), &out.state)?;
        self.events.append(&out.events)?;
        self.events.flush()?;
        checkpoint::write(
            &self.files.checkpoint_path(),
            &self.sim.state,
            &self.sim.memories,
            self.events.len(),
        )?;
        Ok(Progress {
            step: self.sim.state.step,
            steps: self.sim.state.end_step,
            agents: self.sim.state.agents.len(),
            sim_time: format!("{} {}", out.state.date, out.state.time),
            counters: self.sim.state.counters.clone(),
        })
    }

    /// Writes `summary.json`: the counters and `extra` (e.g. timing and the check's result).
    pub fn finish(&mut self, extra: serde_json::Value) -> Result<()> {
        let summary = serde_json::json!({
            "counters": self.sim.state.counters,
            "steps": self.sim.state.step,
            "extra": extra,
        });
        write_json(&self.files.summary_path(), &summary)?;
        Ok(())
    }
}

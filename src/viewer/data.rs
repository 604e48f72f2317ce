//! Reading run directories into what the viewer shows: the list of runs, a run's world and
//! status, and its state files from some step on. Nothing here fails on a bad run: missing,
//! truncated or foreign files become `problems` the page displays.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde::Serialize;

use crate::sim::StateFile;
use crate::sim::{run_dir, RunConfig, RunDir, SimError};
use crate::world::{LocationNode, World};

/// A run directory whose files changed this recently, without a summary, is "running".
const RUNNING_WINDOW: Duration = Duration::from_secs(90);

/// Where runs are read from: one run directory, or a folder of them.
#[derive(Clone, Debug)]
pub struct RunSource {
    root: PathBuf,
}

/// How far a run got.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunStatus {
    /// Every step is written (`summary.json` exists).
    Complete,
    /// Files changed in the last minute or so: a run is writing it.
    Running,
    /// Stopped before the end (resume it with `humanoid resume`).
    Incomplete,
    /// `config.json` is missing or unreadable.
    Broken,
}

/// One line of the run picker.
#[derive(Clone, Debug, Serialize)]
pub struct RunEntry {
    pub id: String,
    pub name: String,
    pub status: RunStatus,
    pub steps_done: usize,
    pub steps_total: u64,
    pub message: Option<String>,
}

/// A file of the run that could not be used.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    pub file: String,
    pub message: String,
}

/// The world as the viewer draws it.
#[derive(Clone, Debug, Serialize)]
pub struct WorldView {
    pub name: String,
    pub description: String,
    pub start_date: String,
    pub step_minutes: u32,
    pub agents: Vec<String>,
    pub locations: Vec<LocationNode>,
}

/// A run's metadata and status.
#[derive(Clone, Debug, Serialize)]
pub struct RunDetail {
    #[serde(flatten)]
    pub entry: RunEntry,
    pub model: Option<String>,
    pub seed: Option<u64>,
    pub device: Option<String>,
    pub world: Option<WorldView>,
    pub problems: Vec<Problem>,
}

/// One state file with its place in the run.
#[derive(Clone, Debug, Serialize)]
pub struct StateView {
    pub step: usize,
    pub file: String,
    #[serde(flatten)]
    pub state: StateFile,
}

/// States from some index on.
#[derive(Clone, Debug, Serialize)]
pub struct StatesResponse {
    pub from: usize,
    /// Where the next poll starts (state files seen so far, readable or not).
    pub next: usize,
    pub status: RunStatus,
    pub steps_done: usize,
    pub steps_total: u64,
    pub problems: Vec<Problem>,
    pub states: Vec<StateView>,
}

impl RunSource {
    /// Runs under `root` (a run directory or a folder of run directories).
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The folder this source reads.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Ids and directories of the runs, in name order. A run directory alone is one run
    /// named after the directory.
    pub fn runs(&self) -> Vec<(String, PathBuf)> {
        if is_run_dir(&self.root) {
            let id = self
                .root
                .canonicalize()
                .ok()
                .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .unwrap_or_else(|| "run".into());
            return vec![(id, self.root.clone())];
        }
        let mut out: Vec<(String, PathBuf)> = std::fs::read_dir(&self.root)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .filter(|e| e.path().is_dir() && is_run_dir(&e.path()))
            .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
            .collect();
        out.sort();
        out
    }

    /// The directory of run `id`, if it is one of [`RunSource::runs`] (ids are never
    /// interpreted as paths).
    pub fn dir_of(&self, id: &str) -> Option<PathBuf> {
        self.runs()
            .into_iter()
            .find(|(i, _)| i == id)
            .map(|(_, d)| d)
    }

    /// The picker's list.
    pub fn list(&self) -> Vec<RunEntry> {
        self.runs()
            .into_iter()
            .map(|(id, dir)| RunInfo::read(&id, &dir).detail.entry)
            .collect()
    }

    /// Metadata of run `id`.
    pub fn detail(&self, id: &str) -> Option<RunDetail> {
        Some(RunInfo::read(id, &self.dir_of(id)?).detail)
    }

    /// States of run `id` from state file `from` on.
    pub fn states(&self, id: &str, from: usize) -> Option<StatesResponse> {
        let dir = self.dir_of(id)?;
        let info = RunInfo::read(id, &dir);
        let mut problems = info.detail.problems.clone();
        let mut states = Vec::new();
        for (step, path) in info.files.iter().enumerate().skip(from) {
            let file = file_name(path);
            match std::fs::read_to_string(path)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<StateFile>(&t).map_err(|e| e.to_string()))
            {
                Ok(state) => states.push(StateView { step, file, state }),
                Err(message) => problems.push(Problem {
                    file,
                    message: format!("unreadable state file: {message}"),
                }),
            }
        }
        let e = &info.detail.entry;
        Some(StatesResponse {
            from,
            next: info.files.len().max(from),
            status: e.status,
            steps_done: e.steps_done,
            steps_total: e.steps_total,
            problems,
            states,
        })
    }
}

/// What reading a run directory found.
struct RunInfo {
    detail: RunDetail,
    files: Vec<PathBuf>,
}

impl RunInfo {
    fn read(id: &str, dir: &Path) -> Self {
        let files = RunDir::new(dir).state_files().unwrap_or_default();
        let mut entry = RunEntry {
            id: id.to_string(),
            name: id.to_string(),
            status: RunStatus::Broken,
            steps_done: files.len(),
            steps_total: 0,
            message: None,
        };
        let mut detail = RunDetail {
            entry: entry.clone(),
            model: None,
            seed: None,
            device: None,
            world: None,
            problems: Vec::new(),
        };
        if RunDir::new(dir).is_state_folder() {
            return Self::state_folder(entry, detail, files);
        }
        let config = match read_config(dir) {
            Ok(c) => c,
            Err(message) => {
                entry.message = Some(message.clone());
                detail.entry = entry;
                detail.problems.push(Problem {
                    file: run_dir::CONFIG.into(),
                    message,
                });
                return Self { detail, files };
            }
        };
        entry.steps_total = config.steps;
        detail.model = Some(config.model.spec.clone());
        detail.seed = Some(config.seed);
        detail.device = Some(config.device.clone());
        match config.world() {
            Ok(world) => {
                entry.name = world.name.clone();
                detail.problems = missing_states(&world, &files, config.steps);
                detail.world = Some(WorldView::of(&world));
            }
            Err(e) => detail.problems.push(Problem {
                file: run_dir::CONFIG.into(),
                message: format!("field `world_source`: {e}"),
            }),
        }
        entry.status = if RunDir::new(dir).is_finished() {
            RunStatus::Complete
        } else if recently_changed(dir) {
            RunStatus::Running
        } else {
            RunStatus::Incomplete
        };
        entry.message = match entry.status {
            RunStatus::Incomplete => Some(format!(
                "the run stopped after {} of {} steps (continue it with `humanoid resume`)",
                files.len(),
                config.steps
            )),
            _ if !detail.problems.is_empty() => Some(format!(
                "{} problem(s) in the run folder",
                detail.problems.len()
            )),
            _ => None,
        };
        detail.entry = entry;
        Self { detail, files }
    }
}

impl RunInfo {
    /// State files without `config.json` (e.g. the original Humanoid Agents' output): the
    /// places come from the first readable state's `world` tree, or from where its agents are.
    fn state_folder(mut entry: RunEntry, mut detail: RunDetail, files: Vec<PathBuf>) -> Self {
        let first = files.iter().find_map(|p| {
            serde_json::from_str::<StateFile>(&std::fs::read_to_string(p).ok()?).ok()
        });
        entry.status = RunStatus::Complete;
        entry.steps_total = files.len() as u64;
        entry.message = Some(
            "state files without config.json (e.g. the original Humanoid Agents' output):              no model, seed or world file is known"
                .into(),
        );
        if let Some(state) = first {
            detail.world = Some(WorldView {
                name: entry.name.clone(),
                description: String::new(),
                start_date: state.date.clone(),
                step_minutes: 0,
                agents: state.agents.iter().map(|a| a.name.clone()).collect(),
                locations: state
                    .world
                    .as_ref()
                    .map_or_else(Vec::new, |w| w.contains.iter().map(location_of).collect()),
            });
        }
        detail.entry = entry;
        Self { detail, files }
    }
}

/// The place tree of a state's `world` node (without its agents).
fn location_of(node: &crate::sim::WorldNode) -> LocationNode {
    LocationNode {
        name: node.name.clone(),
        children: node.contains.iter().map(location_of).collect(),
    }
}

impl WorldView {
    fn of(world: &World) -> Self {
        Self {
            name: world.name.clone(),
            description: world.description.clone(),
            start_date: world.start_date.format("%Y-%m-%d").to_string(),
            step_minutes: world.step_minutes,
            agents: world.agents.iter().map(|a| a.name.clone()).collect(),
            locations: world.locations.nested(),
        }
    }
}

/// A run directory, or a folder of state files alone.
fn is_run_dir(dir: &Path) -> bool {
    let run = RunDir::new(dir);
    run.is_run() || run.is_state_folder()
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn read_config(dir: &Path) -> Result<RunConfig, String> {
    RunDir::new(dir).read_config().map_err(|e| match e {
        SimError::Io { source, .. } => format!("cannot read config.json: {source}"),
        SimError::Corrupt { reason, .. } => format!("config.json is {reason}"),
        other => other.to_string(),
    })
}

/// Most planned steps the viewer lists state file names for (a year of 5-minute steps): a
/// corrupt `config.steps` is reported, never allocated.
pub const MAX_VIEWER_STEPS: u64 = 366 * 288;

/// State files the run should have written before its last one but did not.
fn missing_states(world: &World, files: &[PathBuf], steps: u64) -> Vec<Problem> {
    if steps > MAX_VIEWER_STEPS {
        return vec![Problem {
            file: run_dir::CONFIG.into(),
            message: format!(
                "field `steps` = {steps} is more than the {MAX_VIEWER_STEPS} steps the viewer lists"
            ),
        }];
    }
    let present: std::collections::HashSet<String> = files.iter().map(|p| file_name(p)).collect();
    let expected: Vec<String> = (0..steps).map(|s| world.state_file_of(s)).collect();
    let expected_set: std::collections::HashSet<&str> =
        expected.iter().map(String::as_str).collect();
    let last = expected.iter().rposition(|f| present.contains(f));
    let mut problems: Vec<Problem> = expected
        .iter()
        .take(last.map_or(0, |l| l + 1))
        .filter(|f| !present.contains(*f))
        .map(|f| Problem {
            file: f.clone(),
            message: "missing state file".into(),
        })
        .collect();
    problems.extend(
        files
            .iter()
            .map(|p| file_name(p))
            .filter(|f| !expected_set.contains(f.as_str()))
            .map(|file| Problem {
                file,
                message: "a state file this run's world does not produce".into(),
            }),
    );
    problems
}

fn recently_changed(dir: &Path) -> bool {
    let run = RunDir::new(dir);
    let newest = [run.events_path(), run.checkpoint_path()]
        .iter()
        .filter_map(|f| std::fs::metadata(f).ok()?.modified().ok())
        .max();
    newest.is_some_and(|t| {
        SystemTime::now()
            .duration_since(t)
            .is_ok_and(|age| age < RUNNING_WINDOW)
    })
}

//! [`RunDir`]: the one reader of a run folder's layout. Everything that opens, checks,
//! replays or evaluates a run finds its files through here.
//!
//! A run folder holds `config.json` (everything needed to reproduce or resume the run),
//! `events.jsonl`, `states/` with one `state_*.json` per step, `checkpoint.bin` after every
//! step, `summary.json` at the end, and a lock file while a process writes it.
//!
//! The state files have a folder of their own so that the original Humanoid Agents
//! dashboard, which reads every `*.json` of the folder it is given, reads them
//! (`--folder RUN/states`). Runs written before kept them at the top of the folder; they
//! are read from there.

use std::path::{Path, PathBuf};

use super::error::{io_err, Result, SimError};
use super::lock::LOCK_FILE;
use super::run::RunConfig;
use super::state_file::StateFile;

/// The run's configuration, written once when the run starts.
pub const CONFIG: &str = "config.json";
/// The event log, appended after every step.
pub const EVENTS: &str = "events.jsonl";
/// The state and memories after the last complete step.
pub const CHECKPOINT: &str = "checkpoint.bin";
/// The counters and timing, written when every step has run.
pub const SUMMARY: &str = "summary.json";
/// The folder of the per-step state files.
pub const STATES: &str = "states";

/// A run folder (not necessarily a complete or even a started run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunDir {
    path: PathBuf,
}

impl RunDir {
    /// The folder at `path`, whatever it holds (for a run about to be created).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    /// An existing run folder: an error unless `path` holds a `config.json`.
    pub fn open(path: impl Into<PathBuf>) -> Result<Self> {
        let dir = Self::new(path);
        if !dir.is_run() {
            return Err(SimError::Invalid(format!(
                "{} is not a run directory (no {CONFIG})",
                dir.path.display()
            )));
        }
        Ok(dir)
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the folder holds a run (its `config.json`).
    pub fn is_run(&self) -> bool {
        self.config_path().is_file()
    }

    /// Whether the folder holds state files but no `config.json`: state files alone, such as
    /// the original Humanoid Agents writes (or a copy of a run's `states/`).
    pub fn is_state_folder(&self) -> bool {
        !self.is_run() && has_state_files(&self.path)
    }

    /// `config.json`.
    pub fn config_path(&self) -> PathBuf {
        self.path.join(CONFIG)
    }

    /// `events.jsonl`.
    pub fn events_path(&self) -> PathBuf {
        self.path.join(EVENTS)
    }

    /// `checkpoint.bin`.
    pub fn checkpoint_path(&self) -> PathBuf {
        self.path.join(CHECKPOINT)
    }

    /// `summary.json`.
    pub fn summary_path(&self) -> PathBuf {
        self.path.join(SUMMARY)
    }

    /// The folder of the state files: `states/`, or the run folder itself for a run that
    /// kept them at the top (made before `states/`).
    pub fn states_dir(&self) -> PathBuf {
        let states = self.path.join(STATES);
        if !states.is_dir() && has_state_files(&self.path) {
            return self.path.clone();
        }
        states
    }

    /// The path of a state file named `name` (see [`crate::world::World::state_file_of`]).
    pub fn state_path(&self, name: &str) -> PathBuf {
        self.states_dir().join(name)
    }

    /// Makes the `states/` folder of a new run.
    pub fn create_states_dir(&self) -> Result<()> {
        let states = self.path.join(STATES);
        std::fs::create_dir_all(&states).map_err(io_err(&states))
    }

    /// Whether a first checkpoint was written (a run killed while it was being created has
    /// none: it starts again).
    pub fn has_checkpoint(&self) -> bool {
        self.checkpoint_path().exists()
    }

    /// Whether every step has run (`summary.json` exists).
    pub fn is_finished(&self) -> bool {
        self.summary_path().exists()
    }

    /// Reads `config.json`; errors name the file.
    pub fn read_config(&self) -> Result<RunConfig> {
        let path = self.config_path();
        let text = std::fs::read_to_string(&path).map_err(io_err(&path))?;
        serde_json::from_str(&text).map_err(|e| SimError::Corrupt {
            path,
            reason: format!("not a run configuration: {e}"),
        })
    }

    /// The `state_*.json` files, sorted by name (which is time order).
    pub fn state_files(&self) -> std::io::Result<Vec<PathBuf>> {
        let dir = self.states_dir();
        if !dir.is_dir() && self.path.is_dir() {
            return Ok(Vec::new()); // a run that has not written a step yet
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| is_state_file(p))
            .collect();
        files.sort();
        Ok(files)
    }

    /// Every state file, read: the file and its contents or why it could not be read.
    pub fn read_states(
        &self,
    ) -> std::io::Result<Vec<(PathBuf, std::result::Result<StateFile, String>)>> {
        Ok(self
            .state_files()?
            .into_iter()
            .map(|p| {
                let state = std::fs::read_to_string(&p)
                    .map_err(|e| e.to_string())
                    .and_then(|t| serde_json::from_str::<StateFile>(&t).map_err(|e| e.to_string()));
                (p, state)
            })
            .collect())
    }

    /// Removes what a run killed before its first checkpoint left (`config.json`, the log,
    /// a summary, the lock, half-written `*.tmp` files and the empty `states/`); the caller
    /// keeps the config.
    pub fn clear_unstarted(&self) -> Result<()> {
        let states = self.path.join(STATES);
        if states.is_dir() {
            std::fs::remove_dir(&states).map_err(io_err(&states))?;
        }
        for entry in std::fs::read_dir(&self.path).map_err(io_err(&self.path))? {
            let path = entry.map_err(io_err(&self.path))?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            let ours =
                [CONFIG, EVENTS, SUMMARY, LOCK_FILE].contains(&name) || name.ends_with(".tmp");
            if ours {
                std::fs::remove_file(&path).map_err(io_err(&path))?;
            }
        }
        Ok(())
    }
}

fn is_state_file(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("state_") && n.ends_with(".json"))
}

fn has_state_files(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .is_ok_and(|mut entries| entries.any(|e| e.is_ok_and(|e| is_state_file(&e.path()))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_without_config_is_not_a_run() {
        let tmp = tempfile::tempdir().unwrap();
        let err = RunDir::open(tmp.path()).unwrap_err().to_string();
        assert!(
            err.contains("not a run directory (no config.json)"),
            "{err}"
        );
        std::fs::write(tmp.path().join(CONFIG), "{").unwrap();
        let dir = RunDir::open(tmp.path()).unwrap();
        let err = dir.read_config().unwrap_err().to_string();
        assert!(
            err.contains("config.json") && err.contains("not a run configuration"),
            "{err}"
        );
    }

    #[test]
    fn state_files_are_listed_in_time_order_and_clearing_keeps_them() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir::new(tmp.path());
        for name in [
            "state_2023-01-03_07h00.json",
            "state_2023-01-03_06h45.json",
            "notes.json",
            CONFIG,
            EVENTS,
            "config.json.tmp",
        ] {
            std::fs::write(tmp.path().join(name), "{}").unwrap();
        }
        let names = |d: &RunDir| -> Vec<String> {
            d.state_files()
                .unwrap()
                .iter()
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
                .collect()
        };
        assert_eq!(
            names(&dir),
            ["state_2023-01-03_06h45.json", "state_2023-01-03_07h00.json"]
        );
        let states = dir.read_states().unwrap();
        assert!(
            states.iter().all(|(_, s)| s.is_err()),
            "{{}} is not a state file"
        );
        dir.clear_unstarted().unwrap();
        assert!(!dir.is_run() && !dir.events_path().exists());
        assert!(!tmp.path().join("config.json.tmp").exists());
        assert!(tmp.path().join("notes.json").exists());
        assert_eq!(names(&dir).len(), 2);
    }

    #[test]
    fn a_new_run_keeps_its_states_in_their_folder() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = RunDir::new(tmp.path());
        assert_eq!(dir.states_dir(), tmp.path().join(STATES));
        assert!(dir.state_files().unwrap().is_empty(), "no step yet");
        dir.create_states_dir().unwrap();
        std::fs::write(dir.state_path("state_2023-01-03_06h00.json"), "{}").unwrap();
        std::fs::write(tmp.path().join("summary.json"), "{}").unwrap();
        let files = dir.state_files().unwrap();
        assert_eq!(
            files,
            [tmp.path().join("states/state_2023-01-03_06h00.json")]
        );
        // A run killed before its first checkpoint leaves an empty folder, cleared with it.
        let fresh = tempfile::tempdir().unwrap();
        let dir = RunDir::new(fresh.path());
        dir.create_states_dir().unwrap();
        std::fs::write(dir.config_path(), "{}").unwrap();
        dir.clear_unstarted().unwrap();
        assert_eq!(std::fs::read_dir(fresh.path()).unwrap().count(), 0);
    }
}

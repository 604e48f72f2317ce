//! A run directory's configuration for the evaluation commands, read through
//! [`RunDir`], with errors as [`EvalError`]s.

use std::path::Path;

use super::error::{EvalError, Result};
use crate::sim::{RunConfig, RunDir, SimError};
use crate::world::World;

/// An error about a file or directory of a run.
pub fn run_err(path: &Path, reason: impl Into<String>) -> EvalError {
    EvalError::Run {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

/// The run's `config.json` and the world it describes (with its conditions applied).
pub fn read_config(dir: &Path) -> Result<(RunConfig, World)> {
    let run = RunDir::new(dir);
    if !run.is_run() {
        return Err(run_err(dir, "not a run directory (no config.json)"));
    }
    let config_path = run.config_path();
    let config = run.read_config().map_err(|e| match e {
        SimError::Io { path, source } => EvalError::Io { path, source },
        SimError::Corrupt { path, reason } => run_err(&path, reason),
        other => run_err(&config_path, other.to_string()),
    })?;
    let world = config
        .world()
        .map_err(|e| run_err(&config_path, e.to_string()))?;
    Ok((config, world))
}

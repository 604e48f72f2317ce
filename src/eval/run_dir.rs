//! Reading a run directory's configuration for the evaluation commands.

use std::path::Path;

use super::error::{EvalError, Result};
use crate::sim::RunConfig;
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
    let config_path = dir.join("config.json");
    if !config_path.is_file() {
        return Err(run_err(dir, "not a run directory (no config.json)"));
    }
    let text = std::fs::read_to_string(&config_path).map_err(|source| EvalError::Io {
        path: config_path.clone(),
        source,
    })?;
    let config: RunConfig = serde_json::from_str(&text)
        .map_err(|e| run_err(&config_path, format!("not a run's config: {e}")))?;
    let world = config
        .world()
        .map_err(|e| run_err(&config_path, e.to_string()))?;
    Ok((config, world))
}

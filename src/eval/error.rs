//! Errors of exporting and scoring annotation sheets, and of interviewing a run's agents.

use std::path::PathBuf;

/// What can go wrong reading a run or a sheet.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The run directory is not usable (no config, broken events).
    #[error("{path}: {reason}")]
    Run { path: PathBuf, reason: String },
    /// A sheet as a whole does not match the run (row count, empty file).
    #[error("{path}: {reason}")]
    Sheet { path: PathBuf, reason: String },
    /// One cell of a sheet is wrong.
    #[error("{path}: line {line}, column {column} ({name}): {reason}")]
    Cell {
        path: PathBuf,
        line: u64,
        column: usize,
        name: String,
        reason: String,
    },
    /// A value asked of a run does not fit it (an unknown agent, a step it has not run, no
    /// questions); the message names the value.
    #[error("{0}")]
    Invalid(String),
    /// The embedder or the model failed for a whole request.
    #[error("{0}")]
    Model(String),
    /// The CSV itself is malformed.
    #[error("{path}: {source}")]
    Csv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
}

/// Shorthand for results of this module.
pub type Result<T> = std::result::Result<T, EvalError>;

//! Errors of running a simulation.

use std::path::{Path, PathBuf};

/// Everything that can stop a run.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {reason}")]
    Corrupt { path: PathBuf, reason: String },
    #[error("{0}")]
    World(#[from] crate::world::WorldError),
    #[error("memory: {0}")]
    Memory(#[from] crate::memory::MemoryError),
    #[error(
        "{dir} is in use by another process ({holder}): wait for it to finish, or stop it first"
    )]
    Locked { dir: PathBuf, holder: String },
    #[error("{0}")]
    Invalid(String),
    /// The model backend stopped serving (a remote server down through every retry); the
    /// step that saw it was not applied.
    #[error("{0}")]
    Backend(String),
}

/// Shorthand for results of the simulation.
pub type Result<T> = std::result::Result<T, SimError>;

/// Maps an I/O error to [`SimError::Io`] for `path`.
pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io {
        path: path.to_path_buf(),
        source,
    }
}

//! Outputs of a run: the per-step state files, the well-formedness checker and the quality
//! report.

pub mod check;
pub mod quality;
pub mod state;

pub use check::{check_run, check_run_steps, CheckReport};
pub use quality::{quality, QualityReport};
pub use state::{AgentSnapshot, StateFile, TurnSnapshot};

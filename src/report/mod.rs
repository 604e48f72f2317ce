//! Outputs of a run: the per-step state files and the well-formedness checker.

pub mod check;
pub mod state;

pub use check::{check_run, CheckReport};
pub use state::{AgentSnapshot, StateFile, TurnSnapshot};

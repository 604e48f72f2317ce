//! Reports on a run: the well-formedness checker and the quality report (the state files
//! they read are [`crate::sim::state_file`]).

pub mod check;
pub mod place_fit;
pub mod quality;
pub mod step_fit;
pub mod urgent_needs;

pub use check::{check_run, check_run_steps, CheckReport};
pub use quality::{quality, QualityReport};

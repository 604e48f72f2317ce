//! The simulation: the tick driver that batches every agent's model calls, the event log,
//! checkpoints and the run directory.
//!
//! [`tick`] runs one step of the world (its agents' calls batched by
//! [`crate::llm::batch`]), [`events`] appends the log, [`checkpoint`] saves and restores the state, and
//! [`run`] ties them to a directory that `resume` can continue.

pub mod checkpoint;
pub mod error;
pub mod events;
pub mod inject;
pub mod lock;
mod log;
pub mod run;
pub mod run_dir;
pub mod runtime;
pub mod state_file;
pub mod tick;

pub use error::SimError;
pub use inject::Injection;
pub use run::{ModelInfo, Progress, Run, RunConfig};
pub use run_dir::RunDir;
pub use state_file::{AgentSnapshot, StateFile, TurnSnapshot, WorldNode};
pub use tick::{Counters, Runtime, RuntimeParts, Sim, SimState};

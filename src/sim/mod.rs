//! The simulation: the tick driver that batches every agent's model calls, the event log,
//! checkpoints and the run directory.
//!
//! [`batch`] turns agents' async cognition into engine batches, [`tick`] runs one step of
//! the world, [`events`] appends the log, [`checkpoint`] saves and restores the state, and
//! [`run`] ties them to a directory that `resume` can continue.

pub mod batch;
pub mod checkpoint;
pub mod error;
pub mod events;
pub mod inject;
pub mod lock;
mod log;
pub mod run;
pub mod runtime;
pub mod tick;

pub use error::SimError;
pub use inject::Injection;
pub use run::{ModelInfo, Progress, Run, RunConfig};
pub use tick::{Counters, Runtime, RuntimeParts, Sim, SimState};

//! The simulation: tick driver, batching, run directory, checkpoints.

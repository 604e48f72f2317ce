//! Humanoid agents: state and cognition.

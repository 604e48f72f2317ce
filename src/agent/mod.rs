//! Humanoid agents: their changing state and their cognition.
//!
//! Cognition is plain sequential async code over a [`mind::Mind`] (the agent's port to the
//! batched engine): [`step`] runs one 15-minute step ([`plan`] the day, hour and quarter
//! hours, change plans when feelings call for it, [`act`] and judge the activity),
//! [`converse`] runs a conversation between two agents at one place and [`reflect`](mod@reflect)
//! a reflection. Prompts start with the agent's [`context`], so the questions of a step
//! share one prefilled prefix.

pub mod act;
pub mod activity_text;
pub mod context;
pub mod converse;
pub mod mind;
pub mod place;
pub mod plan;
pub mod reflect;
pub mod state;
pub mod step;
pub mod utterance;

pub use mind::{Fallback, Mind};
pub use state::{AgentState, PlanLine};
pub use step::{AgentEvent, PendingMemory, StepOutcome};

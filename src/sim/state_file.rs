//! The per-step state file in the Humanoid Agents format, so their dashboard reads our runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agent::state::plan_text;
use crate::agent::AgentState;
use crate::world::{Needs, Relationship};

/// One agent in a state file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentSnapshot {
    pub name: String,
    pub activity: String,
    pub activity_emoji: String,
    pub most_recent_15m_plan: String,
    pub most_recent_day_plan: String,
    pub most_recent_suggested_change: Option<String>,
    pub location: Vec<String>,
    pub emotion: String,
    pub basic_needs: Needs,
    pub social_relationships: BTreeMap<String, Relationship>,
}

/// One turn of a conversation in a state file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnSnapshot {
    pub name: String,
    pub text: String,
    /// The speaker's judgement after the conversation, on their last turn
    /// ("enjoyed" / "did not enjoy"); null on other turns.
    pub reaction: Option<String>,
}

/// A whole state file: `state_YYYY-MM-DD_HHhMM.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateFile {
    /// "Tuesday Jan 03 2023".
    pub date: String,
    /// "06:15 am".
    pub time: String,
    pub agents: Vec<AgentSnapshot>,
    /// Conversations of this step by place ("Lin family's house-Kitchen").
    pub conversations: BTreeMap<String, Vec<Vec<TurnSnapshot>>>,
}

impl AgentSnapshot {
    /// The snapshot of an agent's state.
    pub fn of(state: &AgentState) -> Self {
        Self {
            name: state.name.clone(),
            activity: state.activity.clone(),
            activity_emoji: state.activity_emoji.clone(),
            most_recent_15m_plan: plan_text(&state.quarter_plan),
            most_recent_day_plan: plan_text(&state.day_plan),
            most_recent_suggested_change: state.suggested_change.clone(),
            location: state.location.clone(),
            emotion: state.emotion.as_str().to_string(),
            basic_needs: state.needs,
            social_relationships: state.relationships.iter().cloned().collect(),
        }
    }
}

/// The conversation key of a place: its path joined with "-".
pub fn place_key(path: &[String]) -> String {
    path.join("-")
}

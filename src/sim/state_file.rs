//! The per-step state file in the Humanoid Agents format, so their dashboard reads our runs.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::agent::state::plan_text;
use crate::agent::AgentState;
use crate::world::{LocationNode, LocationTree, Needs, Relationship};

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
    /// What was said; null for a participant who did not answer (written, as the original
    /// writes it, so that both participants of every conversation appear in it).
    pub text: Option<String>,
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
    /// The location tree with the agents in each place, as the original writes it (absent
    /// from runs made before it was written).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub world: Option<WorldNode>,
}

/// A place of the `world` tree: its name, the agents in it or in a place inside it, and the
/// places inside it. The root is `"World"`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WorldNode {
    pub name: String,
    pub agents: Vec<String>,
    pub contains: Vec<WorldNode>,
}

impl WorldNode {
    /// The tree of `locations` with each agent `(name, location path)` in the places along
    /// its path.
    pub fn of(locations: &LocationTree, agents: &[(&str, &[String])]) -> Self {
        fn build(
            node: &LocationNode,
            path: &mut Vec<String>,
            agents: &[(&str, &[String])],
        ) -> WorldNode {
            path.push(node.name.clone());
            let here = agents
                .iter()
                .filter(|(_, at)| at.starts_with(path))
                .map(|(n, _)| n.to_string())
                .collect();
            let contains = node
                .children
                .iter()
                .map(|c| build(c, path, agents))
                .collect();
            path.pop();
            WorldNode {
                name: node.name.clone(),
                agents: here,
                contains,
            }
        }
        let mut path = Vec::new();
        WorldNode {
            name: "World".into(),
            agents: agents.iter().map(|(n, _)| n.to_string()).collect(),
            contains: locations
                .nested()
                .iter()
                .map(|n| build(n, &mut path, agents))
                .collect(),
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_world_tree_puts_each_agent_in_every_place_along_its_path() {
        let tree = LocationTree::new(&[
            "House/Kitchen".to_string(),
            "House/Bedroom".to_string(),
            "Park".to_string(),
        ])
        .unwrap();
        let kitchen = ["House".to_string(), "Kitchen".to_string()];
        let house = ["House".to_string()];
        let w = WorldNode::of(&tree, &[("Ann", &kitchen), ("Bo", &house)]);
        assert_eq!(w.name, "World");
        assert_eq!(w.agents, ["Ann", "Bo"]);
        let names: Vec<&str> = w.contains.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["House", "Park"]);
        assert_eq!(w.contains[0].agents, ["Ann", "Bo"]);
        assert_eq!(w.contains[0].contains[0].name, "Kitchen");
        assert_eq!(w.contains[0].contains[0].agents, ["Ann"]);
        assert!(w.contains[0].contains[1].agents.is_empty());
        assert!(w.contains[1].agents.is_empty() && w.contains[1].contains.is_empty());
        let json = serde_json::to_value(&w).unwrap();
        assert_eq!(json["contains"][0]["contains"][0]["agents"][0], "Ann");
    }

    #[test]
    fn a_silent_turn_is_written_as_null_and_read_back() {
        let t = TurnSnapshot {
            name: "Bo".into(),
            text: None,
            reaction: Some("did not enjoy".into()),
        };
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(
            json,
            r#"{"name":"Bo","text":null,"reaction":"did not enjoy"}"#
        );
        assert_eq!(serde_json::from_str::<TurnSnapshot>(&json).unwrap(), t);
    }
}

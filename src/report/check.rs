//! Checks a finished (or partial) run's state files: every field well-formed. Emoji fields
//! hold exactly two emoji, plans are `hh:mm am/pm: activity` lines with increasing times,
//! locations are leaves of the world's tree, emotions are labels of the closed set, needs
//! are in 0–10 and closeness in 0–30, conversation speakers are agents of the world.

use std::path::Path;

use serde::Serialize;

use crate::formats::emoji::is_emoji_text;
use crate::sim::StateFile;
use crate::world::{clock, Emotion, Need, World};

/// What the checker found.
#[derive(Clone, Debug, Default, Serialize)]
pub struct CheckReport {
    pub state_files: usize,
    /// Agent states checked (one per agent per file).
    pub agent_states: usize,
    /// Agent states with no problem.
    pub well_formed: usize,
    /// "state_...json: John Lin: activity_emoji: ..." for each problem.
    pub problems: Vec<String>,
    /// Agent states of the missing steps (agents × missing files).
    pub missing_agent_states: usize,
    /// Steps the run planned (`config.steps`), when checked against them.
    pub planned_steps: Option<u64>,
    /// State files of planned steps that are not there (names).
    pub missing: Vec<String>,
    /// State files that are not of a planned step (names).
    pub extra: Vec<String>,
}

impl CheckReport {
    /// Share of well-formed agent states, in percent, counting the agent states of missing
    /// steps as not well-formed (100 when there is nothing to check).
    pub fn percent(&self) -> f64 {
        let expected = self.agent_states + self.missing_agent_states;
        if expected == 0 {
            100.0
        } else {
            100.0 * self.well_formed as f64 / expected as f64
        }
    }

    /// Whether nothing is wrong: no problem, no missing and no extra state file.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty() && self.missing.is_empty() && self.extra.is_empty()
    }
}

/// Problems with one plan text ("" is allowed: no plan yet).
pub fn plan_problems(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut last: Option<u32> = None;
    for (i, line) in text.lines().enumerate() {
        match clock::parse_plan_line(line) {
            Some((t, _)) => {
                if last.is_some_and(|l| t <= l) {
                    out.push(format!(
                        "line {}: time not after the previous line: {line:?}",
                        i + 1
                    ));
                }
                last = Some(t);
            }
            None => out.push(format!(
                "line {}: not `hh:mm am/pm: activity`: {line:?}",
                i + 1
            )),
        }
    }
    out
}

/// Checks one state file's content against `world`; returns (agent states, well-formed
/// ones, problems).
pub fn check_state(world: &World, file: &str, state: &StateFile) -> (usize, usize, Vec<String>) {
    let mut problems = Vec::new();
    let mut ok = 0;
    if state.agents.len() != world.agents.len() {
        problems.push(format!(
            "{file}: {} agents, the world has {}",
            state.agents.len(),
            world.agents.len()
        ));
    }
    for a in &state.agents {
        let mut p = Vec::new();
        if world.agent_index(&a.name).is_none() {
            p.push(format!("name: {:?} is not an agent of the world", a.name));
        }
        if a.activity.trim().is_empty() || a.activity.contains('\n') {
            p.push(format!(
                "activity: {:?} is not one non-empty line",
                a.activity
            ));
        }
        if !is_emoji_text(&a.activity_emoji, Some(2)) {
            p.push(format!(
                "activity_emoji: {:?} is not two emoji",
                a.activity_emoji
            ));
        }
        for (field, text) in [
            ("most_recent_15m_plan", &a.most_recent_15m_plan),
            ("most_recent_day_plan", &a.most_recent_day_plan),
        ] {
            if text.trim().is_empty() {
                p.push(format!("{field}: empty"));
            }
            p.extend(
                plan_problems(text)
                    .into_iter()
                    .map(|e| format!("{field}: {e}")),
            );
        }
        if let Some(s) = &a.most_recent_suggested_change {
            if s.trim().is_empty() || s.contains('\n') {
                p.push(format!(
                    "most_recent_suggested_change: {s:?} is not one line"
                ));
            }
        }
        if !world.locations.is_leaf(&a.location) {
            p.push(format!(
                "location: {:?} is not a place of the world",
                a.location
            ));
        }
        if a.emotion.parse::<Emotion>().is_err() {
            p.push(format!(
                "emotion: {:?} is not one of the emotions",
                a.emotion
            ));
        }
        for need in Need::ALL {
            if a.basic_needs.get(need) > 10 {
                p.push(format!(
                    "basic_needs.{}: {} is over 10",
                    need.as_str(),
                    a.basic_needs.get(need)
                ));
            }
        }
        for (other, r) in &a.social_relationships {
            if r.closeness > 30 {
                p.push(format!(
                    "social_relationships.{other}.closeness: {} is over 30",
                    r.closeness
                ));
            }
        }
        if p.is_empty() {
            ok += 1;
        }
        problems.extend(p.into_iter().map(|e| format!("{file}: {}: {e}", a.name)));
    }
    for (place, convs) in &state.conversations {
        for c in convs {
            for t in c {
                let blank = t.text.as_deref().is_some_and(|s| s.trim().is_empty());
                if world.agent_index(&t.name).is_none() || blank {
                    problems.push(format!(
                        "{file}: conversations.{place}: bad turn {:?}",
                        t.name
                    ));
                }
            }
        }
    }
    (state.agents.len(), ok, problems)
}

/// Most steps a run may plan for the checker to list its state files (a corrupt
/// `config.steps` must not size an allocation): a century of 5-minute steps.
pub const MAX_PLANNED_STEPS: u64 = 100 * 366 * 288;

/// [`check_run`], and the state files compared with the `planned` steps' (0-based steps
/// `0..planned`): the missing and extra ones are listed, and a missing step's agent states
/// count as not well-formed. Errors: a plan of more than [`MAX_PLANNED_STEPS`].
pub fn check_run_steps(dir: &Path, world: &World, planned: u64) -> std::io::Result<CheckReport> {
    if planned > MAX_PLANNED_STEPS {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("config.json: steps = {planned} is more than {MAX_PLANNED_STEPS}: not a run this checker can list"),
        ));
    }
    let mut report = check_run(dir, world)?;
    let expected: std::collections::BTreeSet<String> =
        (0..planned).map(|s| world.state_file_of(s)).collect();
    let present: std::collections::BTreeSet<String> = crate::sim::RunDir::new(dir)
        .state_files()?
        .iter()
        .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .collect();
    report.missing = expected.difference(&present).cloned().collect();
    report.extra = present.difference(&expected).cloned().collect();
    report.missing_agent_states = report.missing.len() * world.agents.len();
    report.planned_steps = Some(planned);
    Ok(report)
}

/// Checks every state file of the run in `dir` against `world`.
pub fn check_run(dir: &Path, world: &World) -> std::io::Result<CheckReport> {
    let mut report = CheckReport::default();
    for path in crate::sim::RunDir::new(dir).state_files()? {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        report.state_files += 1;
        let text = std::fs::read_to_string(&path)?;
        match serde_json::from_str::<StateFile>(&text) {
            Ok(state) => {
                let (n, ok, p) = check_state(world, &name, &state);
                report.agent_states += n;
                report.well_formed += ok;
                report.problems.extend(p);
            }
            Err(e) => {
                report.agent_states += world.agents.len();
                report
                    .problems
                    .push(format!("{name}: not a state file: {e}"));
            }
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentState;
    use crate::sim::AgentSnapshot;

    /// A state file as the original Humanoid Agents writes it: a silent responder's turn
    /// (`"text": null`) and the `world` tree.
    #[test]
    fn the_originals_state_files_are_read_and_pass() {
        let world = crate::world::bundled("lin-family.toml");
        let agents: Vec<serde_json::Value> = world
            .agents
            .iter()
            .map(|a| {
                let mut s = AgentState::from_spec(a, false);
                s.activity = "eat breakfast".into();
                s.activity_emoji = "🍳☕".into();
                s.day_plan = vec![crate::agent::state::PlanLine::new(6 * 60, "wake up")];
                s.quarter_plan = vec![crate::agent::state::PlanLine::new(8 * 60, "eat breakfast")];
                serde_json::to_value(AgentSnapshot::of(&s)).unwrap()
            })
            .collect();
        let (john, eddy) = (&world.agents[0].name, &world.agents[1].name);
        let text = serde_json::json!({
            "date": "Tuesday Jan 03 2023",
            "time": "08:00 am",
            "agents": agents,
            "conversations": {"Lin family's house-Kitchen": [[
                {"name": john, "text": "Good morning!", "reaction": "enjoyed"},
                {"name": eddy, "text": null, "reaction": "did not enjoy"}
            ]]},
            "world": {"name": "World", "agents": [john, eddy], "contains": [
                {"name": "Lin family's house", "agents": [john, eddy], "contains": []}
            ]}
        })
        .to_string();
        let state: StateFile = serde_json::from_str(&text).unwrap();
        assert_eq!(
            state.conversations.values().next().unwrap()[0][1].text,
            None
        );
        let (n, ok, problems) = check_state(&world, "state.json", &state);
        assert_eq!((n, ok), (2, 2), "{problems:?}");
        assert!(problems.is_empty(), "{problems:?}");
        // An empty utterance is still a bad turn; a silent one (null) is not.
        let bad = text.replace("Good morning!", " ");
        let state: StateFile = serde_json::from_str(&bad).unwrap();
        let (_, _, problems) = check_state(&world, "state.json", &state);
        assert_eq!(problems.len(), 1, "{problems:?}");
    }
}

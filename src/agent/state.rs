//! An agent's changing state: plans, activity, place, emotion, needs, relationships.

use serde::{Deserialize, Serialize};

use crate::world::{clock, AgentSpec, Emotion, Need, Needs, Relationship};

/// One line of a plan: a start time (minutes after midnight) and what the agent does.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanLine {
    pub minutes: u32,
    pub activity: String,
}

impl PlanLine {
    /// A plan line.
    pub fn new(minutes: u32, activity: impl Into<String>) -> Self {
        Self {
            minutes,
            activity: activity.into(),
        }
    }
}

impl std::fmt::Display for PlanLine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", clock::format_time(self.minutes), self.activity)
    }
}

/// Renders plan lines one per line.
pub fn plan_text(lines: &[PlanLine]) -> String {
    lines
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Reads plan lines back from [`plan_text`]'s form (a state file's day plan), skipping any
/// line that is not `hh:mm am: activity`.
pub fn parse_plan_text(text: &str) -> Vec<PlanLine> {
    text.lines()
        .filter_map(clock::parse_plan_line)
        .map(|(t, a)| PlanLine::new(t, a))
        .collect()
}

/// The plan line in effect at `minutes` (the last one starting at or before it).
pub fn line_at(lines: &[PlanLine], minutes: u32) -> Option<&PlanLine> {
    lines.iter().rev().find(|l| l.minutes <= minutes)
}

/// The model's judgement of an activity, kept while the agent continues it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Judged {
    pub activity: String,
    pub satisfied: Vec<Need>,
    pub emoji: String,
}

/// Everything about an agent that changes during a run (its memories live in the sim).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AgentState {
    pub name: String,
    pub activity: String,
    pub activity_emoji: String,
    /// Today's plan as the agent wrote it.
    pub day_plan: Vec<PlanLine>,
    /// One line per hour of the day.
    pub hourly_plan: Vec<PlanLine>,
    /// The current hour in 15-minute steps.
    pub quarter_plan: Vec<PlanLine>,
    pub suggested_change: Option<String>,
    /// The hour's activity the 15-minute plan breaks down (none once a plan change rewrites
    /// the hour): where a step happens is asked with it.
    #[serde(default)]
    pub part_of: Option<String>,
    /// The feeling the plan was last reconsidered for ("feeling sad and very hungry"): the
    /// question is asked again only when the feeling changes.
    #[serde(default)]
    pub reconsidered_for: Option<String>,
    /// When the plan was last reconsidered (game minutes since the start date): at most
    /// once per hour, since a change rewrites the plan through the next hour.
    #[serde(default)]
    pub reconsidered_at: Option<u64>,
    /// The judgement of the activity in progress.
    #[serde(default)]
    pub judged: Option<Judged>,
    pub location: Vec<String>,
    pub emotion: Emotion,
    /// Set by an `emotion=` condition: the emotion never changes.
    pub emotion_frozen: bool,
    pub needs: Needs,
    pub relationships: Vec<(String, Relationship)>,
}

impl AgentState {
    /// The state at the start of a run.
    pub fn from_spec(spec: &AgentSpec, emotion_frozen: bool) -> Self {
        Self {
            name: spec.name.clone(),
            activity: String::new(),
            activity_emoji: String::new(),
            day_plan: Vec::new(),
            hourly_plan: Vec::new(),
            quarter_plan: Vec::new(),
            suggested_change: None,
            part_of: None,
            reconsidered_for: None,
            reconsidered_at: None,
            judged: None,
            location: spec.location.clone(),
            emotion: spec.emotion,
            emotion_frozen,
            needs: spec.needs,
            relationships: spec.relationships.clone(),
        }
    }

    /// Forgets yesterday's plans: the day, hourly and 15-minute plans, the suggested change
    /// (it lives from the plan change that made it until the next change or the next day),
    /// the feeling last reconsidered and the judged activity. `reconsidered_at` stays: the
    /// hourly limit runs across midnight.
    pub fn start_day(&mut self) {
        self.day_plan.clear();
        self.hourly_plan.clear();
        self.quarter_plan.clear();
        self.suggested_change = None;
        self.part_of = None;
        self.reconsidered_for = None;
        self.judged = None;
    }

    /// The relationship to `other`, if the world defines one.
    pub fn relationship(&self, other: &str) -> Option<&Relationship> {
        self.relationships
            .iter()
            .find(|(n, _)| n == other)
            .map(|(_, r)| r)
    }

    /// Changes closeness to `other` by `delta`, clamped to 0–30; adds a relationship
    /// ("acquaintance", closeness 5) for someone the world did not relate.
    pub fn change_closeness(&mut self, other: &str, delta: i32) -> u8 {
        let idx = match self.relationships.iter().position(|(n, _)| n == other) {
            Some(i) => i,
            None => {
                self.relationships.push((
                    other.to_string(),
                    Relationship {
                        relationship: "acquaintance".into(),
                        closeness: 5,
                    },
                ));
                self.relationships.len() - 1
            }
        };
        let r = &mut self.relationships[idx].1;
        r.closeness = (i32::from(r.closeness) + delta).clamp(0, 30) as u8;
        r.closeness
    }

    /// The unmet needs (≤ 3) with their phrases ("very hungry"), in need order.
    pub fn unmet_needs(&self) -> Vec<(Need, String)> {
        Need::ALL
            .iter()
            .filter_map(|&n| crate::world::need_state_phrase(n, self.needs.get(n)).map(|p| (n, p)))
            .collect()
    }

    /// "feeling sad and very hungry", "feeling neutral", for prompts.
    pub fn feeling(&self) -> String {
        let mut parts = vec![self.emotion.as_str().to_string()];
        parts.extend(self.unmet_needs().into_iter().map(|(_, p)| p));
        format!("feeling {}", join_and(&parts))
    }

    /// Whether the plan should be reconsidered at `now` (game minutes), at most once an
    /// hour: while a need is unmet (every hour it stays unmet: an agent who kept its plan
    /// while hungry is asked again), or when the emotion is not neutral and the plan was not
    /// already reconsidered for this same feeling.
    pub fn needs_attention(&self, now: u64) -> bool {
        let unmet = !self.unmet_needs().is_empty();
        let new_feeling = self.emotion != Emotion::Neutral
            && self.reconsidered_for.as_deref() != Some(self.feeling().as_str());
        (unmet || new_feeling) && self.reconsidered_at.is_none_or(|t| now >= t + 60)
    }
}

/// "a", "a and b", "a, b and c".
pub fn join_and(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {}", init.join(", "), last),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::Needs;

    fn state() -> AgentState {
        let world = crate::world::bundled("lin-family.toml");
        let mut s = AgentState::from_spec(&world.agents[0], false);
        s.needs = Needs::default();
        s.emotion = Emotion::Neutral;
        s
    }

    #[test]
    fn an_unmet_need_is_reconsidered_every_hour_it_stays_unmet() {
        let mut s = state();
        assert!(
            !s.needs_attention(0),
            "content and neutral: nothing to reconsider"
        );
        s.needs.set(Need::Fullness, 2);
        assert!(s.needs_attention(0));
        s.reconsidered_for = Some(s.feeling());
        s.reconsidered_at = Some(0);
        assert!(!s.needs_attention(45), "at most hourly");
        assert!(
            s.needs_attention(60),
            "still hungry an hour later: asked again"
        );
    }

    #[test]
    fn closeness_moves_by_the_delta_and_stays_in_0_to_30() {
        let mut s = state();
        let other = s.relationships[0].0.clone();
        let start = s.relationship(&other).unwrap().closeness;
        assert_eq!(s.change_closeness(&other, 1), start + 1);
        assert_eq!(s.change_closeness(&other, -1), start);
        assert_eq!(s.change_closeness(&other, 100), 30);
        assert_eq!(s.change_closeness(&other, -100), 0);
    }

    #[test]
    fn an_emotion_is_reconsidered_once_per_feeling() {
        let mut s = state();
        s.emotion = Emotion::Sad;
        assert!(s.needs_attention(0));
        s.reconsidered_for = Some(s.feeling());
        s.reconsidered_at = Some(0);
        assert!(
            !s.needs_attention(120),
            "the same sadness, already reconsidered"
        );
        s.emotion = Emotion::Angry;
        assert!(s.needs_attention(120), "a new feeling");
    }
}

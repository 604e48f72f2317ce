//! A memory node: one thing an agent remembers, with its time stamps, importance and
//! embedding.

use std::fmt;

use serde::{Deserialize, Serialize};

/// Game time as whole minutes since the start of the simulation.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct GameTime(pub u64);

impl GameTime {
    /// The time `minutes` after the start of the simulation.
    pub const fn from_minutes(minutes: u64) -> Self {
        Self(minutes)
    }

    /// The time `hours` whole hours after the start of the simulation.
    pub const fn from_hours(hours: u64) -> Self {
        Self(hours.saturating_mul(60))
    }

    /// Minutes since the start of the simulation.
    pub const fn minutes(self) -> u64 {
        self.0
    }

    /// Hours (fractional) from `earlier` to `self`; zero if `earlier` is later.
    pub fn hours_since(self, earlier: GameTime) -> f64 {
        self.0.saturating_sub(earlier.0) as f64 / 60.0
    }
}

impl fmt::Display for GameTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "day {} {:02}:{:02}",
            self.0 / 1440,
            (self.0 / 60) % 24,
            self.0 % 60
        )
    }
}

/// How important a memory is, 1 (mundane) to 10 (life-changing); always in range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(from = "u8", into = "u8")]
pub struct Importance(u8);

impl Importance {
    /// The lowest importance (1).
    pub const MIN: Importance = Importance(1);
    /// The highest importance (10).
    pub const MAX: Importance = Importance(10);

    /// `value` clamped to 1..=10.
    pub fn new(value: i64) -> Self {
        Self(value.clamp(1, 10) as u8)
    }

    /// A real-valued rating (e.g. an expected value) rounded to the nearest integer and
    /// clamped; NaN gives the lowest importance.
    pub fn from_rating(value: f32) -> Self {
        if value.is_nan() {
            return Self::MIN;
        }
        Self(value.round().clamp(1.0, 10.0) as u8)
    }

    /// The importance as a number 1..=10.
    pub const fn get(self) -> u8 {
        self.0
    }
}

impl Default for Importance {
    fn default() -> Self {
        Self::MIN
    }
}

impl From<u8> for Importance {
    fn from(v: u8) -> Self {
        Self::new(i64::from(v))
    }
}

impl From<Importance> for u8 {
    fn from(v: Importance) -> u8 {
        v.0
    }
}

/// What kind of memory a node holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// A statement from the agent's description, given at the start.
    SeedStatement,
    /// Something the agent perceived or did.
    Observation,
    /// A plan the agent made.
    Plan,
    /// A conversation the agent took part in.
    Dialogue,
    /// A higher-level insight the agent drew from other memories.
    Reflection,
    /// A thought planted from outside at the start of a run (the papers' "inner voice",
    /// `humanoid run --inject`).
    Thought,
}

impl MemoryKind {
    /// The name used in serialized output (`seed_statement`, `observation`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryKind::SeedStatement => "seed_statement",
            MemoryKind::Observation => "observation",
            MemoryKind::Plan => "plan",
            MemoryKind::Dialogue => "dialogue",
            MemoryKind::Reflection => "reflection",
            MemoryKind::Thought => "thought",
        }
    }
}

/// One memory of one agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemoryNode {
    /// Unique within the agent's stream, increasing in order of creation.
    pub id: u64,
    pub kind: MemoryKind,
    pub text: String,
    pub created: GameTime,
    /// Last time the memory was retrieved (or its creation time).
    pub last_accessed: GameTime,
    pub importance: Importance,
    /// The L2-normalised embedding of `text`.
    pub embedding: Vec<f32>,
    /// Ids of the memories a reflection was drawn from (empty for other kinds).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<u64>,
}

/// A memory to add to a stream, before it has an id.
#[derive(Clone, Debug, PartialEq)]
pub struct NewMemory {
    pub kind: MemoryKind,
    pub text: String,
    pub created: GameTime,
    pub importance: Importance,
    /// The embedding of `text` (any length; the stream normalises it).
    pub embedding: Vec<f32>,
    /// Ids of existing memories this one is drawn from (reflections).
    pub evidence: Vec<u64>,
}

impl NewMemory {
    /// A memory of `kind` with no evidence.
    pub fn new(
        kind: MemoryKind,
        text: impl Into<String>,
        created: GameTime,
        importance: Importance,
        embedding: Vec<f32>,
    ) -> Self {
        Self {
            kind,
            text: text.into(),
            created,
            importance,
            embedding,
            evidence: Vec::new(),
        }
    }

    /// The same memory citing `evidence`.
    pub fn with_evidence(mut self, evidence: Vec<u64>) -> Self {
        self.evidence = evidence;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn importance_clamps_and_rounds() {
        assert_eq!(Importance::new(0).get(), 1);
        assert_eq!(Importance::new(11).get(), 10);
        assert_eq!(Importance::new(-5).get(), 1);
        assert_eq!(Importance::from_rating(4.49).get(), 4);
        assert_eq!(Importance::from_rating(4.5).get(), 5);
        assert_eq!(Importance::from_rating(f32::NAN).get(), 1);
        assert_eq!(Importance::from_rating(f32::INFINITY).get(), 10);
        assert_eq!(Importance::from(200u8).get(), 10);
    }

    #[test]
    fn node_serde_round_trip_clamps_importance() {
        let node = MemoryNode {
            id: 3,
            kind: MemoryKind::Reflection,
            text: "x".into(),
            created: GameTime(61),
            last_accessed: GameTime(90),
            importance: Importance::new(7),
            embedding: vec![0.6, 0.8],
            evidence: vec![1, 2],
        };
        let json = serde_json::to_string(&node).unwrap();
        assert!(json.contains("\"kind\":\"reflection\""), "{json}");
        let back: MemoryNode = serde_json::from_str(&json).unwrap();
        assert_eq!(back, node);
        let clamped: MemoryNode = serde_json::from_str(
            r#"{"id":1,"kind":"plan","text":"t","created":0,"last_accessed":0,
                "importance":0,"embedding":[1.0]}"#,
        )
        .unwrap();
        assert_eq!(clamped.importance.get(), 1);
        assert!(clamped.evidence.is_empty());
    }

    #[test]
    fn game_time_hours() {
        assert_eq!(GameTime(150).hours_since(GameTime(30)), 2.0);
        assert_eq!(GameTime(10).hours_since(GameTime(30)), 0.0);
        assert_eq!(GameTime(1440 + 75).to_string(), "day 1 01:15");
    }
}

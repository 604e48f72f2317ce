//! Emotions and relationships between agents.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Highest closeness between two agents.
pub const CLOSENESS_MAX: u8 = 30;

/// Closeness when a world does not say.
pub const CLOSENESS_DEFAULT: u8 = 5;

/// An agent's emotion.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Emotion {
    /// The default.
    #[default]
    Neutral,
    /// Happy.
    Happy,
    /// Sad.
    Sad,
    /// Angry.
    Angry,
    /// Afraid.
    Afraid,
    /// Surprised.
    Surprised,
    /// Disgusted.
    Disgusted,
}

impl Emotion {
    /// Every emotion, neutral first.
    pub const ALL: [Emotion; 7] = [
        Emotion::Neutral,
        Emotion::Happy,
        Emotion::Sad,
        Emotion::Angry,
        Emotion::Afraid,
        Emotion::Surprised,
        Emotion::Disgusted,
    ];

    /// The lowercase name, e.g. `"neutral"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Emotion::Neutral => "neutral",
            Emotion::Happy => "happy",
            Emotion::Sad => "sad",
            Emotion::Angry => "angry",
            Emotion::Afraid => "afraid",
            Emotion::Surprised => "surprised",
            Emotion::Disgusted => "disgusted",
        }
    }
}

/// The emotion names joined with ", ".
pub(crate) fn emotion_names() -> String {
    Emotion::ALL.map(Emotion::as_str).join(", ")
}

impl fmt::Display for Emotion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Emotion {
    type Err = String;

    /// Reads a lowercase emotion name; the error lists the valid names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Emotion::ALL
            .into_iter()
            .find(|e| e.as_str() == s)
            .ok_or_else(|| format!("unknown emotion {s:?} (valid: {})", emotion_names()))
    }
}

/// How one agent relates to another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relationship {
    /// What the other is to this agent, e.g. "son", "neighbour".
    pub relationship: String,
    /// 0–30 (see [`closeness_phrase`]).
    pub closeness: u8,
}

/// How close a closeness level feels: below 5 "distant", 5–9 "rather close", 10–14 "close",
/// 15 and above "very close".
pub fn closeness_phrase(closeness: u8) -> &'static str {
    match closeness {
        0..=4 => "distant",
        5..=9 => "rather close",
        10..=14 => "close",
        _ => "very close",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emotions_parse_and_print() {
        for e in Emotion::ALL {
            assert_eq!(e.as_str().parse::<Emotion>(), Ok(e));
            assert_eq!(
                serde_json::to_string(&e).unwrap(),
                format!("\"{}\"", e.as_str())
            );
        }
        assert_eq!(Emotion::default(), Emotion::Neutral);
        let err = "Happy".parse::<Emotion>().unwrap_err();
        assert!(err.contains("neutral, happy, sad"), "{err}");
    }

    #[test]
    fn closeness_phrases() {
        let phrases: Vec<_> = [0, 4, 5, 9, 10, 14, 15, 30]
            .into_iter()
            .map(closeness_phrase)
            .collect();
        assert_eq!(
            phrases,
            [
                "distant",
                "distant",
                "rather close",
                "rather close",
                "close",
                "close",
                "very close",
                "very close"
            ]
        );
    }
}

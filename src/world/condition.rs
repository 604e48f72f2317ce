//! Experimental conditions (`fullness=0`, `emotion=sad`, `closeness=0`) that override every
//! agent's starting state, as in the papers' ablations.

use super::emotion::{emotion_names, Emotion, CLOSENESS_MAX};
use super::needs::{need_names, Need, NEED_MAX};
use std::fmt;
use std::str::FromStr;

/// One override of every agent's starting state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Condition {
    /// Set one need (0–10) of every agent.
    Need(Need, u8),
    /// Set every agent's emotion.
    Emotion(Emotion),
    /// Set the closeness (0–30) of every relationship.
    Closeness(u8),
}

/// A condition string that cannot be read; displays what was given and what is valid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad condition {input:?}: {reason}")]
pub struct ConditionError {
    /// The string as given.
    pub input: String,
    /// What is wrong and what would be valid.
    pub reason: String,
}

fn valid_forms() -> String {
    format!(
        "write KEY=VALUE with KEY one of {} (value 0–{NEED_MAX}), emotion (value one of {}), or \
         closeness (value 0–{CLOSENESS_MAX})",
        need_names(),
        emotion_names()
    )
}

fn level(value: &str, max: u8) -> Result<u8, String> {
    match value.trim().parse::<u8>() {
        Ok(v) if v <= max => Ok(v),
        _ => Err(format!("value {value:?} must be an integer 0–{max}")),
    }
}

impl FromStr for Condition {
    type Err = ConditionError;

    /// Reads `need=LEVEL` (need one of fullness, social, fun, health, energy; level 0–10),
    /// `emotion=NAME` or `closeness=LEVEL` (0–30).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = |reason: String| ConditionError {
            input: s.to_string(),
            reason,
        };
        let Some((key, value)) = s.split_once('=') else {
            return Err(err(format!("missing '='; {}", valid_forms())));
        };
        let key = key.trim();
        if key == "emotion" {
            return value
                .trim()
                .parse::<Emotion>()
                .map(Condition::Emotion)
                .map_err(err);
        }
        if key == "closeness" {
            return level(value, CLOSENESS_MAX)
                .map(Condition::Closeness)
                .map_err(err);
        }
        match key.parse::<Need>() {
            Ok(need) => level(value, NEED_MAX)
                .map(|v| Condition::Need(need, v))
                .map_err(err),
            Err(_) => Err(err(format!("unknown key {key:?}; {}", valid_forms()))),
        }
    }
}

impl fmt::Display for Condition {
    /// The form [`Condition::from_str`] reads, e.g. `fullness=0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Condition::Need(n, v) => write!(f, "{}={v}", n.as_str()),
            Condition::Emotion(e) => write!(f, "emotion={}", e.as_str()),
            Condition::Closeness(c) => write!(f, "closeness={c}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_conditions() {
        let cases = [
            ("fullness=0", Condition::Need(Need::Fullness, 0)),
            ("energy=10", Condition::Need(Need::Energy, 10)),
            ("emotion=sad", Condition::Emotion(Emotion::Sad)),
            ("closeness=30", Condition::Closeness(30)),
        ];
        for (s, c) in cases {
            assert_eq!(s.parse::<Condition>(), Ok(c));
            assert_eq!(c.to_string(), s);
        }
        assert_eq!(
            " health = 3".parse::<Condition>(),
            Ok(Condition::Need(Need::Health, 3))
        );
    }

    #[test]
    fn errors_say_what_is_valid() {
        let e = "hunger=0".parse::<Condition>().unwrap_err().to_string();
        assert!(e.contains("unknown key \"hunger\""), "{e}");
        assert!(e.contains("fullness, social, fun, health, energy"), "{e}");
        assert!(e.contains("closeness (value 0–30)"), "{e}");
        let e = "fun=11".parse::<Condition>().unwrap_err().to_string();
        assert!(e.contains("0–10"), "{e}");
        let e = "closeness=-1".parse::<Condition>().unwrap_err().to_string();
        assert!(e.contains("0–30"), "{e}");
        let e = "emotion=bored"
            .parse::<Condition>()
            .unwrap_err()
            .to_string();
        assert!(e.contains("neutral, happy"), "{e}");
        let e = "fullness".parse::<Condition>().unwrap_err().to_string();
        assert!(e.contains("missing '='"), "{e}");
    }
}

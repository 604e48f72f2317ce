//! Basic needs (Humanoid Agents' "System 1"): five levels 0–10 that decay over time and are
//! satisfied by activities.

use serde::{Deserialize, Serialize};
use std::fmt;

pub use crate::formats::needs::{YesThresholds, NEED_NAMES};
use std::str::FromStr;

/// Highest level of a need.
pub const NEED_MAX: u8 = 10;

/// A need at or below this level is unmet: the agent feels it ("slightly hungry").
pub const UNMET_NEED: u8 = 3;

/// A basic need.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Need {
    /// Not hungry.
    Fullness,
    /// Not lonely.
    Social,
    /// Not bored.
    Fun,
    /// Not unwell.
    Health,
    /// Not tired.
    Energy,
}

impl Need {
    /// Every need, in the order of the state JSON.
    pub const ALL: [Need; 5] = [
        Need::Fullness,
        Need::Social,
        Need::Fun,
        Need::Health,
        Need::Energy,
    ];

    /// The lowercase name: `"fullness"`, `"social"`, `"fun"`, `"health"`, `"energy"`.
    pub fn as_str(self) -> &'static str {
        NEED_NAMES[self as usize]
    }

    /// How an agent feels when the need is unmet: hungry, lonely, bored, unwell, tired.
    pub fn adjective(self) -> &'static str {
        match self {
            Need::Fullness => "hungry",
            Need::Social => "lonely",
            Need::Fun => "bored",
            Need::Health => "unwell",
            Need::Energy => "tired",
        }
    }

    /// What meets the need, as a plan change would put it: "eat something", "rest or sleep".
    pub fn remedy(self) -> &'static str {
        match self {
            Need::Fullness => "eat something",
            Need::Social => "spend time with other people",
            Need::Fun => "do something enjoyable",
            Need::Health => "exercise or look after their health",
            Need::Energy => "rest or sleep",
        }
    }

    /// The expected drop per 5 simulated hours that the Humanoid Agents paper states, when
    /// no activity satisfies the need: fullness and health 1, social and fun 4, energy 5.
    pub fn paper_decay_per_5_hours(self) -> f64 {
        match self {
            Need::Fullness | Need::Health => 1.0,
            Need::Social | Need::Fun => 4.0,
            Need::Energy => 5.0,
        }
    }

    /// The original Humanoid Agents code's probability of a drop per 15-minute step
    /// (fullness 0.05, social 0.05, fun 0.3, health 0.2, energy 0.2: per 5 hours 1, 1, 6,
    /// 4, 4), a documented alternative to the paper's rates.
    pub fn original_code_decay_per_step(self) -> f64 {
        match self {
            Need::Fullness | Need::Social => 0.05,
            Need::Fun => 0.3,
            Need::Health | Need::Energy => 0.2,
        }
    }

    /// The starting level when a world does not say: 10 for energy, 5 for the others.
    pub fn default_level(self) -> u8 {
        match self {
            Need::Energy => 10,
            _ => 5,
        }
    }
}

impl fmt::Display for Need {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Need {
    type Err = String;

    /// Reads a lowercase need name; the error lists the valid names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Need::ALL
            .into_iter()
            .find(|n| n.as_str() == s)
            .ok_or_else(|| format!("unknown need {s:?} (valid: {})", need_names()))
    }
}

/// The need names joined with ", ".
pub(crate) fn need_names() -> String {
    Need::ALL.map(Need::as_str).join(", ")
}

/// The levels of an agent's five needs, each 0–10. Serialises with fields in this order (the
/// state JSON's `basic_needs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Needs {
    /// Fullness (low: hungry).
    pub fullness: u8,
    /// Social (low: lonely).
    pub social: u8,
    /// Fun (low: bored).
    pub fun: u8,
    /// Health (low: unwell).
    pub health: u8,
    /// Energy (low: tired).
    pub energy: u8,
}

impl Default for Needs {
    /// 5 for each need, 10 for energy.
    fn default() -> Self {
        Needs {
            fullness: 5,
            social: 5,
            fun: 5,
            health: 5,
            energy: 10,
        }
    }
}

impl Needs {
    /// The level of one need.
    pub fn get(&self, need: Need) -> u8 {
        match need {
            Need::Fullness => self.fullness,
            Need::Social => self.social,
            Need::Fun => self.fun,
            Need::Health => self.health,
            Need::Energy => self.energy,
        }
    }

    /// Sets one need, clamped to 0–10.
    pub fn set(&mut self, need: Need, value: u8) {
        let value = value.min(NEED_MAX);
        match need {
            Need::Fullness => self.fullness = value,
            Need::Social => self.social = value,
            Need::Fun => self.fun = value,
            Need::Health => self.health = value,
            Need::Energy => self.energy = value,
        }
    }
}

/// How an unmet need feels, `None` when the level is above 3 ([`UNMET_NEED`]): 3 →
/// "slightly hungry", 2 → "hungry", 1 → "very hungry", 0 → "extremely hungry" (with the
/// need's adjective).
pub fn need_state_phrase(need: Need, value: u8) -> Option<String> {
    let adjective = need.adjective();
    match value {
        3 => Some(format!("slightly {adjective}")),
        2 => Some(adjective.to_string()),
        1 => Some(format!("very {adjective}")),
        0 => Some(format!("extremely {adjective}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_default_get_and_clamp() {
        let mut n = Needs::default();
        assert_eq!(Need::ALL.map(|k| n.get(k)), [5, 5, 5, 5, 10]);
        for k in Need::ALL {
            assert_eq!(n.get(k), k.default_level());
        }
        n.set(Need::Fun, 200);
        assert_eq!(n.fun, 10);
        n.set(Need::Health, 0);
        assert_eq!(n.get(Need::Health), 0);
    }

    #[test]
    fn needs_serialise_in_state_order() {
        let json = serde_json::to_string(&Needs::default()).unwrap();
        assert_eq!(
            json,
            r#"{"fullness":5,"social":5,"fun":5,"health":5,"energy":10}"#
        );
        assert_eq!(serde_json::to_string(&Need::Fun).unwrap(), "\"fun\"");
    }

    #[test]
    fn phrases_and_names() {
        assert_eq!(need_state_phrase(Need::Fullness, 4), None);
        assert_eq!(
            need_state_phrase(Need::Fullness, 3).as_deref(),
            Some("slightly hungry")
        );
        assert_eq!(
            need_state_phrase(Need::Social, 2).as_deref(),
            Some("lonely")
        );
        assert_eq!(
            need_state_phrase(Need::Energy, 1).as_deref(),
            Some("very tired")
        );
        assert_eq!(
            need_state_phrase(Need::Health, 0).as_deref(),
            Some("extremely unwell")
        );
        assert_eq!("fun".parse::<Need>(), Ok(Need::Fun));
        let err = "hunger".parse::<Need>().unwrap_err();
        assert!(
            err.contains("fullness, social, fun, health, energy"),
            "{err}"
        );
        assert_eq!(Need::Fun.original_code_decay_per_step(), 0.3);
    }
}

/// How fast each need drops when no activity satisfies it: the expected drop per simulated
/// hour, [`Need::ALL`] order (`[needs.decay]` in a world file; the paper's rates by default).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decay {
    pub per_hour: [f64; 5],
}

// The rates are validated finite (never NaN), so equality is total.
impl Eq for Decay {}

impl Default for Decay {
    /// The paper's rates.
    fn default() -> Self {
        Decay {
            per_hour: Need::ALL.map(|n| n.paper_decay_per_5_hours() / 5.0),
        }
    }
}

impl Decay {
    /// The expected drop of `need` in one step of `step_minutes`: the per-hour rate scaled to
    /// the step, so the decay per hour does not depend on the step length.
    pub fn per_step(&self, need: Need, step_minutes: u32) -> f64 {
        let i = Need::ALL.iter().position(|&n| n == need).unwrap_or(0);
        self.per_hour[i] * f64::from(step_minutes) / 60.0
    }

    /// The drop in one step whose expected drop is `expected`: its whole part always, one more
    /// with the probability of its fraction (`u` uniform in [0, 1)).
    pub fn drop_of(expected: f64, u: f64) -> u8 {
        let whole = expected.floor();
        let extra = u64::from(u < expected - whole);
        (whole as u64 + extra).min(u64::from(NEED_MAX)) as u8
    }
}

#[cfg(test)]
mod decay_tests {
    use super::*;

    #[test]
    fn the_default_rates_are_the_papers_per_5_hours() {
        let d = Decay::default();
        let per_5h: Vec<f64> = Need::ALL
            .iter()
            .map(|&n| d.per_step(n, 15) * 20.0)
            .collect();
        for (got, want) in per_5h.iter().zip([1.0, 4.0, 4.0, 1.0, 5.0]) {
            assert!((got - want).abs() < 1e-9, "{per_5h:?}");
        }
    }

    #[test]
    fn the_decay_per_hour_does_not_depend_on_the_step_length() {
        let d = Decay::default();
        for need in Need::ALL {
            let a = d.per_step(need, 5) * 12.0;
            let b = d.per_step(need, 15) * 4.0;
            let c = d.per_step(need, 60);
            assert!((a - c).abs() < 1e-9 && (b - c).abs() < 1e-9, "{need}");
        }
    }

    #[test]
    fn a_drop_is_the_whole_part_plus_a_chance_of_one() {
        assert_eq!(Decay::drop_of(0.25, 0.1), 1);
        assert_eq!(Decay::drop_of(0.25, 0.3), 0);
        assert_eq!(Decay::drop_of(2.5, 0.9), 2);
        assert_eq!(Decay::drop_of(2.5, 0.1), 3);
        assert_eq!(Decay::drop_of(0.0, 0.0), 0);
    }
}

//! The needs' names as files spell them, and the per-need thresholds on a model's P(yes)
//! that model manifests and run configurations carry.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The five needs' names, in the order of the state JSON (`world::Need::ALL`).
pub const NEED_NAMES: [&str; 5] = ["fullness", "social", "fun", "health", "energy"];

/// The entry of [`YesThresholds`] for the question whether an agent changes its plan.
pub const CHANGE_PLAN: &str = "change_plan";

/// Per need (by name), the probability of "yes" above which a model's answer counts as the
/// activity satisfying the need, and under [`CHANGE_PLAN`] the one above which an agent
/// changes its plan; an entry not listed takes 0.5 (the more probable answer). A model's
/// manifest tunes these on the development sets of `eval judge` and `eval replan`; a run
/// keeps them in its `config.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct YesThresholds(pub BTreeMap<String, f32>);

impl YesThresholds {
    /// Whether every need takes the default 0.5.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The threshold of each need, in [`NEED_NAMES`] order.
    pub fn per_need(&self) -> [f32; 5] {
        NEED_NAMES.map(|n| self.0.get(n).copied().unwrap_or(0.5))
    }

    /// The plan-change threshold.
    pub fn change_plan(&self) -> f32 {
        self.0.get(CHANGE_PLAN).copied().unwrap_or(0.5)
    }

    /// The first entry that is not a need's name (or [`CHANGE_PLAN`]) or not strictly
    /// between 0 and 1, as `(name, why)`.
    pub fn invalid(&self) -> Option<(String, String)> {
        self.0.iter().find_map(|(name, &p)| {
            if !NEED_NAMES.contains(&name.as_str()) && name != CHANGE_PLAN {
                Some((
                    name.clone(),
                    format!(
                        "unknown need (valid: {}, or {CHANGE_PLAN})",
                        NEED_NAMES.join(", ")
                    ),
                ))
            } else if !(p > 0.0 && p < 1.0) {
                Some((name.clone(), format!("{p} is not between 0 and 1")))
            } else {
                None
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thresholds_default_to_one_half_and_reject_bad_entries() {
        let t = |pairs: &[(&str, f32)]| {
            YesThresholds(pairs.iter().map(|(n, p)| (n.to_string(), *p)).collect())
        };
        assert_eq!(t(&[]).per_need(), [0.5; 5]);
        assert_eq!(t(&[("fun", 0.6)]).per_need(), [0.5, 0.5, 0.6, 0.5, 0.5]);
        assert_eq!(t(&[("fun", 0.6), ("energy", 0.3)]).invalid(), None);
        assert_eq!(t(&[("change_plan", 0.8)]).invalid(), None);
        assert_eq!(t(&[("change_plan", 0.8)]).change_plan(), 0.8);
        assert_eq!(t(&[("change_plan", 0.8)]).per_need(), [0.5; 5]);
        assert_eq!(t(&[]).change_plan(), 0.5);
        let (name, why) = t(&[("hunger", 0.6)]).invalid().unwrap();
        assert!(name == "hunger" && why.contains("unknown need"), "{why}");
        for p in [0.0, 1.0, f32::NAN] {
            let (_, why) = t(&[("fun", p)]).invalid().unwrap();
            assert!(why.contains("not between 0 and 1"), "{why}");
        }
        let json = serde_json::to_string(&t(&[("fun", 0.6)])).unwrap();
        assert_eq!(json, r#"{"fun":0.6}"#);
    }
}

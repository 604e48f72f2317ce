//! Whether agents meet an urgent need within the hour, read from a run's state files: the
//! issue's "an agent whose energy or fullness is at 0 rests or eats within the next hour",
//! for every need.

use crate::agent::plan::{is_sleep, URGENT_NEED};
use crate::sim::StateFile;
use crate::world::Need;

use super::quality::Share;

/// State files after the onset in which the need must rise (four 15-minute steps: an hour).
pub const WITHIN_STEPS: usize = 4;

/// For each onset of an urgent need (an agent's need at or below [`URGENT_NEED`] in a state
/// file, above it in the file before or first urgent in the first file), whether it rises in
/// one of the next [`WITHIN_STEPS`] files (a need rises only when an activity satisfies it).
/// Onsets while the agent sleeps, or with fewer files after them, are not counted.
pub fn urgent_needs_met(states: &[StateFile]) -> Share {
    let mut share = Share::default();
    for (k, st) in states.iter().enumerate() {
        if k + WITHIN_STEPS >= states.len() {
            break;
        }
        for (i, a) in st.agents.iter().enumerate() {
            let level = |k: usize, need: Need| {
                states[k]
                    .agents
                    .get(i)
                    .filter(|b| b.name == a.name)
                    .map(|b| b.basic_needs.get(need))
            };
            for need in Need::ALL {
                let now = a.basic_needs.get(need);
                let before = k.checked_sub(1).and_then(|p| level(p, need));
                let onset = now <= URGENT_NEED && before.is_none_or(|b| b > URGENT_NEED);
                if !onset || is_sleep(&a.activity) {
                    continue;
                }
                let rises = (k + 1..=k + WITHIN_STEPS).any(
                    |j| matches!((level(j - 1, need), level(j, need)), (Some(p), Some(n)) if n > p),
                );
                share.add(rises, || {
                    format!(
                        "{} {}: {} {now} ({})",
                        st.time,
                        a.name,
                        need.as_str(),
                        a.activity
                    )
                });
            }
        }
    }
    share
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::state_file::AgentSnapshot;
    use crate::world::Needs;

    /// Fifteen-minute state files of one agent with these energy levels and activities.
    fn day(levels: &[(u8, &str)]) -> Vec<StateFile> {
        levels
            .iter()
            .enumerate()
            .map(|(k, &(energy, activity))| {
                let mut needs = Needs::default();
                for n in Need::ALL {
                    needs.set(n, 6);
                }
                needs.set(Need::Energy, energy);
                StateFile {
                    date: "Tuesday Jan 03 2023".into(),
                    time: format!("{:02}:{:02} pm", 6 + k / 4, k % 4 * 15),
                    agents: vec![AgentSnapshot {
                        name: "John Lin".into(),
                        activity: activity.into(),
                        activity_emoji: String::new(),
                        most_recent_15m_plan: String::new(),
                        most_recent_day_plan: String::new(),
                        most_recent_suggested_change: None,
                        location: vec!["Home".into()],
                        emotion: "neutral".into(),
                        basic_needs: needs,
                        social_relationships: Default::default(),
                    }],
                    conversations: Default::default(),
                    world: None,
                }
            })
            .collect()
    }

    #[test]
    fn an_urgent_need_counts_as_met_when_it_rises_within_the_hour() {
        let w = "work";
        // Tired at the second file, rested at the fifth: met.
        let met = urgent_needs_met(&day(&[(2, w), (1, w), (1, w), (0, w), (1, "rest"), (2, w)]));
        assert_eq!((met.good, met.total), (1, 1));
        // Never rises in the four files after the onset: not met.
        let unmet = urgent_needs_met(&day(&[
            (2, w),
            (1, w),
            (1, w),
            (0, w),
            (0, w),
            (0, w),
            (1, w),
        ]));
        assert_eq!((unmet.good, unmet.total), (0, 1));
        assert!(unmet.examples[0].contains("energy 1"));
        // Staying urgent is one onset; asleep or too near the end is none.
        let asleep = urgent_needs_met(&day(&[
            (1, "John Lin is asleep."),
            (1, w),
            (1, w),
            (1, w),
            (1, w),
        ]));
        assert_eq!(asleep.total, 0);
        let late = urgent_needs_met(&day(&[(2, w), (2, w), (0, w), (0, w)]));
        assert_eq!(late.total, 0);
    }
}

//! Ablations (Humanoid Agents, Table 2): what one run did, measured from its own judgements,
//! and the comparison of settings over seeds.
//!
//! - **Time on a need**: an activity's judgement (the needs the run said it satisfies, see
//!   [`items_from_run`]) holds from the step it started until the agent's next new activity
//!   (or the end of the run). The time an agent spent satisfying a need is the sum of those
//!   spans whose activity satisfies it; runs report the mean over agents, in hours.
//! - **Conversations**: their count, and the positive ones (every participant enjoyed it:
//!   the sheet's "brought them closer" answer is yes).
//! - **Over seeds**: mean and sample standard deviation; the increase of a setting over the
//!   normal one is `(treated − normal) / normal × 100` of the means, and also per seed
//!   (paired by seed) so its spread can be given.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::Result;
use super::run_dir::read_config;
use super::sheet::{items_from_run, Dimension, Item, ItemKind};
use crate::world::Need;

/// What one run did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunMeasures {
    /// Hours per agent (mean over the world's agents) on activities satisfying each need.
    pub need_hours: BTreeMap<String, f64>,
    /// Hours simulated per agent.
    pub hours: f64,
    pub conversations: usize,
    /// Conversations every participant enjoyed.
    pub positive_conversations: usize,
}

impl RunMeasures {
    /// Hours per agent on activities satisfying `need`.
    pub fn hours_on(&self, need: Need) -> f64 {
        self.need_hours.get(need.as_str()).copied().unwrap_or(0.0)
    }

    /// Share of conversations that were positive (`None` without conversations).
    pub fn positive_share(&self) -> Option<f64> {
        (self.conversations > 0)
            .then(|| self.positive_conversations as f64 / self.conversations as f64)
    }
}

/// Measures the items of a run: `steps` steps of `step_hours` each, `agents` agents.
pub fn measure_items(
    items: &[Item],
    steps: u64,
    step_hours: f64,
    agents: &[String],
) -> RunMeasures {
    let mut need_hours: BTreeMap<String, f64> = Need::ALL
        .iter()
        .map(|n| (n.as_str().to_string(), 0.0))
        .collect();
    for agent in agents {
        let mut acts: Vec<&Item> = items
            .iter()
            .filter(|i| i.kind == ItemKind::Activity && &i.agent == agent)
            .collect();
        acts.sort_by_key(|i| i.step);
        for (k, item) in acts.iter().enumerate() {
            let end = acts.get(k + 1).map_or(steps, |next| next.step).min(steps);
            let span = end.saturating_sub(item.step) as f64 * step_hours;
            for need in Need::ALL {
                if answer(item, Dimension::Need(need)) == Some("yes") {
                    *need_hours.entry(need.as_str().to_string()).or_default() += span;
                }
            }
        }
    }
    let n = agents.len().max(1) as f64;
    need_hours.values_mut().for_each(|h| *h /= n);
    let talks: Vec<&Item> = items
        .iter()
        .filter(|i| i.kind == ItemKind::Conversation)
        .collect();
    RunMeasures {
        need_hours,
        hours: steps as f64 * step_hours,
        conversations: talks.len(),
        positive_conversations: talks
            .iter()
            .filter(|i| answer(i, Dimension::Closer) == Some("yes"))
            .count(),
    }
}

fn answer(item: &Item, dim: Dimension) -> Option<&str> {
    let k = Dimension::ALL.iter().position(|d| *d == dim)?;
    item.model.get(k)?.as_deref()
}

/// Measures the finished (or partial) run in `dir`, up to its last written step.
pub fn measure_run(dir: &Path) -> Result<RunMeasures> {
    let (config, world) = read_config(dir)?;
    let items = items_from_run(dir)?;
    let steps = written_steps(dir).min(config.steps);
    let agents: Vec<String> = world.agents.iter().map(|a| a.name.clone()).collect();
    Ok(measure_items(
        &items,
        steps,
        f64::from(world.step_minutes) / 60.0,
        &agents,
    ))
}

/// Steps with a state file in `dir`.
fn written_steps(dir: &Path) -> u64 {
    crate::sim::RunDir::new(dir)
        .state_files()
        .map_or(0, |f| f.len() as u64)
}

/// Mean and spread of a measure over seeds.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Spread {
    pub mean: f64,
    /// Sample standard deviation (0 for one value).
    pub sd: f64,
    pub n: usize,
}

impl Spread {
    /// The spread of `values` (`None` when empty or when a value is not finite).
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let n = values.len();
        let mean = values.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(Spread { mean, sd, n })
    }
}

/// `(treated − base) / base × 100`, or `None` when `base` is 0.
pub fn percent_increase(base: f64, treated: f64) -> Option<f64> {
    (base != 0.0 && base.is_finite() && treated.is_finite())
        .then(|| (treated - base) / base * 100.0)
}

/// One setting's measure against the normal setting's, over seeds paired by index.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub normal: Option<Spread>,
    pub treated: Option<Spread>,
    /// Increase of the treated mean over the normal mean, in percent.
    pub increase_pct: Option<f64>,
    /// The per-seed increases (seeds whose normal value is 0 are left out).
    pub per_seed_increase_pct: Option<Spread>,
}

/// Compares per-seed values of a measure in the normal and the treated setting.
pub fn compare(normal: &[f64], treated: &[f64]) -> Comparison {
    let n = Spread::of(normal);
    let t = Spread::of(treated);
    let per_seed: Vec<f64> = normal
        .iter()
        .zip(treated)
        .filter_map(|(b, x)| percent_increase(*b, *x))
        .collect();
    Comparison {
        normal: n,
        treated: t,
        increase_pct: n.zip(t).and_then(|(n, t)| percent_increase(n.mean, t.mean)),
        per_seed_increase_pct: Spread::of(&per_seed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn activity(agent: &str, step: u64, yes: &[Need]) -> Item {
        let model = Dimension::ALL
            .iter()
            .map(|d| match d {
                Dimension::Need(n) => Some(if yes.contains(n) { "yes" } else { "no" }.into()),
                Dimension::Emotion => Some("neutral".into()),
                Dimension::Closer => None,
            })
            .collect();
        Item {
            kind: ItemKind::Activity,
            step,
            date: String::new(),
            time: String::new(),
            agent: agent.into(),
            place: String::new(),
            text: String::new(),
            model,
        }
    }

    fn talk(closer: bool) -> Item {
        let mut i = activity("A; B", 3, &[]);
        i.kind = ItemKind::Conversation;
        i.model = Dimension::ALL
            .iter()
            .map(|d| match d {
                Dimension::Closer => Some(if closer { "yes" } else { "no" }.into()),
                _ => None,
            })
            .collect();
        i
    }

    #[test]
    fn activity_time_lasts_until_the_next_activity() {
        let agents = vec!["A".to_string(), "B".to_string()];
        let items = vec![
            activity("A", 0, &[Need::Fullness]),
            activity("B", 0, &[Need::Energy]),
            talk(true),
            activity("A", 4, &[Need::Social, Need::Fun]),
            activity("A", 6, &[Need::Fullness]),
            talk(false),
        ];
        // 8 steps of 15 minutes: A eats steps 0–3 and 6–7 (6 steps), socialises 4–5; B
        // rests all 8.
        let m = measure_items(&items, 8, 0.25, &agents);
        assert_eq!(m.hours, 2.0);
        assert_eq!(m.hours_on(Need::Fullness), 6.0 * 0.25 / 2.0);
        assert_eq!(m.hours_on(Need::Social), 2.0 * 0.25 / 2.0);
        assert_eq!(m.hours_on(Need::Energy), 8.0 * 0.25 / 2.0);
        assert_eq!(m.hours_on(Need::Health), 0.0);
        assert_eq!((m.conversations, m.positive_conversations), (2, 1));
        assert_eq!(m.positive_share(), Some(0.5));
        // An agent with no activity counts as zero hours; no conversations, no share.
        let three = vec!["A".into(), "B".into(), "C".into()];
        let m3 = measure_items(&items[..2], 8, 0.25, &three);
        assert_eq!(m3.hours_on(Need::Energy), 2.0 / 3.0);
        assert_eq!(measure_items(&[], 8, 0.25, &three).positive_share(), None);
    }

    #[test]
    fn spreads_and_increases() {
        let s = Spread::of(&[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((s.mean, s.sd, s.n), (2.0, 1.0, 3));
        assert_eq!(Spread::of(&[5.0]).unwrap().sd, 0.0);
        assert_eq!(Spread::of(&[]), None);
        assert_eq!(percent_increase(2.0, 5.0), Some(150.0));
        assert_eq!(percent_increase(0.0, 5.0), None);
        // Seed 2's normal value is 0: it drops out of the per-seed increases only.
        let c = compare(&[1.0, 2.0, 0.0], &[2.0, 3.0, 1.0]);
        assert_eq!(c.increase_pct, Some(100.0));
        let p = c.per_seed_increase_pct.unwrap();
        assert_eq!((p.mean, p.n), (75.0, 2));
        assert!((p.sd - 35.355_339).abs() < 1e-5);
    }
}

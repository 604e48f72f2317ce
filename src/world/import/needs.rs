//! The original's default agent config (`default_agent_config.json`, passed to its
//! `run_simulation.py` as `-da`): the basic needs every agent starts with and how likely each
//! is to drop by one in a 15-minute step.

use serde_json::Value;

use super::error::Report;
use super::source::{json_kind, Source};
use crate::world::{Need, Needs, NEED_MAX};

/// Starting levels and decay from a default agent config.
pub(super) struct NeedsConfig {
    /// Every agent's starting needs.
    pub start: Needs,
    /// The expected drop per 5 hours of each need the config names.
    pub decay_per_5_hours: Vec<(Need, f64)>,
}

/// The original's step, in minutes: its decline likelihoods are per step.
const ORIGINAL_STEP_MINUTES: f64 = 15.0;

/// Reads a default agent config; `None` (with problems recorded) if unusable.
pub(super) fn read(src: &Source, r: &mut Report) -> Option<NeedsConfig> {
    let root = src.json(r)?;
    let Some(list) = root.get("basic_needs") else {
        r.error(
            &src.name,
            None,
            "basic_needs",
            "missing: a list of {\"name\", \"start_value\", \"decline_likelihood_per_time_step\"}",
        );
        return None;
    };
    let Value::Array(list) = list else {
        r.error(
            &src.name,
            src.json_line(&["basic_needs"]),
            "basic_needs",
            format!("expected a list, found {}", json_kind(list)),
        );
        return None;
    };
    let mut out = NeedsConfig {
        start: Needs::default(),
        decay_per_5_hours: Vec::new(),
    };
    let mut ok = true;
    for (i, item) in list.iter().enumerate() {
        let field = format!("basic_needs[{i}]");
        let name = item.get("name").and_then(Value::as_str).unwrap_or("");
        let Ok(need) = name.parse::<Need>() else {
            r.warn(
                &src.name,
                &field,
                format!("{name:?} is not one of our needs (fullness, social, fun, health, energy): ignored"),
            );
            continue;
        };
        let line = src.json_line(&["basic_needs", name]);
        match item.get("start_value") {
            None => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(f64::is_finite) => {
                let v = n.as_f64().unwrap_or(0.0);
                let level = v.round().clamp(0.0, f64::from(NEED_MAX));
                if level != v {
                    r.warn(
                        &src.name,
                        &format!("{field}.start_value"),
                        format!("{v} made {level} (a need is a whole number 0–{NEED_MAX})"),
                    );
                }
                out.start.set(need, level as u8);
            }
            Some(bad) => {
                r.error(
                    &src.name,
                    line,
                    &format!("{field}.start_value"),
                    format!("expected a number 0–{NEED_MAX}, found {}", json_kind(bad)),
                );
                ok = false;
            }
        }
        match item.get("decline_likelihood_per_time_step") {
            None => {}
            Some(Value::Number(n)) if n.as_f64().is_some_and(|p| (0.0..=1.0).contains(&p)) => {
                let p = n.as_f64().unwrap_or(0.0);
                let per_5_hours = p * 300.0 / ORIGINAL_STEP_MINUTES;
                out.decay_per_5_hours
                    .push((need, (per_5_hours * 1e6).round() / 1e6));
            }
            Some(bad) => {
                r.error(
                    &src.name,
                    line,
                    &format!("{field}.decline_likelihood_per_time_step"),
                    format!("expected a probability 0–1, found {bad}"),
                );
                ok = false;
            }
        }
    }
    ok.then_some(out)
}

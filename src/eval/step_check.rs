//! `eval steps`: how well the quality report's step rule ([`like_its_line`]) agrees with
//! hand-labelled steps, without a chat model. Each row is one agent's 15-minute step under a
//! day plan, labelled `yes` if it is part of the day-plan line in effect (or of one starting
//! later in its hour, or a brief aside within it) and `no` if it is another line's activity
//! or something else: the share of `no` steps the rule flags and of `yes` steps it keeps.
//!
//! [`like_its_line`]: crate::agent::plan::line_fit::like_its_line

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::error::{non_empty, open_csv, required_column, yes_no_cell, EvalError, Result};
use crate::agent::plan::line_fit::{judge_steps, StepCase};
#[cfg(doc)]
use crate::agent::plan::line_fit::{StepVerdict, FAULT_FLOOR};
use crate::agent::state::parse_plan_text;
use crate::agent::PlanLine;
use crate::memory::TextEmbedder;
use crate::report::quality::Share;
use crate::world::clock;

/// One labelled step.
#[derive(Clone, Debug, PartialEq)]
pub struct StepItem {
    /// 1-based line in the file where the row starts (a `plan` cell spans several).
    pub line: u64,
    pub agent: String,
    pub minutes: u32,
    /// The agent's day plan then.
    pub plan: Vec<PlanLine>,
    pub activity: String,
    /// Whether the step is part of its day-plan line.
    pub fits: bool,
}

/// Reads a CSV with the columns `agent`, `time` (`hh:mm am`), `plan` (the day plan, one
/// `hh:mm am: activity` line per line; empty: the agent's plan of its row before),
/// `activity` and `fits` (yes/no). Errors name the file, the line where the row starts, and
/// the column; a plan line that is not `hh:mm am: activity` is an error.
pub fn read_step_items(path: &Path) -> Result<Vec<StepItem>> {
    let (mut reader, header) = open_csv(path)?;
    let mut cols = BTreeMap::new();
    for name in ["agent", "time", "plan", "activity", "fits"] {
        cols.insert(name, required_column(path, &header, name)?);
    }
    let cell =
        |line, name: &str, reason: String| EvalError::cell(path, line, cols[name], name, reason);
    let mut plans: BTreeMap<String, Vec<PlanLine>> = BTreeMap::new();
    let mut items = Vec::new();
    for record in reader.records() {
        let record = record.map_err(EvalError::csv(path))?;
        let line = record.position().map_or(0, |p| p.line());
        let get = |name: &str| record.get(cols[name]).map_or("", str::trim);
        let agent = get("agent").to_string();
        if agent.is_empty() {
            return Err(cell(line, "agent", "is empty".into()));
        }
        let minutes = clock::parse_time(get("time")).ok_or_else(|| {
            cell(
                line,
                "time",
                format!("{:?} is not a time like \"10:00 am\"", get("time")),
            )
        })?;
        if !get("plan").is_empty() {
            let text = get("plan");
            if let Some(bad) = text
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty() && clock::parse_plan_line(l).is_none())
            {
                return Err(cell(
                    line,
                    "plan",
                    format!("{bad:?} is not a line like \"07:00 am: wake up\""),
                ));
            }
            let trimmed: Vec<&str> = text.lines().map(str::trim).collect();
            plans.insert(agent.clone(), parse_plan_text(&trimmed.join("\n")));
        }
        let plan = plans.get(&agent).cloned().ok_or_else(|| {
            cell(
                line,
                "plan",
                format!("is empty, and {agent} has no plan in a row before"),
            )
        })?;
        let activity = get("activity").to_string();
        if activity.is_empty() {
            return Err(cell(line, "activity", "is empty".into()));
        }
        let fits = match yes_no_cell(get("fits")) {
            Ok(Some(fits)) => fits,
            Ok(None) => return Err(cell(line, "fits", "is empty".into())),
            Err(reason) => return Err(cell(line, "fits", reason)),
        };
        items.push(StepItem {
            line,
            agent,
            minutes,
            plan,
            activity,
            fits,
        });
    }
    non_empty(path, items, "rows")
}

/// The step rule against the labels.
#[derive(Clone, Debug, Serialize)]
pub struct StepScore {
    /// Steps labelled off their line that the rule flags.
    pub off_flagged: Share,
    /// Steps labelled part of their line that the rule keeps.
    pub fitting_kept: Share,
    /// The mean of the two (balanced accuracy).
    pub balanced: f64,
    /// Steps the rule flags, of all it judged.
    pub flagged: usize,
    /// Steps labelled off that the simulation's fault flags ([`StepVerdict::clearly_off`]:
    /// the rule, with the other line at least [`FAULT_FLOOR`] like the step).
    pub off_faulted: Share,
    /// Steps labelled part of their line that the simulation's fault keeps.
    pub fitting_unfaulted: Share,
    /// Rows the rule cannot judge (no line in effect, or no other line).
    pub not_judged: usize,
}

/// Scores the step rule on `items`; `None` (logged) if the embedder fails.
pub fn step_score(items: &[StepItem], embedder: &mut dyn TextEmbedder) -> Option<StepScore> {
    let mut judged = Vec::new();
    let mut cases = Vec::new();
    for item in items {
        let shown = format!(
            "line {}: {} {}: {}",
            item.line,
            clock::format_time(item.minutes),
            item.agent,
            item.activity
        );
        if let Some(c) = StepCase::new(&item.activity, &item.agent, &item.plan, item.minutes, shown)
        {
            judged.push(item);
            cases.push(c);
        }
    }
    let verdicts = judge_steps(&cases, embedder)?;
    let (mut off, mut fitting) = (Share::default(), Share::default());
    let (mut off_faulted, mut fitting_unfaulted) = (Share::default(), Share::default());
    for ((item, case), v) in judged.iter().zip(&cases).zip(&verdicts) {
        let shown = || format!("{} (nearer: {})", case.shown, v.nearest);
        if item.fits {
            fitting.add(v.like, shown);
            fitting_unfaulted.add(!v.clearly_off(), shown);
        } else {
            off.add(!v.like, shown);
            off_faulted.add(v.clearly_off(), shown);
        }
    }
    let (off, fitting) = (off.done(), fitting.done());
    Some(StepScore {
        balanced: (off.share + fitting.share) / 2.0,
        flagged: verdicts.iter().filter(|v| !v.like).count(),
        off_faulted: off_faulted.done(),
        fitting_unfaulted: fitting_unfaulted.done(),
        not_judged: items.len() - judged.len(),
        off_flagged: off,
        fitting_kept: fitting,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("steps.csv");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_plan_carries_over_to_the_agent_s_next_rows() {
        let (_d, path) = write(
            "agent,time,plan,activity,fits\n\
             Eddy Lin,06:00 pm,\"05:00 pm: walk in the park\n06:00 pm: have dinner\",set the table,yes\n\
             Eddy Lin,06:15 pm,,walk in the park,no\n",
        );
        let items = read_step_items(&path).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[1].plan.len(), 2);
        assert_eq!(items[1].minutes, 18 * 60 + 15);
        assert!(items[0].fits && !items[1].fits);
    }

    #[test]
    fn errors_name_the_line_and_column() {
        let (_d, path) = write("agent,time,plan,activity,fits\nEddy Lin,06:15 pm,,walk,no\n");
        let err = read_step_items(&path).unwrap_err().to_string();
        assert!(err.contains("line 2, column 3 (plan)"), "{err}");
        let (_d, path) = write(
            "agent,time,plan,activity,fits\nEddy Lin,06:15 pm,\"06:00 pm: eat\",walk,maybe\n",
        );
        let err = read_step_items(&path).unwrap_err().to_string();
        assert!(
            err.contains("column 5 (fits)") && err.contains("maybe"),
            "{err}"
        );
        let (_d, path) = write("agent,time,activity\n");
        let err = read_step_items(&path).unwrap_err().to_string();
        assert!(err.contains("no `plan` column"), "{err}");
    }
}

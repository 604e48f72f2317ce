//! `eval replan`: whether a model changes an agent's plan, against labels, without a run.
//!
//! Each row of a CSV gives an agent, a time, how the agent feels (emotion and need levels),
//! optionally where it is, and its plan from then on. The model is asked the run's yes/no
//! question ([`change_question`]) in the agent's context (its system message without
//! memories, as `eval judge` asks). With a `change` label column, the answers are scored like
//! a need of `eval judge` (micro-F1, yes-F1, shares of yes) at each of several thresholds on
//! P(yes), so that a model's `yes_threshold.change_plan` can be tuned on a development set.
//! As in a run, a row with an urgent need is decided at 0.5 when the threshold is higher
//! ([`change_threshold`]). Every row is asked, also one whose only urgent need is company,
//! which a run does not ask while nobody is awake to talk to (the rows say nothing of the
//! others).

use std::path::Path;

use serde::Serialize;

use super::error::{EvalError, Result};
use super::judge::NeedScore;
use crate::agent::context::system_prompt;
use crate::agent::mind::Mind;
use crate::agent::plan::{change_question, change_threshold};
use crate::agent::state::{AgentState, PlanLine};
use crate::llm::{Inference, Request, Response};
use crate::world::{clock, parse_path, Emotion, Need, Needs, World};

/// The level of a need that a row does not name: met (above the unmet levels 0–3).
pub const MET_LEVEL: u8 = 6;

/// One row of a replan CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplanItem {
    /// 1-based line in the file.
    pub line: u64,
    /// Index of the agent in the world.
    pub agent: usize,
    /// Minutes after midnight.
    pub minutes: u32,
    pub emotion: Emotion,
    pub needs: Needs,
    /// Where the agent is (`None`: its starting place).
    pub place: Option<Vec<String>>,
    /// The plan from now on.
    pub plan: Vec<PlanLine>,
    /// Whether the agent should change the plan (`None`: unlabelled).
    pub change: Option<bool>,
}

/// Reads a CSV with columns `agent`, `time` ("02:00 pm"), `plan` (plan lines "hh:mm am:
/// activity" separated by `;`) and optional `emotion` (default neutral), `needs` (e.g.
/// "fullness=1 energy=0"; a need not named is at [`MET_LEVEL`]), `place` (a leaf of the
/// world) and `change` (yes/no). Errors name the file, line and column.
pub fn read_items(path: &Path, world: &World) -> Result<Vec<ReplanItem>> {
    let cell = |line: u64, column: usize, name: &str, reason: String| {
        EvalError::cell(path, line, column, name, reason)
    };
    let (mut reader, header) = super::error::open_csv(path)?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let required = |name: &str| super::error::required_column(path, &header, name);
    let (agent_col, time_col, plan_col) =
        (required("agent")?, required("time")?, required("plan")?);
    let (emotion_col, needs_col, place_col, change_col) =
        (col("emotion"), col("needs"), col("place"), col("change"));
    let mut items = Vec::new();
    for record in reader.records() {
        let record = record.map_err(EvalError::csv(path))?;
        let line = record.position().map_or(0, |p| p.line());
        let get = |c: usize| record.get(c).map(str::trim).unwrap_or("");
        let name = get(agent_col);
        let agent = world.agent_index(name).ok_or_else(|| {
            cell(
                line,
                agent_col,
                "agent",
                format!(
                    "{name:?} is not an agent of {} ({})",
                    world.name,
                    world.agent_list()
                ),
            )
        })?;
        let minutes = clock::parse_time(get(time_col)).ok_or_else(|| {
            cell(
                line,
                time_col,
                "time",
                format!("{:?} is not a time like \"02:00 pm\"", get(time_col)),
            )
        })?;
        let emotion = match emotion_col.map(get).filter(|e| !e.is_empty()) {
            None => Emotion::Neutral,
            Some(e) => e
                .to_ascii_lowercase()
                .parse::<Emotion>()
                .map_err(|why| cell(line, emotion_col.unwrap_or(0), "emotion", why))?,
        };
        let mut needs = Needs::default();
        for n in Need::ALL {
            needs.set(n, MET_LEVEL);
        }
        if let Some(c) = needs_col {
            for part in get(c).split([' ', ';', ',']).filter(|p| !p.is_empty()) {
                let bad = |why: String| cell(line, c, "needs", format!("{part:?}: {why}"));
                let (n, v) = part
                    .split_once('=')
                    .ok_or_else(|| bad("expected NEED=LEVEL, e.g. fullness=1".into()))?;
                let need = n.parse::<Need>().map_err(|e| bad(e.to_string()))?;
                let level: u8 = v
                    .parse()
                    .ok()
                    .filter(|&l| l <= crate::world::NEED_MAX)
                    .ok_or_else(|| bad("the level must be 0–10".into()))?;
                needs.set(need, level);
            }
        }
        let place = match place_col.map(get).filter(|p| !p.is_empty()) {
            None => None,
            Some(p) => {
                let c = place_col.unwrap_or(0);
                let path = parse_path(p).map_err(|why| cell(line, c, "place", why))?;
                if !world.locations.is_leaf(&path) {
                    return Err(cell(
                        line,
                        c,
                        "place",
                        format!(
                            "{p:?} is not a place with nothing inside it in {}",
                            world.name
                        ),
                    ));
                }
                Some(path)
            }
        };
        let mut plan = Vec::new();
        for part in get(plan_col)
            .split(';')
            .map(str::trim)
            .filter(|p| !p.is_empty())
        {
            let (t, activity) = clock::parse_plan_line(part).ok_or_else(|| {
                cell(
                    line,
                    plan_col,
                    "plan",
                    format!("{part:?} is not a plan line \"hh:mm am: activity\""),
                )
            })?;
            plan.push(PlanLine::new(t, activity));
        }
        if plan.is_empty() {
            return Err(cell(line, plan_col, "plan", "is empty".into()));
        }
        let change = match change_col {
            None => None,
            Some(c) => {
                super::error::yes_no_cell(get(c)).map_err(|why| cell(line, c, "change", why))?
            }
        };
        items.push(ReplanItem {
            line,
            agent,
            minutes,
            emotion,
            needs,
            place,
            plan,
            change,
        });
    }
    super::error::non_empty(path, items, "rows")
}

/// The system message and the question of one item, as a run asks them (the agent's state
/// set to the row's feelings and place, on the world's first day).
pub fn prompt(world: &World, item: &ReplanItem) -> (String, String) {
    let spec = &world.agents[item.agent];
    let state = state_of(world, item);
    let system = system_prompt(spec, &state, world.start_date, item.minutes, &[]);
    (system, change_question(&state, item.minutes, &item.plan))
}

/// The agent's state as the row describes it.
fn state_of(world: &World, item: &ReplanItem) -> AgentState {
    let mut state = AgentState::from_spec(&world.agents[item.agent], false);
    state.emotion = item.emotion;
    state.needs = item.needs;
    if let Some(p) = &item.place {
        state.location = p.clone();
    }
    state
}

/// P(yes) of each item (`None` where the answer was unusable, with the reason), `batch`
/// items per engine call (`progress` is told how many are done).
pub fn ask_items(
    engine: &mut dyn Inference,
    world: &World,
    items: &[ReplanItem],
    batch: usize,
    progress: &mut dyn FnMut(usize),
) -> Vec<std::result::Result<f32, String>> {
    let mut out = Vec::with_capacity(items.len());
    for chunk in items.chunks(batch.max(1)) {
        let requests: Vec<Request> = chunk
            .iter()
            .map(|it| {
                let (system, q) = prompt(world, it);
                Mind::yes_no_request(&system, &q)
            })
            .collect();
        for (it, r) in chunk.iter().zip(engine.run(requests, &mut |_| {})) {
            let p = match r {
                Ok(Response::Chosen(c)) => c
                    .probs
                    .first()
                    .copied()
                    .filter(|p| p.is_finite())
                    .ok_or_else(|| "no probability".to_string()),
                Ok(_) => Err("not a choice".to_string()),
                Err(e) => Err(e.to_string()),
            };
            if let Err(why) = &p {
                tracing::warn!(line = it.line, reason = %why, "replan fallback: keep the plan");
            }
            out.push(p);
        }
        progress(out.len());
    }
    out
}

/// The scores at one threshold.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ThresholdScore {
    pub threshold: f32,
    /// `None` without labels.
    pub score: Option<NeedScore>,
}

/// One item's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplanAnswer {
    pub line: u64,
    pub agent: String,
    pub time: String,
    pub feeling: String,
    /// P(yes); `None` when the answer was unusable (a run keeps the plan then).
    pub p_yes: Option<f32>,
    pub label: Option<bool>,
}

/// A whole replan report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReplanReport {
    pub model: String,
    pub items: usize,
    pub fallbacks: usize,
    /// The threshold a run uses with this model (its manifest's, else 0.5).
    pub run_threshold: f32,
    pub thresholds: Vec<ThresholdScore>,
    pub answers: Vec<ReplanAnswer>,
}

/// Scores the answers at each threshold (a fallback counts as "keep the plan", as in a run).
pub fn report(
    model: &str,
    world: &World,
    items: &[ReplanItem],
    asked: &[std::result::Result<f32, String>],
    thresholds: &[f32],
    run_threshold: f32,
) -> ReplanReport {
    let thresholds = thresholds
        .iter()
        .map(|&t| {
            let pairs: Vec<(bool, bool)> = items
                .iter()
                .zip(asked)
                .filter_map(|(it, p)| {
                    let t = change_threshold(&it.needs, t);
                    it.change.map(|l| (l, p.as_ref().is_ok_and(|&p| p > t)))
                })
                .collect();
            ThresholdScore {
                threshold: t,
                score: super::judge::binary_score(&pairs),
            }
        })
        .collect();
    let answers = items
        .iter()
        .zip(asked)
        .map(|(it, p)| {
            let state = state_of(world, it);
            ReplanAnswer {
                line: it.line,
                agent: world.agents[it.agent].name.clone(),
                time: clock::format_time(it.minutes),
                feeling: state.feeling(),
                p_yes: p.as_ref().ok().copied(),
                label: it.change,
            }
        })
        .collect();
    ReplanReport {
        model: model.to_string(),
        items: items.len(),
        fallbacks: asked.iter().filter(|p| p.is_err()).count(),
        run_threshold,
        thresholds,
        answers,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lin() -> World {
        crate::world::bundled("lin-family.toml")
    }

    fn read(text: &str) -> Result<Vec<ReplanItem>> {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.csv");
        std::fs::write(&p, text).unwrap();
        read_items(&p, &lin())
    }

    #[test]
    fn rows_become_the_runs_question() {
        let items = read(
            "agent,time,emotion,needs,place,plan,change\n\
             John Lin,02:00 pm,sad,fullness=0 energy=3,The Willows Market and Pharmacy/Counter,\
             02:00 pm: serve customers; 03:00 pm: unpack deliveries,yes\n\
             Eddy Lin,08:00 pm,,,,08:00 pm: practise the piano,\n",
        )
        .unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].change, Some(true));
        assert_eq!(items[1].change, None);
        assert_eq!(items[1].emotion, Emotion::Neutral);
        assert_eq!(items[0].needs.get(Need::Fullness), 0);
        assert_eq!(items[0].needs.get(Need::Social), MET_LEVEL);
        let (system, q) = prompt(&lin(), &items[0]);
        assert!(
            system.contains("The Willows Market and Pharmacy"),
            "{system}"
        );
        assert!(
            q.contains("John Lin is feeling sad, extremely hungry and slightly tired."),
            "{q}"
        );
        assert!(
            q.contains("02:00 pm: serve customers\n03:00 pm: unpack deliveries"),
            "{q}"
        );
        assert!(q.contains("needs to eat something soon"), "{q}");
        assert!(q.ends_with("Should John Lin change this plan because of how John Lin feels?"));
    }

    #[test]
    fn bad_cells_name_line_and_column() {
        for (text, want) in [
            (
                "agent,time,plan\nJane,02:00 pm,02:00 pm: x\n",
                ["line 2", "agent", "Jane"],
            ),
            (
                "agent,time,plan\nJohn Lin,2pm,02:00 pm: x\n",
                ["line 2", "time", "2pm"],
            ),
            (
                "agent,time,plan\nJohn Lin,02:00 pm,at two: x\n",
                ["line 2", "plan", "at two"],
            ),
            (
                "agent,time,plan,needs\nJohn Lin,02:00 pm,02:00 pm: x,hunger=1\n",
                ["line 2", "needs", "hunger"],
            ),
            (
                "agent,time,plan,needs\nJohn Lin,02:00 pm,02:00 pm: x,fun=11\n",
                ["line 2", "needs", "0–10"],
            ),
            (
                "agent,time,plan,change\nJohn Lin,02:00 pm,02:00 pm: x,maybe\n",
                ["line 2", "change", "maybe"],
            ),
            (
                "agent,time,plan,place\nJohn Lin,02:00 pm,02:00 pm: x,Oak Hill College\n",
                ["line 2", "place", "Oak Hill College"],
            ),
            (
                "agent,time\nJohn Lin,02:00 pm\n",
                ["line 1", "plan", "header"],
            ),
            ("agent,time,plan\n", ["no rows", "", ""]),
        ] {
            let e = read(text).unwrap_err().to_string();
            for w in want {
                assert!(e.contains(w), "{text:?}: {e}");
            }
        }
    }

    #[test]
    fn a_fallback_keeps_the_plan_and_each_threshold_is_scored() {
        let world = lin();
        let items = read(
            "agent,time,plan,change\n\
             John Lin,02:00 pm,02:00 pm: x,yes\n\
             John Lin,02:00 pm,02:00 pm: x,no\n\
             John Lin,02:00 pm,02:00 pm: x,yes\n",
        )
        .unwrap();
        let asked = vec![Ok(0.9), Ok(0.7), Err("broken".to_string())];
        // An urgent need is decided at 0.5 whatever the threshold.
        let mut urgent = items[1].clone();
        urgent.needs.set(Need::Fullness, 0);
        let r = report("m", &world, &[urgent], &[Ok(0.7)], &[0.8], 0.8);
        assert_eq!(r.thresholds[0].score.as_ref().unwrap().predicted_yes, 1.0);
        let r = report("m", &world, &items, &asked, &[0.5, 0.8], 0.5);
        assert_eq!(r.fallbacks, 1);
        let at = |i: usize| r.thresholds[i].score.clone().unwrap();
        // At 0.5: yes, yes, no (fallback) against yes, no, yes.
        assert!((at(0).micro_f1 - 1.0 / 3.0).abs() < 1e-9);
        assert!((at(0).predicted_yes - 2.0 / 3.0).abs() < 1e-9);
        // At 0.8: yes, no, no.
        assert!((at(1).micro_f1 - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(r.answers[2].p_yes, None);
    }
}

//! `eval judge`: a model's judgements of activities against labels, without making a run.
//!
//! Each activity of a CSV is put to the model exactly as a run puts a new activity
//! ([`judgement_requests`]: the emotion, then the five needs' yes/no, through `choose`), in
//! one agent's context at one time (its system prompt without memories, as in a step's
//! evaluation). With label columns, each dimension is scored the way the Humanoid Agents
//! paper scores its Table 1 (micro-F1, which for one yes/no label per item is accuracy) next
//! to a constant answer, so a model that says "no" to everything cannot look good.
//!
//! Methods ([`Method`]): the run's own decision (the more probable option), or contextual
//! calibration (Zhao et al. 2021): each option's probability divided by its probability for
//! content-free activities in the same context, then renormalised.

use std::collections::BTreeMap;
use std::path::Path;

use chrono::NaiveDate;
use serde::Serialize;

use super::error::{EvalError, Result};
pub use crate::agent::act::RUN_JUDGE_PROMPT;
use crate::agent::act::{emotion_labels, judgement_requests, JudgePrompt};
use crate::agent::context::system_prompt;
use crate::agent::state::AgentState;
use crate::llm::{Inference, Request, Response};
use crate::world::{Emotion, Need, World, YesThresholds};

mod metrics;

pub use metrics::{binary_score, emotion_score, need_score, scores, EmotionScore, NeedScore};

/// Activities standing for "no content" in contextual calibration.
pub const CONTENT_FREE: [&str; 3] = ["N/A", "something", "[activity]"];

/// How a judgement is decided from the model's option probabilities.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Method {
    /// What a run does: the more probable option, and for a need P(yes) above the model's
    /// threshold (0.5 unless its manifest or `--yes-threshold` says otherwise).
    Plain,
    /// Contextual calibration against content-free activities.
    Calibrated,
}

impl std::str::FromStr for Method {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "plain" => Ok(Method::Plain),
            "calibrated" => Ok(Method::Calibrated),
            other => Err(format!("unknown method `{other}` (plain, calibrated)")),
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Method::Plain => "plain",
            Method::Calibrated => "calibrated",
        })
    }
}

/// One row of a judge CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeItem {
    /// 1-based line in the file.
    pub line: u64,
    pub activity: String,
    /// Labels in [`Need::ALL`] order (`None`: no column or an empty cell).
    pub needs: [Option<bool>; 5],
    pub emotion: Option<Emotion>,
}

/// Reads a CSV with an `activity` column and optional label columns (`fullness`, `social`,
/// `fun`, `health`, `energy`: yes/no; `emotion`: one of the seven). Other columns are
/// ignored. Errors name the file, line and column.
pub fn read_items(path: &Path) -> Result<Vec<JudgeItem>> {
    let csv_err = EvalError::csv(path);
    let cell = |line: u64, column: usize, name: &str, reason: String| {
        EvalError::cell(path, line, column, name, reason)
    };
    let (mut reader, header) = super::error::open_csv(path)?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let activity_col = col("activity").ok_or_else(|| EvalError::Sheet {
        path: path.to_path_buf(),
        reason: format!(
            "line 1: no `activity` column (header: {})",
            header.join(",")
        ),
    })?;
    let need_cols: Vec<Option<usize>> = Need::ALL.iter().map(|n| col(n.as_str())).collect();
    let emotion_col = col("emotion");
    let mut items = Vec::new();
    for record in reader.records() {
        let record = record.map_err(csv_err)?;
        let line = record.position().map_or(0, |p| p.line());
        let get = |c: usize| record.get(c).map(str::trim).unwrap_or("");
        let activity = get(activity_col);
        if activity.is_empty() {
            return Err(cell(line, activity_col, "activity", "is empty".into()));
        }
        let mut needs = [None; 5];
        for (i, c) in need_cols.iter().enumerate() {
            let Some(c) = *c else { continue };
            needs[i] = super::error::yes_no_cell(get(c))
                .map_err(|why| cell(line, c, Need::ALL[i].as_str(), why))?;
        }
        let emotion = match emotion_col {
            Some(c) if !get(c).is_empty() => {
                let v = get(c).to_ascii_lowercase();
                let e = Emotion::ALL.iter().find(|e| e.as_str() == v).copied();
                Some(e.ok_or_else(|| {
                    cell(
                        line,
                        c,
                        "emotion",
                        format!("{v:?} is not one of {}", emotion_labels().join(", ")),
                    )
                })?)
            }
            _ => None,
        };
        items.push(JudgeItem {
            line,
            activity: activity.to_string(),
            needs,
            emotion,
        });
    }
    super::error::non_empty(path, items, "activities")
}

/// Whose context, and when.
pub struct JudgeContext<'a> {
    pub world: &'a World,
    /// Index of the agent in `world.agents`.
    pub agent: usize,
    pub date: NaiveDate,
    /// Minutes after midnight.
    pub minutes: u32,
    /// How the questions are put (a run's: [`RUN_JUDGE_PROMPT`]).
    pub prompt: JudgePrompt,
}

impl JudgeContext<'_> {
    /// The system message of the agent's step evaluation (no memories).
    pub fn system(&self) -> String {
        let spec = &self.world.agents[self.agent];
        let state = AgentState::from_spec(spec, false);
        system_prompt(spec, &state, self.date, self.minutes, &[])
    }

    fn name(&self) -> &str {
        &self.world.agents[self.agent].name
    }
}

/// The model's probabilities for one activity.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Judgement {
    pub activity: String,
    /// P(yes) per need, [`Need::ALL`] order (after calibration, with that method).
    pub p_yes: [f32; 5],
    /// Probability of each emotion, [`Emotion::ALL`] order.
    pub emotion: Vec<f32>,
    /// Why an answer was unusable (the judgement then says "no" / "neutral").
    pub fallback: Option<String>,
    /// Per need, the P(yes) above which the answer counts as yes (the report says which).
    #[serde(skip)]
    pub yes_threshold: [f32; 5],
}

impl Judgement {
    /// Whether the model says the activity satisfies need `i`.
    pub fn yes(&self, i: usize) -> bool {
        self.p_yes[i] > self.yes_threshold[i]
    }

    /// The most probable emotion.
    pub fn emotion(&self) -> Emotion {
        let best = (0..self.emotion.len())
            .max_by(|&a, &b| self.emotion[a].total_cmp(&self.emotion[b]))
            .unwrap_or(0);
        Emotion::ALL[best]
    }
}

/// Divides each probability by its content-free probability and renormalises (contextual
/// calibration); returns `probs` unchanged when the reference is unusable.
pub fn calibrate(probs: &[f32], content_free: &[f32]) -> Vec<f32> {
    if probs.len() != content_free.len() || content_free.iter().any(|&q| q.is_nan() || q <= 0.0) {
        return probs.to_vec();
    }
    let w: Vec<f32> = probs.iter().zip(content_free).map(|(p, q)| p / q).collect();
    let sum: f32 = w.iter().sum();
    if sum.is_finite() && sum > 0.0 {
        w.iter().map(|v| v / sum).collect()
    } else {
        probs.to_vec()
    }
}

/// The option probabilities of one activity's six questions (`None`: that question failed).
pub type QuestionProbs = Vec<Option<Vec<f32>>>;

/// The option probabilities of the six questions for each activity, in one engine batch.
/// A failed question is recorded in `fallback` and its probabilities are `None`.
fn ask(
    engine: &mut dyn Inference,
    ctx: &JudgeContext<'_>,
    activities: &[&str],
) -> Vec<(QuestionProbs, Option<String>)> {
    let system = ctx.system();
    let mut requests: Vec<Request> = Vec::new();
    for a in activities {
        requests.extend(
            judgement_requests(&system, ctx.name(), a, true, ctx.prompt)
                .into_iter()
                .map(|(_, r)| r),
        );
    }
    let results = engine.run(requests, &mut |_| {});
    let per = 1 + Need::ALL.len();
    let mut out = Vec::with_capacity(activities.len());
    let mut it = results.into_iter();
    for _ in activities {
        let mut probs = Vec::with_capacity(per);
        let mut why = None;
        for _ in 0..per {
            match it.next() {
                Some(Ok(Response::Chosen(c))) => probs.push(Some(c.probs)),
                Some(Ok(_)) => {
                    why.get_or_insert_with(|| "not a choice".to_string());
                    probs.push(None)
                }
                Some(Err(e)) => {
                    why.get_or_insert_with(|| e.to_string());
                    probs.push(None)
                }
                None => {
                    why.get_or_insert_with(|| "no result".to_string());
                    probs.push(None)
                }
            }
        }
        out.push((probs, why));
    }
    out
}

/// The model's raw option probabilities for every item (six questions each; `None` for a
/// question that failed) and the first failure's reason per item.
pub struct Asked {
    pub probs: Vec<QuestionProbs>,
    pub fallbacks: Vec<Option<String>>,
}

/// Asks the six questions of every item in `ctx`, `batch` activities per engine call
/// (`progress` is told how many are done).
pub fn ask_items(
    engine: &mut dyn Inference,
    ctx: &JudgeContext<'_>,
    items: &[JudgeItem],
    batch: usize,
    progress: &mut dyn FnMut(usize),
) -> Asked {
    let mut asked = Asked {
        probs: Vec::with_capacity(items.len()),
        fallbacks: Vec::with_capacity(items.len()),
    };
    for chunk in items.chunks(batch.max(1)) {
        let activities: Vec<&str> = chunk.iter().map(|i| i.activity.as_str()).collect();
        for (item, (probs, why)) in chunk.iter().zip(ask(engine, ctx, &activities)) {
            if let Some(w) = &why {
                tracing::warn!(line = item.line, activity = %item.activity, reason = %w,
                    "judge fallback: no / neutral");
            }
            asked.probs.push(probs);
            asked.fallbacks.push(why);
        }
        progress(asked.probs.len());
    }
    asked
}

/// The mean option distribution of each question for the content-free activities
/// ([`CONTENT_FREE`]), the reference of contextual calibration.
pub fn content_free_reference(engine: &mut dyn Inference, ctx: &JudgeContext<'_>) -> Vec<Vec<f32>> {
    let per = 1 + Need::ALL.len();
    let answers = ask(engine, ctx, &CONTENT_FREE);
    (0..per)
        .map(|q| {
            let width = if q == 0 { Emotion::ALL.len() } else { 2 };
            let mut mean = vec![0f32; width];
            let mut n = 0f32;
            for (probs, _) in &answers {
                if let Some(p) = probs[q].as_ref().filter(|p| p.len() == width) {
                    mean.iter_mut().zip(p).for_each(|(m, v)| *m += v);
                    n += 1.0;
                }
            }
            mean.iter().map(|m| m / n.max(1.0)).collect()
        })
        .collect()
}

/// The judgements of `items` under `method` (`reference`: the content-free distributions,
/// needed for [`Method::Calibrated`]). A need counts as yes above its `yes_threshold` (a run's
/// rule) with the plain method, above 0.5 with the calibrated one.
pub fn decide(
    items: &[JudgeItem],
    asked: &Asked,
    method: Method,
    reference: Option<&[Vec<f32>]>,
    yes_threshold: [f32; 5],
) -> Vec<Judgement> {
    let yes_threshold = match method {
        Method::Plain => yes_threshold,
        Method::Calibrated => [0.5; 5],
    };
    let n_emotions = Emotion::ALL.len();
    let reference = reference.filter(|_| method == Method::Calibrated);
    items
        .iter()
        .zip(asked.probs.iter().zip(&asked.fallbacks))
        .map(|(item, (probs, why))| {
            let fix = |q: usize, p: &Vec<f32>| match reference {
                Some(r) => calibrate(p, &r[q]),
                None => p.clone(),
            };
            let emotion = match &probs[0] {
                Some(p) if p.len() == n_emotions => fix(0, p),
                _ => {
                    let mut neutral = vec![0f32; n_emotions];
                    neutral[0] = 1.0;
                    neutral
                }
            };
            let mut p_yes = [0f32; 5];
            for (i, p) in p_yes.iter_mut().enumerate() {
                if let Some(pr) = probs[i + 1].as_ref().filter(|p| p.len() == 2) {
                    *p = fix(i + 1, pr)[0];
                }
            }
            Judgement {
                activity: item.activity.clone(),
                p_yes,
                emotion,
                fallback: why.clone(),
                yes_threshold,
            }
        })
        .collect()
}

/// A whole judge report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct JudgeReport {
    pub model: String,
    pub method: Method,
    /// How the questions were put.
    pub prompt: JudgePrompt,
    pub agent: String,
    /// "Tuesday Jan 03 2023 10:00 am".
    pub at: String,
    pub items: usize,
    /// The needs' thresholds on P(yes) other than 0.5 (plain method).
    pub yes_threshold: YesThresholds,
    /// Items with a fallback.
    pub fallbacks: usize,
    /// Per dimension (`fullness` ... `energy`, `emotion`), for those with labels.
    pub dimensions: BTreeMap<String, serde_json::Value>,
    pub judgements: Vec<Judgement>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_divides_by_the_content_free_answer() {
        // A model that says yes 80% of the time to nothing, and 80% here: no evidence.
        let c = calibrate(&[0.8, 0.2], &[0.8, 0.2]);
        assert!((c[0] - 0.5).abs() < 1e-6, "{c:?}");
        // 0.6 against a bias of 0.8 becomes a "no".
        assert!(calibrate(&[0.6, 0.4], &[0.8, 0.2])[0] < 0.5);
        // An unusable reference leaves the probabilities alone.
        assert_eq!(calibrate(&[0.6, 0.4], &[0.0, 1.0]), vec![0.6, 0.4]);
    }

    #[test]
    fn csv_errors_name_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.csv");
        std::fs::write(
            &p,
            "activity,fullness,emotion\neat,yes,happy\nsleep,maybe,neutral\n",
        )
        .unwrap();
        let e = read_items(&p).unwrap_err().to_string();
        assert!(
            e.contains("line 3") && e.contains("column 2") && e.contains("fullness"),
            "{e}"
        );
        std::fs::write(&p, "activity,emotion\neat,glad\n").unwrap();
        let e = read_items(&p).unwrap_err().to_string();
        assert!(
            e.contains("line 2") && e.contains("emotion") && e.contains("glad"),
            "{e}"
        );
        std::fs::write(&p, "what,fullness\neat,yes\n").unwrap();
        let e = read_items(&p).unwrap_err().to_string();
        assert!(e.contains("activity"), "{e}");
        std::fs::write(&p, "activity,fun\nread a book,\nplay,yes\n").unwrap();
        let items = read_items(&p).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(items[0].needs[2], None);
        assert_eq!(items[1].needs[2], Some(true));
        assert_eq!(items[1].line, 3);
    }
}

//! Whether a 15-minute step is part of its day-plan line, by the embedding model: the step
//! (its activity without the agent's name, [`step_key`]) is at least about as like the line
//! in effect as it is like any other waking line of the day plan ([`like_its_line`]). It
//! sees a step that does another line's activity in other words (Eddy Lin "review the
//! composition and make adjustments" at 6:15 pm, at dinner), which the word-for-word rule
//! ([`copies_other_line`](super::starts::copies_other_line)) cannot. Lines that start later
//! in the step's hour are no other line (as the labels count them), nor are sleep
//! lines (sleep steps are not judged). The quality report counts such steps
//! (`report::step_fit`).

use std::collections::BTreeMap;

use super::is_sleep;
use super::starts::step_key;
use crate::agent::state::line_at;
use crate::agent::PlanLine;
use crate::embed::cosine;
use crate::memory::embedder::embed_checked;
use crate::memory::TextEmbedder;

/// A step is off its line when another line's cosine with it is more than this above the
/// line in effect's ([`like_its_line`]).
pub const STEP_MARGIN: f32 = 0.02;

/// Another line counts only when its cosine with the line in effect is under this: lines as
/// alike as "work on his composition" and "practise the piano and revise the composition"
/// cannot be told apart by a step ("play a short melody on the piano").
pub const LINES_APART: f32 = 0.3;

/// A step off its line ([`like_its_line`]) counts as a fault of an hour's plan
/// ([`super::starts::asked_again`]) only when the other line's cosine with it is at least
/// this: the rule alone flags generic steps ("take a break") near no line. On the labelled
/// steps (BENCHMARKS.md) it keeps 106 of 107 fitting steps and flags 12 of 18 off ones on the
/// development set, 114 of 116 and 6 of 12 on the check set.
pub const FAULT_FLOOR: f32 = 0.45;

/// One awake step to judge: its text and the day-plan lines it is compared with.
#[derive(Clone, Debug, PartialEq)]
pub struct StepCase {
    /// The step as compared ([`step_key`]).
    pub step: String,
    /// The line in effect, first, and those that start later in the step's hour
    /// ([`step_key`]).
    pub own: Vec<String>,
    /// The other waking lines of the day plan, not starting later in the step's hour.
    pub others: Vec<String>,
    /// How the case is shown as an example.
    pub shown: String,
}

impl StepCase {
    /// The case of agent `name`'s step `activity` at `minutes` under `plan`; `None` where
    /// no line is in effect, the step is empty or the plan has no other line to compare
    /// with.
    pub fn new(
        activity: &str,
        name: &str,
        plan: &[PlanLine],
        minutes: u32,
        shown: String,
    ) -> Option<Self> {
        let now = line_at(plan, minutes)?;
        let hour_end = (minutes / 60 + 1) * 60;
        let later_in_hour = |l: &PlanLine| l.minutes > minutes && l.minutes < hour_end;
        let key = |l: &PlanLine| step_key(&l.activity, name);
        let own: Vec<String> = std::iter::once(now)
            .chain(plan.iter().filter(|l| later_in_hour(l)))
            .map(key)
            .collect();
        let others: Vec<String> = plan
            .iter()
            .filter(|l| !std::ptr::eq(*l, now) && !later_in_hour(l) && !is_sleep(&l.activity))
            .map(key)
            .filter(|k| !k.is_empty())
            .collect();
        let step = step_key(activity, name);
        if others.is_empty() || step.is_empty() {
            return None;
        }
        Some(Self {
            step,
            own,
            others,
            shown,
        })
    }
}

/// Another line as a step is compared with it: the step's cosine with it, and the line's
/// cosine with the line in effect.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OtherLine {
    pub step: f32,
    pub own_line: f32,
}

/// Whether a step whose cosine with its own line (or one starting later in its hour) is
/// `own` is about as like it as any other line: no other line unlike the line in effect
/// ([`LINES_APART`]) is more like the step by more than [`STEP_MARGIN`].
///
/// Chosen on 125 hand-labelled steps of a Lin day (18 off their line) for balanced
/// accuracy, then the fewer flagged on a tie: 0.888 (17 of the 18 off steps flagged, 89 of
/// the 107 others not); on 128 steps of another Lin day, labelled before it was run, 0.872
/// (11 of 12; 96 of 116). It flags about twice the steps truly off (generic steps such as
/// "take a break" are near no line), so the share is a rough signal (BENCHMARKS.md).
pub fn like_its_line(own: f32, others: &[OtherLine]) -> bool {
    !others
        .iter()
        .any(|o| o.own_line < LINES_APART && o.step > own + STEP_MARGIN)
}

/// The rule's verdict on one step: whether it is like its line, and the other line (unlike
/// its own) most like it.
#[derive(Clone, Debug, PartialEq)]
pub struct StepVerdict {
    pub like: bool,
    pub nearest: String,
    /// The step's cosine with that line (`f32::MIN` if none).
    pub nearest_cosine: f32,
}

impl StepVerdict {
    /// Whether the step is off its line clearly enough to ask the hour again
    /// ([`FAULT_FLOOR`]).
    pub fn clearly_off(&self) -> bool {
        !self.like && self.nearest_cosine >= FAULT_FLOOR
    }
}

/// [`like_its_line`] for each of `cases`, each distinct text embedded once; `None` (logged)
/// if the embedder fails.
pub fn judge_steps(
    cases: &[StepCase],
    embedder: &mut dyn TextEmbedder,
) -> Option<Vec<StepVerdict>> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for c in cases {
        for t in std::iter::once(&c.step).chain(&c.own).chain(&c.others) {
            let n = index.len();
            index.entry(t.as_str()).or_insert(n);
        }
    }
    let mut texts = vec![String::new(); index.len()];
    for (t, &i) in &index {
        texts[i] = t.to_string();
    }
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embed_checked(embedder, &refs)
        .map_err(|err| tracing::warn!(error = %err, "embedding failed: steps not judged"))
        .ok()?;
    let vec_of = |t: &str| &vectors[index[t]];
    let mut verdicts = Vec::with_capacity(cases.len());
    for c in cases {
        // A case made by hand without its line cannot be judged: it stands.
        let Some(first) = c.own.first() else {
            verdicts.push(StepVerdict {
                like: true,
                nearest: String::new(),
                nearest_cosine: f32::MIN,
            });
            continue;
        };
        let step = vec_of(&c.step);
        let own = c
            .own
            .iter()
            .map(|o| cosine(step, vec_of(o)))
            .fold(f32::MIN, f32::max);
        let line = vec_of(first);
        let others: Vec<OtherLine> = c
            .others
            .iter()
            .map(|o| OtherLine {
                step: cosine(step, vec_of(o)),
                own_line: cosine(line, vec_of(o)),
            })
            .collect();
        let nearest = others
            .iter()
            .zip(&c.others)
            .filter(|(o, _)| o.own_line < LINES_APART)
            .max_by(|a, b| a.0.step.total_cmp(&b.0.step));
        tracing::debug!(
            case = %c.shown,
            own,
            nearest = ?nearest.map(|(o, t)| (t, o.step)),
            "step against its plan line"
        );
        verdicts.push(StepVerdict {
            like: like_its_line(own, &others),
            nearest: nearest.map_or(String::new(), |n| n.1.clone()),
            nearest_cosine: nearest.map_or(f32::MIN, |n| n.0.step),
        });
    }
    Some(verdicts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_is_compared_with_the_other_waking_lines() {
        let plan = [
            PlanLine::new(7 * 60, "wake up and get dressed"),
            PlanLine::new(17 * 60, "walk around Johnson Park"),
            PlanLine::new(18 * 60, "have dinner with the family"),
            PlanLine::new(18 * 60 + 30, "wash the dishes"),
            PlanLine::new(20 * 60, "practise the piano"),
            PlanLine::new(23 * 60, "go to sleep"),
        ];
        let c = StepCase::new(
            "Eddy Lin sets the table.",
            "Eddy Lin",
            &plan,
            18 * 60,
            "x".into(),
        )
        .expect("a case");
        assert_eq!(c.step, "sets the table");
        assert_eq!(c.own, ["have dinner with the family", "wash the dishes"]);
        assert_eq!(
            c.others,
            [
                "wake up and get dressed",
                "walk around johnson park",
                "practise the piano"
            ],
            "not the line later in the hour, nor sleep"
        );
        assert!(StepCase::new("eat", "Eddy Lin", &plan, 6 * 60, "x".into()).is_none());
        let one = [PlanLine::new(7 * 60, "work")];
        assert!(StepCase::new("eat", "Eddy Lin", &one, 8 * 60, "x".into()).is_none());
    }

    #[test]
    fn another_line_unlike_its_own_and_nearer_by_the_margin_puts_a_step_off() {
        let other = |step, own_line| OtherLine { step, own_line };
        let apart = LINES_APART - 0.1;
        assert!(like_its_line(
            0.5,
            &[other(0.3, apart), other(0.5 + STEP_MARGIN, apart)]
        ));
        assert!(!like_its_line(
            0.5,
            &[other(0.3, apart), other(0.5 + STEP_MARGIN + 0.01, apart)]
        ));
        assert!(
            like_its_line(0.5, &[other(0.9, LINES_APART + 0.1)]),
            "a line alike the step's own cannot tell"
        );
        assert!(like_its_line(0.1, &[]));
    }
}

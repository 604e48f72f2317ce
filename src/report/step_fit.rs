//! The quality report's step rule: the share of awake 15-minute steps about as like their
//! day-plan line as any other waking line of the day plan, by the embedding model
//! ([`like_its_line`]). `eval steps` scores the rule against hand-labelled steps
//! (BENCHMARKS.md: balanced accuracy 0.888 on the development set, 0.872 on the check set;
//! it flags about twice the steps truly off, so the share is a rough signal).

#[cfg(doc)]
use crate::agent::plan::line_fit::like_its_line;
use crate::agent::plan::line_fit::{judge_steps, StepCase};
use crate::memory::TextEmbedder;

use super::quality::Share;

/// The share of `cases` like their own line ([`like_its_line`]); `None` (logged) if the
/// embedder fails.
pub fn step_share(cases: &[StepCase], embedder: &mut dyn TextEmbedder) -> Option<Share> {
    let verdicts = judge_steps(cases, embedder)?;
    let mut share = Share::default();
    for (c, v) in cases.iter().zip(verdicts) {
        share.add(v.like, || format!("{} (nearer: {})", c.shown, v.nearest));
    }
    Some(share)
}

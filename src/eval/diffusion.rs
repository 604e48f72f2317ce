//! Information diffusion (Park et al. 2023): who knows a fact at the end of a run, found by
//! interviewing every agent, and the relationship network density at the start and end.
//!
//! Each agent is asked, in its context with its memories retrieved for the fact (as in
//! [`interview`](mod@super::interview)), "Do you know about this: FACT? Answer yes or no." as a
//! `choose` over `yes`/`no`: one prefill per agent, all agents in one batch, no free text
//! parsed. An agent knows the fact when P(yes) > 0.5 (a tie is "no"). A failed request or a
//! probability that is not a number in 0–1 counts as P(yes) = 0, with the reason kept.

use serde::Serialize;

use super::density::{closeness_matrix, density, Density};
use super::error::Result;
use super::interview::{fit_prompt, recall, RecalledMemory};
use super::snapshot::Snapshot;
use crate::agent::mind::chat;
use crate::llm::{ChooseRequest, Inference, Request, Response};
use crate::memory::TextEmbedder;

/// The closed set of answers, in order (P(yes) is the first option's probability).
pub const OPTIONS: [&str; 2] = ["yes", "no"];

/// What one agent answered.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct AgentKnowledge {
    pub agent: String,
    /// Probability of "yes" over the two options (0–1).
    pub p_yes: f64,
    /// `p_yes > 0.5`.
    pub knows: bool,
    /// Thoughts injected into this agent at the start of the run (`run --inject`).
    pub injected: Vec<String>,
    /// Why the model's answer was unusable (`None` when it was used).
    pub fallback: Option<String>,
    /// The memories in the agent's context, best first.
    pub memories: Vec<RecalledMemory>,
}

/// The network density at the start and at the interviewed step.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DensityReport {
    /// Least closeness of a relationship that counts as knowing someone.
    pub min_closeness: u8,
    pub start: Density,
    pub end: Density,
}

/// The whole diffusion report.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffusionReport {
    pub run: String,
    pub fact: String,
    /// The question as asked (before the answer options).
    pub question: String,
    /// The interviewed step (0-based; `None`: before the first step).
    pub step: Option<u64>,
    /// "Tuesday Jan 03 2023 06:30 am".
    pub time: String,
    pub agents: Vec<AgentKnowledge>,
    /// Agents who know the fact.
    pub knowing: usize,
    /// `knowing` over the number of agents.
    pub share_knowing: f64,
    pub density: DensityReport,
}

/// The question asked of every agent.
pub fn question(fact: &str) -> String {
    let fact = fact.trim().trim_end_matches(['.', '?', '!']).trim();
    format!("Do you know about this: {fact}? Answer yes or no.")
}

/// Interviews every agent of `snapshot` about `fact` (one batch) and measures the network
/// density at the run's start and at the snapshot. Errors: an empty fact, an embedding
/// failure; a model failure for one agent is that agent's fallback.
pub fn diffusion(
    engine: &mut dyn Inference,
    embedder: &mut dyn TextEmbedder,
    snapshot: &Snapshot,
    fact: &str,
    memories: usize,
    min_closeness: u8,
) -> Result<DiffusionReport> {
    let fact = fact.trim();
    if fact.is_empty() {
        return Err(super::EvalError::Invalid("--fact is empty".into()));
    }
    let q = question(fact);
    let n = snapshot.world.agents.len();
    let mut recalled = Vec::with_capacity(n);
    for i in 0..n {
        recalled.push(recall(snapshot, i, embedder, &[fact], memories)?.remove(0));
    }
    let requests: Vec<Request> = recalled
        .iter()
        .enumerate()
        .map(|(i, mems)| {
            let prompt = fit_prompt(&*engine, snapshot, i, mems, 8, |sys| chat(sys, &q));
            Request::Choose(ChooseRequest::new(prompt, OPTIONS))
        })
        .collect();
    let results = engine.run(requests, &mut |_| {});
    let mut agents = Vec::with_capacity(n);
    for ((i, memories), result) in recalled.into_iter().enumerate().zip(results) {
        let name = snapshot.world.agents[i].name.clone();
        let (p_yes, fallback) = p_yes(result);
        if let Some(why) = &fallback {
            tracing::warn!(agent = %name, reason = %why, "diffusion fallback: P(yes) = 0");
        }
        let injected = snapshot
            .config
            .injections
            .iter()
            .filter(|j| j.agent == name)
            .map(|j| j.text.clone())
            .collect();
        agents.push(AgentKnowledge {
            agent: name,
            p_yes,
            knows: p_yes > 0.5,
            injected,
            fallback,
            memories,
        });
    }
    let knowing = agents.iter().filter(|a| a.knows).count();
    Ok(DiffusionReport {
        run: snapshot.dir.display().to_string(),
        fact: fact.to_string(),
        question: q,
        step: snapshot.step,
        time: snapshot.time_label(),
        share_knowing: if n == 0 {
            0.0
        } else {
            knowing as f64 / n as f64
        },
        knowing,
        agents,
        density: DensityReport {
            min_closeness,
            start: density(&closeness_matrix(&snapshot.start), min_closeness),
            end: density(&closeness_matrix(&snapshot.agents), min_closeness),
        },
    })
}

/// P(yes) of a `choose` result, or 0 and the reason it is unusable.
fn p_yes(result: crate::llm::error::Result<Response>) -> (f64, Option<String>) {
    match result {
        Ok(Response::Chosen(c)) if c.probs.len() == OPTIONS.len() => {
            let p = f64::from(c.probs[0]);
            if p.is_finite() && (0.0..=1.0).contains(&p) {
                (p, None)
            } else {
                (0.0, Some(format!("P(yes) = {p} is not a probability")))
            }
        }
        Ok(Response::Chosen(c)) => (
            0.0,
            Some(format!("{} probabilities for 2 options", c.probs.len())),
        ),
        Ok(Response::Generated(_)) => (0.0, Some("not a choice".into())),
        Err(e) => (0.0, Some(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Choice;

    fn chosen(probs: Vec<f32>) -> crate::llm::error::Result<Response> {
        Ok(Response::Chosen(Choice {
            index: 0,
            logprobs: probs.iter().map(|p| p.ln()).collect(),
            probs,
            prompt_tokens: 1,
        }))
    }

    #[test]
    fn p_yes_is_checked() {
        assert_eq!(p_yes(chosen(vec![0.25, 0.75])), (0.25, None));
        for bad in [vec![f32::NAN, 0.5], vec![1.5, -0.5], vec![1.0]] {
            let (p, why) = p_yes(chosen(bad.clone()));
            assert_eq!(p, 0.0, "{bad:?}");
            assert!(why.is_some(), "{bad:?}");
        }
        let e = Err(crate::llm::LlmError::InvalidRequest("too long".into()));
        let (p, why) = p_yes(e);
        assert_eq!(p, 0.0);
        assert!(why.unwrap().contains("too long"));
    }

    #[test]
    fn the_question_quotes_the_fact_once() {
        assert_eq!(
            question(" Sam is running for mayor. "),
            "Do you know about this: Sam is running for mayor? Answer yes or no."
        );
    }
}

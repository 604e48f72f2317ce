//! The HTTP jobs a batch becomes, and how their answers are put back together into one
//! response per request.

use std::sync::Arc;

use super::choose;
use super::http::CallError;
use crate::llm::engine::EngineStats;
use crate::llm::error::{LlmError, Result};
use crate::llm::request::{Choice, ChooseRequest, Generation, Request, Response};

/// One HTTP request of a batch.
pub(super) enum Job {
    Generate(usize),
    /// Choose request `.0` by the server's own `/v1/choose`.
    Native(usize),
    /// Score option `.1` of choose request `.0`.
    Option(usize, usize),
    /// Token `target` of option `option` of choose request `request` after the prompt's
    /// token ids and the option's tokens before it, `prefix` (forced tokens); the prompt is
    /// sent as its `text` where the server takes no ids. The prompt is shared by all the
    /// request's jobs.
    Token {
        request: usize,
        option: usize,
        prompt: Arc<[u32]>,
        prefix: Vec<u32>,
        text: Option<Arc<str>>,
        target: u32,
    },
    FirstToken(usize),
    Pick(usize),
    /// A request that could not be prepared (tokenizer error, over budget).
    Invalid(usize, String),
}

impl Job {
    /// The index of the request this job serves.
    pub(super) fn request(&self) -> usize {
        match *self {
            Job::Generate(i)
            | Job::Native(i)
            | Job::Option(i, _)
            | Job::FirstToken(i)
            | Job::Pick(i)
            | Job::Invalid(i, _) => i,
            Job::Token { request, .. } => request,
        }
    }
}

/// An option's log-probability and the prompt's token count, or why it has none.
type OptionScore = std::result::Result<(f32, usize), String>;

pub(super) enum Out {
    Generated(Generation),
    Chosen(Choice),
    Scored(f32, usize),
    Top(Vec<(String, f32)>, usize),
    Picked(String, usize),
}

/// Puts job results back together, one response per request.
pub(super) fn assemble(
    stats: &mut EngineStats,
    requests: &[Request],
    jobs: &[Job],
    outs: Vec<std::result::Result<Out, CallError>>,
) -> Vec<Result<Response>> {
    let mut scores: Vec<Vec<Option<OptionScore>>> = requests
        .iter()
        .map(|r| match r {
            Request::Choose(c) => vec![None; c.options.len()],
            Request::Generate(_) => Vec::new(),
        })
        .collect();
    let mut results: Vec<Option<Result<Response>>> = requests.iter().map(|_| None).collect();
    let err = |e: CallError| LlmError::InvalidRequest(format!("remote: {e}"));
    for (job, out) in jobs.iter().zip(outs) {
        match (job, out) {
            (Job::Option(i, k), Ok(Out::Scored(lp, p))) => scores[*i][*k] = Some(Ok((lp, p))),
            (Job::Option(i, k), Err(e)) => scores[*i][*k] = Some(Err(e.to_string())),
            (
                Job::Token {
                    request, option, ..
                },
                out,
            ) => {
                let slot = &mut scores[*request][*option];
                *slot = match (slot.take(), out) {
                    (Some(Err(e)), _) => Some(Err(e)),
                    (_, Err(e)) => Some(Err(e.to_string())),
                    (None, Ok(Out::Scored(lp, p))) => Some(Ok((lp, p))),
                    (Some(Ok((sum, p))), Ok(Out::Scored(lp, _))) => Some(Ok((sum + lp, p))),
                    (_, Ok(_)) => Some(Err("mismatched answer".into())),
                };
            }
            (Job::Generate(i), Ok(Out::Generated(g))) => {
                stats.generated_tokens += g.generated_tokens as u64;
                stats.prompt_tokens += g.prompt_tokens as u64;
                results[*i] = Some(Ok(Response::Generated(g)));
            }
            (Job::Native(i), Ok(Out::Chosen(c))) => {
                stats.prompt_tokens += c.prompt_tokens as u64;
                results[*i] = Some(Ok(Response::Chosen(c)));
            }
            (Job::FirstToken(i), Ok(Out::Top(top, p))) => {
                if let Request::Choose(c) = &requests[*i] {
                    let lp = choose::first_token_scores(&top, &c.options);
                    results[*i] = Some(Ok(Response::Chosen(choose::choice_from_logprobs(lp, p))));
                }
            }
            (Job::Pick(i), Ok(Out::Picked(text, p))) => {
                if let Request::Choose(c) = &requests[*i] {
                    results[*i] = Some(Ok(Response::Chosen(picked(c, &text, p))));
                }
            }
            (
                Job::Generate(i)
                | Job::Native(i)
                | Job::FirstToken(i)
                | Job::Pick(i)
                | Job::Invalid(i, _),
                Err(e),
            ) => {
                results[*i] = Some(Err(err(e)));
            }
            (j, Ok(_)) => {
                let i = j.request();
                results[i] = Some(Err(LlmError::InvalidRequest(
                    "remote: mismatched answer".into(),
                )));
            }
        }
    }
    for (i, s) in scores.into_iter().enumerate() {
        if s.is_empty() || results[i].is_some() {
            continue;
        }
        let mut logp = Vec::with_capacity(s.len());
        let mut prompt = 0;
        let mut failed = None;
        for x in s {
            match x {
                Some(Ok((lp, p))) => {
                    logp.push(lp);
                    prompt = p;
                }
                Some(Err(e)) => failed = Some(e),
                None => failed = Some("option not scored".into()),
            }
        }
        results[i] = Some(match failed {
            Some(e) => Err(LlmError::InvalidRequest(format!("remote: {e}"))),
            None => {
                stats.prompt_tokens += prompt as u64;
                Ok(Response::Chosen(choose::choice_from_logprobs(logp, prompt)))
            }
        });
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(LlmError::InvalidRequest("remote: no answer".into()))))
        .collect()
}

/// The choice a free reply names, with all probability on it.
fn picked(c: &ChooseRequest, text: &str, prompt_tokens: usize) -> Choice {
    let index = choose::closest_option(text, &c.options);
    tracing::debug!(reply = %text, option = %c.options[index], "choose by generation");
    let probs: Vec<f32> = (0..c.options.len())
        .map(|k| f32::from(u8::from(k == index)))
        .collect();
    let logprobs = probs.iter().map(|p| p.ln()).collect();
    Choice {
        index,
        probs,
        logprobs,
        prompt_tokens,
    }
}

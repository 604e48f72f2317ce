//! Log-probabilities of every prompt token (OpenAI `echo` + `logprobs`), computed with the
//! engine's forward pass. Prompts arriving together that share a prefix (a `choose`'s
//! options) compute it once; every row is scored as the engine scores `choose` options, so
//! a client summing an option's tokens gets the in-process `choose` log-probabilities.

use crate::llm::engine::Engine;
use crate::llm::error::{LlmError, Result};
use crate::llm::kv::{SeqCache, SharedPrefix};
use crate::llm::model::{LogitsFor, SeqInput};
use crate::llm::prefix::group_shared_prefixes;
use crate::llm::sampler::log_prob;

/// One prompt token's score.
#[derive(Clone, Debug, PartialEq)]
pub struct TokenScore {
    pub token: u32,
    /// `None` for the first token (nothing precedes it).
    pub logprob: Option<f32>,
    /// The most likely tokens at this position, with their log-probabilities.
    pub top: Vec<(u32, f32)>,
}

/// A scored prompt, with the logits of the token after it (to sample a continuation).
#[derive(Clone, Debug)]
pub struct Scored {
    pub tokens: Vec<TokenScore>,
    pub next: Vec<f32>,
}

/// Shortest shared prefix worth computing once.
const MIN_SHARED: usize = 8;

/// Most prompt tokens in one forward call of unrelated prompts.
const CHUNK_TOKENS: usize = 2048;

/// `(log_prob(row, token), top k of row)`, log-probabilities computed as the engine does.
pub fn row_scores(row: &[f32], token: Option<u32>, k: usize) -> (Option<f32>, Vec<(u32, f32)>) {
    let lp = token.map(|t| log_prob(row, t as usize));
    if k == 0 {
        return (lp, Vec::new());
    }
    let max = row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let sum: f64 = row.iter().map(|&l| f64::from(l - max).exp()).sum();
    let lse = sum.ln() as f32;
    let mut top: Vec<(u32, f32)> = Vec::with_capacity(k + 1);
    for (i, &l) in row.iter().enumerate() {
        if top.len() < k || l > top[top.len() - 1].1 {
            let pos = top.partition_point(|&(_, x)| x >= l);
            top.insert(pos, (i as u32, l));
            top.truncate(k);
        }
    }
    (
        lp,
        top.into_iter().map(|(i, l)| (i, l - max - lse)).collect(),
    )
}

/// Appends the scores of `tokens[from..]` predicted by `rows` (row j predicts
/// `tokens[from + j]`); returns the rows left over (the row after the last token).
fn score_rows<'r>(
    rows: &'r [f32],
    vocab: usize,
    tokens: &[u32],
    from: usize,
    k: usize,
    out: &mut Vec<TokenScore>,
) -> &'r [f32] {
    let mut chunks = rows.chunks_exact(vocab);
    for &t in &tokens[from..] {
        match chunks.next() {
            Some(row) => {
                let (lp, top) = row_scores(row, Some(t), k);
                out.push(TokenScore {
                    token: t,
                    logprob: lp,
                    top,
                });
            }
            None => break,
        }
    }
    let used = (tokens.len() - from).min(rows.len() / vocab);
    &rows[used * vocab..]
}

fn forward_all(
    engine: &Engine,
    caches: &mut [SeqCache],
    feeds: &[&[u32]],
) -> Result<Vec<Vec<f32>>> {
    let mut inputs: Vec<SeqInput<'_>> = caches
        .iter_mut()
        .zip(feeds)
        .map(|(cache, tokens)| SeqInput {
            cache,
            tokens,
            logits: LogitsFor::All,
        })
        .collect();
    engine.model().forward(&mut inputs)
}

fn first(t: u32) -> TokenScore {
    TokenScore {
        token: t,
        logprob: None,
        top: Vec::new(),
    }
}

/// Scores every token of every prompt, with the `k` most likely alternatives at each.
pub fn score_prompts(engine: &Engine, prompts: &[Vec<u32>], k: usize) -> Vec<Result<Scored>> {
    let budget = engine.context_budget();
    let vocab = engine.config().vocab;
    let model = engine.model();
    let mut results: Vec<Option<Result<Scored>>> = prompts.iter().map(|_| None).collect();
    let valid: Vec<Option<Vec<u32>>> = prompts
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let bad = if p.is_empty() {
                Some(LlmError::InvalidRequest("the prompt is empty".into()))
            } else if p.len() > budget {
                Some(LlmError::OverBudget {
                    tokens: p.len(),
                    budget,
                })
            } else {
                None
            };
            match bad {
                Some(e) => {
                    results[i] = Some(Err(e));
                    None
                }
                None => Some(p.clone()),
            }
        })
        .collect();
    let groups = group_shared_prefixes(&valid, MIN_SHARED);
    let mut grouped = vec![false; prompts.len()];
    for g in &groups {
        let lead = &prompts[g.members[0]][..g.len];
        let mut cache = vec![model.cache_with_prefix(SharedPrefix::default(), g.len)];
        let rows = match forward_all(engine, &mut cache, &[lead]) {
            Ok(mut r) => r.remove(0),
            Err(e) => {
                for &m in &g.members {
                    results[m] = Some(Err(LlmError::InvalidRequest(e.to_string())));
                    grouped[m] = true;
                }
                continue;
            }
        };
        let mut head = vec![first(lead[0])];
        let last = score_rows(&rows, vocab, lead, 1, k, &mut head).to_vec();
        let prefix = cache[0].share();
        let mut caches: Vec<SeqCache> = g
            .members
            .iter()
            .map(|&m| model.cache_with_prefix(prefix.clone(), prompts[m].len() - g.len + 1))
            .collect();
        let feeds: Vec<&[u32]> = g.members.iter().map(|&m| &prompts[m][g.len..]).collect();
        let outs = forward_all(engine, &mut caches, &feeds);
        for (j, &m) in g.members.iter().enumerate() {
            grouped[m] = true;
            results[m] = Some(match &outs {
                Ok(rows) => {
                    let p = &prompts[m];
                    let mut toks = head.clone();
                    let (lp, top) = row_scores(&last, Some(p[g.len]), k);
                    toks.push(TokenScore {
                        token: p[g.len],
                        logprob: lp,
                        top,
                    });
                    let next = score_rows(&rows[j], vocab, p, g.len + 1, k, &mut toks);
                    Ok(Scored {
                        tokens: toks,
                        next: next.to_vec(),
                    })
                }
                Err(e) => Err(LlmError::InvalidRequest(e.to_string())),
            });
        }
    }
    // The rest, in chunks of unrelated prompts.
    let rest: Vec<usize> = (0..prompts.len())
        .filter(|&i| !grouped[i] && results[i].is_none())
        .collect();
    let mut start = 0;
    while start < rest.len() {
        let mut end = start + 1;
        let mut total = prompts[rest[start]].len();
        while end < rest.len() && total + prompts[rest[end]].len() <= CHUNK_TOKENS {
            total += prompts[rest[end]].len();
            end += 1;
        }
        let members = &rest[start..end];
        let mut caches: Vec<SeqCache> = members
            .iter()
            .map(|&m| model.cache_with_prefix(SharedPrefix::default(), prompts[m].len()))
            .collect();
        let feeds: Vec<&[u32]> = members.iter().map(|&m| prompts[m].as_slice()).collect();
        let outs = forward_all(engine, &mut caches, &feeds);
        for (j, &m) in members.iter().enumerate() {
            results[m] = Some(match &outs {
                Ok(rows) => {
                    let p = &prompts[m];
                    let mut toks = vec![first(p[0])];
                    let next = score_rows(&rows[j], vocab, p, 1, k, &mut toks);
                    Ok(Scored {
                        tokens: toks,
                        next: next.to_vec(),
                    })
                }
                Err(e) => Err(LlmError::InvalidRequest(e.to_string())),
            });
        }
        start = end;
    }
    results
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err(LlmError::InvalidRequest("not scored".into()))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_the_token_and_the_top_alternatives() {
        let row = [0.0f32, 2.0, 1.0, -1.0];
        let (lp, top) = row_scores(&row, Some(2), 2);
        assert_eq!(lp, Some(log_prob(&row, 2)));
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), vec![1, 2]);
        assert!((top[0].1 - log_prob(&row, 1)).abs() < 1e-6);
    }
}

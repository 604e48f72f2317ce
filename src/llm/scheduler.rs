//! Continuous batching: which sequences run in the next forward step, and how many of their
//! pending tokens.
//!
//! Invariants: a step holds at most `max_num_seqs` sequences and at most
//! `max_batched_tokens` tokens, except that a step is never empty while work is pending
//! (a single sequence larger than the token budget still runs, chunked or whole); decoding
//! sequences (one pending token) go first so generation latency stays flat while long
//! prompts prefill in chunks; among the rest, older sequences go first.

/// Limits of one forward step (names as in vLLM / mistral.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SchedulerLimits {
    pub max_num_seqs: usize,
    pub max_batched_tokens: usize,
}

impl Default for SchedulerLimits {
    fn default() -> Self {
        Self {
            max_num_seqs: 64,
            max_batched_tokens: 1024,
        }
    }
}

/// What the scheduler needs to know of a waiting sequence.
#[derive(Clone, Copy, Debug)]
pub struct Candidate {
    /// Tokens waiting to be fed.
    pub pending: usize,
    /// Whether the pending tokens may be split over several steps.
    pub chunkable: bool,
}

/// Picks `(candidate index, tokens to feed)` for the next step from candidates listed oldest
/// first.
pub fn plan_step(cands: &[Candidate], limits: SchedulerLimits) -> Vec<(usize, usize)> {
    let mut plan = Vec::new();
    let mut tokens = 0;
    let order = cands
        .iter()
        .enumerate()
        .filter(|(_, c)| c.pending == 1)
        .chain(cands.iter().enumerate().filter(|(_, c)| c.pending > 1));
    for (i, c) in order {
        if plan.len() >= limits.max_num_seqs {
            break;
        }
        let room = limits.max_batched_tokens.saturating_sub(tokens);
        let take = if c.pending <= room {
            c.pending
        } else if plan.is_empty() {
            if c.chunkable {
                limits.max_batched_tokens.max(1)
            } else {
                c.pending
            }
        } else if c.chunkable && room >= 16 {
            room
        } else {
            continue;
        };
        tokens += take;
        plan.push((i, take));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(pending: usize) -> Candidate {
        Candidate {
            pending,
            chunkable: true,
        }
    }

    #[test]
    fn decodes_first_then_prefills_within_budget() {
        let lim = SchedulerLimits {
            max_num_seqs: 3,
            max_batched_tokens: 100,
        };
        let plan = plan_step(&[c(80), c(1), c(50), c(1)], lim);
        assert_eq!(plan, vec![(1, 1), (3, 1), (0, 80)]);
        let plan = plan_step(&[c(500)], lim);
        assert_eq!(plan, vec![(0, 100)]);
        let whole = Candidate {
            pending: 500,
            chunkable: false,
        };
        assert_eq!(plan_step(&[whole], lim), vec![(0, 500)]);
        assert_eq!(plan_step(&[c(1), whole], lim), vec![(0, 1)]);
        // Chunking fills the remaining room.
        assert_eq!(plan_step(&[c(60), c(60)], lim), vec![(0, 60), (1, 40)]);
    }
}

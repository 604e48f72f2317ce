//! Next-token sampling: greedy, or temperature with top-k / top-p, from a per-request seed.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::{Deserialize, Serialize};

/// How to pick the next token.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// 0 means greedy (argmax).
    pub temperature: f32,
    /// Keep only the `top_k` most likely tokens (0 = all).
    pub top_k: usize,
    /// Keep the smallest set of tokens whose probability reaches `top_p` (1 = all).
    pub top_p: f32,
}

impl Default for Sampling {
    fn default() -> Self {
        Self::greedy()
    }
}

impl Sampling {
    /// Always the most likely token.
    pub fn greedy() -> Self {
        Self {
            temperature: 0.0,
            top_k: 0,
            top_p: 1.0,
        }
    }

    /// Temperature sampling with the usual nucleus defaults.
    pub fn temperature(t: f32) -> Self {
        Self {
            temperature: t,
            top_k: 40,
            top_p: 0.95,
        }
    }
}

/// A seeded sampler owned by one request, so results do not depend on batch composition.
pub struct Sampler {
    cfg: Sampling,
    rng: StdRng,
}

impl Sampler {
    /// A sampler for one request.
    pub fn new(cfg: Sampling, seed: u64) -> Self {
        Self {
            cfg,
            rng: StdRng::seed_from_u64(seed),
        }
    }

    /// Picks a token from `logits` (already masked: disallowed tokens are -inf). Returns
    /// `None` if no token is allowed.
    pub fn sample(&mut self, logits: &[f32]) -> Option<u32> {
        let argmax = argmax(logits)?;
        if self.cfg.temperature <= 0.0 {
            return Some(argmax as u32);
        }
        let mut cand: Vec<(usize, f32)> = logits
            .iter()
            .enumerate()
            .filter(|(_, l)| l.is_finite())
            .map(|(i, &l)| (i, l / self.cfg.temperature))
            .collect();
        // Best first, lowest index on ties: a total order, so selecting the top k first
        // gives the same list as sorting everything.
        let order = |a: &(usize, f32), b: &(usize, f32)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        let k = self.cfg.top_k;
        if k > 0 && cand.len() > k {
            cand.select_nth_unstable_by(k - 1, order);
            cand.truncate(k);
        }
        cand.sort_by(order);
        let max = cand[0].1;
        let mut probs: Vec<f32> = cand.iter().map(|(_, l)| (l - max).exp()).collect();
        let sum: f32 = probs.iter().sum();
        probs.iter_mut().for_each(|p| *p /= sum);
        if self.cfg.top_p < 1.0 {
            let mut acc = 0.0;
            let mut keep = probs.len();
            for (i, p) in probs.iter().enumerate() {
                acc += p;
                if acc >= self.cfg.top_p {
                    keep = i + 1;
                    break;
                }
            }
            probs.truncate(keep);
            let s: f32 = probs.iter().sum();
            probs.iter_mut().for_each(|p| *p /= s);
        }
        let r: f32 = self.rng.gen();
        let mut acc = 0.0;
        for (i, p) in probs.iter().enumerate() {
            acc += p;
            if r < acc {
                return Some(cand[i].0 as u32);
            }
        }
        Some(cand[probs.len() - 1].0 as u32)
    }
}

/// Index of the largest finite logit (lowest index on ties).
pub fn argmax(logits: &[f32]) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, &l) in logits.iter().enumerate() {
        if l.is_finite() && best.is_none_or(|(_, b)| l > b) {
            best = Some((i, l));
        }
    }
    best.map(|(i, _)| i)
}

/// `log softmax(logits)[index]`.
pub fn log_prob(logits: &[f32], index: usize) -> f32 {
    let max = logits.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let sum: f64 = logits.iter().map(|&l| ((l - max) as f64).exp()).sum();
    logits[index] - max - sum.ln() as f32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greedy_and_seeded_sampling() {
        let logits = [0.1, 3.0, 2.9, f32::NEG_INFINITY];
        assert_eq!(Sampler::new(Sampling::greedy(), 1).sample(&logits), Some(1));
        let draw = |seed| {
            let mut s = Sampler::new(Sampling::temperature(1.0), seed);
            (0..20)
                .map(|_| s.sample(&logits).unwrap())
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(7), draw(7));
        assert!(draw(7).iter().all(|&t| t != 3));
        assert!(Sampler::new(Sampling::greedy(), 0)
            .sample(&[f32::NEG_INFINITY])
            .is_none());
        let lp: f32 = (0..3).map(|i| log_prob(&logits[..3], i).exp()).sum();
        assert!((lp - 1.0).abs() < 1e-5);
    }
}

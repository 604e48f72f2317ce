//! Retrieval scoring: `score = α_rec·recency + α_imp·importance + α_rel·relevance`, each
//! component min–max normalised over the candidates (Park et al. 2023).
//!
//! Recency is `decay^(game hours since last access)` with `decay = 0.995`; importance is the
//! node's 1–10 rating; relevance is the cosine similarity to the query.

use serde::{Deserialize, Serialize};

use super::node::{GameTime, Importance};

/// The weights α of the three components.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Weights {
    pub recency: f32,
    pub importance: f32,
    pub relevance: f32,
}

impl Default for Weights {
    /// The paper's weights: 1, 1, 1.
    fn default() -> Self {
        Self {
            recency: 1.0,
            importance: 1.0,
            relevance: 1.0,
        }
    }
}

/// Settings of retrieval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetrievalConfig {
    pub weights: Weights,
    /// Memories returned by default.
    pub k: usize,
    /// Relevance candidates taken from the index: `k × candidate_factor` (at least `k`).
    pub candidate_factor: usize,
    /// Recency decay per game hour since last access.
    pub decay_per_hour: f64,
}

impl Default for RetrievalConfig {
    fn default() -> Self {
        Self {
            weights: Weights::default(),
            k: 10,
            candidate_factor: 10,
            decay_per_hour: 0.995,
        }
    }
}

impl RetrievalConfig {
    /// Number of relevance candidates to fetch for `k` results.
    pub fn candidates_for(&self, k: usize) -> usize {
        k.saturating_mul(self.candidate_factor.max(1)).max(k)
    }
}

/// A memory competing in retrieval, with its raw components.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Candidate {
    pub id: u64,
    pub last_accessed: GameTime,
    pub importance: Importance,
    /// Cosine similarity to the query.
    pub relevance: f32,
}

/// A scored memory: the total and its normalised components (each 0..=1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ScoredMemory {
    pub id: u64,
    pub score: f32,
    pub recency: f32,
    pub importance: f32,
    pub relevance: f32,
}

/// `decay^(hours since last access)`; 1 for a future `last_accessed`.
pub fn recency(now: GameTime, last_accessed: GameTime, decay_per_hour: f64) -> f64 {
    decay_per_hour.powf(now.hours_since(last_accessed))
}

/// Scales `values` to 0..=1 by their minimum and maximum. If every value is equal (or there
/// is only one), each becomes 0.5, so the component cannot change the ranking. Non-finite
/// values become 0 after scaling.
pub fn min_max_normalize(values: &mut [f32]) {
    let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
    for &v in values.iter().filter(|v| v.is_finite()) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    let range = hi - lo;
    for v in values.iter_mut() {
        *v = if !v.is_finite() {
            0.0
        } else if range > 0.0 && range.is_finite() {
            (*v - lo) / range
        } else {
            0.5
        };
    }
}

/// Scores `candidates` at time `now` and returns them best first (ties: lower id first).
pub fn score_candidates(
    candidates: &[Candidate],
    now: GameTime,
    config: &RetrievalConfig,
) -> Vec<ScoredMemory> {
    let mut rec: Vec<f32> = candidates
        .iter()
        .map(|c| recency(now, c.last_accessed, config.decay_per_hour) as f32)
        .collect();
    let mut imp: Vec<f32> = candidates
        .iter()
        .map(|c| f32::from(c.importance.get()))
        .collect();
    let mut rel: Vec<f32> = candidates.iter().map(|c| c.relevance).collect();
    min_max_normalize(&mut rec);
    min_max_normalize(&mut imp);
    min_max_normalize(&mut rel);
    let w = config.weights;
    let mut scored: Vec<ScoredMemory> = candidates
        .iter()
        .enumerate()
        .map(|(i, c)| ScoredMemory {
            id: c.id,
            score: w.recency * rec[i] + w.importance * imp[i] + w.relevance * rel[i],
            recency: rec[i],
            importance: imp[i],
            relevance: rel[i],
        })
        .collect();
    scored.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(id: u64, last: u64, imp: i64, rel: f32) -> Candidate {
        Candidate {
            id,
            last_accessed: GameTime(last),
            importance: Importance::new(imp),
            relevance: rel,
        }
    }

    fn order(s: &[ScoredMemory]) -> Vec<u64> {
        s.iter().map(|m| m.id).collect()
    }

    #[test]
    fn min_max_edge_cases() {
        let mut all_equal = [3.0, 3.0, 3.0];
        min_max_normalize(&mut all_equal);
        assert_eq!(all_equal, [0.5, 0.5, 0.5]);
        let mut one = [7.0];
        min_max_normalize(&mut one);
        assert_eq!(one, [0.5]);
        let mut empty: [f32; 0] = [];
        min_max_normalize(&mut empty);
        let mut spread = [2.0, 4.0, 3.0];
        min_max_normalize(&mut spread);
        assert_eq!(spread, [0.0, 1.0, 0.5]);
        let mut with_nan = [1.0, f32::NAN, 3.0];
        min_max_normalize(&mut with_nan);
        assert_eq!(with_nan, [0.0, 0.0, 1.0]);
    }

    #[test]
    fn recency_decays_per_game_hour() {
        assert_eq!(recency(GameTime(600), GameTime(600), 0.995), 1.0);
        let r = recency(GameTime(600), GameTime(0), 0.995);
        assert!((r - 0.995f64.powi(10)).abs() < 1e-12);
        assert_eq!(recency(GameTime(0), GameTime(600), 0.995), 1.0);
    }

    #[test]
    fn each_component_alone_decides() {
        let cfg = RetrievalConfig::default();
        let now = GameTime(24 * 60);
        // Recency decides: importance and relevance equal.
        let c = [
            cand(1, 0, 5, 0.3),
            cand(2, 1400, 5, 0.3),
            cand(3, 700, 5, 0.3),
        ];
        assert_eq!(order(&score_candidates(&c, now, &cfg)), vec![2, 3, 1]);
        // Importance decides.
        let c = [
            cand(1, 60, 2, 0.3),
            cand(2, 60, 9, 0.3),
            cand(3, 60, 5, 0.3),
        ];
        assert_eq!(order(&score_candidates(&c, now, &cfg)), vec![2, 3, 1]);
        // Relevance decides.
        let c = [
            cand(1, 60, 5, 0.9),
            cand(2, 60, 5, -0.2),
            cand(3, 60, 5, 0.4),
        ];
        let s = score_candidates(&c, now, &cfg);
        assert_eq!(order(&s), vec![1, 3, 2]);
        // Equal components contribute 0.5 each.
        assert!((s[0].score - 2.0).abs() < 1e-6, "{s:?}");
    }

    #[test]
    fn weights_trade_components_off() {
        let now = GameTime(48 * 60);
        // 1: old but important; 2: fresh but mundane; same relevance.
        let c = [cand(1, 0, 10, 0.5), cand(2, 48 * 60, 1, 0.5)];
        let mut cfg = RetrievalConfig::default();
        assert_eq!(order(&score_candidates(&c, now, &cfg))[0], 1); // tie 1.5 vs 1.5 → lower id
        cfg.weights.importance = 2.0;
        assert_eq!(order(&score_candidates(&c, now, &cfg))[0], 1);
        cfg.weights = Weights {
            recency: 2.0,
            importance: 1.0,
            relevance: 1.0,
        };
        assert_eq!(order(&score_candidates(&c, now, &cfg))[0], 2);
    }

    #[test]
    fn candidate_count() {
        let cfg = RetrievalConfig::default();
        assert_eq!(cfg.candidates_for(10), 100);
        let zero = RetrievalConfig {
            candidate_factor: 0,
            ..cfg
        };
        assert_eq!(zero.candidates_for(7), 7);
    }
}

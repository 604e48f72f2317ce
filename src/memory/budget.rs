//! Fitting memories into a prompt's token budget: the lowest-scored memories go first.

use super::error::{MemoryError, Result};

/// Keeps the highest-scored `items` whose prompt still fits `budget` tokens, in their
/// original order. `tokens(kept)` counts the tokens of the whole prompt built with `kept`
/// (so the caller renders the prompt exactly as it will be sent).
///
/// Items are dropped lowest score first (ties: the later item first); an item without a
/// score (`scores` shorter than `items`) counts as lowest. The number kept is found by
/// binary search, assuming the count grows with the items kept; only counts that were
/// checked to fit are ever returned. Fails only if the prompt without any memories is
/// over budget.
pub fn fit_to_budget<T: Clone>(
    items: &[T],
    scores: &[f32],
    budget: usize,
    mut tokens: impl FnMut(&[T]) -> usize,
) -> Result<Vec<T>> {
    // Positions by score, best first.
    let mut by_score: Vec<usize> = (0..items.len()).collect();
    let score = |i: usize| scores.get(i).copied().unwrap_or(f32::NEG_INFINITY);
    by_score.sort_by(|&a, &b| score(b).total_cmp(&score(a)).then(a.cmp(&b)));
    let keep_top = |m: usize| -> Vec<T> {
        let mut keep: Vec<usize> = by_score[..m].to_vec();
        keep.sort_unstable();
        keep.into_iter().map(|i| items[i].clone()).collect()
    };

    let all = keep_top(items.len());
    if tokens(&all) <= budget {
        return Ok(all);
    }
    let needed = tokens(&[]);
    if needed > budget {
        return Err(MemoryError::OverBudget { needed, budget });
    }
    // Invariant: `lo` items fit, `hi` items do not.
    let (mut lo, mut hi) = (0usize, items.len());
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if tokens(&keep_top(mid)) <= budget {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(keep_top(lo))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prompt = 10 tokens of instructions + the length of each kept item.
    fn count(kept: &[&str]) -> usize {
        10 + kept.iter().map(|s| s.len()).sum::<usize>()
    }

    #[test]
    fn drops_lowest_scored_first_and_keeps_order() {
        let items = ["aaaa", "bbbb", "cccc", "dddd"];
        let scores = [0.9, 0.1, 0.5, 0.7];
        assert_eq!(
            fit_to_budget(&items, &scores, 100, count).unwrap(),
            items.to_vec()
        );
        assert_eq!(
            fit_to_budget(&items, &scores, 22, count).unwrap(),
            vec!["aaaa", "cccc", "dddd"]
        );
        assert_eq!(
            fit_to_budget(&items, &scores, 21, count).unwrap(),
            vec!["aaaa", "dddd"]
        );
        assert_eq!(
            fit_to_budget(&items, &scores, 13, count).unwrap(),
            Vec::<&str>::new()
        );
        assert!(matches!(
            fit_to_budget(&items, &scores, 9, count),
            Err(MemoryError::OverBudget {
                needed: 10,
                budget: 9
            })
        ));
    }

    #[test]
    fn missing_scores_drop_first_and_ties_drop_later() {
        let items = ["aa", "bb", "cc"];
        assert_eq!(
            fit_to_budget(&items, &[1.0], 14, count).unwrap(),
            vec!["aa", "bb"]
        );
        assert_eq!(
            fit_to_budget(&items, &[0.5, 0.5, 0.5], 14, count).unwrap(),
            vec!["aa", "bb"]
        );
        assert!(fit_to_budget::<&str>(&[], &[], 10, count)
            .unwrap()
            .is_empty());
    }
}

//! Scoring annotators against the run: majority vote, F1, Fleiss' κ and shares of
//! positives, per dimension.

use std::collections::BTreeMap;

use serde::Serialize;

use super::labels::Labels;
use super::sheet::{Dimension, Item};

/// The annotators' majority on one item.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Vote {
    /// One label has more votes than any other.
    Label(String),
    /// Two or more labels share the most votes.
    Tie,
    /// No annotator labelled the item.
    Missing,
}

/// The majority of `labels` (missing labels are ignored).
pub fn majority(labels: &[Option<&str>]) -> Vote {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for l in labels.iter().flatten() {
        *counts.entry(l).or_default() += 1;
    }
    let Some(&top) = counts.values().max() else {
        return Vote::Missing;
    };
    let mut best = counts.iter().filter(|(_, &n)| n == top);
    match (best.next(), best.next()) {
        (Some((l, _)), None) => Vote::Label(l.to_string()),
        _ => Vote::Tie,
    }
}

/// Fleiss' κ of a table with one row per item and one count per category (how many raters
/// chose it); every row must sum to the same number of raters n.
///
/// P_i = (Σ_j n_ij² − n) / (n(n−1)), P̄ = mean P_i, p_j = Σ_i n_ij / (N n), P_e = Σ_j p_j²,
/// κ = (P̄ − P_e) / (1 − P_e). `None` with no items, fewer than 2 raters, rows of unequal
/// sums, or no variance (P_e = 1: every rating in one category).
pub fn fleiss_kappa(table: &[Vec<usize>]) -> Option<f64> {
    let n = table.first()?.iter().sum::<usize>();
    if n < 2 || table.iter().any(|r| r.iter().sum::<usize>() != n) {
        return None;
    }
    let (n_f, items) = (n as f64, table.len() as f64);
    let categories = table.iter().map(Vec::len).max().unwrap_or(0);
    let mut p_bar = 0.0;
    let mut totals = vec![0usize; categories];
    for row in table {
        let sq: usize = row.iter().map(|c| c * c).sum();
        p_bar += (sq - n) as f64 / (n_f * (n_f - 1.0));
        for (j, c) in row.iter().enumerate() {
            totals[j] += c;
        }
    }
    p_bar /= items;
    let p_e: f64 = totals
        .iter()
        .map(|&t| {
            let p = t as f64 / (items * n_f);
            p * p
        })
        .sum();
    if (1.0 - p_e).abs() < 1e-12 {
        return None;
    }
    Some((p_bar - p_e) / (1.0 - p_e))
}

/// F1 from true positives, false positives and false negatives; `None` when all are 0.
pub fn f1(tp: usize, fp: usize, fn_: usize) -> Option<f64> {
    let d = 2 * tp + fp + fn_;
    (d > 0).then(|| 2.0 * tp as f64 / d as f64)
}

/// The scores of one dimension.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct DimensionScore {
    pub dimension: String,
    /// Items the dimension applies to.
    pub items: usize,
    /// Items with a majority label (the rest are skipped).
    pub scored: usize,
    /// Items skipped for a tie in the vote.
    pub ties: usize,
    /// Items skipped because no annotator labelled them.
    pub all_missing: usize,
    /// Yes/no: true positives (run yes, majority yes). Emotion: items where they agree.
    pub tp: usize,
    /// Yes/no: run yes, majority no. Emotion: items where they disagree.
    pub fp: usize,
    /// Yes/no: run no, majority yes. Emotion: items where they disagree.
    pub fn_: usize,
    /// F1 of the run against the majority (emotion: micro-F1 = accuracy); `None` when
    /// undefined (nothing scored, or no positives on either side).
    pub f1: Option<f64>,
    /// Fleiss' κ between annotators over the items every annotator labelled; `None` when
    /// undefined.
    pub kappa: Option<f64>,
    /// Items used for κ.
    pub kappa_items: usize,
    /// Share of scored items the run answered yes (yes/no dimensions only).
    pub predicted_positive: Option<f64>,
    /// Share of scored items whose majority is yes (yes/no dimensions only).
    pub annotated_positive: Option<f64>,
}

/// Scores of every dimension.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScoreReport {
    pub annotators: usize,
    pub items: usize,
    pub dimensions: Vec<DimensionScore>,
}

/// Scores `sheets` (one [`Labels`] per annotator, rows matching `items`) against the run.
pub fn score(items: &[Item], sheets: &[Labels]) -> ScoreReport {
    let dimensions = Dimension::ALL
        .iter()
        .enumerate()
        .map(|(k, &d)| score_dimension(items, sheets, k, d))
        .collect();
    ScoreReport {
        annotators: sheets.len(),
        items: items.len(),
        dimensions,
    }
}

fn score_dimension(items: &[Item], sheets: &[Labels], k: usize, d: Dimension) -> DimensionScore {
    let mut s = DimensionScore {
        dimension: d.name().to_string(),
        ..Default::default()
    };
    let mut categories: Vec<String> = Vec::new();
    let mut complete: Vec<Vec<&str>> = Vec::new();
    let (mut predicted, mut annotated) = (0usize, 0usize);
    for (i, item) in items.iter().enumerate() {
        if !d.applies(item.kind) {
            continue;
        }
        s.items += 1;
        let labels: Vec<Option<&str>> = sheets
            .iter()
            .map(|sheet| sheet.get(i).and_then(|r| r[k].as_deref()))
            .collect();
        if labels.iter().all(Option::is_some) && !labels.is_empty() {
            let row: Vec<&str> = labels.iter().flatten().copied().collect();
            for l in &row {
                if !categories.iter().any(|c| c == l) {
                    categories.push(l.to_string());
                }
            }
            complete.push(row);
        }
        let model = item.model[k].as_deref().unwrap_or("");
        match majority(&labels) {
            Vote::Tie => s.ties += 1,
            Vote::Missing => s.all_missing += 1,
            Vote::Label(m) => {
                s.scored += 1;
                if d.binary() {
                    let (p, a) = (model == "yes", m == "yes");
                    predicted += p as usize;
                    annotated += a as usize;
                    match (p, a) {
                        (true, true) => s.tp += 1,
                        (true, false) => s.fp += 1,
                        (false, true) => s.fn_ += 1,
                        (false, false) => {}
                    }
                } else if model == m {
                    s.tp += 1;
                } else {
                    s.fp += 1;
                    s.fn_ += 1;
                }
            }
        }
    }
    s.f1 = if s.scored == 0 {
        None
    } else {
        f1(s.tp, s.fp, s.fn_)
    };
    if d.binary() && s.scored > 0 {
        s.predicted_positive = Some(predicted as f64 / s.scored as f64);
        s.annotated_positive = Some(annotated as f64 / s.scored as f64);
    }
    let table: Vec<Vec<usize>> = complete
        .iter()
        .map(|row| {
            categories
                .iter()
                .map(|c| row.iter().filter(|l| *l == c).count())
                .collect()
        })
        .collect();
    s.kappa_items = table.len();
    s.kappa = fleiss_kappa(&table);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::sheet::ItemKind;

    fn close(a: Option<f64>, b: f64) {
        let a = a.expect("defined");
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    /// 3 raters × 5 items, categories (yes, no):
    ///
    /// | item | yes | no | P_i = (Σn² − 3) / 6 |
    /// |------|-----|----|----------------------|
    /// | 1    | 3   | 0  | (9 + 0 − 3)/6 = 1    |
    /// | 2    | 2   | 1  | (4 + 1 − 3)/6 = 1/3  |
    /// | 3    | 0   | 3  | 1                    |
    /// | 4    | 1   | 2  | 1/3                  |
    /// | 5    | 2   | 1  | 1/3                  |
    ///
    /// P̄ = 3/5; p_yes = 8/15, p_no = 7/15; P_e = (64 + 49)/225 = 113/225;
    /// κ = (135/225 − 113/225) / (112/225) = 22/112 = 11/56 ≈ 0.1964.
    #[test]
    fn fleiss_kappa_of_a_hand_computed_table() {
        let t = vec![vec![3, 0], vec![2, 1], vec![0, 3], vec![1, 2], vec![2, 1]];
        close(fleiss_kappa(&t), 11.0 / 56.0);
    }

    /// Three categories, 4 raters × 3 items: (4,0,0), (0,4,0), (2,2,0).
    /// P_i = 1, 1, (4+4−4)/12 = 1/3 → P̄ = 7/9; p = (6/12, 6/12, 0) → P_e = 1/2;
    /// κ = (7/9 − 1/2)/(1/2) = 5/9.
    #[test]
    fn fleiss_kappa_with_three_categories() {
        let t = vec![vec![4, 0, 0], vec![0, 4, 0], vec![2, 2, 0]];
        close(fleiss_kappa(&t), 5.0 / 9.0);
    }

    #[test]
    fn fleiss_kappa_perfect_agreement_is_one_and_degenerate_tables_are_none() {
        close(fleiss_kappa(&[vec![3, 0], vec![0, 3], vec![3, 0]]), 1.0);
        // Every rating in one category: no variance.
        assert_eq!(fleiss_kappa(&[vec![3, 0], vec![3, 0]]), None);
        // One rater, no items, unequal rows.
        assert_eq!(fleiss_kappa(&[vec![1, 0], vec![0, 1]]), None);
        assert_eq!(fleiss_kappa(&[]), None);
        assert_eq!(fleiss_kappa(&[vec![2, 0], vec![1, 2]]), None);
    }

    #[test]
    fn majority_vote_handles_ties_and_missing_labels() {
        assert_eq!(
            majority(&[Some("yes"), Some("no"), Some("yes")]),
            Vote::Label("yes".into())
        );
        assert_eq!(majority(&[Some("yes"), Some("no"), None]), Vote::Tie);
        assert_eq!(majority(&[None, None, None]), Vote::Missing);
        assert_eq!(majority(&[]), Vote::Missing);
        assert_eq!(
            majority(&[None, Some("no"), None]),
            Vote::Label("no".into())
        );
        assert_eq!(
            majority(&[Some("sad"), Some("happy"), Some("angry")]),
            Vote::Tie
        );
    }

    #[test]
    fn f1_from_known_counts() {
        // TP 3, FP 1, FN 2: precision 3/4, recall 3/5, F1 = 6/9 = 2/3.
        close(f1(3, 1, 2), 2.0 / 3.0);
        close(f1(0, 1, 1), 0.0);
        assert_eq!(f1(0, 0, 0), None);
    }

    fn activity(model_fun: &str, emotion: &str) -> Item {
        let mut model = vec![Some("no".to_string()); 5];
        model[2] = Some(model_fun.to_string());
        model.push(Some(emotion.to_string()));
        model.push(None);
        Item {
            kind: ItemKind::Activity,
            step: 0,
            date: "2023-01-03".into(),
            time: "06:00 am".into(),
            agent: "A".into(),
            place: "p".into(),
            text: "t".into(),
            model,
        }
    }

    /// A sheet where every label is `None` except fun (column 2) and emotion (5).
    fn sheet(fun: &[Option<&str>], emotion: &[Option<&str>]) -> Labels {
        fun.iter()
            .zip(emotion)
            .map(|(f, e)| {
                let mut row = vec![None; 7];
                row[2] = f.map(str::to_string);
                row[5] = e.map(str::to_string);
                row
            })
            .collect()
    }

    #[test]
    fn score_counts_votes_f1_kappa_and_shares() {
        // Run's fun: yes, yes, no, no, yes, no; emotions all happy.
        let items: Vec<Item> = ["yes", "yes", "no", "no", "yes", "no"]
            .iter()
            .map(|f| activity(f, "happy"))
            .collect();
        let (y, n) = (Some("yes"), Some("no"));
        let (h, s) = (Some("happy"), Some("sad"));
        let a = sheet(&[y, y, y, n, n, None], &[h, h, h, h, s, None]);
        let b = sheet(&[y, n, y, n, None, None], &[h, s, h, h, s, None]);
        let c = sheet(&[y, n, n, n, y, None], &[h, s, h, h, h, None]);
        let r = score(&items, &[a, b, c]);
        assert_eq!(r.annotators, 3);
        let fun = &r.dimensions[2];
        // Majorities: yes, no, yes, no, tie (yes/no/missing), all missing.
        assert_eq!(
            (fun.items, fun.scored, fun.ties, fun.all_missing),
            (6, 4, 1, 1)
        );
        // Run yes/yes/no/no vs majority yes/no/yes/no: TP 1, FP 1, FN 1 → F1 = 2/4.
        assert_eq!((fun.tp, fun.fp, fun.fn_), (1, 1, 1));
        close(fun.f1, 0.5);
        close(fun.predicted_positive, 0.5);
        close(fun.annotated_positive, 0.5);
        // κ over items 1–4 (complete): (3,0), (1,2), (2,1), (0,3):
        // P_i = 1, 1/3, 1/3, 1 → P̄ = 2/3; p_yes = 6/12 → P_e = 1/2; κ = 1/3.
        assert_eq!(fun.kappa_items, 4);
        close(fun.kappa, 1.0 / 3.0);
        // Emotion majorities: happy, sad, happy, happy, sad, missing; run all happy →
        // 3 of 5 right = micro-F1 0.6; κ over items 1–5: (3,0), (1,2), (3,0), (3,0), (1,2)
        // in (happy, sad): P_i = 1, 1/3, 1, 1, 1/3 → P̄ = 11/15; p_happy = 11/15,
        // p_sad = 4/15 → P_e = 137/225; κ = (165 − 137)/(225 − 137) = 28/88 = 7/22.
        let emo = &r.dimensions[5];
        assert_eq!((emo.scored, emo.all_missing, emo.tp), (5, 1, 3));
        close(emo.f1, 0.6);
        close(emo.kappa, 7.0 / 22.0);
        assert_eq!(emo.predicted_positive, None);
        // A dimension nobody labelled: nothing scored, everything undefined (not NaN).
        let social = &r.dimensions[1];
        assert_eq!((social.scored, social.all_missing), (0, 6));
        assert_eq!((social.f1, social.kappa), (None, None));
        // Closeness does not apply to activity rows.
        assert_eq!(r.dimensions[6].items, 0);
    }

    #[test]
    fn one_annotator_has_no_kappa_but_still_scores() {
        let items = vec![activity("yes", "happy"), activity("no", "sad")];
        let (y, h) = (Some("yes"), Some("happy"));
        let r = score(&items, &[sheet(&[y, y], &[h, h])]);
        let fun = &r.dimensions[2];
        assert_eq!(fun.kappa, None);
        assert_eq!((fun.tp, fun.fp, fun.fn_), (1, 0, 1));
        close(fun.f1, 2.0 / 3.0);
        close(r.dimensions[5].f1, 0.5);
    }
}

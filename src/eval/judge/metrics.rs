//! The scores of a judge report: per yes/no need and for the emotion, next to a constant
//! answer.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{JudgeItem, Judgement};
use crate::world::{Emotion, Need};

/// Scores of one yes/no dimension.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct NeedScore {
    /// Labelled items.
    pub items: usize,
    /// The paper's micro-F1 over both classes (= accuracy).
    pub micro_f1: f64,
    /// F1 of the "yes" class (0 when nothing is predicted or labelled yes).
    pub yes_f1: f64,
    /// Share of items the model says yes to.
    pub predicted_yes: f64,
    /// Share of items labelled yes.
    pub labelled_yes: f64,
    /// micro-F1 of always answering the labels' majority.
    pub constant_micro_f1: f64,
    /// yes-F1 of always answering the labels' majority.
    pub constant_yes_f1: f64,
}

/// Scores of the emotion.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct EmotionScore {
    pub items: usize,
    /// Accuracy over the seven labels.
    pub micro_f1: f64,
    /// Accuracy of always answering the most common label.
    pub constant_micro_f1: f64,
    /// `confusion[label][predicted]` counts.
    pub confusion: BTreeMap<String, BTreeMap<String, usize>>,
}

fn f1(tp: usize, fp: usize, fn_: usize) -> f64 {
    crate::eval::score::f1(tp, fp, fn_).unwrap_or(0.0)
}

/// The scores of need `i` over the items labelled for it (`None`: no labels).
pub fn need_score(items: &[JudgeItem], judged: &[Judgement], i: usize) -> Option<NeedScore> {
    let pairs: Vec<(bool, bool)> = items
        .iter()
        .zip(judged)
        .filter_map(|(it, j)| it.needs[i].map(|l| (l, j.yes(i))))
        .collect();
    binary_score(&pairs)
}

/// The scores of yes/no answers, given as (label, predicted) pairs (`None`: no pairs).
pub fn binary_score(pairs: &[(bool, bool)]) -> Option<NeedScore> {
    let n = pairs.len();
    if n == 0 {
        return None;
    }
    let count = |f: &dyn Fn(&(bool, bool)) -> bool| pairs.iter().filter(|p| f(p)).count();
    let tp = count(&|&(l, p)| l && p);
    let fp = count(&|&(l, p)| !l && p);
    let fn_ = count(&|&(l, p)| l && !p);
    let correct = count(&|&(l, p)| l == p);
    let labelled = count(&|&(l, _)| l);
    let majority_yes = 2 * labelled > n;
    let constant_correct = if majority_yes { labelled } else { n - labelled };
    Some(NeedScore {
        items: n,
        micro_f1: correct as f64 / n as f64,
        yes_f1: f1(tp, fp, fn_),
        predicted_yes: (tp + fp) as f64 / n as f64,
        labelled_yes: labelled as f64 / n as f64,
        constant_micro_f1: constant_correct as f64 / n as f64,
        constant_yes_f1: if majority_yes {
            f1(labelled, n - labelled, 0)
        } else {
            0.0
        },
    })
}

/// The emotion scores over the items labelled with one (`None`: no labels).
pub fn emotion_score(items: &[JudgeItem], judged: &[Judgement]) -> Option<EmotionScore> {
    let pairs: Vec<(Emotion, Emotion)> = items
        .iter()
        .zip(judged)
        .filter_map(|(it, j)| it.emotion.map(|l| (l, j.emotion())))
        .collect();
    let n = pairs.len();
    if n == 0 {
        return None;
    }
    let mut confusion: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut per_label: BTreeMap<&str, usize> = BTreeMap::new();
    for (l, p) in &pairs {
        *confusion
            .entry(l.as_str().to_string())
            .or_default()
            .entry(p.as_str().to_string())
            .or_default() += 1;
        *per_label.entry(l.as_str()).or_default() += 1;
    }
    let correct = pairs.iter().filter(|(l, p)| l == p).count();
    let most = per_label.values().copied().max().unwrap_or(0);
    Some(EmotionScore {
        items: n,
        micro_f1: correct as f64 / n as f64,
        constant_micro_f1: most as f64 / n as f64,
        confusion,
    })
}

/// Scores every labelled dimension.
pub fn scores(items: &[JudgeItem], judged: &[Judgement]) -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    for (i, need) in Need::ALL.iter().enumerate() {
        if let Some(s) = need_score(items, judged, i) {
            out.insert(need.as_str().to_string(), serde_json::json!(s));
        }
    }
    if let Some(s) = emotion_score(items, judged) {
        out.insert("emotion".to_string(), serde_json::json!(s));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(needs: [Option<bool>; 5], emotion: Option<Emotion>) -> JudgeItem {
        JudgeItem {
            line: 2,
            activity: "x".into(),
            needs,
            emotion,
        }
    }

    fn judged(p: f32, e: usize) -> Judgement {
        let mut emotion = vec![0.0; 7];
        emotion[e] = 1.0;
        Judgement {
            activity: "x".into(),
            p_yes: [p; 5],
            emotion,
            fallback: None,
            yes_threshold: [0.5; 5],
        }
    }

    #[test]
    fn a_need_is_yes_above_its_threshold() {
        let mut j = judged(0.55, 0);
        assert!(j.yes(2));
        j.yes_threshold[2] = 0.6;
        assert!(!j.yes(2) && j.yes(1), "only fun's threshold moved");
        j.p_yes[2] = 0.61;
        assert!(j.yes(2));
    }

    #[test]
    fn need_scores_against_the_constant_answer() {
        // Labels: yes, no, no, no. The model says yes to the first two.
        let items: Vec<JudgeItem> = [true, false, false, false]
            .iter()
            .map(|&l| item([Some(l), None, None, None, None], None))
            .collect();
        let js = vec![
            judged(0.9, 0),
            judged(0.7, 0),
            judged(0.1, 0),
            judged(0.2, 0),
        ];
        let s = need_score(&items, &js, 0).unwrap();
        assert_eq!(s.items, 4);
        assert!((s.micro_f1 - 0.75).abs() < 1e-9);
        // tp 1, fp 1, fn 0: F1 = 2/3.
        assert!((s.yes_f1 - 2.0 / 3.0).abs() < 1e-9);
        assert!((s.predicted_yes - 0.5).abs() < 1e-9);
        assert!((s.labelled_yes - 0.25).abs() < 1e-9);
        // Always "no" is right 3 of 4 times and finds no yes.
        assert!((s.constant_micro_f1 - 0.75).abs() < 1e-9);
        assert_eq!(s.constant_yes_f1, 0.0);
        assert!(need_score(&items, &js, 1).is_none(), "no labels for social");
    }

    #[test]
    fn emotion_scores_count_a_confusion_table() {
        let items = vec![
            item([None; 5], Some(Emotion::Neutral)),
            item([None; 5], Some(Emotion::Neutral)),
            item([None; 5], Some(Emotion::Sad)),
        ];
        let js = vec![judged(0.0, 0), judged(0.0, 1), judged(0.0, 2)];
        let s = emotion_score(&items, &js).unwrap();
        assert!((s.micro_f1 - 2.0 / 3.0).abs() < 1e-9);
        assert!((s.constant_micro_f1 - 2.0 / 3.0).abs() < 1e-9);
        assert_eq!(s.confusion["neutral"]["happy"], 1);
        assert_eq!(s.confusion["sad"]["sad"], 1);
    }
}

//! `humanoid eval`: a real short run exported as an annotation sheet, three annotators'
//! copies filled in programmatically, scored through the binary and checked against values
//! computed here.

use std::collections::BTreeMap;
use std::path::Path;

use crate::util::{humanoid, ok};

const EMOTIONS: [&str; 7] = [
    "neutral",
    "happy",
    "sad",
    "angry",
    "afraid",
    "surprised",
    "disgusted",
];
const DIMS: [&str; 7] = [
    "fullness", "social", "fun", "health", "energy", "emotion", "closer",
];
/// First `model_*` column; `label_*` columns follow the 7 model columns.
const MODEL: usize = 8;
const LABEL: usize = 15;

fn read_sheet(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap();
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

fn write_sheet(path: &Path, header: &[String], rows: &[Vec<String>]) {
    let mut w = csv::Writer::from_path(path).unwrap();
    w.write_record(header).unwrap();
    for r in rows {
        w.write_record(r).unwrap();
    }
    w.flush().unwrap();
}

fn applies(row: &[String], k: usize) -> bool {
    (k == 6) == (row[1] == "conversation")
}

fn flip(v: &str) -> String {
    if v == "yes" { "no" } else { "yes" }.to_string()
}

/// Fleiss' κ from per-item label lists (all raters present), written out independently.
fn kappa(items: &[Vec<String>]) -> Option<f64> {
    let n = items.first()?.len() as f64;
    if n < 2.0 {
        return None;
    }
    let mut totals: BTreeMap<&str, f64> = BTreeMap::new();
    let mut p_bar = 0.0;
    for labels in items {
        let mut counts: BTreeMap<&str, f64> = BTreeMap::new();
        for l in labels {
            *counts.entry(l).or_default() += 1.0;
            *totals.entry(l).or_default() += 1.0;
        }
        p_bar += (counts.values().map(|c| c * c).sum::<f64>() - n) / (n * (n - 1.0));
    }
    let big_n = items.len() as f64;
    p_bar /= big_n;
    let p_e: f64 = totals.values().map(|t| (t / (big_n * n)).powi(2)).sum();
    ((1.0 - p_e).abs() > 1e-12).then(|| (p_bar - p_e) / (1.0 - p_e))
}

/// What the binary should report for dimension `k`, computed from the sheets directly.
fn expected(model: &[Vec<String>], sheets: &[Vec<Vec<String>>], k: usize) -> serde_json::Value {
    let (mut items, mut scored, mut ties, mut missing) = (0, 0, 0, 0);
    let (mut tp, mut fp, mut fn_, mut pred, mut ann) = (0, 0, 0, 0, 0);
    let mut complete = Vec::new();
    for (i, row) in model.iter().enumerate() {
        if !applies(row, k) {
            continue;
        }
        items += 1;
        let labels: Vec<&String> = sheets
            .iter()
            .map(|s| &s[i][LABEL + k])
            .filter(|l| !l.is_empty())
            .collect();
        if labels.len() == sheets.len() {
            complete.push(labels.iter().map(|l| l.to_string()).collect::<Vec<_>>());
        }
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for l in &labels {
            *counts.entry(l.as_str()).or_default() += 1;
        }
        let top = counts.values().max().copied().unwrap_or(0);
        let winners: Vec<&str> = counts
            .iter()
            .filter(|(_, &c)| c == top)
            .map(|(l, _)| *l)
            .collect();
        if labels.is_empty() {
            missing += 1;
            continue;
        }
        if winners.len() > 1 {
            ties += 1;
            continue;
        }
        scored += 1;
        let (m, a) = (row[MODEL + k].as_str(), winners[0]);
        if k == 5 {
            if m == a {
                tp += 1;
            } else {
                fp += 1;
                fn_ += 1;
            }
        } else {
            pred += (m == "yes") as usize;
            ann += (a == "yes") as usize;
            tp += (m == "yes" && a == "yes") as usize;
            fp += (m == "yes" && a == "no") as usize;
            fn_ += (m == "no" && a == "yes") as usize;
        }
    }
    let f1 =
        (scored > 0 && 2 * tp + fp + fn_ > 0).then(|| 2.0 * tp as f64 / (2 * tp + fp + fn_) as f64);
    let share = |x: usize| (k != 5 && scored > 0).then(|| x as f64 / scored as f64);
    serde_json::json!({
        "dimension": DIMS[k], "items": items, "scored": scored, "ties": ties,
        "all_missing": missing, "tp": tp, "fp": fp, "fn_": fn_, "f1": f1,
        "kappa": kappa(&complete), "kappa_items": complete.len(),
        "predicted_positive": share(pred), "annotated_positive": share(ann),
    })
}

fn same(got: &serde_json::Value, want: &serde_json::Value) {
    let obj = want.as_object().unwrap();
    for (key, w) in obj {
        let g = &got[key];
        match (g.as_f64(), w.as_f64()) {
            (Some(a), Some(b)) => assert!((a - b).abs() < 1e-9, "{key}: {g} != {w} in {got}"),
            _ => assert_eq!(g, w, "{key} in {got}"),
        }
    }
}

#[test]
fn eval_export_and_score_a_real_run() {
    let tmp = tempfile::tempdir().unwrap();
    // The viewer tests' real 3-step Lin family run (export and score only read it).
    let run = crate::viewer::runs().join("lin");
    let run_s = run.to_str().unwrap();

    let sheet = tmp.path().join("sheet.csv");
    let stdout = ok(&humanoid(&[
        "eval",
        "export",
        run_s,
        "-o",
        sheet.to_str().unwrap(),
    ]));
    let instructions = tmp.path().join("sheet.instructions.txt");
    assert!(stdout.contains(instructions.to_str().unwrap()), "{stdout}");
    let text = std::fs::read_to_string(&instructions).unwrap();
    assert!(
        text.contains(&humanoid::agent::act::emotion_question("AGENT")),
        "{text}"
    );

    let (header, model) = read_sheet(&sheet);
    assert_eq!(header.len(), 22);
    assert_eq!(header[LABEL + 2], "label_fun");
    // Both agents start an activity at the first step, so there are activity rows.
    let first = model.iter().position(|r| r[1] == "activity").unwrap();
    assert!(model.iter().filter(|r| r[1] == "activity").count() >= 2);
    for r in &model {
        assert_eq!(r.len(), 22);
        assert!(r[LABEL..].iter().all(String::is_empty), "{r:?}");
        for k in 0..7 {
            let v = r[MODEL + k].as_str();
            if !applies(r, k) {
                assert_eq!(v, "");
            } else if k == 5 {
                assert!(EMOTIONS.contains(&v), "{v}");
            } else {
                assert!(v == "yes" || v == "no", "{v}");
            }
        }
    }

    // Annotator A copies the run's answers; B and C disagree on the first activity.
    let copy: Vec<Vec<String>> = model
        .iter()
        .map(|r| {
            let mut r = r.clone();
            for k in 0..7 {
                r[LABEL + k] = if applies(&r, k) {
                    r[MODEL + k].clone()
                } else {
                    String::new()
                };
            }
            r
        })
        .collect();
    let (a, mut b, mut c) = (copy.clone(), copy.clone(), copy);
    let m = &model[first];
    b[first][LABEL] = flip(&m[MODEL]);
    c[first][LABEL] = flip(&m[MODEL]);
    b[first][LABEL + 2] = String::new();
    c[first][LABEL + 2] = flip(&m[MODEL + 2]);
    let other = EMOTIONS.iter().find(|e| **e != m[MODEL + 5]).unwrap();
    b[first][LABEL + 5] = other.to_uppercase();
    for r in c.iter_mut().filter(|r| r[1] == "activity") {
        r[LABEL + 1] = String::new();
    }
    let paths: Vec<String> = [("a", &a), ("b", &b), ("c", &c)]
        .iter()
        .map(|(name, rows)| {
            let p = tmp.path().join(format!("{name}.csv"));
            write_sheet(&p, &header, rows);
            p.to_str().unwrap().to_string()
        })
        .collect();

    let mut args = vec!["eval", "score", run_s, "--json", "--labels"];
    args.extend(paths.iter().map(String::as_str));
    let report: serde_json::Value = serde_json::from_str(&ok(&humanoid(&args))).unwrap();
    assert_eq!(report["annotators"], 3);
    assert_eq!(report["items"], model.len());
    let lower = |rows: &[Vec<String>]| -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|c| c.to_lowercase()).collect())
            .collect()
    };
    let sheets = [lower(&a), lower(&b), lower(&c)];
    let dims = report["dimensions"].as_array().unwrap();
    assert_eq!(dims.len(), 7);
    for (k, dim) in dims.iter().enumerate() {
        same(dim, &expected(&model, &sheets, k));
    }
    // The edits as they show: fullness disagrees once, fun ties once, social has no κ
    // (C left it empty), emotion still matches the majority everywhere.
    assert_eq!(
        dims[0]["fp"].as_u64().unwrap() + dims[0]["fn_"].as_u64().unwrap(),
        1
    );
    assert_eq!(dims[2]["ties"], 1);
    assert_eq!(dims[1]["kappa"], serde_json::Value::Null);
    assert_eq!(dims[5]["f1"], 1.0);

    // The table form.
    let mut table_args = vec!["eval", "score", run_s, "--labels"];
    table_args.extend(paths.iter().map(String::as_str));
    let table = ok(&humanoid(&table_args));
    assert!(
        table.contains("fullness") && table.contains("3 annotators"),
        "{table}"
    );

    // Sheets that do not match the run.
    let short = tmp.path().join("short.csv");
    write_sheet(&short, &header, &a[..a.len() - 1]);
    let bad = tmp.path().join("bad.csv");
    let mut rows = a.clone();
    rows[first][LABEL + 2] = "maybe".into();
    write_sheet(&bad, &header, &rows);
    for (path, words) in [
        (&short, vec!["short.csv", "rows but the run has"]),
        (&bad, vec!["bad.csv", "column 18 (label_fun)", "maybe"]),
    ] {
        let out = humanoid(&[
            "eval",
            "score",
            run_s,
            "--labels",
            &paths[0],
            path.to_str().unwrap(),
        ]);
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        for w in words {
            assert!(err.contains(w), "{w:?} not in {err}");
        }
    }
}

/// `eval judge` on the real fast model: the figures of its JSON agree with its own
/// judgements and the labels (computed here independently), both methods come from one set
/// of answers per prompt, the solved examples change the answers, and a broken CSV is refused naming line and column before any model loads.
#[test]
fn eval_judge_scores_a_label_csv_on_a_real_model() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("labels.csv");
    let all = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/judge/check.csv"),
    )
    .unwrap();
    let some: Vec<&str> = all.lines().take(13).collect();
    std::fs::write(&csv, some.join("\n")).unwrap();
    let out = humanoid(&[
        "eval",
        "judge",
        csv.to_str().unwrap(),
        "--method",
        "plain,calibrated",
        "--prompt",
        "plain,examples",
        "--json",
    ]);
    let reports: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let reports = reports
        .as_array()
        .expect("one report per prompt and method");
    assert_eq!(reports.len(), 4);
    let labels: Vec<Vec<&str>> = some[1..].iter().map(|l| l.split(',').collect()).collect();
    for r in reports {
        assert_eq!(r["items"], 12);
        assert_eq!(r["agent"], "John Lin");
        assert!(r["model"].as_str().unwrap().contains("SmolLM2"), "{r}");
        let judgements = r["judgements"].as_array().unwrap();
        assert_eq!(judgements.len(), 12);
        for (k, need) in ["fullness", "social", "fun", "health", "energy"]
            .iter()
            .enumerate()
        {
            let d = &r["dimensions"][need];
            let said: Vec<bool> = judgements
                .iter()
                .map(|j| j["p_yes"][k].as_f64().unwrap() > 0.5)
                .collect();
            let truth: Vec<bool> = labels.iter().map(|l| l[k + 1] == "yes").collect();
            let right = said.iter().zip(&truth).filter(|(a, b)| a == b).count();
            let yes = truth.iter().filter(|&&t| t).count();
            let close = |key: &str, v: f64| {
                assert!(
                    (d[key].as_f64().unwrap() - v).abs() < 1e-9,
                    "{need} {key}: {d}"
                )
            };
            close("micro_f1", right as f64 / 12.0);
            close("labelled_yes", yes as f64 / 12.0);
            close(
                "predicted_yes",
                said.iter().filter(|&&s| s).count() as f64 / 12.0,
            );
            close("constant_micro_f1", yes.max(12 - yes) as f64 / 12.0);
        }
        let e = &r["dimensions"]["emotion"];
        let confusion_total: u64 = e["confusion"]
            .as_object()
            .unwrap()
            .values()
            .flat_map(|row| {
                row.as_object()
                    .unwrap()
                    .values()
                    .map(|n| n.as_u64().unwrap())
            })
            .sum();
        assert_eq!(confusion_total, 12);
    }
    let keys: Vec<(&str, &str)> = reports
        .iter()
        .map(|r| (r["prompt"].as_str().unwrap(), r["method"].as_str().unwrap()))
        .collect();
    assert_eq!(
        keys,
        [
            ("plain", "plain"),
            ("plain", "calibrated"),
            ("examples", "plain"),
            ("examples", "calibrated")
        ]
    );
    // The examples are really in the prompt: the model's answers move.
    assert_ne!(reports[0]["judgements"], reports[2]["judgements"]);
    // Without labels: the judgements are printed.
    let bare = tmp.path().join("bare.csv");
    std::fs::write(&bare, "activity\neat lunch at the cafe\ngo to sleep\n").unwrap();
    let text = ok(&humanoid(&["eval", "judge", bare.to_str().unwrap()]));
    assert!(text.contains("eat lunch at the cafe |"), "{text}");
    // A bad label names the file, line and column.
    std::fs::write(&bare, "activity,fun\nread,yes\nsing,perhaps\n").unwrap();
    let out = humanoid(&["eval", "judge", bare.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bare.csv") && err.contains("line 3, column 2"),
        "{err}"
    );
}

/// `eval place` on a real model: every row asked, the grid scored, staying put computed from
/// the labels, and a bad place named by file, line and column before the model loads.
#[test]
fn eval_place_scores_labelled_places_on_a_real_model() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("places.csv");
    let all = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/place/lin-family-dev.csv"),
    )
    .unwrap();
    let some: Vec<&str> = all.lines().take(21).collect();
    std::fs::write(&csv, some.join("\n")).unwrap();
    let out = humanoid(&[
        "eval",
        "place",
        csv.to_str().unwrap(),
        "--prompt",
        "names,numbered",
        "--prior",
        "0,5",
        "--sharpness",
        "0,1",
        "--named",
        "1,4",
        "--json",
    ]);
    let reports: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    let reports = reports.as_array().expect("one report per prompt");
    assert_eq!(reports.len(), 2);
    // Staying put fits where `from` is one of the row's places.
    let stay = some[1..]
        .iter()
        .filter(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            cells[4].split(';').any(|p| p == cells[2])
        })
        .count() as f64
        / 20.0;
    for r in reports {
        assert_eq!(r["items"], 20);
        assert_eq!(r["failed_questions"], 0);
        assert!(
            (r["stay_baseline"].as_f64().unwrap() - stay).abs() < 1e-9,
            "{r}"
        );
        let scores = r["scores"].as_array().unwrap();
        assert_eq!(scores.len(), 8);
        for s in scores {
            for key in ["fits", "building", "stays"] {
                let v = s[key].as_f64().unwrap();
                assert!((0.0..=1.0).contains(&v), "{key} {v}");
            }
        }
        // Neither the model, the prior nor a named place weighs: the agent always stays.
        assert_eq!(scores[0]["weights"]["prior"], 0.0);
        assert_eq!(scores[0]["weights"]["sharpness"], 0.0);
        assert_eq!(scores[0]["weights"]["named"], 1.0);
        assert!((scores[0]["fits"].as_f64().unwrap() - stay).abs() < 1e-9);
        assert_eq!(scores[0]["stays"], 1.0);
    }
    let bad = tmp.path().join("bad.csv");
    std::fs::write(
        &bad,
        "agent,time,from,activity,places\nJohn Lin,07:00 am,Lin family's house/Kitchen,brush teeth,Lin family's house/Attic\n",
    )
    .unwrap();
    let out = humanoid(&["eval", "place", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.csv: line 2, column 5 (places)") && err.contains("Attic"),
        "{err}"
    );
}

/// `eval place --answers` on the real fast model: the first call asks and writes the answers,
/// the second reads them (the same report, no model asked), and answers to other questions
/// are refused with the reason.
#[test]
fn eval_place_keeps_the_answers_and_replays_them() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("places.csv");
    let all = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/place/lin-family-dev.csv"),
    )
    .unwrap();
    let some: Vec<&str> = all.lines().take(7).collect();
    std::fs::write(&csv, some.join("\n")).unwrap();
    let kept = tmp.path().join("answers.json");
    let args = |prompt: &'static str| {
        vec![
            "eval".to_string(),
            "place".into(),
            csv.to_str().unwrap().into(),
            "--model".into(),
            "smollm2-135m".into(),
            "--prompt".into(),
            prompt.into(),
            "--prior".into(),
            "0,5".into(),
            "--answers".into(),
            kept.to_str().unwrap().into(),
            "--json".into(),
        ]
    };
    let run = |a: &[String]| humanoid(&a.iter().map(String::as_str).collect::<Vec<_>>());
    let first = ok(&run(&args("numbered")));
    assert!(kept.is_file(), "the answers are written");
    let written = std::fs::read_to_string(&kept).unwrap();
    let second = ok(&run(&args("numbered")));
    assert_eq!(first, second, "the kept answers give the same report");
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        written,
        "read, not asked and written again"
    );
    let report: serde_json::Value = serde_json::from_str(&second).unwrap();
    assert_eq!(report["items"], 6);
    let out = run(&args("names"));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("answers.json") && err.contains("other questions"),
        "{err}"
    );
}

/// `eval place --checker` on the real embedding model: every (row, place) pair counted once,
/// the balanced accuracy the mean of the two shares, plain cases judged as a person would,
/// and better than chance on the development set.
#[test]
fn eval_place_checker_scores_the_quality_rule_against_the_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("plain.csv");
    std::fs::write(
        &csv,
        "agent,time,from,activity,places\n\
         John Lin,06:00 pm,Lin family's house/Kitchen,cook dinner in the kitchen,Lin family's house/Kitchen\n\
         John Lin,12:00 pm,Lin family's house/Kitchen,eat lunch at Hobbs Cafe,Hobbs Cafe\n",
    )
    .unwrap();
    let out = humanoid(&[
        "eval",
        "place",
        csv.to_str().unwrap(),
        "--checker",
        "--json",
    ]);
    let s: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    // 11 innermost places in the Lin world: 2 labelled pairs, 20 others.
    assert_eq!(s["fitting_accepted"]["total"], 2, "{s}");
    assert_eq!(s["others_flagged"]["total"], 20, "{s}");
    assert_eq!(
        s["fitting_accepted"]["good"], 2,
        "both plain places accepted: {s}"
    );
    let share = |k: &str| s[k]["share"].as_f64().unwrap();
    let mean = (share("fitting_accepted") + share("others_flagged")) / 2.0;
    assert!((s["balanced"].as_f64().unwrap() - mean).abs() < 1e-9, "{s}");
    assert!(share("others_flagged") > 0.5, "{s}");
    let dev = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/place/lin-family-dev.csv");
    let out = humanoid(&[
        "eval",
        "place",
        dev.to_str().unwrap(),
        "--checker",
        "--json",
    ]);
    let s: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert!(s["balanced"].as_f64().unwrap() > 0.6, "{s}");
}

/// `eval replan` on the real fast model: every row asked once, each threshold scored from
/// the same P(yes) (recomputed here from the answers and the labels), the feelings put as a
/// run puts them, and a bad cell named by file, line and column before the model loads.
#[test]
fn eval_replan_scores_plan_changes_on_a_real_model() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("replan.csv");
    let all = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/replan/check.csv"),
    )
    .unwrap();
    let some: Vec<&str> = all.lines().take(21).collect();
    std::fs::write(&csv, some.join("\n")).unwrap();
    let out = humanoid(&[
        "eval",
        "replan",
        csv.to_str().unwrap(),
        "--threshold",
        "0.5,0.7",
        "--json",
    ]);
    let r: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(r["items"], 20);
    assert_eq!(r["fallbacks"], 0);
    assert!(r["model"].as_str().unwrap().contains("SmolLM2"), "{r}");
    let answers = r["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 20);
    let labels: Vec<bool> = answers.iter().map(|a| a["label"] == true).collect();
    assert_eq!(
        labels.iter().filter(|&&l| l).count(),
        some[1..].iter().filter(|l| l.ends_with(",yes")).count()
    );
    assert!(answers[0]["feeling"]
        .as_str()
        .unwrap()
        .starts_with("feeling "));
    for (k, t) in [0.5, 0.7].into_iter().enumerate() {
        let s = &r["thresholds"][k]["score"];
        assert_eq!(r["thresholds"][k]["threshold"].as_f64().unwrap() as f32, t);
        // As a run decides: a row with an urgent need ("very"/"extremely") at most at 0.5.
        let said: Vec<bool> = answers
            .iter()
            .map(|a| {
                let feeling = a["feeling"].as_str().unwrap();
                let urgent = feeling.contains("very ") || feeling.contains("extremely ");
                let t = if urgent { t.min(0.5) } else { t };
                a["p_yes"].as_f64().unwrap() as f32 > t
            })
            .collect();
        let right = said.iter().zip(&labels).filter(|(a, b)| a == b).count();
        assert!(
            (s["micro_f1"].as_f64().unwrap() - right as f64 / 20.0).abs() < 1e-9,
            "{s}"
        );
        let yes = said.iter().filter(|&&x| x).count();
        assert!(
            (s["predicted_yes"].as_f64().unwrap() - yes as f64 / 20.0).abs() < 1e-9,
            "{s}"
        );
    }
    // A bad cell names the file, line and column, before any model loads.
    std::fs::write(
        &csv,
        "agent,time,plan,change\nJohn Lin,02:00 pm,02:00 pm: x,yes\nJohn Lin,14:00,02:00 pm: x,no\n",
    )
    .unwrap();
    let out = humanoid(&["eval", "replan", csv.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("replan.csv") && err.contains("line 3, column 2") && err.contains("14:00"),
        "{err}"
    );
}

/// `eval steps` on the real embedding model: the quality report's step rule against the
/// hand-labelled steps of two Lin days (tests/data/steps): the development set it was tuned
/// on (balanced accuracy 0.888 measured) and the check set labelled before it was run
/// (0.872), each asserted within 0.02; the simulation's fault (the rule with a floor) flags
/// 12 of 18 and 6 of 12 off steps and keeps 106 of 107 and 114 of 116 fitting ones, each
/// asserted within one step; a clear case each way, and errors named.
#[test]
fn eval_steps_scores_the_step_rule_against_the_labels() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/steps");
    let score = |file: &str| -> serde_json::Value {
        let path = data.join(file);
        let out = humanoid(&["eval", "steps", path.to_str().unwrap(), "--json"]);
        serde_json::from_str(&ok(&out)).unwrap()
    };
    for (file, balanced, rows, faulted, unfaulted) in [
        ("lin-family-dev.csv", 0.888, 125, 12, 106),
        ("lin-family-check.csv", 0.872, 128, 6, 114),
    ] {
        let s = score(file);
        let b = s["balanced"].as_f64().unwrap();
        assert!((b - balanced).abs() <= 0.02, "{file}: {s}");
        let near = |key: &str, want: i64| (s[key]["good"].as_i64().unwrap() - want).abs() <= 1;
        assert!(near("off_faulted", faulted), "{file}: {s}");
        assert!(near("fitting_unfaulted", unfaulted), "{file}: {s}");
        let total = s["off_flagged"]["total"].as_u64().unwrap()
            + s["fitting_kept"]["total"].as_u64().unwrap()
            + s["not_judged"].as_u64().unwrap();
        assert_eq!(total, rows, "{file}: {s}");
    }
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("plain.csv");
    std::fs::write(
        &csv,
        "agent,time,plan,activity,fits\n\
         Eddy Lin,06:15 pm,\"07:00 am: wake up and get dressed\n\
         02:00 pm: work on his composition in his bedroom\n\
         06:00 pm: have dinner with the family\n\
         11:00 pm: go to sleep\",write the next section of the composition,no\n\
         Eddy Lin,06:30 pm,,eat dinner with his parents,yes\n",
    )
    .unwrap();
    let out = humanoid(&["eval", "steps", csv.to_str().unwrap(), "--json"]);
    let s: serde_json::Value = serde_json::from_str(&ok(&out)).unwrap();
    assert_eq!(
        s["off_flagged"]["good"], 1,
        "composing at dinner is off: {s}"
    );
    assert_eq!(s["fitting_kept"]["good"], 1, "eating dinner is dinner: {s}");
    std::fs::write(
        &csv,
        "agent,time,plan,activity,fits\nEddy Lin,6 pm,,eat,yes\n",
    )
    .unwrap();
    let out = humanoid(&["eval", "steps", csv.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("plain.csv: line 2, column 2 (time)"), "{err}");
}

//! `humanoid experiment ablation` and `humanoid bench models` on real short runs: the
//! reported figures are recomputed here from the runs' exported annotation sheets, a
//! repeated command keeps the finished runs, and bad arguments fail before anything runs.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::util::{humanoid, ok};

fn failed(out: &Output) -> String {
    assert!(!out.status.success(), "expected a failure");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The sheet of a run as (header, rows).
fn sheet(run: &Path, out: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    ok(&humanoid(&[
        "eval",
        "export",
        run.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]));
    let mut r = csv::Reader::from_path(out).unwrap();
    let header = r.headers().unwrap().iter().map(str::to_string).collect();
    let rows = r
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect();
    (header, rows)
}

/// Hours per agent on activities the run judged to satisfy `need`, from its sheet: an
/// activity lasts until the agent's next one or the end (`steps` steps of 15 minutes).
fn need_hours(run: &Path, need: &str, steps: u64, agents: usize, tmp: &Path) -> f64 {
    let (header, rows) = sheet(run, &tmp.join("sheet.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let (kind, step, agent, answer) = (
        col("kind"),
        col("step"),
        col("agent"),
        col(&format!("model_{need}")),
    );
    let mut by_agent: BTreeMap<String, Vec<(u64, bool)>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r[kind] == "activity") {
        by_agent
            .entry(r[agent].clone())
            .or_default()
            .push((r[step].parse().unwrap(), r[answer] == "yes"));
    }
    let mut steps_on = 0;
    for acts in by_agent.values_mut() {
        acts.sort();
        for (k, (s, yes)) in acts.iter().enumerate() {
            let end = acts.get(k + 1).map_or(steps, |n| n.0);
            if *yes {
                steps_on += end - s;
            }
        }
    }
    steps_on as f64 * 0.25 / agents as f64
}

#[test]
fn ablation_runs_both_settings_measures_them_and_keeps_finished_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("abl");
    let args = [
        "experiment",
        "ablation",
        "worlds/lin-family.toml",
        "--need",
        "fun,energy",
        "--seeds",
        "1",
        "--steps",
        "1",
        "--out",
        out.to_str().unwrap(),
        "--json",
    ];
    let first = humanoid(&args);
    let report: Value = serde_json::from_str(&ok(&first)).unwrap();
    let settings = report["settings"].as_array().unwrap();
    let names: Vec<&str> = settings
        .iter()
        .map(|s| s["setting"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["normal", "fun=0", "energy=0"]);
    let ablated = out.join("fun=0").join("seed-0");
    let config: Value =
        serde_json::from_str(&std::fs::read_to_string(ablated.join("config.json")).unwrap())
            .unwrap();
    assert_eq!(config["conditions"], serde_json::json!(["fun=0"]));
    assert_eq!(config["steps"], 1);
    let f = &report["findings"];
    assert_eq!(f["kind"], "needs");
    // One shared normal run, one ablated run per need, each need's hours from its own run.
    for (k, need) in ["fun", "energy"].into_iter().enumerate() {
        let row = &f["needs"][k];
        assert_eq!(row["need"], need);
        for (setting, key) in [
            ("normal".to_string(), "normal"),
            (format!("{need}=0"), "treated"),
        ] {
            let run = out.join(&setting).join("seed-0");
            assert!(run.join("summary.json").exists(), "{setting} finished");
            let expected = need_hours(&run, need, 1, 2, tmp.path());
            let got = row["hours"][key]["mean"].as_f64().unwrap();
            assert!(
                (got - expected).abs() < 1e-9,
                "{need}, {setting}: {got} vs {expected}"
            );
            assert_eq!(row["hours"][key]["n"], 1);
        }
    }
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("ablation.json")).unwrap()).unwrap();
    assert_eq!(written, report);

    // Again: both runs are kept, nothing reruns, the same report comes out.
    let again = humanoid(&args);
    let report2: Value = serde_json::from_str(&ok(&again)).unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert_eq!(err.matches("already complete, kept").count(), 3, "{err}");
    assert_eq!(report2, report);

    // The runs' own files gone, their kept measures report them again; nothing reruns.
    for setting in ["normal", "fun=0", "energy=0"] {
        let run = out.join(setting).join("seed-0");
        for e in std::fs::read_dir(&run).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().unwrap() != "measures.json" {
                if p.is_dir() {
                    std::fs::remove_dir_all(&p).unwrap();
                } else {
                    std::fs::remove_file(&p).unwrap();
                }
            }
        }
    }
    let third = humanoid(&args);
    let report3: Value = serde_json::from_str(&ok(&third)).unwrap();
    let err = String::from_utf8_lossy(&third.stderr);
    assert_eq!(
        err.matches("only its measures are kept").count(),
        3,
        "{err}"
    );
    assert_eq!(report3, report);

    // Kept measures of another seed are refused, naming the file.
    let kept = out.join("fun=0").join("seed-0").join("measures.json");
    let text = std::fs::read_to_string(&kept).unwrap();
    std::fs::write(&kept, text.replacen("\"seed\": 0", "\"seed\": 7", 1)).unwrap();
    let err = failed(&humanoid(&args));
    assert!(
        err.contains("measures.json") && err.contains("another run"),
        "{err}"
    );
}

#[test]
fn ablation_arguments_are_checked_before_anything_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("abl");
    let o = out.to_str().unwrap();
    let base = [
        "experiment",
        "ablation",
        "worlds/lin-family.toml",
        "--out",
        o,
    ];
    let cases: [(&[&str], &str); 6] = [
        (&["--need", "hunger"], "unknown key \"hunger\""),
        (&["--need", "fun,hunger"], "unknown key \"hunger\""),
        (&["--emotion", "bored"], "bored"),
        (&["--closeness", "5,40"], "--closeness 40"),
        (&["--need", "fun", "--seeds", "0"], "--seeds 0"),
        (&[], "--need"),
    ];
    for (extra, says) in cases {
        let args: Vec<&str> = base.iter().chain(extra).copied().collect();
        let err = failed(&humanoid(&args));
        assert!(err.contains(says), "{extra:?}: {err}");
        assert!(!out.exists(), "{extra:?} wrote {}", out.display());
    }
    let err = failed(&humanoid(&[
        "experiment",
        "ablation",
        "worlds/nope.toml",
        "--need",
        "fun",
        "--out",
        o,
    ]));
    assert!(err.contains("nope.toml"), "{err}");
}

#[test]
fn bench_models_compares_both_default_architectures_and_scores_labels() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("bench");
    let labels = tmp.path().join("labels");
    let o = out.to_str().unwrap();
    let args = [
        "bench",
        "models",
        "--world",
        "worlds/lin-family.toml",
        "--models",
        "smollm2-135m",
        "gemma3-270m",
        "--steps",
        "1",
        "--out",
        o,
        "--json",
    ];
    let rows: Value = serde_json::from_str(&ok(&humanoid(&args))).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, arch) in rows.iter().zip(["llama", "gemma3"]) {
        assert_eq!(row["architecture"], arch, "{row}");
        let summary: Value = serde_json::from_str(
            &std::fs::read_to_string(
                Path::new(row["run_dir"].as_str().unwrap()).join("summary.json"),
            )
            .unwrap(),
        )
        .unwrap();
        // A base model (gemma-3-270m) keeps the run well-formed too.
        let run_dir = Path::new(row["run_dir"].as_str().unwrap());
        let world = humanoid::world::World::load(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/lin-family.toml"),
        )
        .unwrap();
        let report = humanoid::report::check_run(run_dir, &world).unwrap();
        assert!(report.problems.is_empty(), "{arch}: {:#?}", report.problems);
        let events = humanoid::sim::events::read_events(&run_dir.join("events.jsonl")).unwrap();
        let fallbacks = events.iter().filter(|e| e.kind() == "fallback").count() as u64;
        assert_eq!(
            summary["counters"]["fallbacks"].as_u64().unwrap(),
            fallbacks
        );
        let wall = summary["extra"]["wall_seconds"].as_f64().unwrap();
        assert_eq!(row["wall_seconds"].as_f64().unwrap(), wall);
        assert_eq!(row["agent_steps"], summary["counters"]["agent_steps"]);
        assert_eq!(row["agent_steps"], 2);
        let calls = summary["counters"]["model_calls"].as_f64().unwrap();
        assert!(calls > 0.0);
        assert_eq!(
            row["fallback_rate"].as_f64().unwrap(),
            summary["counters"]["fallbacks"].as_f64().unwrap() / calls
        );
        let occupancy = row["batch_occupancy"].as_f64().unwrap();
        assert!(occupancy >= 1.0, "{occupancy}");
        let peak = row["peak_rss_bytes"].as_u64().unwrap();
        assert!(peak > 50 << 20 && peak < 8 << 30, "{peak}");
        assert!(row["prompt_tok_s"].as_f64().unwrap() > 0.0);
        assert!(row["agreement_f1"].is_null());
    }
    assert_ne!(rows[0]["quant"], rows[1]["quant"], "Q4_1 vs Q4_K");
    let csv_text = std::fs::read_to_string(out.join("models.csv")).unwrap();
    assert_eq!(csv_text.lines().count(), 3, "{csv_text}");

    // Two annotators label the SmolLM2 run as the run itself answered: F1 1 on every
    // dimension with a positive; the gemma run has no labels.
    let (header, rows_s) = {
        let mut r = csv::Reader::from_path(out.join("sheets").join("smollm2-135m.csv")).unwrap();
        let h: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
        let rows: Vec<Vec<String>> = r
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect();
        (h, rows)
    };
    let dir = labels.join("smollm2-135m");
    std::fs::create_dir_all(&dir).unwrap();
    for who in ["a", "b"] {
        let mut w = csv::Writer::from_path(dir.join(format!("{who}.csv"))).unwrap();
        w.write_record(&header).unwrap();
        for r in &rows_s {
            let mut r = r.clone();
            for (k, h) in header.iter().enumerate() {
                if let Some(dim) = h.strip_prefix("label_") {
                    let m = header
                        .iter()
                        .position(|x| x == &format!("model_{dim}"))
                        .unwrap();
                    r[k] = r[m].clone();
                }
            }
            w.write_record(&r).unwrap();
        }
        w.flush().unwrap();
    }
    // Six labelled activities from the development set for `--judge`.
    let judge_csv = tmp.path().join("judge.csv");
    let dev = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/judge/dev.csv"),
    )
    .unwrap();
    std::fs::write(
        &judge_csv,
        dev.lines().take(7).collect::<Vec<_>>().join("\n") + "\n",
    )
    .unwrap();
    let mut with_labels: Vec<&str> = args.to_vec();
    with_labels.extend(["--labels", labels.to_str().unwrap()]);
    with_labels.extend(["--judge", judge_csv.to_str().unwrap()]);
    let again = humanoid(&with_labels);
    let rows2: Value = serde_json::from_str(&ok(&again)).unwrap();
    let err = String::from_utf8_lossy(&again.stderr);
    assert!(!err.contains("run: "), "finished runs are kept: {err}");
    assert_eq!(rows2[0]["agreement_f1"].as_f64(), Some(1.0), "{}", rows2[0]);
    assert!(rows2[0]["agreement"]["emotion"].as_f64() == Some(1.0));
    assert!(rows2[1]["agreement_f1"].is_null());
    // `--judge`: each model's `eval judge` scores on the label set, the same as the command's.
    let alone: Value = serde_json::from_str(&ok(&humanoid(&[
        "eval",
        "judge",
        judge_csv.to_str().unwrap(),
        "--model",
        "smollm2-135m",
        "--json",
    ])))
    .unwrap();
    for row in rows2.as_array().unwrap() {
        let dims = row["judge"].as_object().expect("judge scores");
        assert_eq!(dims.len(), 6, "{row}");
        let mean = dims.values().map(|v| v.as_f64().unwrap()).sum::<f64>() / 6.0;
        assert!((row["judge_f1"].as_f64().unwrap() - mean).abs() < 1e-9);
    }
    for (dim, v) in rows2[0]["judge"].as_object().unwrap() {
        assert_eq!(
            v.as_f64(),
            alone["dimensions"][dim]["micro_f1"].as_f64(),
            "{dim}"
        );
    }
    assert!(
        rows2[0]["peak_rss_bytes"].is_null(),
        "not measured when kept"
    );

    let err = failed(&humanoid(&[
        "bench",
        "models",
        "--world",
        "worlds/lin-family.toml",
        "--models",
        "no-such-model",
        "--out",
        o,
    ]));
    assert!(err.contains("no-such-model"), "{err}");
}

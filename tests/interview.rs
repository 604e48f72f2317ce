//! `humanoid run --inject`, `humanoid interview` and `humanoid eval diffusion` through the
//! binary on the real default models: one short Lin family run with a thought planted in
//! Eddy Lin, killed after its first step and resumed to its end, shared by every test here.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use humanoid::memory::MemoryKind;
use humanoid::sim::RunDir;

fn state_files(dir: &std::path::Path) -> std::io::Result<Vec<std::path::PathBuf>> {
    RunDir::new(dir).state_files()
}
use humanoid::sim::checkpoint;
use humanoid::sim::events::read_events;
use humanoid::sim::RunConfig;

use crate::util;

const STEPS: usize = 3;
const AGENTS: [&str; 2] = ["John Lin", "Eddy Lin"];
const TOLD: &str = "Eddy Lin";
const FACT: &str = "Sam Moore is running for mayor of the town";

fn bin() -> Command {
    util::ensure_model("smollm2-135m");
    util::ensure_model("minilm-l6-v2");
    let mut c = Command::new(env!("CARGO_BIN_EXE_humanoid"));
    c.env(
        humanoid::model_store::CHAT_MODEL_ENV,
        crate::util::FAST_CHAT_MODEL,
    );
    c.current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("HUMANOID_MODELS", util::models_dir())
        .env_remove("RUST_LOG")
        .stdin(Stdio::null());
    c
}

fn humanoid(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

fn ok(args: &[&str]) -> String {
    let out = humanoid(args);
    assert!(
        out.status.success(),
        "humanoid {}: exit {:?}\nstderr: {}",
        args.join(" "),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A failed command: exit 1 or 2, no panic, stderr says `error` and each of `words`, never
/// mentions the sentinel model (so it failed before loading one).
fn fails(args: &[&str], words: &[&str]) -> String {
    let out = humanoid(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let shown = format!("humanoid {}", args.join(" "));
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{shown}: exit {:?}\nstderr: {stderr}",
        out.status
    );
    assert!(!stderr.contains("panicked"), "{shown} panicked:\n{stderr}");
    assert!(stderr.contains("error"), "{shown}: no error:\n{stderr}");
    assert!(
        !stderr.contains("sentinel.gguf"),
        "{shown}: a model was loaded before the bad input was found:\n{stderr}"
    );
    for w in words {
        assert!(stderr.contains(w), "{shown}: stderr lacks {w:?}:\n{stderr}");
    }
    assert!(out.stdout.is_empty(), "{shown}: printed {:?}", out.stdout);
    stderr
}

/// The shared run: the Lin family for `STEPS` steps with `FACT` planted in `TOLD`, killed
/// after its first state file and resumed (so a resume that planted the thought again would
/// show). Returns the run directory and the number of steps done before the kill.
fn injected_run() -> &'static (tempfile::TempDir, usize) {
    static RUN: OnceLock<(tempfile::TempDir, usize)> = OnceLock::new();
    RUN.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let inject = format!("{TOLD}: {FACT}");
        let mut child = bin()
            .args(["run", "worlds/lin-family.toml", "--steps"])
            .arg(STEPS.to_string())
            .args(["--inject", &inject, "--out"])
            .arg(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(900) {
            let done = dir.exists() && !state_files(&dir).unwrap_or_default().is_empty();
            if done || child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        child.kill().ok();
        child.wait().unwrap();
        let before = state_files(&dir).unwrap().len();
        let r = bin().arg("resume").arg(&dir).output().unwrap();
        assert!(
            r.status.success(),
            "resume: {}",
            String::from_utf8_lossy(&r.stderr)
        );
        assert_eq!(state_files(&dir).unwrap().len(), STEPS);
        (tmp, before)
    })
}

fn run_dir() -> PathBuf {
    injected_run().0.path().join("run")
}

fn run_s() -> String {
    run_dir().display().to_string()
}

/// Every file of a directory with its length (to check that nothing was written).
fn listing(dir: &Path) -> BTreeMap<String, u64> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect()
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn an_injected_thought_is_stored_once_and_recorded() {
    let (_, before) = injected_run();
    assert!(
        (1..STEPS).contains(before),
        "the run was to be killed mid-way, but {before} of {STEPS} steps were done"
    );
    let dir = run_dir();
    let config: RunConfig =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    assert_eq!(config.injections.len(), 1, "{:?}", config.injections);
    assert_eq!(config.injections[0].agent, TOLD);
    assert_eq!(config.injections[0].text, FACT);

    let ck = checkpoint::read(&dir.join("checkpoint.bin")).unwrap();
    assert_eq!(ck.state.step, STEPS as u64);
    for (i, name) in AGENTS.iter().enumerate() {
        let thoughts: Vec<_> = ck.memories[i]
            .nodes()
            .iter()
            .filter(|n| n.kind == MemoryKind::Thought)
            .collect();
        if *name == TOLD {
            assert_eq!(thoughts.len(), 1, "{name}: {thoughts:#?}");
            assert_eq!(thoughts[0].text, FACT);
            assert_eq!(thoughts[0].importance.get(), 10);
        } else {
            assert!(thoughts.is_empty(), "{name} was not told: {thoughts:#?}");
        }
    }

    let events = read_events(&dir.join("events.jsonl")).unwrap();
    let planted: Vec<_> = events
        .iter()
        .filter(|e| e.kind() == "memory" && e.body["kind"] == "thought")
        .collect();
    assert_eq!(planted.len(), 1, "{planted:#?}");
    assert_eq!(planted[0].agent.as_deref(), Some(TOLD));
    assert_eq!(planted[0].step, 0);
    assert_eq!(planted[0].body["text"], FACT);
    assert_eq!(planted[0].body["injected"], true);
    let starts = events.iter().filter(|e| e.kind() == "run_start").count();
    assert_eq!(starts, 1);

    // Resuming the finished run again changes nothing.
    let r = bin().arg("resume").arg(&dir).output().unwrap();
    assert!(r.status.success());
    let again = checkpoint::read(&dir.join("checkpoint.bin")).unwrap();
    assert_eq!(again.memories[1].len(), ck.memories[1].len());
}

#[test]
fn inject_for_an_unknown_agent_fails_before_a_model_loads() {
    let tmp = tempfile::tempdir().unwrap();
    let sentinel = tmp.path().join("sentinel.gguf");
    std::fs::write(&sentinel, b"not a model").unwrap();
    let out = tmp.path().join("out");
    let (s, o) = (sentinel.display().to_string(), out.display().to_string());
    let lin = "worlds/lin-family.toml";
    for (inject, words) in [
        (
            "Sam Moore: hello",
            vec!["Sam Moore", "John Lin", "Eddy Lin"],
        ),
        ("Eddy Lin hello", vec!["Eddy Lin hello", "AGENT: text"]),
        ("Eddy Lin:   ", vec!["empty"]),
    ] {
        fails(
            &["run", lin, "--inject", inject, "--model", &s, "--out", &o],
            &words,
        );
        assert!(!out.exists(), "--inject {inject:?} created --out");
    }
}

#[test]
fn interview_answers_a_batch_from_the_agents_memories() {
    let dir = run_dir();
    let before = listing(&dir);
    let tmp = tempfile::tempdir().unwrap();
    let qfile = tmp.path().join("questions.txt");
    let questions = [
        "Who are you?",
        "What have you been doing this morning?",
        "What do you know about Sam Moore?",
    ];
    std::fs::write(
        &qfile,
        format!(
            "# interview\n{}\n\n   \n# done\n{}\n{}\n",
            questions[0], questions[1], questions[2]
        ),
    )
    .unwrap();
    let out = ok(&[
        "interview",
        &run_s(),
        "--agent",
        TOLD,
        "--batch",
        qfile.to_str().unwrap(),
        "--json",
    ]);
    let v = json(&out);
    assert_eq!(v["agent"], TOLD);
    assert_eq!(v["step"], STEPS as u64 - 1);
    let answers = v["answers"].as_array().unwrap();
    assert_eq!(answers.len(), questions.len(), "{v:#}");

    let ck = checkpoint::read(&dir.join("checkpoint.bin")).unwrap();
    let stream = &ck.memories[1];
    for (a, q) in answers.iter().zip(questions) {
        assert_eq!(a["question"], q);
        let text = a["answer"].as_str().unwrap();
        assert!(!text.trim().is_empty(), "empty answer to {q:?}: {a:#}");
        assert!(a["fallback"].is_null(), "{a:#}");
        assert!(!text.contains('\n'), "one line: {text:?}");
        let mems = a["memories"].as_array().unwrap();
        assert!(!mems.is_empty() && mems.len() <= 10, "{q}: {mems:#?}");
        let mut last = f64::INFINITY;
        for m in mems {
            // Each memory is Eddy Lin's own, as the checkpoint holds it.
            let id = m["id"].as_u64().unwrap();
            let node = stream
                .get(id)
                .unwrap_or_else(|| panic!("memory {id} is not Eddy Lin's"));
            assert_eq!(m["text"], node.text.as_str());
            assert_eq!(m["kind"], node.kind.as_str());
            assert_eq!(m["importance"], node.importance.get());
            let part = |k: &str| m[k].as_f64().unwrap();
            for k in ["recency", "importance_score", "relevance"] {
                assert!((0.0..=1.0).contains(&part(k)), "{k}: {m:#}");
            }
            let sum = part("recency") + part("importance_score") + part("relevance");
            assert!((part("score") - sum).abs() < 1e-4, "{m:#}");
            assert!(part("score") <= last + 1e-6, "memories best first");
            last = part("score");
        }
        assert!(
            mems.iter()
                .any(|m| m["text"].as_str().unwrap().contains("Eddy")),
            "no memory about Eddy Lin for {q:?}: {mems:#?}"
        );
    }
    // Asked about Sam Moore, Eddy Lin recalls the planted thought.
    let sam = answers[2]["memories"].as_array().unwrap();
    assert!(
        sam.iter()
            .any(|m| m["text"] == FACT && m["kind"] == "thought"),
        "{sam:#?}"
    );

    // Plain text: one answer alone.
    let text = ok(&["interview", &run_s(), "--agent", "john lin", "Who are you?"]);
    assert!(
        !text.trim().is_empty() && text.trim().lines().count() == 1,
        "{text:?}"
    );
    assert_eq!(listing(&dir), before, "an interview wrote to the run");
}

#[test]
fn interview_at_an_earlier_step_sees_only_what_was_known_then() {
    let out = ok(&[
        "interview",
        &run_s(),
        "--agent",
        "John Lin",
        "--at",
        "0",
        "--json",
        "--memories",
        "50",
        "What did you do today?",
    ]);
    let v = json(&out);
    assert_eq!(v["step"], 0);
    assert_eq!(v["time"], "Tuesday Jan 03 2023 06:00 am");
    let mems = v["answers"][0]["memories"].as_array().unwrap();
    assert!(!mems.is_empty());
    for m in mems {
        assert_eq!(m["created"], "day 0 06:00", "{m:#}");
    }
    // The whole stream at the end holds later memories too.
    let ck = checkpoint::read(&run_dir().join("checkpoint.bin")).unwrap();
    let later = ck.memories[0]
        .nodes()
        .iter()
        .filter(|n| n.created.minutes() > 360)
        .count();
    assert!(later > 0, "the run made no memory after 06:00");
    let at0 = ck.memories[0]
        .nodes()
        .iter()
        .filter(|n| n.created.minutes() <= 360)
        .count();
    assert_eq!(mems.len(), at0.min(50));
}

#[test]
fn interview_errors_name_the_value_and_write_nothing() {
    let dir = run_dir();
    let before = listing(&dir);
    let tmp = tempfile::tempdir().unwrap();
    let sentinel = tmp.path().join("sentinel.gguf");
    std::fs::write(&sentinel, b"not a model").unwrap();
    let s = sentinel.display().to_string();
    let run = run_s();
    let ask = |extra: &[&str], words: &[&str]| {
        let mut args = vec!["interview", run.as_str()];
        args.extend_from_slice(extra);
        args.extend(["--model", &s]);
        fails(&args, words);
    };
    ask(
        &["--agent", "Sam Moore", "Who are you?"],
        &["Sam Moore", "John Lin", "Eddy Lin"],
    );
    ask(
        &["--agent", TOLD, "--at", "3", "Who are you?"],
        &["--at 3", "0 to 2"],
    );
    ask(&["--agent", TOLD, "--at", "-1", "Who are you?"], &["-1"]);
    ask(
        &["--agent", TOLD, "--at", "noon", "Who are you?"],
        &["noon"],
    );
    ask(&["--agent", TOLD], &["no question"]);
    ask(&["--agent", TOLD, "   "], &["empty"]);
    let empty = tmp.path().join("empty.txt");
    std::fs::write(&empty, "# nothing\n\n").unwrap();
    ask(
        &["--agent", TOLD, "--batch", empty.to_str().unwrap()],
        &["empty.txt", "no questions"],
    );
    ask(
        &["--agent", TOLD, "--batch", "no-such-file.txt"],
        &["no-such-file.txt"],
    );
    assert_eq!(listing(&dir), before, "a failed interview wrote to the run");

    // A folder that is not a run.
    let not_run = tmp.path().display().to_string();
    fails(
        &["interview", &not_run, "--agent", TOLD, "hi", "--model", &s],
        &[&not_run, "not a run directory"],
    );
    fails(
        &["eval", "diffusion", &not_run, "--fact", FACT, "--model", &s],
        &[&not_run, "not a run directory"],
    );
    fails(
        &["eval", "diffusion", &run, "--fact", " ", "--model", &s],
        &["--fact", "empty"],
    );
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        2,
        "only the sentinel and empty.txt"
    );
}

/// Ordered pairs (a, b) of distinct agents where a has a relationship to b, over all
/// ordered pairs, from `(name, others related)` lists.
fn expected_density(agents: &[(String, Vec<String>)]) -> f64 {
    let n = agents.len();
    let edges: usize = agents
        .iter()
        .map(|(me, others)| {
            others
                .iter()
                .filter(|o| *o != me && agents.iter().any(|(n, _)| n == *o))
                .count()
        })
        .sum();
    edges as f64 / (n * (n - 1)) as f64
}

#[test]
fn diffusion_asks_every_agent_and_measures_density() {
    let out = ok(&["eval", "diffusion", &run_s(), "--fact", FACT, "--json"]);
    let v = json(&out);
    assert_eq!(v["fact"], FACT);
    assert_eq!(v["step"], STEPS as u64 - 1);
    let agents = v["agents"].as_array().unwrap();
    let names: Vec<&str> = agents
        .iter()
        .map(|a| a["agent"].as_str().unwrap())
        .collect();
    assert_eq!(names, AGENTS);
    let mut knowing = 0;
    for a in agents {
        let p = a["p_yes"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{a:#}");
        assert!(a["fallback"].is_null(), "{a:#}");
        assert_eq!(a["knows"], p > 0.5, "{a:#}");
        knowing += usize::from(p > 0.5);
        let told = a["agent"] == TOLD;
        let injected = a["injected"].as_array().unwrap();
        assert_eq!(injected.len(), usize::from(told), "{a:#}");
        let mems = a["memories"].as_array().unwrap();
        assert!(!mems.is_empty());
        // The one who was told recalls the thought when asked about the fact.
        assert_eq!(mems.iter().any(|m| m["text"] == FACT), told, "{a:#}");
    }
    assert_eq!(v["knowing"], knowing);
    let share = v["share_knowing"].as_f64().unwrap();
    assert!((share - knowing as f64 / 2.0).abs() < 1e-9);

    // Density from the run's own relationship data.
    let config: RunConfig =
        serde_json::from_str(&std::fs::read_to_string(run_dir().join("config.json")).unwrap())
            .unwrap();
    let world = config.world().unwrap();
    let start: Vec<(String, Vec<String>)> = world
        .agents
        .iter()
        .map(|a| {
            let rel = a.relationships.iter().map(|(n, _)| n.clone()).collect();
            (a.name.clone(), rel)
        })
        .collect();
    let ck = checkpoint::read(&run_dir().join("checkpoint.bin")).unwrap();
    let end: Vec<(String, Vec<String>)> = ck
        .state
        .agents
        .iter()
        .map(|a| {
            let rel = a.relationships.iter().map(|(n, _)| n.clone()).collect();
            (a.name.clone(), rel)
        })
        .collect();
    let d = &v["density"];
    assert_eq!(d["min_closeness"], 0);
    let got = |when: &str| d[when]["density"].as_f64().unwrap();
    assert!(
        (got("start") - expected_density(&start)).abs() < 1e-9,
        "{d:#}"
    );
    assert!((got("end") - expected_density(&end)).abs() < 1e-9, "{d:#}");
    assert_eq!(d["end"]["pairs"], 2);

    // A threshold above every closeness leaves no edge.
    let out = ok(&[
        "eval",
        "diffusion",
        &run_s(),
        "--fact",
        FACT,
        "--min-closeness",
        "31",
    ]);
    for name in AGENTS {
        assert!(out.contains(name), "{out}");
    }
    assert!(out.contains("start 0.000 (0 of 2 ordered pairs)"), "{out}");
    assert!(out.contains("knows the fact:"), "{out}");
}

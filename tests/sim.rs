//! The simulation end to end through the binary, on the real default models: a one-day run
//! of the Lin family, fallbacks, the well-formedness checker.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

use humanoid::report::check_run;
use humanoid::sim::events::read_events;
use humanoid::sim::StateFile;
use humanoid::world::World;

use crate::util::ensure_models;

pub fn bin() -> Command {
    ensure_models();
    let mut c = Command::new(env!("CARGO_BIN_EXE_humanoid"));
    c.env(
        humanoid::model_store::CHAT_MODEL_ENV,
        crate::util::FAST_CHAT_MODEL,
    );
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

pub fn lin_family() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/lin-family.toml")
}

fn run_world(world: &Path, out: &Path, extra: &[&str]) -> Output {
    let out = bin()
        .arg("run")
        .arg(world)
        .arg("--out")
        .arg(out)
        .args(extra)
        .output()
        .expect("humanoid runs");
    assert!(
        out.status.success(),
        "run failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The one-day run of the Lin family, shared by several tests (run once).
fn one_day() -> &'static (tempfile::TempDir, String) {
    static RUN: OnceLock<(tempfile::TempDir, String)> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let out = run_world(&lin_family(), &dir.path().join("run"), &["--days", "1"]);
        (dir, String::from_utf8_lossy(&out.stdout).into_owned())
    })
}

/// Starts the shared one-day run in the background, once, when the whole suite runs (no test
/// filter given). It is the suite's longest fixture and its users come late in name order:
/// started on demand, it kept both test threads waiting on one process for minutes. Any
/// argument not starting with `-` is taken for a filter (so `--skip X` skips this too, which
/// only costs the early start).
pub fn start_one_day_early() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    let filtered = std::env::args().skip(1).any(|a| !a.starts_with('-'));
    if !filtered {
        STARTED.call_once(|| {
            std::thread::spawn(|| {
                one_day();
            });
        });
    }
}

pub fn one_day_dir() -> PathBuf {
    one_day().0.path().join("run")
}

pub fn state_files(dir: &Path) -> Vec<PathBuf> {
    humanoid::sim::RunDir::new(dir).state_files().unwrap()
}

fn summary(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

#[test]
fn one_day_run_is_complete_and_well_formed() {
    let dir = one_day_dir();
    let files = state_files(&dir);
    assert_eq!(files.len(), 72, "72 state files per day");
    let world = World::load(&lin_family()).unwrap();
    for f in &files {
        let s: StateFile = serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
        assert_eq!(s.agents.len(), 2);
        for a in &s.agents {
            for need in humanoid::world::Need::ALL {
                assert!(a.basic_needs.get(need) <= 10, "{f:?}: need out of range");
            }
            for r in a.social_relationships.values() {
                assert!(r.closeness <= 30, "{f:?}: closeness out of range");
            }
        }
    }
    let report = check_run(&dir, &world).unwrap();
    assert_eq!(report.agent_states, 144);
    assert!(report.problems.is_empty(), "{:#?}", report.problems);
    let stdout = &one_day().1;
    assert!(stdout.contains("well-formed: 100.0%"), "{stdout}");
}

/// `check --quality --json` of a run directory, parsed.
fn quality_json(dir: &Path) -> serde_json::Value {
    let out = bin()
        .args(["check", "--quality", "--json"])
        .arg(dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    // stdout is the one JSON object; the well-formedness line goes to stderr.
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("well-formed: 100.0%"),
        "{out:?}"
    );
    serde_json::from_str(&stdout).unwrap()
}

/// The quality report counts the steps of hours that go on with a day-plan line begun at
/// least an hour before (a Lin day plan keeps work and evening lines for hours), each bad
/// case shown with its plan line.
#[test]
fn hours_that_go_on_are_counted_on_a_real_day() {
    let dir = one_day_dir();
    let q = quality_json(&dir);
    let going_on = &q["going_on_not_restarted"];
    let total = going_on["total"].as_u64().unwrap();
    let good = going_on["good"].as_u64().unwrap();
    assert!(total >= 8 && good <= total, "{going_on}");
    for e in going_on["examples"].as_array().unwrap() {
        assert!(e.as_str().unwrap().contains("(plan: "), "{e}");
    }
    // An hour's plan asked for again is asked `AGAIN` times at once for each part of the hour
    // that had a fault (an hour in which a day-plan line starts is asked in parts), for an
    // hour the agent is awake in for some of it by the day plan it had then.
    use humanoid::agent::plan::asleep_in_plan;
    use humanoid::agent::plan::starts::AGAIN;
    let states: Vec<StateFile> = state_files(&dir)
        .iter()
        .map(|f| serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap())
        .collect();
    let events = read_events(&dir.join("events.jsonl")).unwrap();
    let mut asked_again = std::collections::BTreeMap::new();
    for e in events.iter().filter(|e| {
        e.kind() == "model_call"
            && e.body.get("purpose").and_then(|p| p.as_str()) == Some("15m_plan_again")
    }) {
        let agent = e.agent.clone().unwrap();
        // One day: the time names the step (the state file writes its date in words).
        let st = states.iter().find(|s| s.time == e.time).unwrap();
        let a = st.agents.iter().find(|a| a.name == agent).unwrap();
        let plan = humanoid::agent::state::parse_plan_text(&a.most_recent_day_plan);
        let minutes = humanoid::world::clock::parse_time(&e.time).unwrap();
        let awake = (0..4).any(|q| !asleep_in_plan(&plan, minutes + 15 * q));
        assert!(awake, "{agent} at {}", e.time);
        *asked_again.entry((agent, e.time.clone())).or_insert(0) += 1;
    }
    assert!(
        asked_again
            .values()
            .all(|&n| n % AGAIN == 0 && n <= 4 * AGAIN),
        "{asked_again:?}"
    );
}

/// Sleep at night is the day plan's: every step the plan sleeps through (Eddy Lin's hour
/// before his plan's 7 am, and after a line going to bed at night) is asleep, as the quality
/// report counts it; a fully asleep hour asks the model nothing.
#[test]
fn the_day_plans_sleep_is_slept() {
    let dir = one_day_dir();
    let q = quality_json(&dir);
    let asleep = &q["asleep_when_planned"];
    assert!(asleep["total"].as_u64().unwrap() >= 4, "{asleep}");
    assert_eq!(asleep["share"], 1.0, "{asleep}");
    let events = read_events(&dir.join("events.jsonl")).unwrap();
    let eddy_at_6 = events.iter().filter(|e| {
        e.kind() == "model_call"
            && e.agent.as_deref() == Some("Eddy Lin")
            && e.body.get("purpose").and_then(|p| p.as_str()) == Some("15m_plan")
            && e.time == "06:00 am"
    });
    assert_eq!(eddy_at_6.count(), 0, "Eddy's sleeping hour is not asked");
    let eddy_later = events.iter().filter(|e| {
        e.kind() == "model_call"
            && e.agent.as_deref() == Some("Eddy Lin")
            && e.body.get("purpose").and_then(|p| p.as_str()) == Some("15m_plan")
    });
    assert!(eddy_later.count() > 0, "his waking hours are");
}

#[test]
fn events_account_for_every_model_call_and_fallback() {
    let dir = one_day_dir();
    let events = read_events(&dir.join("events.jsonl")).unwrap();
    let s = summary(&dir);
    let engine = &s["extra"]["engine"];
    let engine_calls =
        engine["generate_calls"].as_u64().unwrap() + engine["choose_calls"].as_u64().unwrap();
    let logged = events.iter().filter(|e| e.kind() == "model_call").count() as u64;
    assert_eq!(logged, engine_calls, "every engine call is in events.jsonl");
    let counters = &s["counters"];
    assert_eq!(counters["model_calls"].as_u64().unwrap(), logged);
    let fallbacks = events.iter().filter(|e| e.kind() == "fallback").count() as u64;
    assert_eq!(counters["fallbacks"].as_u64().unwrap(), fallbacks);
    // No prompt over the budget: the longest prompt is logged and every call succeeded.
    let budget = 4096;
    for e in events.iter().filter(|e| e.kind() == "model_call") {
        let tokens = e.body["prompt_tokens"].as_u64().unwrap();
        assert!(tokens > 0 && tokens <= budget, "{e:?}");
        assert!(e.body["error"].is_null(), "{e:?}");
    }
    // Each agent step is in the log.
    let activities = events.iter().filter(|e| e.kind() == "activity").count();
    assert_eq!(activities, 144);
    // Fallbacks stay rare (target: under 1% of calls). The plan rules of session 31 that put the
    // day plan's line in place of an hourly line about none of it, or the hour's activity in place
    // of a line that starts the day again (or goes to bed in the day), log fallbacks too: on this
    // day (SmolLM2) 4 of 915 calls, beside 7 others. So does the rule that keeps a plan change
    // asleep at night and awake in the day (counted with the plan rules since session 42: a
    // well-formed line mended; session 42's day 8 of 972 by the rules, 9 others). Both are held
    // under 1%, apart.
    let rule = |e: &&&humanoid::sim::events::LogEvent| {
        e.body["reason"]
            .as_str()
            .is_some_and(humanoid::agent::plan::is_plan_rule)
    };
    let all: Vec<_> = events.iter().filter(|e| e.kind() == "fallback").collect();
    let rules = all.iter().filter(rule).count() as u64;
    let rate = (fallbacks - rules) as f64 / logged as f64;
    assert!(
        rate < 0.01,
        "fallback rate {rate:.4} ({} of {logged}, besides {rules} by the plan rules)",
        fallbacks - rules
    );
    let rate = rules as f64 / logged as f64;
    assert!(
        rate < 0.01,
        "plan rules' fallback rate {rate:.4} ({rules} of {logged})"
    );
}

pub fn same_files(a: &Path, b: &Path, n: usize) {
    let fa = state_files(a);
    let fb = state_files(b);
    assert!(
        fa.len() >= n && fb.len() >= n,
        "{} / {} state files",
        fa.len(),
        fb.len()
    );
    for (x, y) in fa.iter().zip(&fb).take(n) {
        assert_eq!(x.file_name(), y.file_name());
        let (tx, ty) = (
            std::fs::read_to_string(x).unwrap(),
            std::fs::read_to_string(y).unwrap(),
        );
        assert!(tx == ty, "{x:?} differs from {y:?}:\n{tx}\n---\n{ty}");
    }
}

#[test]
fn check_command_flags_a_malformed_state_file() {
    let dir = one_day_dir();
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("run");
    std::fs::create_dir_all(copy.join("states")).unwrap();
    std::fs::copy(
        crate::util::state_path(&dir, "state_2023-01-03_06h00.json"),
        crate::util::state_path(&copy, "state_2023-01-03_06h00.json"),
    )
    .unwrap();
    // A run of one step: the copy is complete.
    let mut config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    config["steps"] = serde_json::json!(1);
    std::fs::write(copy.join("config.json"), config.to_string()).unwrap();
    let ok = bin().arg("check").arg(&copy).output().unwrap();
    assert!(
        ok.status.success(),
        "{}",
        String::from_utf8_lossy(&ok.stdout)
    );
    let path = crate::util::state_path(&copy, "state_2023-01-03_06h00.json");
    let mut s: StateFile = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    s.agents[0].activity_emoji = "I'm ready to share a joke,".into();
    s.agents[0].most_recent_15m_plan = "20:30 pm: dinner".into();
    s.agents[0].location = vec!["Nowhere".into()];
    std::fs::write(&path, serde_json::to_string(&s).unwrap()).unwrap();
    let bad = bin().arg("check").arg(&copy).output().unwrap();
    assert!(!bad.status.success());
    let text = String::from_utf8_lossy(&bad.stdout);
    for field in ["activity_emoji", "most_recent_15m_plan", "location"] {
        assert!(text.contains(field), "{field} not flagged:\n{text}");
    }
}

#[test]
fn run_refuses_a_non_empty_out_dir_and_a_bad_world() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("x"), "x").unwrap();
    let r = bin()
        .arg("run")
        .arg(lin_family())
        .arg("--out")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("not empty"));
    let bad = tmp.path().join("bad.toml");
    std::fs::write(&bad, "name = 3\n").unwrap();
    let r = bin().arg("run").arg(&bad).output().unwrap();
    assert!(!r.status.success());
    assert!(String::from_utf8_lossy(&r.stderr).contains("bad.toml"));
}

/// `humanoid check` compares the state files with the run's planned steps: a folder with only
/// `config.json`, a run with a state file removed and one with a stray state file all fail,
/// naming the files.
#[test]
fn check_fails_on_missing_and_extra_steps() {
    let tmp = tempfile::tempdir().unwrap();
    let check = |dir: &Path| {
        bin()
            .arg("check")
            .arg(dir)
            .output()
            .expect("humanoid check runs")
    };
    let only_config = tmp.path().join("only-config");
    std::fs::create_dir_all(&only_config).unwrap();
    std::fs::copy(
        one_day_dir().join("config.json"),
        only_config.join("config.json"),
    )
    .unwrap();
    let out = check(&only_config);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("missing 72 state files"), "{text}");
    assert!(text.contains("well-formed: 0.0% of 144"), "{text}");

    let gap = tmp.path().join("gap");
    crate::util::copy_run(&one_day_dir(), &gap);
    assert!(check(&gap).status.success(), "a complete copy passes");
    std::fs::remove_file(crate::util::state_path(&gap, "state_2023-01-03_12h00.json")).unwrap();
    std::fs::write(
        crate::util::state_path(&gap, "state_2023-01-03_05h00.json"),
        "{}",
    )
    .unwrap();
    let out = check(&gap);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{text}");
    assert!(text.contains("state_2023-01-03_12h00.json"), "{text}");
    assert!(
        text.contains("1 state files of no planned step: state_2023-01-03_05h00.json"),
        "{text}"
    );
}

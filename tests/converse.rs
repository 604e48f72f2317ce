//! `humanoid eval converse` on a short Lin family run in one room (the fast model): the run's
//! conversations of one step talked again, scored like the quality report, with clear errors.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use humanoid::agent::plan::is_sleep;
use humanoid::agent::utterance::{about_situation, out_of_voice, repeats_earlier};
use humanoid::report::quality::talk_situation;
use humanoid::sim::events::read_events;
use humanoid::world::World;

use crate::sim::{bin, lin_family, one_day_dir};

/// Steps of [`kitchen_run`].
const KITCHEN_STEPS: u64 = 16;

/// The Lin family with one place, the kitchen, from 6 am for [`KITCHEN_STEPS`] steps (the fast
/// model): John and Eddy share it at every step (Eddy asleep until his plan's 7 am), so the
/// run has conversations and steps where they did not talk. The shared one-day run need have
/// neither once its places follow its plans (made once, shared by the tests here).
fn kitchen_run() -> PathBuf {
    static RUN: OnceLock<tempfile::TempDir> = OnceLock::new();
    let dir = RUN.get_or_init(|| {
        let text = std::fs::read_to_string(lin_family()).unwrap();
        let start = text.find("locations = [").unwrap();
        let end = start + text[start..].find("]\n").unwrap() + 2;
        let kitchen = "Lin family's house/Kitchen";
        let mut world = format!(
            "{}locations = [\"{kitchen}\"]\n{}",
            &text[..start],
            &text[end..]
        );
        for room in ["John Lin's bedroom", "Eddy Lin's bedroom"] {
            world = world.replace(
                &format!("location = \"Lin family's house/{room}\""),
                &format!("location = \"{kitchen}\""),
            );
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lin-kitchen.toml");
        std::fs::write(&path, world).unwrap();
        let out = bin()
            .arg("run")
            .arg(&path)
            .args(["--steps", &KITCHEN_STEPS.to_string(), "--out"])
            .arg(dir.path().join("run"))
            .output()
            .unwrap();
        crate::util::ok(&out);
        dir
    });
    dir.path().join("run")
}

/// A logged conversation: its participants and its (speaker, text) turns.
type Talk = (Vec<String>, Vec<(String, String)>);

/// (speaker, text) of each turn of a JSON list of turns.
fn turns_of(turns: &serde_json::Value) -> Vec<(String, String)> {
    turns
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let field = |k: &str| t[k].as_str().unwrap().to_string();
            (field("name"), field("text"))
        })
        .collect()
}

/// The conversations of the run's first step that had one.
fn first_talks(dir: &Path) -> (u64, Vec<Talk>) {
    let events = read_events(&dir.join("events.jsonl")).unwrap();
    let talks: Vec<_> = events
        .iter()
        .filter(|e| e.kind() == "conversation")
        .collect();
    assert!(
        !talks.is_empty(),
        "the one-day run has no conversation to talk again"
    );
    let step = talks[0].step;
    let at_step = talks
        .iter()
        .filter(|e| e.step == step)
        .map(|e| {
            let names: Vec<String> =
                serde_json::from_value(e.body["participants"].clone()).unwrap();
            (names, turns_of(&e.body["turns"]))
        })
        .collect();
    (step, at_step)
}

/// `humanoid eval converse DIR ARGS...`.
fn converse(dir: &Path, args: &[&str]) -> std::process::Output {
    bin()
        .args(["eval", "converse"])
        .arg(dir)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn eval_converse_talks_a_runs_conversations_again() {
    let dir = kitchen_run();
    let (step, talks) = first_talks(&dir);
    let out = converse(
        &dir,
        &["--step", &step.to_string(), "--repeat", "2", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let replayed = r["replayed"].as_array().unwrap();
    assert_eq!(replayed.len(), 2 * talks.len(), "each conversation twice");
    let world = World::load(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("worlds/lin-family.toml")
            .as_path(),
    )
    .unwrap();
    let all: Vec<&str> = world.agents.iter().map(|a| a.name.as_str()).collect();
    let (mut utterances, mut about, mut voice, mut fresh, mut happened) = (0, 0, 0, 0, 0);
    for (k, x) in replayed.iter().enumerate() {
        let (names, run_turns) = &talks[k % talks.len()];
        let m = &x["meeting"];
        assert_eq!(m["step"], step);
        let got: Vec<String> = serde_json::from_value(m["names"].clone()).unwrap();
        assert_eq!(&got, names);
        // The run's own words are carried as they were logged.
        assert_eq!(&turns_of(&m["turns"]), run_turns);
        let acts: Vec<String> = serde_json::from_value(x["activities"].clone()).unwrap();
        let people = [
            (names[0].as_str(), acts[0].as_str()),
            (names[1].as_str(), acts[1].as_str()),
        ];
        let situation = talk_situation(&world, &people);
        let turns = x["turns"].as_array().unwrap();
        if !turns.is_empty() {
            happened += 1;
            assert!(x["topic"].is_string() || x["topic"].is_null());
            // Ten lines end by the limit, and only ten.
            assert_eq!(x["ended"] == "turn_limit", turns.len() == 10, "{x}");
        } else {
            assert!(x["ended"].is_null(), "{x}");
        }
        // The run wrote how its talk ended: by the limit exactly when it had ten lines.
        assert!(m["ended"].is_string(), "{m}");
        assert_eq!(m["ended"] == "turn_limit", run_turns.len() == 10, "{m}");
        assert!(turns.len() <= 10, "the paper's turn cap");
        let mut said: Vec<String> = Vec::new();
        for (i, t) in turns.iter().enumerate() {
            let name = t["name"].as_str().unwrap();
            let text = t["text"].as_str().unwrap();
            assert!(
                names.iter().any(|n| n == name),
                "{name} is not in {names:?}"
            );
            if i > 0 {
                assert_ne!(
                    name,
                    turns[i - 1]["name"].as_str().unwrap(),
                    "turns alternate"
                );
            }
            assert!(
                !text.trim().is_empty() && text.chars().count() <= 160,
                "{text:?}"
            );
            // What a run would have cut off is cut off here too.
            assert!(!out_of_voice(text, name), "{name}: {text}");
            let earlier: Vec<&str> = said.iter().map(String::as_str).collect();
            assert!(!repeats_earlier(text, &earlier), "{name}: {text}");
            utterances += 1;
            about += usize::from(about_situation(text, &situation, &all));
            voice += 1;
            fresh += 1;
            said.push(text.to_string());
        }
    }
    let now = &r["replay"];
    assert_eq!(now["conversations"], happened);
    assert_eq!(now["utterances"], utterances);
    assert_eq!(now["about_something"]["total"], utterances);
    assert_eq!(now["about_something"]["good"], about);
    assert_eq!(now["own_voice"]["good"], voice);
    assert_eq!(now["fresh"]["good"], fresh);
    // Every talk that happened ended one known way.
    let endings = r["endings"].as_object().unwrap();
    let ended: u64 = endings.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(ended, happened as u64, "{endings:?}");
    let known = [
        "declined",
        "turn_limit",
        "repeats_earlier",
        "out_of_voice",
        "refusal",
        "no_words",
        "nothing_left",
    ];
    assert!(
        endings.keys().all(|k| known.contains(&k.as_str())),
        "{endings:?}"
    );
    let run_ended: u64 = r["run_endings"]
        .as_object()
        .unwrap()
        .values()
        .map(|n| n.as_u64().unwrap())
        .sum();
    assert_eq!(run_ended, replayed.len() as u64);
    // The run's figures count the run's turns, once per try.
    let run_utterances: usize = talks.iter().map(|(_, t)| t.len()).sum();
    assert_eq!(r["run"]["utterances"], 2 * run_utterances);
    assert!(
        r["model"].as_str().unwrap().contains("SmolLM2"),
        "{}",
        r["model"]
    );

    // The text form names the step and shows both figures.
    let out = converse(&dir, &["--step", &step.to_string()]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(&format!("step {step} ")), "{text}");
    assert!(text.contains("utterances about something"), "{text}");
    assert!(text.contains("talks now ended by: "), "{text}");
    assert!(text.contains("talks in the run ended by: "), "{text}");
    // Each talk says how it ended: the run's every one, the replay's those that happened.
    let replayed_talks = talks.len() - text.matches("(no conversation)").count();
    assert_eq!(
        text.matches("(ended: ").count(),
        talks.len() + replayed_talks,
        "{text}"
    );
}

#[test]
fn eval_converse_met_adds_the_steps_two_agents_shared_a_place_without_talking() {
    let dir = kitchen_run();
    let events = read_events(&dir.join("events.jsonl")).unwrap();
    let talked: Vec<u64> = events
        .iter()
        .filter(|e| e.kind() == "conversation")
        .map(|e| e.step)
        .collect();
    // The first step whose state file has both agents at one place and no conversation.
    let world = World::load(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("worlds/lin-family.toml")
            .as_path(),
    )
    .unwrap();
    let run = humanoid::sim::RunDir::new(&dir);
    let step = (0..KITCHEN_STEPS)
        .find(|&s| {
            let text = std::fs::read_to_string(run.state_path(&world.state_file_of(s))).unwrap();
            let f: humanoid::sim::StateFile = serde_json::from_str(&text).unwrap();
            let awake = f.agents.iter().all(|a| !is_sleep(&a.activity));
            f.agents[0].location == f.agents[1].location && awake && !talked.contains(&s)
        })
        .expect("John and Eddy, awake, share a place at some step without talking");
    let out = converse(&dir, &["--step", &step.to_string(), "--met", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let replayed = r["replayed"].as_array().unwrap();
    assert_eq!(replayed.len(), 1, "one pair met at step {step}");
    let m = &replayed[0]["meeting"];
    assert_eq!(m["step"], step);
    assert_eq!(
        m["turns"].as_array().unwrap().len(),
        0,
        "they did not talk in the run"
    );
    assert_eq!(r["run"]["conversations"], 0);
    // Without --met the step has nothing to talk again.
    let out = converse(&dir, &["--step", &step.to_string()]);
    assert!(!out.status.success());
}

#[test]
fn eval_converse_errors_name_the_run_and_step() {
    let dir = one_day_dir();
    let out = converse(&dir, &["--step", "100000"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no conversation at step 100000"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let out = converse(empty.path(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("not a run directory"), "{err}");
}

/// One who came to talk starts the talk (issue 17): the Lin family from 2 pm with Eddy
/// lonely (social 0), the fast model. Eddy's plan changes to the remedy of going to talk
/// with John; where they meet, within the remedy's half hour, Eddy speaks first whatever
/// either answered to starting one (Penny sat an hour in Sheldon's office without a word
/// before this rule).
#[test]
fn a_lonely_agent_who_goes_to_talk_starts_the_talk() {
    let world = std::fs::read_to_string(lin_family()).unwrap();
    let world = world.replacen("days = 2\n", "days = 2\nday_start = \"14:00\"\n", 1);
    let (john, eddy) = world.rsplit_once("emotion = \"neutral\"\n").unwrap();
    let world = format!("{john}emotion = \"neutral\"\nneeds = {{ social = 0 }}\n{eddy}");
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("lin-lonely.toml");
    std::fs::write(&path, world).unwrap();
    let dir = tmp.path().join("run");
    let out = bin()
        .arg("run")
        .arg(&path)
        .args(["--steps", "6", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    crate::util::ok(&out);
    let events = read_events(&dir.join("events.jsonl")).unwrap();
    let change = events
        .iter()
        .find(|e| {
            e.kind() == "plan_change"
                && e.agent.as_deref() == Some("Eddy Lin")
                && e.body["suggestion"].as_str().is_some_and(|s| {
                    s.contains("talk with John Lin") || s.contains("talks with John Lin")
                })
        })
        .unwrap_or_else(|| panic!("no remedy of a talk with John: {events:?}"));
    let talk = events
        .iter()
        .find(|e| e.kind() == "conversation" && e.step >= change.step && e.step < change.step + 2)
        .unwrap_or_else(|| panic!("no talk within the remedy's half hour: {events:?}"));
    let turns = turns_of(&talk.body["turns"]);
    assert_eq!(turns[0].0, "Eddy Lin", "{turns:?}");
}

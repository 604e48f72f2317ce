//! Worlds: the bundled worlds load, every kind of mistake in a world file gives its own clear
//! error (file, line, field path, what would be valid), and nothing panics.

use humanoid::world::{
    clock, closeness_phrase, Condition, Emotion, Need, Problem, World, WorldError,
};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bundled() -> Vec<PathBuf> {
    ["lin-family", "friends", "big-bang-theory"]
        .iter()
        .map(|n| root().join("worlds").join(format!("{n}.toml")))
        .collect()
}

fn load(rel: &str) -> Result<World, WorldError> {
    World::load(&root().join(rel))
}

#[test]
fn bundled_worlds_load() {
    for path in bundled() {
        let w = World::load(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(w.agents.len() >= 2, "{}", path.display());
        assert_eq!(w.days, 2);
        assert_eq!(w.steps_per_day(), 72);
        assert_eq!(w.source, std::fs::read_to_string(&path).unwrap());
        for a in &w.agents {
            assert!(w.locations.is_leaf(&a.location), "{}", a.name);
            assert!(a.example_day_plan.len() >= 8, "{}", a.name);
            assert!(a.description.len() >= 4, "{}", a.name);
            for (other, r) in &a.relationships {
                assert!(w.agent_index(other).is_some());
                assert!((1..=5).contains(&r.closeness), "{} -> {other}", a.name);
            }
        }
    }
}

#[test]
fn lin_family_is_as_described() {
    let w = load("worlds/lin-family.toml").unwrap();
    assert_eq!(w.name, "Lin family");
    assert_eq!(w.start_date.to_string(), "2023-01-03");
    assert_eq!((w.day_start, w.day_end, w.step_minutes), (360, 1440, 15));
    assert_eq!(w.conversation_cooldown_minutes, 120);
    assert_eq!(
        w.locations.roots(),
        [
            "Lin family's house",
            "The Willows Market and Pharmacy",
            "Oak Hill College",
            "Hobbs Cafe",
            "Johnson Park"
        ]
    );
    assert_eq!(w.locations.leaves().len(), 11);
    let john = &w.agents[w.agent_index("John Lin").unwrap()];
    assert_eq!(john.age, 45);
    assert_eq!(john.emotion, Emotion::Neutral);
    assert_eq!(john.needs, humanoid::world::Needs::default());
    assert_eq!(john.relationships[0].0, "Eddy Lin");
    assert_eq!(john.relationships[0].1.relationship, "son");
    assert_eq!(
        closeness_phrase(john.relationships[0].1.closeness),
        "rather close"
    );
    let eddy = &w.agents[1];
    assert_eq!(eddy.relationships[0].1.relationship, "father");
    assert_eq!(
        eddy.location,
        ["Lin family's house", "Eddy Lin's bedroom"].map(String::from)
    );
    let day2 = w.dates()[1];
    assert_eq!(clock::format_date(day2), "Wednesday Jan 04 2023");
    assert_eq!(w.events_on(day2).len(), 1);
    assert!(w.events_on(w.start_date).is_empty());
    for line in &john.example_day_plan {
        assert!(clock::parse_plan_line(line).is_some(), "{line}");
    }
}

#[test]
fn conditions_override_every_agent() {
    let mut w = load("worlds/big-bang-theory.toml").unwrap();
    let conditions: Vec<Condition> = ["fullness=0", "emotion=sad", "closeness=0"]
        .iter()
        .map(|s| s.parse().unwrap())
        .collect();
    w.apply_conditions(&conditions);
    for a in &w.agents {
        assert_eq!(a.needs.get(Need::Fullness), 0);
        assert_eq!(a.needs.get(Need::Energy), 10);
        assert_eq!(a.emotion, Emotion::Sad);
        assert!(a.relationships.iter().all(|(_, r)| r.closeness == 0));
    }
}

#[test]
fn optional_fields_and_toml_dates() {
    let text = r#"
name = "Two rooms"
start_date = 2024-05-01
day_start = "08:00"
day_end = "20:00"
step_minutes = 30
conversation_cooldown_minutes = 0
locations = ["Flat/Kitchen", "Flat/Study"]
[[agents]]
name = "Ada"
age = 30
traits = ["focused"]
description = ["Ada writes software."]
example_day_plan = ["08:00 am: make tea", "09:00 am: write code"]
location = "Flat/Study"
emotion = "happy"
needs.fun = 2
[[agents]]
name = "Bea"
age = 31
traits = ["calm"]
description = ["Bea paints."]
example_day_plan = ["08:00 am: paint"]
location = "Flat/Kitchen"
relationships."Ada".relationship = "flatmate"
"#;
    let w = World::parse(text, Path::new("two.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(w.days, 1);
    assert_eq!(w.steps_per_day(), 24);
    assert_eq!(w.conversation_cooldown_minutes, 0);
    assert_eq!(w.agents[0].needs.fun, 2);
    assert_eq!(w.agents[0].emotion, Emotion::Happy);
    assert_eq!(w.agents[1].relationships[0].1.closeness, 5);
    assert_eq!(w.description, "");
}

/// (file, field path, line, a hint of what is valid); each file has exactly one problem.
const BAD: &[(&str, &str, Option<usize>, &str)] = &[
    ("syntax", "agents[0].name", Some(16), "invalid TOML"),
    (
        "unknown_field",
        "agents[0].hobby",
        Some(18),
        "expected one of",
    ),
    (
        "missing_field",
        "agents[1].age",
        Some(31),
        "required here: name, age",
    ),
    (
        "wrong_type",
        "agents[0].age",
        Some(17),
        "invalid type: string",
    ),
    ("bad_date", "start_date", Some(3), "\"YYYY-MM-DD\""),
    ("bad_time", "day_start", Some(5), "\"HH:MM\""),
    (
        "bad_step",
        "step_minutes",
        Some(5),
        "1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60",
    ),
    ("days_out_of_range", "days", Some(4), "1–365"),
    ("age_out_of_range", "agents[1].age", Some(33), "1–150"),
    (
        "closeness_out_of_range",
        "agents[0].relationships.\"Bo Lee\".closeness",
        Some(29),
        "0–30",
    ),
    (
        "need_out_of_range",
        "agents[0].needs.energy",
        Some(25),
        "0–10",
    ),
    (
        "unknown_need",
        "agents[0].needs.hunger",
        Some(25),
        "`fullness`, `social`, `fun`, `health`, `energy`",
    ),
    (
        "unknown_emotion",
        "agents[1].emotion",
        Some(38),
        "neutral, happy, sad, angry, afraid, surprised, disgusted",
    ),
    (
        "duplicate_agent",
        "agents[2].name",
        Some(41),
        "first on line 32",
    ),
    (
        "empty_trait",
        "agents[1].traits[1]",
        Some(34),
        "must not be empty",
    ),
    (
        "unknown_location",
        "agents[0].location",
        Some(24),
        "valid leaves: \"House/Kitchen\", \"House/Bedroom\", \"Cafe\"",
    ),
    (
        "unknown_home",
        "agents[0].home",
        Some(25),
        "unknown place \"Huose\": name a place of the location tree (e.g. \"House\", \"Cafe\")",
    ),
    (
        "non_leaf_location",
        "agents[0].location",
        Some(24),
        "\"House/Kitchen\", \"House/Bedroom\"",
    ),
    (
        "duplicate_location",
        "locations[3]",
        Some(9),
        "first on line 6",
    ),
    (
        "empty_location_segment",
        "locations[2]",
        Some(8),
        "empty segment",
    ),
    (
        "unknown_relationship_target",
        "agents[0].relationships.\"Mei Lee\"",
        Some(27),
        "agents: \"Ann Lee\", \"Bo Lee\"",
    ),
    (
        "self_relationship",
        "agents[0].relationships.\"Ann Lee\"",
        Some(27),
        "itself",
    ),
    (
        "bad_plan_line",
        "agents[0].example_day_plan[1]",
        Some(22),
        "\"hh:mm am: activity\"",
    ),
    (
        "decreasing_plan_times",
        "agents[0].example_day_plan[1]",
        Some(22),
        "increasing time order",
    ),
    (
        "event_outside_days",
        "events[0].date",
        Some(12),
        "2023-01-03 to 2023-01-04",
    ),
    ("no_agents", "agents", None, "add an [[agents]] table"),
];

fn problems(name: &str) -> (PathBuf, Vec<Problem>) {
    let path = root().join(format!("tests/data/bad_worlds/{name}.toml"));
    match World::load(&path) {
        Ok(_) => panic!("{name}: loaded"),
        Err(e @ WorldError::Io { .. }) => panic!("{name}: {e}"),
        Err(e) => (path, e.problems().to_vec()),
    }
}

#[test]
fn each_bad_world_gives_its_own_clear_error() {
    for &(name, field, line, hint) in BAD {
        let (path, ps) = problems(name);
        assert_eq!(ps.len(), 1, "{name}: {ps:#?}");
        let p = &ps[0];
        assert_eq!(p.field, field, "{name}: {p:?}");
        assert_eq!(p.line, line, "{name}: {p:?}");
        assert_eq!(p.column.is_some(), line.is_some(), "{name}: {p:?}");
        assert!(
            p.message.contains(hint),
            "{name}: {:?} lacks {hint:?}",
            p.message
        );
        let shown = p.render(&path);
        let prefix = match line {
            Some(l) => format!("{}:{l}:", path.display()),
            None => format!("{}: ", path.display()),
        };
        assert!(shown.starts_with(&prefix), "{shown}");
        assert!(shown.contains(&format!(": {field}: ")), "{shown}");
    }
}

#[test]
fn every_bad_world_file_is_covered() {
    let dir = root().join("tests/data/bad_worlds");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in &names {
        assert!(
            n == "many_problems" || BAD.iter().any(|b| b.0 == n),
            "{n}.toml has no expectation"
        );
    }
}

#[test]
fn semantic_problems_are_all_reported() {
    let (path, ps) = problems("many_problems");
    let got: Vec<(&str, Option<usize>)> = ps.iter().map(|p| (p.field.as_str(), p.line)).collect();
    assert_eq!(
        got,
        [
            ("agents[0].age", Some(17)),
            ("agents[0].location", Some(24)),
            ("agents[0].relationships.\"Bo Lee\".closeness", Some(29)),
            ("agents[1].emotion", Some(38)),
        ]
    );
    let err = World::load(&path).unwrap_err().to_string();
    assert_eq!(err.lines().count(), 4, "{err}");
    let first = format!(
        "{}:17:7: agents[0].age: 200 is out of range",
        path.display()
    );
    assert!(err.starts_with(&first), "{err}");
}

#[test]
fn a_missing_file_is_an_io_error() {
    let err = World::load(Path::new("no/such/world.toml")).unwrap_err();
    assert!(matches!(err, WorldError::Io { .. }));
    assert!(err.to_string().contains("no/such/world.toml"), "{err}");
}

#[test]
fn broken_text_never_panics() {
    use rand::{Rng, SeedableRng};
    let text = std::fs::read_to_string(root().join("worlds/lin-family.toml")).unwrap();
    let path = Path::new("fuzz.toml");
    let cuts: Vec<usize> = (0..text.len())
        .filter(|&i| text.is_char_boundary(i))
        .collect();
    for &i in cuts.iter().step_by(7) {
        let _ = World::parse(&text[..i], path);
    }
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    let alphabet = b"[]{}\"'=.,/:#\n 0a-";
    for _ in 0..1500 {
        let mut bytes = text.clone().into_bytes();
        for _ in 0..rng.gen_range(1..4) {
            let at = rng.gen_range(0..bytes.len());
            bytes[at] = alphabet[rng.gen_range(0..alphabet.len())];
        }
        if let Ok(s) = String::from_utf8(bytes) {
            if let Err(e) = World::parse(&s, path) {
                assert!(!e.problems().is_empty());
                assert!(e.problems().iter().all(|p| !p.message.is_empty()));
            }
        }
    }
}

fn humanoid(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .env(
            humanoid::model_store::CHAT_MODEL_ENV,
            crate::util::FAST_CHAT_MODEL,
        )
        .args(args)
        .current_dir(root())
        .output()
        .expect("the binary runs")
}

#[test]
fn validate_command_accepts_the_bundled_worlds() {
    let out = humanoid(&[
        "validate",
        "worlds/lin-family.toml",
        "worlds/friends.toml",
        "worlds/big-bang-theory.toml",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "ok: worlds/lin-family.toml (2 agents, 11 locations, 2 days)",
            "ok: worlds/friends.toml (3 agents, 17 locations, 2 days)",
            "ok: worlds/big-bang-theory.toml (3 agents, 15 locations, 2 days)",
        ]
    );
}

#[test]
fn validate_command_reports_every_bad_file_and_fails() {
    let out = humanoid(&[
        "validate",
        "tests/data/bad_worlds/unknown_location.toml",
        "worlds/lin-family.toml",
        "tests/data/bad_worlds/syntax.toml",
    ]);
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stdout.contains("ok: worlds/lin-family.toml"), "{stdout}");
    assert!(
        stderr.contains("tests/data/bad_worlds/unknown_location.toml:24:12: agents[0].location: unknown location \"House/Bedrom\""),
        "{stderr}"
    );
    assert!(
        stderr.contains("tests/data/bad_worlds/syntax.toml:16:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 of 3 world files are invalid"),
        "{stderr}"
    );
}

#[test]
fn a_blank_plan_line_is_reported_once() {
    let text = std::fs::read_to_string(root().join("tests/data/bad_worlds/bad_plan_line.toml"))
        .unwrap()
        .replace("\"8:00am open the cafe\"", "\"  \"");
    let err = World::parse(&text, Path::new("blank.toml")).unwrap_err();
    let ps = err.problems();
    assert_eq!(ps.len(), 1, "{err}");
    assert_eq!(ps[0].field, "agents[0].example_day_plan[1]");
    assert!(ps[0].message.contains("must not be empty"), "{err}");
}

const DECAY_WORLD: &str = r#"
name = "Decay"
start_date = "2024-05-01"
locations = ["Flat"]
[needs.decay]
per = "hour"
fun = 1.5
[[agents]]
name = "Ada"
age = 30
traits = ["focused"]
description = ["Ada writes software."]
example_day_plan = ["08:00 am: make tea"]
location = "Flat"
"#;

#[test]
fn needs_decay_defaults_to_the_papers_rates_and_reads_per_hour_or_per_5_hours() {
    use humanoid::world::Decay;
    let w = World::parse(DECAY_WORLD, Path::new("d.toml")).unwrap_or_else(|e| panic!("{e}"));
    let mut want = Decay::default();
    want.per_hour[2] = 1.5;
    assert_eq!(w.decay, want, "fun given per hour, the others the paper's");
    // Written out and read back, the rates survive.
    let again = World::parse(&w.to_toml(), Path::new("again.toml")).unwrap();
    assert_eq!(again.decay, w.decay);
    let five = DECAY_WORLD.replace("per = \"hour\"", "per = \"5 hours\"");
    let w5 = World::parse(&five, Path::new("d.toml")).unwrap();
    assert!((w5.decay.per_hour[2] - 0.3).abs() < 1e-12);
    let bad = DECAY_WORLD.replace("fun = 1.5", "fun = -2");
    let e = World::parse(&bad, Path::new("d.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("d.toml:7:") && e.contains("needs.decay.fun"),
        "{e}"
    );
    let bad = DECAY_WORLD.replace("per = \"hour\"", "per = \"day\"");
    let e = World::parse(&bad, Path::new("d.toml"))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("d.toml:6:") && e.contains("needs.decay.per"),
        "{e}"
    );
}

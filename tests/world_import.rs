//! `humanoid world import`: a small world in the original Humanoid Agents' format (map YAML,
//! agent JSON files, daily events YAML), converted by the real binary and checked with
//! `humanoid validate`. No model is loaded.

use std::path::Path;
use std::process::{Command, Output};

const MAP: &str = "\
World:
- Quill house:
  - Kitchen
  - Dara's room
  - Eli's room
- Harbour library:
  - Reading room
  - Front desk
- Pier cafe
Agents:
- Dara Quill: Dara's room
- Eli Quill: Eli's room
- Fen Ode: Front desk
";

/// Clean: nothing to adjust.
const DARA: &str = r#"{
    "name": "Dara Quill",
    "age": 52,
    "traits": ["steady", "dry-humoured"],
    "description": ["Dara Quill repairs boats at the harbour.", "Dara Quill is Eli Quill's aunt."],
    "example_day_plan": ["06:30 am: wake up", "07:30 am: walk to the harbour", "05:00 pm: coffee at Pier cafe", "10:00 pm: sleep"],
    "social_relationships": {"Eli Quill": {"relationship": "nephew", "closeness": 11}}
}"#;

/// The plan as one string, with a one-digit hour and lines out of order; closeness 40; a
/// relationship with someone not in the world.
const ELI: &str = r#"{
    "name": "Eli Quill",
    "age": 16,
    "traits": ["restless", "kind"],
    "description": "Eli Quill lives with his aunt Dara; Eli Quill reads at the library after school",
    "example_day_plan": "7:30 am: wake up\n03:30 pm: read in the Harbour library\n08:00 am: go to school\n09:30 pm: sleep",
    "social_relationships": {
        "Dara Quill": {"relationship": "aunt", "closeness": 40},
        "Bob": {"relationship": "classmate", "closeness": 6}
    }
}"#;

const FEN: &str = r#"{
    "name": "Fen Ode",
    "age": 29,
    "traits": ["bookish"],
    "description": ["Fen Ode is the harbour librarian."],
    "example_day_plan": ["08:00 am: open the library", "12:30 pm: lunch at Pier cafe", "06:00 pm: close up"],
    "social_relationships": {"Eli Quill": {"relationship": "regular visitor", "closeness": 3}}
}"#;

const EVENTS: &str = "\
Tuesday Jan 03 2023: A storm keeps the boats in the harbour.
Wednesday Jan 04 2023: The library holds a book sale.
";

fn humanoid(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("the binary runs")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn world_import_converts_an_original_world_that_then_validates() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (name, body) in [
        ("quill_map.yaml", MAP),
        ("dara.json", DARA),
        ("eli.json", ELI),
        ("fen.json", FEN),
        ("events.yaml", EVENTS),
    ] {
        std::fs::write(d.join(name), body).unwrap();
    }
    let import = |extra: &[&str]| {
        let mut args = vec![
            "world",
            "import",
            "quill_map.yaml",
            "dara.json",
            "eli.json",
            "fen.json",
            "--events",
            "events.yaml",
            "-o",
            "out.toml",
        ];
        args.extend_from_slice(extra);
        humanoid(d, &args)
    };
    let out = import(&[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "exit {:?}: {stderr}", out.status);
    for w in [
        "warning: eli.json: example_day_plan: one string: split at line breaks into 4 lines",
        "warning: eli.json: example_day_plan (line 1): \"7:30 am: wake up\" written as \"07:30 am: wake up\" (one-digit hour)",
        "warning: eli.json: example_day_plan: lines not in time order",
        "warning: eli.json: social_relationships.\"Dara Quill\": closeness 40 clamped to 30",
        "warning: eli.json: social_relationships.Bob: \"Bob\" is not an agent of this world: left out",
        "warning: eli.json: description: one string: split at ';' into 2 sentences",
    ] {
        assert!(stderr.contains(w), "missing {w:?} in:\n{stderr}");
    }
    assert!(!stderr.contains("dara.json"), "{stderr}");
    assert_eq!(stderr.lines().count(), 6, "{stderr}");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(
            "wrote out.toml: Quill (3 agents, 6 places, 2 days from 2023-01-03; 6 warnings)"
        ),
        "{stdout}"
    );

    let toml = std::fs::read_to_string(d.join("out.toml")).unwrap();
    assert!(
        toml.starts_with("# Imported by `humanoid world import`"),
        "{toml}"
    );
    assert!(
        toml.contains("#   agents: dara.json, eli.json, fen.json"),
        "{toml}"
    );
    let v = humanoid(d, &["validate", "out.toml"]);
    assert!(v.status.success(), "{}", text(&v.stderr));
    assert!(
        text(&v.stdout).contains("ok: out.toml (3 agents, 6 locations, 2 days)"),
        "{}",
        text(&v.stdout)
    );
    let world = humanoid::world::World::load(&d.join("out.toml")).unwrap();
    let eli = &world.agents[1];
    assert_eq!(
        eli.example_day_plan,
        [
            "07:30 am: wake up",
            "08:00 am: go to school",
            "03:30 pm: read in the Harbour library",
            "09:30 pm: sleep"
        ]
    );
    assert_eq!(eli.relationships.len(), 1);
    assert_eq!(eli.relationships[0].1.closeness, 30);
    assert_eq!(world.agents[2].location, ["Harbour library", "Front desk"]);
    assert_eq!(world.events.len(), 2);

    // An existing file is kept unless --force.
    let again = import(&[]);
    assert!(!again.status.success());
    let err = text(&again.stderr);
    assert!(
        err.contains("out.toml already exists") && err.contains("--force"),
        "{err}"
    );
    let forced = import(&["--force", "--name", "Quill harbour"]);
    assert!(forced.status.success(), "{}", text(&forced.stderr));
    let world = humanoid::world::World::load(&d.join("out.toml")).unwrap();
    assert_eq!(world.name, "Quill harbour");

    // A broken agent file: the error names the file and line, and nothing is written.
    std::fs::write(
        d.join("fen.json"),
        "{\n  \"name\": \"Fen Ode\",\n  \"age\": ,\n}",
    )
    .unwrap();
    let bad = humanoid(
        d,
        &[
            "world",
            "import",
            "quill_map.yaml",
            "dara.json",
            "fen.json",
            "-o",
            "bad.toml",
        ],
    );
    assert_eq!(bad.status.code(), Some(1));
    let err = text(&bad.stderr);
    assert!(
        err.contains("error: fen.json:3:") && err.contains("invalid JSON"),
        "{err}"
    );
    assert!(err.contains("nothing was written to bad.toml"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    assert!(!d.join("bad.toml").exists());
}

//! Whole-import tests on small worlds written here in the original's format.

use super::*;

const MAP: &str = "\
World:
- Alder house:
  - Kitchen:
    - Stove
  - Ana's room
  - Ben's room
- Corner bakery
- River park
Agents:
- Ana Alder: Ana's room
- Ben Alder: Ben's room
";

const ANA: &str = r#"{
    "name": "Ana Alder",
    "age": 41,
    "traits": ["warm", "organised"],
    "description": ["Ana Alder runs the Corner bakery.", "Ana Alder is Ben Alder's mother."],
    "example_day_plan": ["05:30 am: wake up", "06:00 am: open the bakery", "12:00 pm: eat lunch", "08:00 pm: read"],
    "social_relationships": {"Ben Alder": {"relationship": "son", "closeness": 12}}
}"#;

const BEN: &str = r#"{
    "name": "Ben Alder",
    "age": 17,
    "traits": ["curious"],
    "description": ["Ben Alder is at school.", "Ben Alder likes the park."],
    "example_day_plan": ["07:00 am: wake up", "08:00 am: go to school", "04:00 pm: walk in River park"],
    "social_relationships": {"Ana Alder": {"relationship": "mother", "closeness": 9}}
}"#;

fn sources(agents: &[(&str, &str)]) -> Sources {
    Sources {
        map: Source::new("alder_family_map.yaml", MAP),
        agents: agents.iter().map(|(n, t)| Source::new(*n, *t)).collect(),
        events: None,
        agent_config: None,
    }
}

fn ok(src: &Sources) -> Imported {
    convert(src, &ImportOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn warnings(i: &Imported) -> Vec<String> {
    i.warnings.iter().map(ToString::to_string).collect()
}

fn problems(e: &ImportError) -> Vec<String> {
    e.problems().iter().map(ToString::to_string).collect()
}

/// BEN with one field replaced (`key` is the JSON key, `value` its JSON).
fn ben_with(key: &str, value: &str) -> String {
    let mut v: serde_json::Value = serde_json::from_str(BEN).unwrap();
    v[key] = serde_json::from_str(value).unwrap();
    serde_json::to_string_pretty(&v).unwrap()
}

#[test]
fn a_clean_world_converts_without_warnings() {
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", BEN)]));
    assert_eq!(warnings(&i), Vec::<String>::new());
    let w = &i.world;
    assert_eq!(w.name, "Alder family");
    assert_eq!(w.start_date.to_string(), "2023-01-03");
    assert_eq!(
        (w.days, w.step_minutes, w.day_start, w.day_end),
        (1, 15, 360, 1440)
    );
    let leaves: Vec<String> = w.locations.leaves().iter().map(|l| l.join("/")).collect();
    assert_eq!(
        leaves,
        [
            "Alder house/Kitchen/Stove",
            "Alder house/Ana's room",
            "Alder house/Ben's room",
            "Corner bakery",
            "River park"
        ]
    );
    let ana = &w.agents[0];
    assert_eq!((ana.name.as_str(), ana.age), ("Ana Alder", 41));
    assert_eq!(ana.traits, ["warm", "organised"]);
    assert_eq!(ana.location, ["Alder house", "Ana's room"]);
    assert_eq!(ana.example_day_plan[0], "05:30 am: wake up");
    assert_eq!(ana.relationships[0].0, "Ben Alder");
    assert_eq!(ana.relationships[0].1.relationship, "son");
    assert_eq!(ana.relationships[0].1.closeness, 12);
    assert!(i.toml.starts_with("# Imported by `humanoid world import`"));
    assert!(i.toml.contains("#   map:    alder_family_map.yaml"));
    assert!(i.toml.contains("Nothing had to be changed"));
    // The text loads back to the same world.
    assert_eq!(World::parse(&i.toml, Path::new("x.toml")).unwrap(), i.world);
}

#[test]
fn a_plan_given_as_one_string_is_split_into_lines() {
    let ben = ben_with(
        "example_day_plan",
        r#""07:00 am: wake up\n08:00 am: go to school\n\n04:00 pm: walk in River park""#,
    );
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    assert_eq!(
        i.world.agents[1].example_day_plan,
        [
            "07:00 am: wake up",
            "08:00 am: go to school",
            "04:00 pm: walk in River park"
        ]
    );
    assert_eq!(
        warnings(&i),
        ["ben.json: example_day_plan: one string: split at line breaks into 3 lines"]
    );
}

#[test]
fn one_digit_hours_are_written_with_two() {
    let ben = ben_with(
        "example_day_plan",
        r#"["7:00 am: wake up", "8:00 am: go to school", "4:00 pm: walk"]"#,
    );
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    assert_eq!(
        i.world.agents[1].example_day_plan,
        [
            "07:00 am: wake up",
            "08:00 am: go to school",
            "04:00 pm: walk"
        ]
    );
    let w = warnings(&i);
    assert_eq!(w.len(), 3, "{w:?}");
    assert_eq!(
        w[0],
        "ben.json: example_day_plan[0]: \"7:00 am: wake up\" written as \"07:00 am: wake up\" (one-digit hour)"
    );
}

#[test]
fn out_of_order_plan_lines_are_sorted() {
    let ben = ben_with(
        "example_day_plan",
        r#"["08:00 am: go to school", "07:00 am: wake up", "04:00 pm: walk"]"#,
    );
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    assert_eq!(
        i.world.agents[1].example_day_plan,
        [
            "07:00 am: wake up",
            "08:00 am: go to school",
            "04:00 pm: walk"
        ]
    );
    let w = warnings(&i);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(
        w[0].starts_with("ben.json: example_day_plan: lines not in time order"),
        "{w:?}"
    );
}

#[test]
fn closeness_beyond_our_range_is_clamped() {
    let ben = ben_with(
        "social_relationships",
        r#"{"Ana Alder": {"relationship": "mother", "closeness": 40}}"#,
    );
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    assert_eq!(i.world.agents[1].relationships[0].1.closeness, 30);
    assert_eq!(
        warnings(&i),
        ["ben.json: social_relationships.\"Ana Alder\": closeness 40 clamped to 30"]
    );
    let ben = ben_with(
        "social_relationships",
        r#"{"Ana Alder": {"relationship": "mother", "closeness": -2}}"#,
    );
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    assert_eq!(i.world.agents[1].relationships[0].1.closeness, 0);
    assert!(warnings(&i)[0].ends_with("closeness -2 clamped to 0"));
}

#[test]
fn relationships_with_agents_not_in_the_world_are_left_out() {
    let ben = ben_with(
        "social_relationships",
        r#"{"Cleo": {"relationship": "friend", "closeness": 7}, "Ana Alder": {"relationship": "mother"}}"#,
    );
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    let rels = &i.world.agents[1].relationships;
    assert_eq!(rels.len(), 1);
    assert_eq!((rels[0].0.as_str(), rels[0].1.closeness), ("Ana Alder", 5));
    let w = warnings(&i);
    assert!(
        w.contains(&"ben.json: social_relationships.Cleo: \"Cleo\" is not an agent of this world: left out".to_string()),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.contains("no closeness given: our default 5 used")),
        "{w:?}"
    );
    // The map's agents without a file are left out too.
    let i = ok(&sources(&[("ana.json", ANA)]));
    assert_eq!(i.world.agents.len(), 1);
    assert!(i.world.agents[0].relationships.is_empty());
    let w = warnings(&i);
    assert!(
        w.contains(&"alder_family_map.yaml: Agents.\"Ben Alder\": no agent file was given for \"Ben Alder\": left out".to_string()),
        "{w:?}"
    );
}

#[test]
fn a_description_string_is_split_at_semicolons() {
    let ben = ben_with(
        "description",
        r#""Ben Alder is at school; Ben Alder likes the park""#,
    );
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    assert_eq!(
        i.world.agents[1].description,
        ["Ben Alder is at school", "Ben Alder likes the park"]
    );
    assert_eq!(
        warnings(&i),
        ["ben.json: description: one string: split at ';' into 2 sentences"]
    );
}

#[test]
fn daily_events_become_our_events_and_set_the_days() {
    let mut src = sources(&[("ana.json", ANA), ("ben.json", BEN)]);
    src.events = Some(Source::new(
        "events.yaml",
        "Tuesday Jan 03 2023: The bakery's oven breaks down. \nWednesday Jan 05 2023: A street fair fills River park.\n",
    ));
    let i = ok(&src);
    assert_eq!(i.world.days, 3);
    let ev: Vec<(String, String)> = i
        .world
        .events
        .iter()
        .map(|e| (e.date.to_string(), e.text.clone()))
        .collect();
    assert_eq!(
        ev,
        [
            (
                "2023-01-03".to_string(),
                "The bakery's oven breaks down.".to_string()
            ),
            (
                "2023-01-05".to_string(),
                "A street fair fills River park.".to_string()
            )
        ]
    );
    assert_eq!(
        warnings(&i),
        ["events.yaml: \"Wednesday Jan 05 2023\": 2023-01-05 is a Thursday, not a Wednesday: read as 2023-01-05 (the original reads only the date)"]
    );
}

#[test]
fn events_outside_the_days_are_left_out() {
    let mut src = sources(&[("ana.json", ANA), ("ben.json", BEN)]);
    src.events = Some(Source::new(
        "events.yaml",
        "2023-01-02: Too early.\n2023-01-03: On time.\nWednesday Jan 04 2023: Too late.\n",
    ));
    let opts = ImportOptions {
        days: Some(1),
        ..Default::default()
    };
    let i = convert(&src, &opts).unwrap();
    assert_eq!(i.world.events.len(), 1);
    assert_eq!(i.world.events[0].text, "On time.");
    let w = warnings(&i);
    assert_eq!(w.len(), 2, "{w:?}");
    assert!(
        w[0].starts_with("events.yaml: 2023-01-02: 2023-01-02 is outside"),
        "{w:?}"
    );
    assert!(w[1].contains("left out (--start-date, --days)"), "{w:?}");
}

#[test]
fn the_agent_config_sets_needs_and_their_decay() {
    let mut src = sources(&[("ana.json", ANA), ("ben.json", BEN)]);
    src.agent_config = Some(Source::new(
        "default_agent_config.json",
        r#"{"basic_needs": [
            {"name": "fullness", "start_value": 4, "decline_likelihood_per_time_step": 0.05},
            {"name": "fun", "start_value": 5, "decline_likelihood_per_time_step": 0.3},
            {"name": "hygiene", "start_value": 5, "decline_likelihood_per_time_step": 0.1}
        ]}"#,
    ));
    let i = ok(&src);
    let a = &i.world.agents[0];
    assert_eq!((a.needs.fullness, a.needs.fun, a.needs.energy), (4, 5, 10));
    // 0.05 a 15-minute step is 1 per 5 hours; 0.3 is 6.
    assert!((i.world.decay.per_hour[0] - 0.2).abs() < 1e-9);
    assert!((i.world.decay.per_hour[2] - 1.2).abs() < 1e-9);
    let w = warnings(&i);
    assert!(
        w[0].contains("basic_needs[2]") && w[0].contains("\"hygiene\""),
        "{w:?}"
    );
}

#[test]
fn starting_places_with_places_inside_and_slashes_in_names() {
    let map = MAP
        .replace("- Ana Alder: Ana's room", "- Ana Alder: Kitchen")
        .replace("- River park", "- Bar/Grill\n- River park:");
    let mut src = sources(&[("ana.json", ANA), ("ben.json", BEN)]);
    src.map = Source::new("m.yaml", map);
    let i = ok(&src);
    assert_eq!(
        i.world.agents[0].location,
        ["Alder house", "Kitchen", "Stove"]
    );
    let w = warnings(&i);
    assert!(
        w.iter()
            .any(|w| w.contains("\"Bar/Grill\" renamed \"Bar-Grill\"")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.starts_with("m.yaml: World.\"River park\": nothing after the colon")),
        "{w:?}"
    );
    assert!(
        w.iter()
            .any(|w| w.starts_with("m.yaml: Agents.\"Ana Alder\": \"Kitchen\" has places inside")),
        "{w:?}"
    );
}

#[test]
fn an_emotion_is_kept_as_the_starting_emotion() {
    let ben = ben_with("emotion", r#""sad""#);
    let i = ok(&sources(&[("ana.json", ANA), ("ben.json", &ben)]));
    assert_eq!(i.world.agents[1].emotion, crate::world::Emotion::Sad);
    assert!(warnings(&i)[0].contains("--condition emotion=sad"));
}

#[test]
fn bad_json_names_the_file_and_line() {
    let bad = "{\n  \"name\": \"Ben Alder\",\n  \"age\": 17,,\n}";
    let e = convert(
        &sources(&[("ana.json", ANA), ("ben.json", bad)]),
        &ImportOptions::default(),
    )
    .unwrap_err();
    let p = problems(&e);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].starts_with("ben.json:3:"), "{p:?}");
    assert!(p[0].contains("invalid JSON"), "{p:?}");
}

#[test]
fn bad_yaml_names_the_file_and_line() {
    let mut src = sources(&[("ana.json", ANA)]);
    src.map = Source::new("m.yaml", "World:\n- House:\n  - Kitchen\n   - Stove: [\n");
    let e = convert(&src, &ImportOptions::default()).unwrap_err();
    let p = problems(&e);
    assert!(p[0].starts_with("m.yaml:"), "{p:?}");
    assert!(p[0].contains("invalid YAML"), "{p:?}");
    assert!(e.problems()[0].line.is_some(), "{p:?}");
}

#[test]
fn missing_and_wrong_fields_name_the_file_and_field() {
    let mut v: serde_json::Value = serde_json::from_str(BEN).unwrap();
    v.as_object_mut().unwrap().remove("age");
    let no_age = v.to_string();
    let e = convert(
        &sources(&[("ana.json", ANA), ("ben.json", &no_age)]),
        &ImportOptions::default(),
    )
    .unwrap_err();
    let p = problems(&e);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(p[0].starts_with("ben.json: age: missing"), "{p:?}");

    let old = ben_with("age", "200");
    let e = convert(
        &sources(&[("ana.json", ANA), ("ben.json", &old)]),
        &ImportOptions::default(),
    )
    .unwrap_err();
    let p = problems(&e);
    // (ben_with writes the keys in alphabetical order: "age" is on line 2)
    assert!(
        p[0].starts_with("ben.json:2: age: 200 is out of range"),
        "{p:?}"
    );

    let traits = ben_with("traits", "[\"kind\", 3]");
    let e = convert(
        &sources(&[("ana.json", ANA), ("ben.json", &traits)]),
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(problems(&e)[0].contains("traits[1]: expected a string, found a number"));

    let plan = ben_with("example_day_plan", "[\"wake up\", \"go to school\"]");
    let e = convert(
        &sources(&[("ana.json", ANA), ("ben.json", &plan)]),
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(problems(&e)[0].contains("example_day_plan: no line with a time of day"));

    let e = convert(
        &sources(&[("ana.json", ANA), ("again.json", ANA)]),
        &ImportOptions::default(),
    )
    .unwrap_err();
    assert!(
        problems(&e)[0].contains("again.json:2: name: \"Ana Alder\" is also the agent of ana.json")
    );
}

#[test]
fn map_problems_name_the_field() {
    let mut src = sources(&[("ana.json", ANA), ("ben.json", BEN)]);
    src.map = Source::new(
        "m.yaml",
        MAP.replace("Ben Alder: Ben's room", "Ben Alder: Attic"),
    );
    let e = convert(&src, &ImportOptions::default()).unwrap_err();
    let p = problems(&e);
    assert_eq!(p.len(), 1, "{p:?}");
    assert!(
        p[0].starts_with("m.yaml:11: Agents.\"Ben Alder\": unknown place \"Attic\""),
        "{p:?}"
    );

    src.map = Source::new("m.yaml", MAP.replace("- Ben Alder: Ben's room\n", ""));
    let e = convert(&src, &ImportOptions::default()).unwrap_err();
    assert!(problems(&e)[0].contains("no starting place for \"Ben Alder\" (of ben.json)"));

    src.map = Source::new("m.yaml", "Agents:\n- Ana Alder: Kitchen\n");
    let e = convert(&src, &ImportOptions::default()).unwrap_err();
    assert!(problems(&e)[0].starts_with("m.yaml: World: missing"));

    src.map = Source::new("m.yaml", MAP.replace("  - Ben's room", "  - Ana's room"));
    let e = convert(&src, &ImportOptions::default()).unwrap_err();
    assert!(problems(&e)[0].contains("\"Ana's room\" is listed twice in \"Alder house\""));
}

#[test]
fn unreadable_and_non_utf8_files_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let files = ImportFiles {
        map: dir.path().join("nope.yaml"),
        agents: vec![dir.path().join("a.json")],
        ..Default::default()
    };
    let e = import_files(&files, &ImportOptions::default()).unwrap_err();
    assert!(e.to_string().starts_with("cannot read ") && e.to_string().contains("nope.yaml"));
    let map = dir.path().join("map.yaml");
    std::fs::write(&map, b"World:\n- Caf\xe9\n").unwrap();
    let files = ImportFiles { map, ..files };
    let e = import_files(&files, &ImportOptions::default()).unwrap_err();
    assert!(
        e.to_string().contains("map.yaml:2:") && e.to_string().contains("not UTF-8"),
        "{e}"
    );
}

#[test]
fn a_converted_text_that_does_not_validate_is_refused() {
    let e = checked("name = \"x\"\n".to_string()).unwrap_err();
    assert!(matches!(e, ImportError::Invalid(_)));
    assert!(
        e.to_string()
            .starts_with("the converted world does not validate"),
        "{e}"
    );
}

#[test]
fn truncated_and_garbled_files_are_errors_not_panics() {
    let events = "Tuesday Jan 03 2023: A storm.\nWednesday Jan 04 2023: [a, b]\n";
    let cut = |t: &str| -> Vec<String> {
        (0..=t.len())
            .filter(|&i| t.is_char_boundary(i))
            .map(|i| t[..i].to_string())
            .collect()
    };
    for m in cut(MAP) {
        let mut src = sources(&[("ana.json", ANA), ("ben.json", BEN)]);
        src.map = Source::new("m.yaml", m);
        let _ = convert(&src, &ImportOptions::default());
    }
    for b in cut(BEN) {
        let _ = convert(
            &sources(&[("ana.json", ANA), ("ben.json", &b)]),
            &ImportOptions::default(),
        );
    }
    for e in cut(events) {
        let mut src = sources(&[("ana.json", ANA), ("ben.json", BEN)]);
        src.events = Some(Source::new("e.yaml", e));
        let _ = convert(&src, &ImportOptions::default());
    }
    // Values of every JSON kind in every field.
    for key in [
        "name",
        "age",
        "traits",
        "description",
        "example_day_plan",
        "social_relationships",
        "emotion",
    ] {
        for value in [
            "null",
            "true",
            "-1",
            "1e300",
            "\"\"",
            "\"x\"",
            "[]",
            "[null]",
            "{}",
            "{\"a\": 1}",
        ] {
            let ben = ben_with(key, value);
            let _ = convert(
                &sources(&[("ana.json", ANA), ("ben.json", &ben)]),
                &ImportOptions::default(),
            );
        }
    }
    let late = ImportOptions {
        start_date: NaiveDate::from_ymd_opt(262_142, 12, 31),
        days: Some(3),
        ..Default::default()
    };
    let e = convert(&sources(&[("ana.json", ANA), ("ben.json", BEN)]), &late).unwrap_err();
    assert!(e.to_string().starts_with("--start-date:"), "{e}");
}

//! Property tests of the world loader on bad input: arbitrary bytes and randomly mutated
//! bundled worlds never panic, every error names the file and (for problems inside it) a line,
//! and whatever loads is a consistent world that writes back and loads again to itself.
//!
//! 256 cases per property (`PROPTEST_CASES` overrides); the seed is fixed unless
//! `PROPTEST_RNG_SEED` is set, so a failure reproduces.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use humanoid::world::{World, WorldError, CLOSENESS_MAX, NEED_MAX};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};

const WORLDS: [&str; 3] = [
    "worlds/lin-family.toml",
    "worlds/friends.toml",
    "worlds/big-bang-theory.toml",
];

fn config() -> Config {
    let base = Config::default(); // reads PROPTEST_CASES, PROPTEST_RNG_SEED
    let cases = if std::env::var_os("PROPTEST_CASES").is_some() {
        base.cases
    } else {
        256
    };
    let rng_seed = match base.rng_seed {
        RngSeed::Random => RngSeed::Fixed(0x5eed_3070),
        fixed => fixed,
    };
    Config {
        cases,
        rng_seed,
        failure_persistence: None,
        ..base
    }
}

fn world_text(i: usize) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(WORLDS[i]);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Parses with a panic caught (proptest reports panics too; this names the input).
fn parse(text: &str, path: &Path) -> Result<World, WorldError> {
    catch_unwind(AssertUnwindSafe(|| World::parse(text, path)))
        .unwrap_or_else(|_| panic!("World::parse panicked on:\n{text}"))
}

/// Checks that an error names `path` on every line and a plausible line and column for every
/// problem inside the file; returns a description of what is wrong, if anything.
fn error_names_where(e: &WorldError, path: &Path, text: &str) -> Result<(), String> {
    let shown = e.to_string();
    let p = path.display().to_string();
    let problems = match e {
        WorldError::Io { .. } => {
            return if shown.contains(&p) {
                Ok(())
            } else {
                Err(format!("I/O error does not name the file: {shown}"))
            }
        }
        WorldError::Invalid { problems, .. } => problems,
    };
    if problems.is_empty() {
        return Err(format!("an invalid world with no problem: {shown}"));
    }
    // One line per problem, each starting with the file.
    if let Some(bad) = shown.lines().find(|l| !l.starts_with(&format!("{p}:"))) {
        return Err(format!(
            "error line {bad:?} does not start with the file name: {shown}"
        ));
    }
    if shown.lines().count() != problems.len() {
        return Err(format!(
            "{} problems in {} lines: {shown}",
            problems.len(),
            shown.lines().count()
        ));
    }
    let lines = text.split('\n').count();
    for prob in problems {
        let rendered = prob.render(path);
        if !shown.lines().any(|l| l == rendered) {
            return Err(format!("problem {rendered:?} missing from {shown:?}"));
        }
        if prob.message.trim().is_empty() {
            return Err(format!("a problem without a message: {rendered}"));
        }
        match (prob.line, prob.column) {
            (Some(line), Some(col)) => {
                if line == 0 || line > lines || col == 0 {
                    return Err(format!(
                        "line {line} column {col} is outside the {lines}-line file: {rendered}"
                    ));
                }
                if !rendered.starts_with(&format!("{p}:{line}:{col}: ")) {
                    return Err(format!("line and column not shown: {rendered}"));
                }
            }
            // Only a table absent from the whole file has no line to point at.
            (None, None) if ["locations", "agents"].contains(&prob.field.as_str()) => {}
            _ => return Err(format!("a problem without a line: {rendered}")),
        }
    }
    Ok(())
}

/// What a loaded world guarantees; returns a description of the first violation.
fn consistent(w: &World) -> Result<(), String> {
    let err = |m: String| Err(m);
    if w.name.trim().is_empty() {
        return err("blank name".into());
    }
    if !(1..=365).contains(&w.days) {
        return err(format!("days {}", w.days));
    }
    if w.step_minutes == 0 || 60 % w.step_minutes != 0 {
        return err(format!("step_minutes {}", w.step_minutes));
    }
    if w.day_start >= w.day_end
        || w.day_end > 1440
        || w.day_start / w.step_minutes * w.step_minutes != w.day_start
    {
        return err(format!("day {}..{}", w.day_start, w.day_end));
    }
    if w.locations.is_empty() || w.agents.is_empty() {
        return err("no location or no agent".into());
    }
    let dates = w.dates();
    for ev in &w.events {
        if !dates.contains(&ev.date) {
            return err(format!("event on {} outside the run", ev.date));
        }
    }
    for (i, a) in w.agents.iter().enumerate() {
        if w.agent_index(&a.name) != Some(i) {
            return err(format!("agent name {:?} not unique", a.name));
        }
        if !w.locations.is_leaf(&a.location) {
            return err(format!(
                "{}: location {:?} is not a leaf",
                a.name, a.location
            ));
        }
        if !(1..=150).contains(&a.age) || a.traits.is_empty() || a.example_day_plan.is_empty() {
            return err(format!("{}: age, traits or plan", a.name));
        }
        if humanoid::world::Need::ALL
            .iter()
            .any(|&n| a.needs.get(n) > NEED_MAX)
        {
            return err(format!("{}: a need above {NEED_MAX}", a.name));
        }
        for (other, r) in &a.relationships {
            if *other == a.name || w.agent_index(other).is_none() || r.closeness > CLOSENESS_MAX {
                return err(format!("{}: relationship to {other:?}", a.name));
            }
        }
    }
    Ok(())
}

/// The property every input must have: no panic; an error names where; a world is
/// consistent and round-trips through `to_toml`.
fn check_text(text: &str, path: &Path) -> Result<(), TestCaseError> {
    match parse(text, path) {
        Err(e) => error_names_where(&e, path, text).map_err(TestCaseError::fail),
        Ok(w) => {
            consistent(&w).map_err(|m| TestCaseError::fail(format!("inconsistent world: {m}")))?;
            let written = w.to_toml();
            let again = parse(&written, path).map_err(|e| {
                TestCaseError::fail(format!("to_toml of a loaded world does not load: {e}"))
            })?;
            prop_assert_eq!(
                World {
                    source: String::new(),
                    ..again
                },
                World {
                    source: String::new(),
                    ..w
                },
                "to_toml does not load back to the same world"
            );
            Ok(())
        }
    }
}

/// One random edit of a world file.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(Pick),
    DuplicateLine(Pick),
    SwapLines(Pick, Pick),
    Truncate(Pick),
    ReplaceNumber(Pick, &'static str),
    InsertChars(Pick, String),
    ChangeLocation(Pick, Pick, LocationEdit),
    RenameAgent(Pick, Pick, String),
}

/// How a location path is changed.
#[derive(Clone, Copy, Debug)]
enum LocationEdit {
    AddSegment,
    DropLastSegment,
    Empty,
    DoubleSlash,
    SpaceAroundSlash,
    TrailingSlash,
    Rename,
}

const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "-9223372036854775808",
    "9223372036854775807",
    "99999999999999999999999",
    "4294967296",
    "256",
    "1e309",
    "-0",
    "nan",
    "0x7fffffff",
    "1_000_000",
    "3.5",
    "366",
    "151",
    "31",
    "11",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let chars = prop_oneof![
        "[\\[\\]{}\"'=.,/:#\\\\\n a-z0-9]{1,8}",
        "\\PC{1,4}",
        Just("\"\"\"".to_string()),
        Just("[[agents]]\n".to_string()),
        Just("\n[agents.relationships.\"Nobody\"]\n".to_string()),
        Just("\u{0}".to_string()),
        Just("\r".to_string()),
    ];
    let edit = prop_oneof![
        Just(LocationEdit::AddSegment),
        Just(LocationEdit::DropLastSegment),
        Just(LocationEdit::Empty),
        Just(LocationEdit::DoubleSlash),
        Just(LocationEdit::SpaceAroundSlash),
        Just(LocationEdit::TrailingSlash),
        Just(LocationEdit::Rename),
    ];
    let name = prop_oneof![
        "[A-Z][a-z]{0,8}( [A-Z][a-z]{0,8})?",
        Just(String::new()),
        Just(" ".to_string()),
        "\\PC{1,6}",
    ];
    prop_oneof![
        pick().prop_map(Mutation::DeleteLine),
        pick().prop_map(Mutation::DuplicateLine),
        (pick(), pick()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        pick().prop_map(Mutation::Truncate),
        (pick(), proptest::sample::select(NUMBERS))
            .prop_map(|(i, n)| Mutation::ReplaceNumber(i, n)),
        (pick(), chars).prop_map(|(i, s)| Mutation::InsertChars(i, s)),
        (pick(), pick(), edit).prop_map(|(i, j, e)| Mutation::ChangeLocation(i, j, e)),
        (pick(), pick(), name).prop_map(|(i, j, n)| Mutation::RenameAgent(i, j, n)),
    ]
}

/// Byte ranges of the contents of every `"..."` string that holds a location path: items of
/// the `locations` list and `location = "..."` values (no escapes in the bundled worlds' paths).
fn location_strings(text: &str) -> Vec<std::ops::Range<usize>> {
    let mut out = Vec::new();
    let mut in_list = false;
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let t = line.trim_start();
        let from = if t.starts_with("locations") {
            in_list = true;
            line.find('=').map(|i| i + 1)
        } else if in_list {
            Some(0)
        } else if t.starts_with("location ") || t.starts_with("location=") {
            line.find('=').map(|i| i + 1)
        } else {
            None
        };
        if let Some(mut k) = from {
            while let Some(open) = line[k..].find('"') {
                let start = k + open + 1;
                let Some(len) = line[start..].find('"') else {
                    break;
                };
                out.push(at + start..at + start + len);
                k = start + len + 1;
            }
        }
        if in_list && t.contains(']') {
            in_list = false;
        }
        at += line.len();
    }
    out
}

/// Byte ranges of every occurrence of an agent's name in the text.
fn agent_name_occurrences(text: &str) -> Vec<(String, Vec<std::ops::Range<usize>>)> {
    let mut names: Vec<String> = Vec::new();
    let mut in_agent = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('[') {
            in_agent = t == "[[agents]]";
        } else if in_agent {
            if let Some(v) = t.strip_prefix("name = \"") {
                if let Some(n) = v.strip_suffix('"') {
                    names.push(n.to_string());
                }
            }
        }
    }
    names
        .into_iter()
        .map(|n| {
            let at: Vec<_> = text
                .match_indices(&format!("\"{n}\""))
                .map(|(i, _)| i + 1..i + 1 + n.len())
                .collect();
            (n, at)
        })
        .collect()
}

fn char_floor(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Applies one mutation; bytes because a truncation may split a character.
fn apply(bytes: Vec<u8>, m: &Mutation) -> Vec<u8> {
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        // Only a truncation makes invalid UTF-8, and only at the end: keep it.
        Err(e) => return e.into_bytes(),
    };
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    let replace = |r: std::ops::Range<usize>, with: &str| {
        let mut s = text.clone();
        s.replace_range(r, with);
        s.into_bytes()
    };
    match m {
        Mutation::DeleteLine(i) if !lines.is_empty() => {
            lines.remove(i.of(lines.len()));
            lines.concat().into_bytes()
        }
        Mutation::DuplicateLine(i) if !lines.is_empty() => {
            let k = i.of(lines.len());
            let line = if lines[k].ends_with('\n') {
                lines[k].to_string()
            } else {
                format!("\n{}", lines[k])
            };
            let mut out = lines.concat();
            let at = lines[..=k].iter().map(|l| l.len()).sum();
            out.insert_str(at, &line);
            out.into_bytes()
        }
        Mutation::SwapLines(a, b) if !lines.is_empty() => {
            let n = lines.len();
            lines.swap(a.of(n), b.of(n));
            lines.concat().into_bytes()
        }
        Mutation::Truncate(i) => {
            let mut b = text.into_bytes();
            let cut = i.of(b.len() + 1);
            b.truncate(cut);
            b
        }
        Mutation::ReplaceNumber(i, n) => {
            let mut numbers = Vec::new();
            let b = text.as_bytes();
            let mut k = 0;
            while k < b.len() {
                if b[k].is_ascii_digit() {
                    let start = k;
                    while k < b.len() && b[k].is_ascii_digit() {
                        k += 1;
                    }
                    numbers.push(start..k);
                } else {
                    k += 1;
                }
            }
            if numbers.is_empty() {
                return text.into_bytes();
            }
            let r = numbers[i.of(numbers.len())].clone();
            replace(r, n)
        }
        Mutation::InsertChars(i, s) => {
            let at = char_floor(&text, i.of(text.len() + 1));
            replace(at..at, s)
        }
        Mutation::ChangeLocation(i, j, edit) => {
            let spots = location_strings(&text);
            if spots.is_empty() {
                return text.into_bytes();
            }
            let r = spots[i.of(spots.len())].clone();
            let old = &text[r.clone()];
            let segs: Vec<&str> = old.split('/').collect();
            let new = match edit {
                LocationEdit::AddSegment => format!("{old}/Closet"),
                LocationEdit::DropLastSegment if segs.len() > 1 => segs[..segs.len() - 1].join("/"),
                LocationEdit::DropLastSegment => "Nowhere".to_string(),
                LocationEdit::Empty => String::new(),
                LocationEdit::DoubleSlash => segs.join("//") + "//",
                LocationEdit::SpaceAroundSlash => segs.join(" / ") + " ",
                LocationEdit::TrailingSlash => format!("{old}/"),
                LocationEdit::Rename => {
                    let k = j.of(segs.len());
                    let mut s: Vec<String> = segs.iter().map(|s| s.to_string()).collect();
                    s[k] = format!("{}x", s[k]);
                    s.join("/")
                }
            };
            replace(r, &new)
        }
        Mutation::RenameAgent(i, j, name) => {
            let found = agent_name_occurrences(&text);
            if found.is_empty() {
                return text.into_bytes();
            }
            let (_, at) = &found[i.of(found.len())];
            if at.is_empty() {
                return text.into_bytes();
            }
            // One occurrence only: the name and its references no longer agree.
            let r = at[j.of(at.len())].clone();
            let escaped = toml::Value::String(name.clone()).to_string();
            replace(r, &escaped[1..escaped.len() - 1])
        }
        _ => text.into_bytes(),
    }
}

/// Parses bytes as a file would be loaded: through `World::load` from a temporary file when
/// they are not UTF-8 (its error must name the line of the first bad byte), else through
/// `World::parse`.
fn check_bytes(bytes: &[u8], name: &str) -> Result<(), TestCaseError> {
    match std::str::from_utf8(bytes) {
        Ok(text) => check_text(text, Path::new(name)),
        Err(e) => {
            let dir = tempfile::tempdir().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let path: PathBuf = dir.path().join(name);
            std::fs::write(&path, bytes).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let loaded = catch_unwind(AssertUnwindSafe(|| World::load(&path)))
                .map_err(|_| TestCaseError::fail("World::load panicked"))?;
            let err = match loaded {
                Ok(_) => return Err(TestCaseError::fail("a file that is not UTF-8 loaded")),
                Err(err) => err,
            };
            let valid = e.valid_up_to();
            let prefix = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
            error_names_where(&err, &path, &String::from_utf8_lossy(bytes))
                .map_err(TestCaseError::fail)?;
            let expected_line = prefix.matches('\n').count() + 1;
            let lines: Vec<_> = err.problems().iter().map(|p| p.line).collect();
            prop_assert_eq!(
                lines,
                vec![Some(expected_line)],
                "the line of the first byte that is not UTF-8: {}",
                err
            );
            prop_assert!(err.to_string().contains("UTF-8"), "{}", err);
            // The text as an editor would show it fails cleanly too.
            check_text(&String::from_utf8_lossy(bytes), Path::new(name))
        }
    }
}

proptest! {
    #![proptest_config(config())]

    /// Arbitrary bytes, invalid UTF-8 included.
    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        check_bytes(&bytes, "random.toml")?;
    }

    /// Text built from TOML's punctuation and keys, which reaches further into the parser
    /// and the semantic checks than uniform bytes do.
    #[test]
    fn toml_like_text_never_panics(
        text in "((\\[\\[agents\\]\\]|\\[agents\\.(needs|relationships\\.\"[A-Z]\")\\]|name|age|days|location|locations|start_date|step_minutes|day_start|day_end|traits|emotion|closeness|relationship|= |\"[A-Za-z/ :0-9-]{0,12}\"|\\[|\\]|\\{|\\}|,|[0-9]{1,20}|-|\n|#| ){0,60})"
    ) {
        check_text(&text, Path::new("tomlish.toml"))?;
    }

    /// A bundled world after one to four random edits.
    #[test]
    fn mutated_worlds_never_panic(
        which in 0..WORLDS.len(),
        edits in proptest::collection::vec(mutation(), 1..5),
    ) {
        let mut bytes = world_text(which).into_bytes();
        for m in &edits {
            bytes = apply(bytes, m);
        }
        let name = Path::new(WORLDS[which]).file_name().unwrap().to_string_lossy().into_owned();
        check_bytes(&bytes, &name)?;
    }
}

/// The mutations do what they say (so the property above explores what it claims).
#[test]
fn mutations_reach_their_targets() {
    // Unedited, each world loads, is consistent and round-trips.
    for (i, w) in WORLDS.iter().enumerate() {
        let name = Path::new(w)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        check_bytes(world_text(i).as_bytes(), &name).unwrap_or_else(|e| panic!("{w}: {e}"));
        assert!(parse(&world_text(i), Path::new(w)).is_ok(), "{w}");
    }
    let text = world_text(0);
    let spots = location_strings(&text);
    let at: Vec<&str> = spots.iter().map(|r| &text[r.clone()]).collect();
    assert!(at.contains(&"Lin family's house/Kitchen"), "{at:?}");
    assert!(at.contains(&"Johnson Park"), "{at:?}");
    assert!(
        at.contains(&"Lin family's house/John Lin's bedroom"),
        "{at:?}"
    );
    let names = agent_name_occurrences(&text);
    let eddy = names
        .iter()
        .find(|(n, _)| n == "Eddy Lin")
        .expect("Eddy Lin");
    assert!(eddy.1.len() >= 2, "a name and a reference: {eddy:?}");

    // Each kind of edit of the valid file gives the expected kind of error.
    let path = Path::new("lin-family.toml");
    let problems = |m: Mutation| -> String {
        let bytes = apply(text.clone().into_bytes(), &m);
        let s = String::from_utf8(bytes).unwrap();
        match World::parse(&s, path) {
            Ok(_) => String::new(),
            Err(e) => {
                error_names_where(&e, path, &s).unwrap();
                e.to_string()
            }
        }
    };
    let kitchen = spots
        .iter()
        .position(|r| &text[r.clone()] == "Lin family's house/John Lin's bedroom")
        .unwrap();
    let e = problems(Mutation::ChangeLocation(
        Pick(kitchen),
        Pick(0),
        LocationEdit::TrailingSlash,
    ));
    assert!(e.contains("empty segment"), "{e}");
    let eddy_ref = (0..names.len())
        .find(|&i| names[i].0 == "Eddy Lin")
        .unwrap();
    let e = problems(Mutation::RenameAgent(
        Pick(eddy_ref),
        Pick(0),
        "Teddy Lin".into(),
    ));
    assert!(e.contains("Eddy Lin") || e.contains("Teddy Lin"), "{e}");
    let e = problems(Mutation::ReplaceNumber(Pick(0), "99999999999999999999999"));
    assert!(e.starts_with("lin-family.toml:"), "{e}");
}

/// A random choice among however many items there turn out to be.
#[derive(Clone, Copy, Debug)]
struct Pick(usize);

fn pick() -> impl Strategy<Value = Pick> {
    any::<usize>().prop_map(Pick)
}

impl Pick {
    fn of(self, n: usize) -> usize {
        self.0 % n.max(1)
    }
}

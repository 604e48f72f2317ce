//! The binary on bad command lines: wrong flags, unknown subcommands, models, devices and
//! conditions, missing or broken worlds, folders that are not runs. Each exits non-zero with
//! a clear error on stderr naming the bad value, never panics, and writes nothing.
//!
//! `run` checks its arguments before it loads a model: these runs pass `--model` a sentinel
//! file that is not a GGUF, so a check that came after the model load would fail on the
//! sentinel instead (and the test says so).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn humanoid(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .env(
            humanoid::model_store::CHAT_MODEL_ENV,
            crate::util::FAST_CHAT_MODEL,
        )
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .output()
        .expect("the binary runs")
}

/// Checks a failed command: exit status 1 (our errors) or 2 (usage errors), stderr names each
/// of `words`, no panic; returns stderr.
fn fails(args: &[&str], words: &[&str]) -> String {
    let out = humanoid(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let shown = format!("humanoid {}", args.join(" "));
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "{shown}: exit status {} (expected 1 or 2)\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    assert!(
        !stderr.contains("panicked at") && !stderr.contains("RUST_BACKTRACE"),
        "{shown} panicked:\n{stderr}"
    );
    assert!(
        stderr.contains("error"),
        "{shown}: no error on stderr:\n{stderr}"
    );
    for w in words {
        assert!(
            stderr.contains(w),
            "{shown}: stderr does not say {w:?}:\n{stderr}"
        );
    }
    stderr
}

/// Files a `run` check needs: a sentinel model that is not a GGUF, an out folder that must
/// not appear.
struct Scratch {
    dir: tempfile::TempDir,
}

impl Scratch {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sentinel.gguf"), b"not a model").unwrap();
        Self { dir }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
    fn s(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }
    /// Everything in the scratch folder but the sentinel.
    fn written(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "sentinel.gguf")
            .collect();
        names.sort();
        names
    }
    /// `humanoid run WORLD EXTRA... --model SENTINEL --out OUT` must fail naming `words`
    /// before loading a model and create nothing.
    fn run_fails(&self, world: &str, extra: &[&str], words: &[&str]) {
        let before = self.written();
        let (sentinel, out) = (self.s("sentinel.gguf"), self.s("out"));
        let mut args = vec!["run", world];
        args.extend_from_slice(extra);
        if !extra.contains(&"--model") {
            args.extend(["--model", &sentinel]);
        }
        args.extend(["--out", &out]);
        let stderr = fails(&args, words);
        assert!(
            !stderr.contains("sentinel.gguf"),
            "run {world} {extra:?}: the model was loaded before the bad input was found:\n{stderr}"
        );
        assert!(!self.path("out").exists(), "run {extra:?} created --out");
        assert_eq!(self.written(), before, "run {extra:?} wrote files");
    }
}

#[test]
fn usage_errors_name_the_bad_flag_or_subcommand() {
    let usage = |args: &[&str], words: &[&str]| {
        let out = humanoid(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: a usage error");
        fails(args, words);
    };
    usage(&["frobnicate"], &["frobnicate"]);
    // No subcommand: the help, as a usage error.
    let out = humanoid(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("Usage: humanoid"));
    usage(
        &["run", "worlds/lin-family.toml", "--no-such-flag"],
        &["--no-such-flag"],
    );
    usage(&["run"], &["WORLD"]);
    usage(
        &["run", "worlds/lin-family.toml", "--days", "two"],
        &["two", "--days"],
    );
    usage(&["run", "worlds/lin-family.toml", "--seed", "-1"], &["-1"]);
    usage(
        &["run", "worlds/lin-family.toml", "--device", "tpu"],
        &["tpu", "--device", "cuda"],
    );
    usage(&["chat", "hi", "--device", "cuda:x"], &["cuda:x"]);
    usage(&["resume"], &["DIR"]);
    usage(&["resume", "x", "--device", "gpu:one"], &["gpu:one"]);
    usage(&["check"], &["DIR"]);
    usage(&["serve", "runs", "--port", "99999"], &["99999"]);
    usage(
        &["serve", "runs", "--host", "localhost:1"],
        &["localhost:1"],
    );
    usage(&["validate"], &["WORLD"]);
    usage(&["models", "frob"], &["frob"]);
    usage(&["bench", "gpu"], &["gpu"]);
}

#[test]
fn run_rejects_bad_input_before_loading_a_model() {
    let s = Scratch::new();
    let lin = "worlds/lin-family.toml";
    // The world.
    s.run_fails(
        "worlds/no-such-world.toml",
        &[],
        &["worlds/no-such-world.toml"],
    );
    s.run_fails(
        "tests/data/bad_worlds/unknown_location.toml",
        &[],
        &["unknown_location.toml:24:12", "House/Bedrom"],
    );
    // Conditions.
    s.run_fails(
        lin,
        &["--condition", "fullness=99"],
        &["fullness=99", "0–10"],
    );
    s.run_fails(lin, &["--condition", "emotion=bored"], &["bored", "happy"]);
    s.run_fails(
        lin,
        &["--condition", "closeness=x"],
        &["closeness=x", "0–30"],
    );
    s.run_fails(lin, &["--condition", "closeness=-1"], &["closeness=-1"]);
    s.run_fails(lin, &["--condition", "hunger=3"], &["hunger", "fullness"]);
    s.run_fails(lin, &["--condition", "sleepy"], &["sleepy", "="]);
    s.run_fails(
        lin,
        &["--condition", "fun=2", "--condition", "energy=11"],
        &["energy=11"],
    );
    // Days and the device.
    s.run_fails(lin, &["--days", "0"], &["--days", "0"]);
    s.run_fails(lin, &["--days", "100000"], &["--days", "100000", "365"]);
    s.run_fails(lin, &["--device", "metal"], &["metal"]);
    // Models: resolved before anything is loaded.
    s.run_fails(
        lin,
        &["--model", "no-such-model"],
        &["no-such-model", "smollm2-135m"],
    );
    let missing = s.s("missing.gguf");
    s.run_fails(lin, &["--model", &missing], &["missing.gguf"]);
    s.run_fails(lin, &["--model", "hf:owner"], &["hf:owner"]);
    s.run_fails(lin, &["--model", ""], &["empty"]);

    // An --out that is a file, or a folder that is not empty, is refused and left alone.
    std::fs::write(s.path("file"), b"keep").unwrap();
    let file = s.s("file");
    let out = humanoid(&["run", lin, "--model", &s.s("sentinel.gguf"), "--out", &file]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&file) && stderr.contains("not a folder"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("sentinel.gguf"),
        "checked after loading: {stderr}"
    );
    assert_eq!(std::fs::read(s.path("file")).unwrap(), b"keep");
    std::fs::create_dir(s.path("full")).unwrap();
    std::fs::write(s.path("full/notes.txt"), b"mine").unwrap();
    let full = s.s("full");
    let out = humanoid(&["run", lin, "--model", &s.s("sentinel.gguf"), "--out", &full]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("not empty") && stderr.contains(&full),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(s.path("full")).unwrap().count(),
        1,
        "the folder was left alone"
    );

    // The sentinel itself: past the checks, the model load fails naming the file, and still
    // nothing is written.
    let sentinel = s.s("sentinel.gguf");
    let stderr = fails(
        &["run", lin, "--model", &sentinel, "--out", &s.s("out")],
        &[&sentinel, "GGUF"],
    );
    assert!(!s.path("out").exists(), "{stderr}");
}

#[test]
fn folders_that_are_not_runs_are_clear_errors() {
    let s = Scratch::new();
    let missing = s.s("missing");
    std::fs::create_dir(s.path("empty")).unwrap();
    let empty = s.s("empty");
    std::fs::create_dir(s.path("garbled")).unwrap();
    std::fs::write(s.path("garbled/config.json"), b"{\"version\": 3").unwrap();
    let garbled = s.s("garbled");
    let before = s.written();
    for cmd in ["resume", "check"] {
        fails(&[cmd, &missing], &[&missing, "not a run directory"]);
        fails(&[cmd, &empty], &[&empty, "not a run directory"]);
        fails(&[cmd, &garbled], &["config.json"]);
    }
    let html = s.s("report.html");
    fails(
        &["report", &missing, "-o", &html],
        &[&missing, "not a folder"],
    );
    fails(&["report", &empty, "-o", &html], &[&empty, "no run"]);
    fails(
        &["report", &s.s("sentinel.gguf"), "-o", &html],
        &["not a folder"],
    );
    assert!(!s.path("report.html").exists());
    assert!(!s.path("report.html.tmp").exists());
    // serve fails before it listens (a server would never exit: wait at most 60 s).
    let mut child = Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .env(
            humanoid::model_store::CHAT_MODEL_ENV,
            crate::util::FAST_CHAT_MODEL,
        )
        .args(["serve", &missing, "--port", "0"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if started.elapsed() > Duration::from_secs(60) {
            child.kill().ok();
            child.wait().ok();
            panic!("serve of a missing folder is still running after 60 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&missing) && !stderr.contains("panicked at"),
        "{stderr}"
    );
    assert_eq!(s.written(), before, "nothing written");
}

#[test]
fn validate_names_file_and_line_of_broken_worlds() {
    let s = Scratch::new();
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/lin-family.toml"),
    )
    .unwrap();
    // A byte that is not UTF-8 on line 5; an unclosed list (the parser's message has two
    // lines); an agent name changed in one place only.
    let mut bytes = text.clone().into_bytes();
    let line5 = text.match_indices('\n').nth(3).unwrap().0 + 1;
    bytes.insert(line5 + 3, 0xff);
    std::fs::write(s.path("latin1.toml"), &bytes).unwrap();
    std::fs::write(
        s.path("unclosed.toml"),
        text.replacen("  \"Johnson Park\",\n]", "  \"Johnson Park\",\n", 1),
    )
    .unwrap();
    std::fs::write(
        s.path("renamed.toml"),
        text.replacen("name = \"Eddy Lin\"", "name = \"Teddy Lin\"", 1),
    )
    .unwrap();
    let (latin1, unclosed, renamed) = (
        s.s("latin1.toml"),
        s.s("unclosed.toml"),
        s.s("renamed.toml"),
    );
    let missing = s.s("missing.toml");
    let stderr = fails(
        &[
            "validate",
            &latin1,
            &unclosed,
            &renamed,
            &missing,
            "worlds/friends.toml",
        ],
        &[
            &format!("{latin1}:5:4: "),
            "not valid UTF-8",
            &format!("{unclosed}:"),
            "invalid TOML",
            &format!("{renamed}:"),
            "\"Eddy Lin\"",
            &missing,
            "4 of 5 world files are invalid",
        ],
    );
    // Every problem is one line that starts with its file.
    for line in stderr.lines().filter(|l| !l.starts_with("error: ")) {
        let parsed = [&latin1, &unclosed, &renamed]
            .iter()
            .any(|f| line.starts_with(&format!("{f}:")));
        let unread = line.starts_with(&format!("cannot read world file {missing}:"));
        assert!(
            parsed || unread,
            "a line that does not start with its file: {line:?}\n{stderr}"
        );
    }
    assert!(
        stderr
            .lines()
            .filter(|l| l.starts_with(&format!("{unclosed}:")))
            .all(|l| l.contains("invalid TOML")),
        "{stderr}"
    );
}

#[test]
fn model_commands_name_the_bad_model_or_device() {
    let s = Scratch::new();
    let sentinel = s.s("sentinel.gguf");
    fails(&["inspect-model", &sentinel], &[&sentinel, "GGUF"]);
    fails(
        &["inspect-model", "no-such-model"],
        &["no-such-model", "smollm2-135m"],
    );
    fails(&["chat", "hi", "--model", &sentinel], &[&sentinel, "GGUF"]);
    fails(
        &["bench", "llm", "--model", "no-such-model"],
        &["no-such-model"],
    );
    fails(&["models", "fetch", "no-such-model"], &["no-such-model"]);
    assert_eq!(s.written(), Vec::<String>::new());
}

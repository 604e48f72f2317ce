//! Helpers shared by the integration tests: the real default models, fetched if absent.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

/// The models folder the binary uses (`HUMANOID_MODELS`, else the repository's `models/`).
pub fn models_dir() -> PathBuf {
    humanoid::model_store::models_dir()
}

/// The chat model the binary uses in tests that do not pass `--model` (set through
/// `HUMANOID_CHAT_MODEL`): the fast SmolLM2-135M, not the 1.5B default of the main job.
pub const FAST_CHAT_MODEL: &str = "smollm2-135m";

/// Models already checked by this test process.
static CHECKED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Makes sure the model `name` is present (fetching it with models/fetch.py if not).
pub fn ensure_model(name: &str) {
    let mut checked = CHECKED.lock().unwrap_or_else(|e| e.into_inner());
    if checked.iter().any(|n| n == name) {
        return;
    }
    let status = Command::new("python3")
        .arg(models_dir().join("fetch.py"))
        .arg(name)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "models/fetch.py {name} failed");
    checked.push(name.to_string());
}

/// Makes sure every default model is present. In a whole-suite run the first call also starts
/// the shared one-day run in the background ([`crate::sim::start_one_day_early`]): nearly
/// every test comes through here first, so the longest fixture starts with the suite.
pub fn ensure_models() {
    for name in ["smollm2-135m", "gemma3-270m", "minilm-l6-v2"] {
        ensure_model(name);
    }
    crate::sim::start_one_day_early();
}

/// Path of a fetched model file, `models/<name>/<file>`.
pub fn model_file(name: &str, file: &str) -> PathBuf {
    ensure_model(name);
    models_dir().join(name).join(file)
}

/// The fast chat model of most tests (SmolLM2-135M-Instruct Q4_1).
pub fn smollm2() -> PathBuf {
    model_file("smollm2-135m", "SmolLM2-135M-Instruct.Q4_1.gguf")
}

/// The believable default chat model (Qwen2.5-Coder-1.5B-Instruct Q4_K_M, qwen2).
pub fn qwen2() -> PathBuf {
    model_file(
        "qwen2.5-coder-1.5b",
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    )
}

/// The second architecture (gemma-3-270m Q4_K_M).
pub fn gemma3() -> PathBuf {
    model_file("gemma3-270m", "gemma-3-270m-q4_k_m.gguf")
}

/// The llama.cpp reference data (tests/data/llamacpp-reference.json).
pub fn llamacpp_reference() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/llamacpp-reference.json");
    serde_json::from_str(&std::fs::read_to_string(&path).expect("reference file")).unwrap()
}

/// Runs the binary from the crate root on the test models (fetched if absent).
pub fn humanoid(args: &[&str]) -> Output {
    ensure_models();
    Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .env(
            humanoid::model_store::CHAT_MODEL_ENV,
            crate::util::FAST_CHAT_MODEL,
        )
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .env("HUMANOID_MODELS", models_dir())
        .output()
        .expect("the binary runs")
}

/// The stdout of a command that must have succeeded (else a panic showing its stderr).
pub fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Copies a run folder (its files and its `states/`) to `to`, which is created.
pub fn copy_run(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if src.is_dir() {
            copy_run(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// The path of state file `name` of the run in `dir`.
pub fn state_path(dir: &Path, name: &str) -> PathBuf {
    humanoid::sim::RunDir::new(dir).state_path(name)
}

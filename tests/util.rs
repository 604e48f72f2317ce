//! Helpers shared by the integration tests: the real default models, fetched if absent.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

/// The repository's `models/` folder.
pub fn models_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("models")
}

static FETCH: Once = Once::new();

/// Makes sure every model with a manifest is present (fetching with models/fetch.py if not).
pub fn ensure_models() {
    FETCH.call_once(|| {
        let status = Command::new("python3")
            .arg(models_dir().join("fetch.py"))
            .arg("--all")
            .status()
            .expect("python3 runs");
        assert!(status.success(), "models/fetch.py --all failed");
    });
}

/// Path of a fetched model file, `models/<name>/<file>`.
pub fn model_file(name: &str, file: &str) -> PathBuf {
    ensure_models();
    models_dir().join(name).join(file)
}

/// The default chat model (SmolLM2-135M-Instruct Q4_1).
pub fn smollm2() -> PathBuf {
    model_file("smollm2-135m", "SmolLM2-135M-Instruct.Q4_1.gguf")
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

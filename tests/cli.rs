//! The binary itself, as a user runs it: real processes on the real default models.

use std::process::Command;

use crate::util;

fn humanoid(args: &[&str]) -> std::process::Output {
    util::ensure_models();
    Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .env(
            humanoid::model_store::CHAT_MODEL_ENV,
            crate::util::FAST_CHAT_MODEL,
        )
        .args(args)
        .env("HUMANOID_MODELS", util::models_dir())
        .output()
        .expect("the binary runs")
}

fn stdout_json(out: &std::process::Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "exit {:?}, stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is one JSON object")
}

#[test]
fn inspect_model_reports_the_default_model() {
    let info = stdout_json(&humanoid(&["inspect-model", "--json"]));
    assert_eq!(info["architecture"], "llama");
    assert_eq!(info["layers"], 30);
    assert_eq!(info["vocab"], 49152);
    assert!(info["chat_template"]
        .as_str()
        .unwrap()
        .contains("<|im_start|>"));
    let gemma = stdout_json(&humanoid(&["inspect-model", "gemma3-270m", "--json"]));
    assert_eq!(gemma["architecture"], "gemma3");
}

/// A load that cannot fit the free memory is refused before anything is read, with the
/// figures `inspect-model` prints for the same settings; a load that fits goes ahead.
#[test]
fn a_load_too_large_for_the_free_memory_is_refused_with_the_figures() {
    let run = |args: &[&str], free_mib: &str| {
        util::ensure_models();
        Command::new(env!("CARGO_BIN_EXE_humanoid"))
            .env(
                humanoid::model_store::CHAT_MODEL_ENV,
                crate::util::FAST_CHAT_MODEL,
            )
            .env("HUMANOID_MODELS", util::models_dir())
            .env(humanoid::llm::footprint::MEMORY_ENV, free_mib)
            .args(args)
            .output()
            .expect("the binary runs")
    };
    for device in ["cpu", "tensor-cpu"] {
        let info = stdout_json(&run(
            &["inspect-model", "--json", "--device", device],
            "100",
        ));
        let m = &info["memory"];
        assert_eq!(m["device"], device);
        assert_eq!(m["available_bytes"], 100u64 << 20);
        assert_eq!(m["fits"], false, "{m}");
        let total = m["total_bytes"].as_u64().unwrap();
        let parts = [
            "weights_bytes",
            "host_weights_bytes",
            "kv_bytes",
            "scratch_bytes",
        ]
        .map(|k| m[k].as_u64().unwrap());
        assert_eq!(parts.iter().sum::<u64>(), total);
        // The 135M model's weights: between its file's size and twice it.
        let file = std::fs::metadata(util::smollm2()).unwrap().len();
        assert!(
            parts[0] + parts[1] > file / 2 && parts[0] + parts[1] < 2 * file,
            "{m}"
        );
        let o = run(
            &["chat", "hello", "--max-tokens", "2", "--device", device],
            "100",
        );
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        let need = format!("needs {:.0} MiB on {device}", total as f64 / 1048576.0);
        assert!(err.contains(&need), "{err} (expected {need:?})");
        assert!(
            err.contains("100 MiB is free") && err.contains("nothing was loaded"),
            "{err}"
        );
        assert!(
            err.contains("SmolLM2-135M-Instruct.Q4_1.gguf"),
            "names the file: {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
    // Enough memory: the same command answers.
    let o = run(&["chat", "hello", "--max-tokens", "2"], "100000");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn chat_streams_the_engines_greedy_reply() {
    use humanoid::llm::{Engine, EngineOptions, GenerateRequest, Message, Prompt};
    let q = "What is the capital of France?";
    let out = humanoid(&["chat", q, "--max-tokens", "12"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let streamed = String::from_utf8_lossy(&out.stdout);
    let mut e = Engine::load(&util::smollm2(), EngineOptions::default()).unwrap();
    let want = e
        .generate(GenerateRequest::new(
            Prompt::Chat(vec![Message::user(q)]),
            12,
        ))
        .unwrap();
    assert!(!want.text.trim().is_empty());
    assert_eq!(
        streamed.trim_end_matches('\n'),
        want.text,
        "streamed text differs from the reply"
    );
}

#[test]
fn bench_memory_prints_the_documented_json() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("vectors.f32");
    let out = humanoid(&[
        "bench",
        "memory",
        "--sizes",
        "150,300",
        "--queries",
        "5",
        "--ef-search",
        "32",
        "--json",
        "--cache",
        cache.to_str().unwrap(),
    ]);
    let v = stdout_json(&out);
    assert!(v["embed_per_s"]["1"].as_f64().unwrap() > 0.0);
    assert!(v["embed_per_s"]["32"].as_f64().unwrap() > 0.0);
    let rows = v["retrieval"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[1]["memories"], 300);
    assert!(rows[1]["recall_at_10"].as_f64().unwrap() >= 0.9);
    assert!(cache.exists(), "embeddings are cached between runs");
}

#[test]
fn bad_command_lines_fail_clearly() {
    let out = humanoid(&["chat"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("PROMPT"));
    let out = humanoid(&["chat", "hi", "--model", "no-such-model"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no-such-model") && err.contains("smollm2-135m"),
        "{err}"
    );
    let out = humanoid(&["inspect-model", "/nonexistent/model.gguf"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/model.gguf"));
}

#[test]
fn world_generate_writes_a_valid_town_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("town.toml");
    let bin = env!("CARGO_BIN_EXE_humanoid");
    let gen = |agents: &str| {
        std::process::Command::new(bin)
            .env(
                humanoid::model_store::CHAT_MODEL_ENV,
                crate::util::FAST_CHAT_MODEL,
            )
            .args(["world", "generate", "--agents", agents, "--seed", "4", "-o"])
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = gen("30");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let world = humanoid::world::World::load(&out).unwrap();
    assert_eq!(world.agents.len(), 30);
    let v = std::process::Command::new(bin)
        .env(
            humanoid::model_store::CHAT_MODEL_ENV,
            crate::util::FAST_CHAT_MODEL,
        )
        .arg("validate")
        .arg(&out)
        .output()
        .unwrap();
    assert!(v.status.success());
    let again = gen("30");
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
    std::fs::remove_file(&out).unwrap();
    let bad = gen("0");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--agents 0"));
    assert!(!out.exists());
}

/// `HUMANOID_PROMPT_LOG` writes one line per model call of the run: its prompt, and the
/// generated text or the options' probabilities, as the event log counts the calls.
#[test]
fn the_prompt_log_holds_every_call_of_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let log = tmp.path().join("prompts.jsonl");
    util::ensure_models();
    let out = Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .env(humanoid::model_store::CHAT_MODEL_ENV, util::FAST_CHAT_MODEL)
        .env("HUMANOID_MODELS", util::models_dir())
        .env("HUMANOID_PROMPT_LOG", &log)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["run", "worlds/lin-family.toml", "--steps", "2", "--out"])
        .arg(&dir)
        .output()
        .unwrap();
    util::ok(&out);
    let events = std::fs::read_to_string(dir.join("events.jsonl")).unwrap();
    let calls = events
        .lines()
        .filter(|l| l.contains("\"type\":\"model_call\""))
        .count();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(
        calls > 10 && lines.len() == calls,
        "{} lines, {calls} calls",
        lines.len()
    );
    for l in &lines {
        assert!(!l["prompt"].is_null(), "{l}");
        assert!(l["text"].is_string() || l["probs"].is_array(), "{l}");
    }
    assert!(lines
        .iter()
        .any(|l| l["text"].as_str().is_some_and(|t| t.contains("am:"))));
}

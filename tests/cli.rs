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

//! The qwen2 architecture on the believable default, Qwen2.5-Coder-1.5B-Instruct Q4_K_M,
//! against llama.cpp's outputs on the same file (`tests/data/qwen2/`, made by the script there).
//!
//! The 1.5B model is slow on 2 cores: these tests share one loaded model per path and keep
//! prompts short.

use std::sync::OnceLock;

use humanoid::llm::gguf::GgufFile;
use humanoid::llm::model::{LogitsFor, Model, SeqInput, WeightFormat};
use humanoid::llm::tensor::TensorModel;
use humanoid::llm::Tokenizer;

use crate::util;

/// llama.cpp's reference outputs on the 1.5B (tokenize, top logits, greedy continuations).
fn reference() -> &'static serde_json::Value {
    static REF: OnceLock<serde_json::Value> = OnceLock::new();
    REF.get_or_init(|| {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/qwen2/llamacpp-reference.json");
        serde_json::from_str(&std::fs::read_to_string(&path).expect("reference file")).unwrap()
    })
}

fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array()
        .expect("an id array")
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// The kernels-path model (weights as the engine holds them by default), loaded once.
fn model() -> &'static Model {
    static M: OnceLock<Model> = OnceLock::new();
    M.get_or_init(|| {
        let mut g = GgufFile::open(&util::qwen2()).expect("open gguf");
        Model::load(&mut g, WeightFormat::Quantized, 4096).expect("load qwen2")
    })
}

fn logits_after(model: &Model, prompt: &[u32]) -> Vec<f32> {
    let mut cache = model.new_cache(prompt.len());
    let mut seqs = [SeqInput {
        cache: &mut cache,
        tokens: prompt,
        logits: LogitsFor::Last,
    }];
    model.forward(&mut seqs).expect("forward").remove(0)
}

fn argmax(v: &[f32]) -> u32 {
    (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap() as u32
}

#[test]
fn qwen2_loads_with_its_architecture() {
    let g = GgufFile::open(&util::qwen2()).expect("open gguf");
    let cfg = humanoid::llm::config::Config::from_gguf(&g).expect("config");
    assert_eq!(cfg.arch, humanoid::llm::config::Arch::Qwen2);
    assert!(cfg.rope_neox && cfg.qkv_bias);
    assert_eq!(cfg.rope_base, 1_000_000.0);
    assert_eq!(
        (cfg.n_layers, cfg.hidden, cfg.n_heads, cfg.n_kv_heads),
        (28, 1536, 12, 2)
    );
    let tok = Tokenizer::from_gguf(&g).expect("tokenizer");
    assert_eq!(tok.token_str(tok.eos_id().unwrap()), Some("<|im_end|>"));
    assert!(!tok.add_bos());
}

/// The default (quantized) kernels keep the file's Q4_K/Q6_K blocks: about the file's size,
/// as the footprint that `inspect-model` prints and every load checks said before loading.
#[test]
fn qwen2_weights_stay_near_the_file_size_as_the_footprint_said() {
    use humanoid::llm::footprint::{estimate, LoadShape};
    let g = GgufFile::open(&util::qwen2()).expect("open gguf");
    let cfg = humanoid::llm::config::Config::from_gguf(&g).expect("config");
    let shape = LoadShape {
        device: humanoid::llm::DeviceChoice::Cpu,
        format: WeightFormat::Quantized,
        context: 4096,
        prefix_cache_bytes: 64 << 20,
        max_batched_tokens: 1024,
    };
    let said = estimate(&g, &cfg, &shape).weights_bytes as f64;
    let held = model().weight_bytes() as f64;
    let file = std::fs::metadata(util::qwen2()).unwrap().len() as f64;
    eprintln!(
        "qwen2 kernels: {:.0} MiB held, {:.0} MiB estimated, file {:.0} MiB",
        held / 1048576.0,
        said / 1048576.0,
        file / 1048576.0
    );
    assert!(
        (said / held - 1.0).abs() < 0.02,
        "estimated {said}, held {held}"
    );
    assert!(held < 1.15 * file, "{held} bytes held for a file of {file}");
}

#[test]
fn qwen2_tokenizer_matches_llamacpp() {
    let g = GgufFile::open(&util::qwen2()).expect("open gguf");
    let tok = Tokenizer::from_gguf(&g).expect("tokenizer");
    for case in reference()["tokenize"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        assert_eq!(
            tok.encode(text, true).unwrap(),
            ids(&case["ids"]),
            "{text:?}"
        );
    }
}

#[test]
fn qwen2_logits_match_llamacpp() {
    let model = model();
    let mut worst = 0f32;
    for case in reference()["top_logits"].as_array().unwrap() {
        let logits = logits_after(model, &ids(&case["ids"]));
        let top = case["top"].as_array().unwrap();
        let (first, l0, l1) = (
            top[0][0].as_u64().unwrap() as u32,
            top[0][1].as_f64().unwrap() as f32,
            top[1][1].as_f64().unwrap() as f32,
        );
        if l0 - l1 > 0.5 {
            assert_eq!(argmax(&logits), first, "argmax of {:?}", case["prompt"]);
        }
        for t in top {
            let (id, l) = (
                t[0].as_u64().unwrap() as usize,
                t[1].as_f64().unwrap() as f32,
            );
            worst = worst.max((logits[id] - l).abs());
        }
    }
    eprintln!("qwen2 (quantized kernels): largest |logit - llama.cpp| over the reference top-10: {worst:.3}");
    // The file's Q4_K/Q6_K blocks against Q8_K activations on both sides (llama.cpp's KV cache
    // in F16, ours in F32): 0.297 measured (2026-12-01; 0.32 when we requantized to Q8_0);
    // the bound leaves room for other CPUs' kernels.
    assert!(worst < 0.6, "logits differ from llama.cpp by {worst}");
}

/// Greedy decoding follows llama.cpp's: with llama.cpp's own continuation fed in (teacher
/// forcing, one forward over prompt and continuation), our argmax equals llama.cpp's at every
/// position where llama.cpp's two best logits are at least `NEAR_TIE` apart (quantization
/// noise may order a near-tie either way, after which free-running texts diverge).
#[test]
fn qwen2_greedy_text_matches_llamacpp() {
    const NEAR_TIE: f32 = 0.5;
    let model = model();
    let vocab = model.config().vocab;
    let (mut compared, mut near_ties) = (0, 0);
    for case in reference()["greedy"].as_array().unwrap() {
        let prompt = ids(&case["ids"]);
        let want = ids(&case["generated"]);
        let margins: Vec<f32> = case["margins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_f64().unwrap() as f32)
            .collect();
        let tokens: Vec<u32> = prompt
            .iter()
            .chain(&want[..want.len() - 1])
            .copied()
            .collect();
        let mut cache = model.new_cache(tokens.len());
        let mut seqs = [SeqInput {
            cache: &mut cache,
            tokens: &tokens,
            logits: LogitsFor::All,
        }];
        let logits = model.forward(&mut seqs).expect("forward").remove(0);
        for (i, &w) in want.iter().enumerate() {
            let row = &logits[(prompt.len() - 1 + i) * vocab..(prompt.len() + i) * vocab];
            if margins[i] < NEAR_TIE {
                near_ties += 1;
                continue;
            }
            assert_eq!(
                argmax(row),
                w,
                "{:?}: token {i} differs (llama.cpp's margin {:.2})",
                case["user"],
                margins[i]
            );
            compared += 1;
        }
    }
    eprintln!("qwen2 greedy: {compared} tokens equal, {near_ties} near-ties skipped");
    assert!(compared >= 40, "only {compared} greedy tokens compared");
}

/// The tensor path (candle ops; `--device tensor-cpu` here, the GPU path in a CUDA build) on
/// qwen2 against our kernels on the same prompts, its weights kept in the file's Q4_K/Q6_K
/// blocks and multiplied by candle's quantized matmul, as a GPU holds them.
#[test]
fn qwen2_tensor_path_matches_the_kernels() {
    let dev = candle_core::Device::Cpu;
    let mut g = GgufFile::open(&util::qwen2()).expect("open gguf");
    let tensor =
        TensorModel::load(&mut g, &dev, WeightFormat::Quantized, 512).expect("load tensor model");
    // The device holds the weights at their file's size (its embedding table stays on the
    // host, the untied head is on the device).
    let file = std::fs::metadata(util::qwen2()).unwrap().len() as f64;
    let held = tensor.weight_bytes() as f64;
    eprintln!(
        "qwen2 tensor path (quantized): weights {:.0} MiB, file {:.0} MiB",
        held / 1048576.0,
        file / 1048576.0
    );
    assert!(
        held < 1.3 * file && held > 0.8 * file,
        "{held} bytes of weights for a file of {file}"
    );
    let model = model();
    let case = &reference()["top_logits"][0];
    let prompt = ids(&case["ids"]);
    let ours = logits_after(model, &prompt);
    let mut cache = tensor.cache_with_prefix(Default::default(), prompt.len());
    let mut seqs = [SeqInput {
        cache: &mut cache,
        tokens: &prompt,
        logits: LogitsFor::Last,
    }];
    let theirs = tensor.forward(&mut seqs).expect("tensor forward").remove(0);
    assert_eq!(argmax(&ours), argmax(&theirs));
    let worst = ours
        .iter()
        .zip(&theirs)
        .map(|(a, b)| (a - b).abs())
        .fold(0f32, f32::max);
    eprintln!(
        "qwen2 tensor path vs kernels (both quantized): largest |logit difference| {worst:.3}"
    );
    // Candle's quantized matmul on the file's blocks (tensor path) against our kernels, over
    // the whole vocabulary: 0.42 measured with Q8_0 kernels (2026-12-01; 0.24 with the tensor
    // path's weights in F32), 0.50 on the AMX tiles (2026-12-02), which are the closer of the
    // two to llama.cpp (0.19 against 0.30 over its top 10). The bound is the llama.cpp test's.
    assert!(
        worst < 0.6,
        "tensor path differs from the kernels by {worst}"
    );
}

/// The main job on the 1.5B, shortened: the Lin family's first two steps (day plans, hourly
/// and 15-minute plans, judgements) with no fallback and every field well-formed.
#[test]
fn a_short_lin_family_run_on_the_1_5b_has_no_fallback() {
    util::ensure_model("qwen2.5-coder-1.5b");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let d = dir.to_str().unwrap();
    let out = util::humanoid(&[
        "run",
        "worlds/lin-family.toml",
        "--steps",
        "2",
        "--model",
        "qwen2.5-coder-1.5b",
        "--out",
        d,
    ]);
    let stdout = util::ok(&out);
    assert!(stdout.contains("well-formed: 100.0%"), "{stdout}");
    util::ok(&util::humanoid(&["check", d]));
    // The quality report on the real run: the first two steps' activities are actions in
    // the world's script, none cut off mid-phrase.
    let report = util::ok(&util::humanoid(&["check", d, "--quality", "--json"]));
    let quality: serde_json::Value = serde_json::from_str(&report).unwrap();
    for line in [
        "activities_in_script",
        "activities_are_actions",
        "whole_activities",
    ] {
        assert_eq!(quality[line]["share"], 1.0, "{line}: {quality}");
        assert_eq!(quality[line]["total"], 4, "{line}: {quality}");
    }
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["counters"]["fallbacks"], 0, "{summary}");
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    assert!(
        config["model"]["path"]
            .as_str()
            .unwrap()
            .contains("qwen2.5-coder"),
        "{config}"
    );
}

/// Feelings change what agents do (issue 17): the Lin family's day starting at 2 pm with
/// John starving (fullness 0) and Eddy exhausted (energy 0). Within the first hour each does
/// something the run itself judges to satisfy that need (John eats, Eddy rests), and Eddy
/// rests until he is no longer tired (energy above 3 after the hour).
#[test]
fn a_starving_or_exhausted_agent_eats_or_rests_within_the_hour_on_the_1_5b() {
    util::ensure_model("qwen2.5-coder-1.5b");
    let tmp = tempfile::tempdir().unwrap();
    let world = std::fs::read_to_string("worlds/lin-family.toml").unwrap();
    let world = world.replacen("days = 2\n", "days = 2\nday_start = \"14:00\"\n", 1);
    // The first agent (John) starves, the second (Eddy) is exhausted.
    let mut parts = world.splitn(3, "emotion = \"neutral\"\n");
    let world = format!(
        "{}emotion = \"neutral\"\nneeds = {{ fullness = 0 }}\n{}emotion = \"neutral\"\nneeds = {{ energy = 0 }}\n{}",
        parts.next().unwrap(),
        parts.next().unwrap(),
        parts.next().unwrap()
    );
    let world_path = tmp.path().join("lin-2pm.toml");
    std::fs::write(&world_path, world).unwrap();
    let dir = tmp.path().join("run");
    let out = util::humanoid(&[
        "run",
        world_path.to_str().unwrap(),
        "--steps",
        "4",
        "--model",
        "qwen2.5-coder-1.5b",
        "--out",
        dir.to_str().unwrap(),
    ]);
    util::ok(&out);
    let events: Vec<serde_json::Value> = std::fs::read_to_string(dir.join("events.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let activities: Vec<String> = events
        .iter()
        .filter(|e| e["type"] == "activity")
        .map(|e| format!("{} {}: {}", e["time"], e["agent"], e["activity"]))
        .collect();
    let met = |agent: &str, need: &str| {
        events.iter().any(|e| {
            e["agent"] == agent
                && e["type"] == "needs"
                && e["satisfied"]
                    .as_array()
                    .is_some_and(|s| s.iter().any(|n| n == need))
        })
    };
    let john = met("John Lin", "fullness");
    let eddy = met("Eddy Lin", "energy");
    let eddy_energy = events
        .iter()
        .rfind(|e| e["agent"] == "Eddy Lin" && e["type"] == "needs")
        .map(|e| e["after"]["energy"].clone());
    assert!(
        john && eddy && eddy_energy.as_ref().and_then(|e| e.as_u64()) > Some(3),
        "John eats: {john}, Eddy rests: {eddy}, Eddy's energy after the hour: {eddy_energy:?}\n{}",
        activities.join("\n")
    );
}

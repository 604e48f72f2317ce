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
        Model::load(&mut g, WeightFormat::Q8, 4096).expect("load qwen2")
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
    assert_eq!((cfg.n_layers, cfg.hidden, cfg.n_heads, cfg.n_kv_heads), (28, 1536, 12, 2));
    let tok = Tokenizer::from_gguf(&g).expect("tokenizer");
    assert_eq!(tok.token_str(tok.eos_id().unwrap()), Some("<|im_end|>"));
    assert!(!tok.add_bos());
}

#[test]
fn qwen2_tokenizer_matches_llamacpp() {
    let g = GgufFile::open(&util::qwen2()).expect("open gguf");
    let tok = Tokenizer::from_gguf(&g).expect("tokenizer");
    for case in reference()["tokenize"].as_array().unwrap() {
        let text = case["text"].as_str().unwrap();
        assert_eq!(tok.encode(text, true).unwrap(), ids(&case["ids"]), "{text:?}");
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
            let (id, l) = (t[0].as_u64().unwrap() as usize, t[1].as_f64().unwrap() as f32);
            worst = worst.max((logits[id] - l).abs());
        }
    }
    eprintln!("qwen2 Q8: largest |logit - llama.cpp| over the reference top-10: {worst:.3}");
    // The same bound as the other architectures' tests: our Q8_0 requantization against
    // llama.cpp's Q4_K/Q6_K kernels with Q8_K activations.
    assert!(worst < 1.0, "logits differ from llama.cpp by {worst}");
}

/// Greedy decoding equals llama.cpp's, token for token, up to the first step where llama.cpp's
/// two best logits were within `NEAR_TIE` (quantization noise may order them either way).
#[test]
fn qwen2_greedy_text_matches_llamacpp() {
    const NEAR_TIE: f32 = 0.5;
    let model = model();
    let mut compared = 0;
    for case in reference()["greedy"].as_array().unwrap() {
        let prompt = ids(&case["ids"]);
        let want = ids(&case["generated"]);
        let margins: Vec<f32> = case["margins"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_f64().unwrap() as f32)
            .collect();
        let mut cache = model.new_cache(prompt.len() + want.len());
        let mut next = prompt.clone();
        for (i, &w) in want.iter().enumerate() {
            let mut seqs = [SeqInput {
                cache: &mut cache,
                tokens: &next,
                logits: LogitsFor::Last,
            }];
            let got = argmax(&model.forward(&mut seqs).expect("forward")[0]);
            if margins[i] < NEAR_TIE {
                break;
            }
            assert_eq!(got, w, "{:?}: token {i} differs", case["user"]);
            compared += 1;
            next = vec![got];
        }
    }
    eprintln!("qwen2 greedy: {compared} tokens compared before the first near-tie");
    assert!(compared >= 40, "only {compared} greedy tokens compared");
}

/// The tensor path (candle ops; `--device tensor-cpu` here, the GPU path in a CUDA build) on
/// qwen2 against our kernels on the same prompts.
#[test]
fn qwen2_tensor_path_matches_the_kernels() {
    let dev = candle_core::Device::Cpu;
    let mut g = GgufFile::open(&util::qwen2()).expect("open gguf");
    let tensor = TensorModel::load(&mut g, &dev, 512).expect("load tensor model");
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
    eprintln!("qwen2 tensor path vs kernels (Q8): largest |logit difference| {worst:.3}");
    assert!(worst < 1.0, "tensor path differs from the kernels by {worst}");
}

//! Every architecture we load, checked against llama.cpp without downloading its models: tiny
//! synthetic GGUF files written by `tests/synthetic/make_gguf.py` (random weights, the
//! architecture's real metadata keys, tensor names and shapes, SmolLM2's tokenizer) and
//! llama.cpp's logits on them (`tests/data/synthetic/`, made by `tests/synthetic/reference.py`
//! with llama-cpp-python), on both forward paths: our kernels (F32 weights, and the Q8_0 the
//! engine runs by default) and the candle tensor path on the CPU.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use humanoid::llm::gguf::GgufFile;
use humanoid::llm::model::{LogitsFor, Model, SeqInput, WeightFormat};
use humanoid::llm::tensor::TensorModel;

use crate::util;

/// Largest difference from llama.cpp's logits with F32 weights, as a share of the logits'
/// range at that position (both sides compute in F32; measured on both paths: at most 1.7e-6
/// for the SiLU models, 1.6e-4 for the gemmas, whose GELU approximations differ slightly).
const TOL_F32: f32 = 5e-4;
/// The same with the weights requantized to Q8_0 and activations to int8, the engine's
/// default (measured: 0.012 to 0.024 of the range).
const TOL_Q8: f32 = 0.03;

/// The folder of synthetic GGUF files, written once per test process (the venv with the
/// pinned `gguf` package is made by tests/synthetic/setup.sh).
fn files() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let venv = tmp.join("synthetic-venv");
        let ok = Command::new("bash")
            .arg(root.join("tests/synthetic/setup.sh"))
            .arg(&venv)
            .status()
            .expect("bash runs");
        assert!(ok.success(), "tests/synthetic/setup.sh failed");
        let out = tmp.join("synthetic");
        let o = Command::new(venv.join("bin/python"))
            .arg(root.join("tests/synthetic/make_gguf.py"))
            .arg("--tokenizer")
            .arg(util::smollm2())
            .arg("--out")
            .arg(&out)
            .output()
            .expect("python runs");
        assert!(
            o.status.success(),
            "make_gguf.py failed: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        out
    })
}

/// llama.cpp's reference for `case`, and the synthetic file it was made on (its sha256
/// checked: the script writes the same bytes every time).
fn case(name: &str) -> (serde_json::Value, PathBuf) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/synthetic")
        .join(format!("{name}.json"));
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let file = files().join(format!("{name}.gguf"));
    let sha = humanoid::model_store::sha256_file(&file).unwrap();
    assert_eq!(
        sha,
        reference["sha256"].as_str().unwrap(),
        "{} is not the file the reference was made on: rerun tests/synthetic/reference.py",
        file.display()
    );
    (reference, file)
}

fn u32s(v: &serde_json::Value) -> Vec<u32> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as u32)
        .collect()
}

/// The largest difference between `rows` (one logits row per position) and the reference at
/// its token ids, as a share of the reference logits' range at that position, with where.
fn worst(reference: &serde_json::Value, rows: &[Vec<f32>]) -> (f32, String) {
    let ids = u32s(&reference["ids"]);
    let want = reference["logits"].as_array().unwrap();
    assert_eq!(rows.len(), want.len());
    let mut worst = (0f32, String::new());
    for (p, (row, w)) in rows.iter().zip(want).enumerate() {
        let w: Vec<f32> = w
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap() as f32)
            .collect();
        let range =
            w.iter().fold(f32::MIN, |a, &b| a.max(b)) - w.iter().fold(f32::MAX, |a, &b| a.min(b));
        for (&id, &w) in ids.iter().zip(&w) {
            let d = (row[id as usize] - w).abs() / range.max(1e-6);
            // A NaN counts as the worst.
            if d.is_nan() || d > worst.0 {
                let d = if d.is_nan() { f32::INFINITY } else { d };
                worst = (
                    d,
                    format!("position {p}, token {id}: ours {} vs {w}", row[id as usize]),
                );
            }
        }
    }
    worst
}

/// Every position's logits in one pass, then again as a prefill of 10 and one token at a
/// time (the cache, and the sliding window past its length, must give the same).
fn both_ways<F>(tokens: &[u32], vocab: usize, mut step: F) -> (Vec<Vec<f32>>, Vec<Vec<f32>>)
where
    F: FnMut(bool, &[u32], LogitsFor) -> Vec<f32>,
{
    let all = step(true, tokens, LogitsFor::All);
    let whole: Vec<Vec<f32>> = all.chunks_exact(vocab).map(<[f32]>::to_vec).collect();
    let mut pieces = step(true, &tokens[..10], LogitsFor::All)
        .chunks_exact(vocab)
        .map(<[f32]>::to_vec)
        .collect::<Vec<_>>();
    for t in &tokens[10..] {
        pieces.push(step(false, std::slice::from_ref(t), LogitsFor::Last));
    }
    (whole, pieces)
}

fn check_kernels(name: &str, format: WeightFormat, tol: f32) {
    let (reference, file) = case(name);
    let tokens = u32s(&reference["tokens"]);
    let mut g = GgufFile::open(&file).unwrap();
    let model = Model::load(&mut g, format, 64).unwrap_or_else(|e| panic!("{name}: {e}"));
    let vocab = model.config().vocab;
    let mut cache = model.new_cache(64);
    let (whole, pieces) = both_ways(&tokens, vocab, |fresh, toks, logits| {
        if fresh {
            cache = model.new_cache(64);
        }
        let mut seqs = [SeqInput {
            cache: &mut cache,
            tokens: toks,
            logits,
        }];
        model.forward(&mut seqs).unwrap().remove(0)
    });
    for (how, rows) in [("one pass", &whole), ("prefill then decode", &pieces)] {
        let (d, at) = worst(&reference, rows);
        eprintln!("{name} ({format:?}, {how}): worst {d:.2e} of the range");
        assert!(
            d <= tol,
            "{name} ({format:?}, {how}): {d} of the range > {tol} at {at}"
        );
    }
}

/// The tensor path on the CPU, with weights dequantized at load (`F32`) or kept as stored
/// (`Q8`: the quantized-matmul path, on these F32 files the stored blocks split and permuted
/// as raw bytes).
fn check_tensor(name: &str, format: WeightFormat) {
    let (reference, file) = case(name);
    let tokens = u32s(&reference["tokens"]);
    let mut g = GgufFile::open(&file).unwrap();
    let model = TensorModel::load(&mut g, &candle_core::Device::Cpu, format, 64)
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let vocab = model.config().vocab;
    let mut cache = model.cache_with_prefix(Default::default(), 64);
    let (whole, pieces) = both_ways(&tokens, vocab, |fresh, toks, logits| {
        if fresh {
            cache = model.cache_with_prefix(Default::default(), 64);
        }
        let mut seqs = [SeqInput {
            cache: &mut cache,
            tokens: toks,
            logits,
        }];
        model.forward(&mut seqs).unwrap().remove(0)
    });
    for (how, rows) in [("one pass", &whole), ("prefill then decode", &pieces)] {
        let (d, at) = worst(&reference, rows);
        eprintln!("{name} (tensor-cpu {format:?}, {how}): worst {d:.2e} of the range");
        assert!(
            d <= TOL_F32,
            "{name} (tensor-cpu {format:?}, {how}): {d} of the range > {TOL_F32} at {at}"
        );
    }
}

/// Both paths on one case.
fn check(name: &str) {
    check_kernels(name, WeightFormat::F32, TOL_F32);
    check_kernels(name, WeightFormat::Q8, TOL_Q8);
    check_tensor(name, WeightFormat::F32);
    check_tensor(name, WeightFormat::Q8);
}

#[test]
fn llama_with_llama3_rope_factors_matches_llamacpp() {
    check("llama3");
}

#[test]
fn llama_with_linear_rope_scaling_matches_llamacpp() {
    check("llama-linear");
}

#[test]
fn qwen2_matches_llamacpp() {
    check("qwen2");
}

#[test]
fn qwen3_matches_llamacpp() {
    check("qwen3");
}

#[test]
fn phi3_matches_llamacpp() {
    check("phi3");
}

#[test]
fn gemma2_matches_llamacpp() {
    check("gemma2");
}

#[test]
fn gemma3_matches_llamacpp() {
    check("gemma3");
}

/// A RoPE scaling we do not implement is refused by both loaders, naming it.
#[test]
fn yarn_and_longrope_are_refused_by_name() {
    for (name, what) in [
        ("llama-yarn", "RoPE scaling `yarn`"),
        ("phi3-longrope", "LongRoPE"),
    ] {
        let file = files().join(format!("{name}.gguf"));
        let mut g = GgufFile::open(&file).unwrap();
        let e = Model::load(&mut g, WeightFormat::Q8, 64)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            e.contains(what) && e.contains("not implemented"),
            "{name}: {e}"
        );
        let mut g = GgufFile::open(&file).unwrap();
        let e = TensorModel::load(&mut g, &candle_core::Device::Cpu, WeightFormat::Q8, 64)
            .err()
            .expect("refused")
            .to_string();
        assert!(e.contains(what), "{name}: {e}");
    }
}

//! The tensor forward (the GPU path) against our CPU kernels, on the real default models.
//!
//! By default it runs on candle's CPU backend; `HUMANOID_TEST_DEVICE=cuda` (in a
//! `--features cuda` build) runs the same checks on a GPU.

use humanoid::llm::gguf::GgufFile;
use humanoid::llm::model::{LogitsFor, Model, SeqInput, WeightFormat};
use humanoid::llm::tensor::TensorModel;
use humanoid::llm::{
    Backend, ChooseRequest, DeviceChoice, Engine, EngineOptions, GenerateRequest, Message, Prompt,
    Request, Response,
};

use crate::util;

fn device() -> DeviceChoice {
    std::env::var("HUMANOID_TEST_DEVICE")
        .unwrap_or_else(|_| "tensor-cpu".into())
        .parse()
        .expect("HUMANOID_TEST_DEVICE names a device")
}

fn tensor_model(path: &std::path::Path) -> TensorModel {
    let dev = device()
        .candle_device()
        .expect("device")
        .expect("a tensor device");
    let mut g = GgufFile::open(path).expect("open gguf");
    TensorModel::load(&mut g, &dev, WeightFormat::F32, 4096).expect("load tensor model")
}

fn kernels_model(path: &std::path::Path) -> Model {
    let mut g = GgufFile::open(path).expect("open gguf");
    Model::load(&mut g, WeightFormat::F32, 4096).expect("load model")
}

fn max_diff(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

/// Runs a ragged batch (prefill) then a decode step on `backend`, with fresh caches.
fn prefill_then_decode(backend: &Backend, prompts: &[Vec<u32>], next: &[u32]) -> Vec<Vec<f32>> {
    let mut caches: Vec<_> = prompts
        .iter()
        .map(|p| backend.cache_with_prefix(Default::default(), p.len() + 1))
        .collect();
    let mut inputs: Vec<SeqInput> = caches
        .iter_mut()
        .zip(prompts)
        .map(|(c, p)| SeqInput {
            cache: c,
            tokens: p,
            logits: LogitsFor::All,
        })
        .collect();
    let mut out = backend.forward(&mut inputs).expect("prefill");
    let mut inputs: Vec<SeqInput> = caches
        .iter_mut()
        .zip(next)
        .map(|(c, t)| SeqInput {
            cache: c,
            tokens: std::slice::from_ref(t),
            logits: LogitsFor::Last,
        })
        .collect();
    out.extend(backend.forward(&mut inputs).expect("decode"));
    out
}

fn compare_forward(path: &std::path::Path, name: &str) {
    let prompts: Vec<Vec<u32>> = vec![
        (0..7).map(|i| 100 + i).collect(),
        (0..40).map(|i| 2000 + 3 * i).collect(),
        vec![42],
        (0..9).map(|i| 500 + i).collect(),
    ];
    let next = [7, 8, 9, 10];
    let reference = prefill_then_decode(&kernels_model(path).into(), &prompts, &next);
    let tensor: Backend = tensor_model(path).into();
    let ours = prefill_then_decode(&tensor, &prompts, &next);
    let mut worst = 0f32;
    for (a, b) in reference.iter().zip(&ours) {
        worst = worst.max(max_diff(a, b));
    }
    eprintln!(
        "{name} on {}: largest |tensor - cpu kernels| logit difference (F32): {worst:.2e}",
        device()
    );
    assert!(worst < 2e-2, "{name}: tensor forward differs by {worst}");
    // Each sequence alone on the tensor backend gives the batched result (up to the
    // device's own summation order).
    let mut worst_alone = 0f32;
    for (i, p) in prompts.iter().enumerate() {
        let alone = prefill_then_decode(&tensor, std::slice::from_ref(p), &next[i..=i]);
        worst_alone = worst_alone.max(max_diff(&alone[0], &ours[i]));
        worst_alone = worst_alone.max(max_diff(&alone[1], &ours[prompts.len() + i]));
    }
    eprintln!("{name}: largest |batched - alone| on the tensor backend: {worst_alone:.2e}");
    assert!(
        worst_alone < 2e-2,
        "{name}: batching changed logits by {worst_alone}"
    );
}

#[test]
fn tensor_forward_matches_cpu_kernels_smollm2() {
    compare_forward(&util::smollm2(), "smollm2");
}

#[test]
fn tensor_forward_matches_cpu_kernels_gemma3() {
    // 600 positions: past gemma3's 512-token sliding window, so local layers are masked.
    let path = util::gemma3();
    let long: Vec<u32> = (0..600).map(|i| 1000 + (i * 7) % 5000).collect();
    let reference: Backend = kernels_model(&path).into();
    let tensor: Backend = tensor_model(&path).into();
    let a = prefill_then_decode(&reference, std::slice::from_ref(&long), &[77]);
    let b = prefill_then_decode(&tensor, std::slice::from_ref(&long), &[77]);
    let worst = max_diff(&a[1], &b[1]).max(max_diff(&a[0][599 * 262144..], &b[0][599 * 262144..]));
    eprintln!("gemma3 600 positions: largest |tensor - cpu kernels| {worst:.2e}");
    assert!(worst < 5e-2, "gemma3 long prompt differs by {worst}");
    compare_forward(&path, "gemma3");
}

fn engine(device: DeviceChoice, limits: Option<(usize, usize)>) -> Engine {
    let mut opts = EngineOptions {
        weight_format: WeightFormat::F32,
        device,
        ..EngineOptions::default()
    };
    if let Some((s, t)) = limits {
        opts.limits.max_num_seqs = s;
        opts.limits.max_batched_tokens = t;
    }
    Engine::load(&util::smollm2(), opts).expect("engine loads")
}

fn requests() -> Vec<Request> {
    let chat = |q: &str| Prompt::Chat(vec![Message::user(q)]);
    let mut reqs: Vec<Request> = [
        "Write one sentence about breakfast.",
        "Say hello.",
        "What does a pharmacist do? Answer in one short sentence.",
    ]
    .iter()
    .map(|q| Request::Generate(GenerateRequest::new(chat(q), 16)))
    .collect();
    reqs.push(Request::Choose(ChooseRequest::new(
        chat("Is the sky usually blue on a clear day? Answer yes or no."),
        ["yes", "no"],
    )));
    reqs.push(Request::Choose(ChooseRequest::new(
        chat("Which is a fruit?"),
        ["apple", "hammer", "car"],
    )));
    reqs
}

#[test]
fn engine_on_tensor_backend_agrees_with_cpu_kernels() {
    let reqs = requests();
    let run = |e: &mut Engine| e.run(reqs.clone(), |_| {});
    let reference = run(&mut engine(DeviceChoice::Cpu, None));
    let mut e = engine(device(), None);
    let ours = run(&mut e);
    // Again with tight limits (continuous batching, chunked prefill) and a warm prefix cache.
    let tight = run(&mut engine(device(), Some((2, 24))));
    let again = run(&mut e);
    for (i, r) in reference.iter().enumerate() {
        match (r.as_ref().unwrap(), ours[i].as_ref().unwrap()) {
            (Response::Generated(a), Response::Generated(b)) => {
                eprintln!("cpu {:?} / {}: {:?}", a.text, device(), b.text);
                assert_eq!(a.text, b.text, "greedy text differs");
                for other in [&tight[i], &again[i]] {
                    let Response::Generated(c) = other.as_ref().unwrap() else {
                        panic!("a generation")
                    };
                    assert_eq!(a.text, c.text, "limits or prefix reuse changed the text");
                }
            }
            (Response::Chosen(a), Response::Chosen(b)) => {
                eprintln!("cpu {:?} / {}: {:?}", a.probs, device(), b.probs);
                assert_eq!(a.index, b.index);
                assert!(max_diff(&a.probs, &b.probs) < 1e-3, "{a:?} vs {b:?}");
            }
            _ => panic!("response kinds differ"),
        }
    }
    if let Some((in_use, cap)) = e.model().kv_slots() {
        eprintln!("kv pool after the calls: {in_use} slots in use of {cap}");
        // Only the prefix cache's entries hold slots once every request is done.
        assert!(in_use <= 8192 + 64, "{in_use} slots still held");
    }
}

/// The tensor path with the weights kept in the file's quantization (as a GPU holds them):
/// about the file's size in memory, and the same answers as our kernels.
#[test]
fn quantized_tensor_path_holds_the_file_size_and_agrees_with_the_kernels() {
    let path = util::smollm2();
    let dev = device()
        .candle_device()
        .expect("device")
        .expect("a tensor device");
    let mut g = GgufFile::open(&path).expect("open gguf");
    let tensor = TensorModel::load(&mut g, &dev, WeightFormat::Quantized, 4096).expect("load");
    let file = std::fs::metadata(&path).unwrap().len() as f64;
    let held = tensor.weight_bytes() as f64;
    let mut g = GgufFile::open(&path).expect("open gguf");
    let dense = TensorModel::load(&mut g, &dev, WeightFormat::F32, 4096).expect("load");
    eprintln!(
        "smollm2 on {}: weights {:.1} MiB quantized (+ {:.1} MiB embeddings on the host), \
         {:.1} MiB dequantized; file {:.1} MiB",
        device(),
        held / 1048576.0,
        tensor.host_weight_bytes() as f64 / 1048576.0,
        dense.weight_bytes() as f64 / 1048576.0,
        file / 1048576.0
    );
    assert!(
        held < 1.3 * file && held > 0.7 * file,
        "{held} bytes for a file of {file}"
    );
    // `inspect-model` tells the same figures before anything is loaded.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_humanoid"))
        .args(["inspect-model", "--json", "--device", "tensor-cpu"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let info: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let said = info["memory"]["weights_bytes"].as_f64().unwrap();
    let host = info["memory"]["host_weights_bytes"].as_f64().unwrap();
    assert!(
        (said / held - 1.0).abs() < 0.02,
        "inspect-model says {said}, loaded {held}"
    );
    assert_eq!(host as usize, tensor.host_weight_bytes());
    let prompts: Vec<Vec<u32>> = vec![(0..7).map(|i| 100 + i).collect(), vec![42]];
    let kernels = |format| -> Backend {
        Model::load(&mut GgufFile::open(&path).unwrap(), format, 4096)
            .unwrap()
            .into()
    };
    let exact = prefill_then_decode(&kernels(WeightFormat::F32), &prompts, &[7, 8]);
    let q8 = prefill_then_decode(&kernels(WeightFormat::Q8), &prompts, &[7, 8]);
    let ours = prefill_then_decode(&tensor.into(), &prompts, &[7, 8]);
    let off = |rows: &[Vec<f32>]| {
        exact
            .iter()
            .zip(rows)
            .map(|(x, y)| max_diff(x, y))
            .fold(0f32, f32::max)
    };
    let (d_ours, d_q8) = (off(&ours), off(&q8));
    eprintln!(
        "smollm2: largest logit difference from the exact (F32) forward: quantized tensor path \
         {d_ours:.3}, Q8 kernels {d_q8:.3}"
    );
    assert!(d_ours < 1.5 * d_q8.max(0.1), "{d_ours} vs {d_q8}");
    // The engine on it: the same choices and greedy text as on the kernels.
    let reqs = requests();
    let quantized = |device| {
        let opts = EngineOptions {
            device,
            ..EngineOptions::default()
        };
        Engine::load(&util::smollm2(), opts)
            .expect("engine loads")
            .run(reqs.clone(), |_| {})
    };
    let reference = quantized(DeviceChoice::Cpu);
    let ours = quantized(device());
    let mut same_text = 0;
    for (r, o) in reference.iter().zip(&ours) {
        match (r.as_ref().unwrap(), o.as_ref().unwrap()) {
            (Response::Generated(a), Response::Generated(b)) => {
                eprintln!(
                    "kernels {:?} / quantized {}: {:?}",
                    a.text,
                    device(),
                    b.text
                );
                same_text += usize::from(a.text == b.text);
            }
            (Response::Chosen(a), Response::Chosen(b)) => {
                eprintln!(
                    "kernels {:?} / quantized {}: {:?}",
                    a.probs,
                    device(),
                    b.probs
                );
                assert_eq!(a.index, b.index);
                assert!(max_diff(&a.probs, &b.probs) < 0.05, "{a:?} vs {b:?}");
            }
            _ => panic!("response kinds differ"),
        }
    }
    eprintln!("greedy texts equal: {same_text} of 3");
}

//! Tests of the model forward pass and the engine on the real default models.

use humanoid::llm::gguf::GgufFile;
use humanoid::llm::model::{LogitsFor, Model, SeqInput, WeightFormat};
use humanoid::llm::{
    ChooseRequest, Engine, EngineOptions, GenerateRequest, LlmError, Message, Prompt, Request,
    Response,
};

use crate::util;

fn load(path: &std::path::Path, format: WeightFormat) -> Model {
    let mut g = GgufFile::open(path).expect("open gguf");
    Model::load(&mut g, format, 4096).expect("load model")
}

fn last_logits(model: &Model, ids: &[u32]) -> Vec<f32> {
    let mut cache = model.new_cache(ids.len());
    let mut seqs = [SeqInput {
        cache: &mut cache,
        tokens: ids,
        logits: LogitsFor::Last,
    }];
    model.forward(&mut seqs).expect("forward").remove(0)
}

fn top_k(logits: &[f32], k: usize) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..logits.len()).collect();
    idx.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]));
    idx.truncate(k);
    idx
}

/// Compares our logits with llama.cpp's top-10 for each reference prompt; returns the largest
/// absolute difference over those ids.
fn compare_with_llamacpp(model: &Model, key: &str) -> f32 {
    let reference = util::llamacpp_reference();
    let mut worst = 0f32;
    for case in reference[key]["top_logits"].as_array().unwrap() {
        let ids: Vec<u32> = case["ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect();
        let logits = last_logits(model, &ids);
        let top = case["top"].as_array().unwrap();
        let ref_first = top[0][0].as_u64().unwrap() as usize;
        let ref_second = top[1][1].as_f64().unwrap() as f32;
        let ours = top_k(&logits, 10);
        // A clearly separated reference argmax must be ours too.
        if top[0][1].as_f64().unwrap() as f32 - ref_second > 0.5 {
            assert_eq!(
                ours[0], ref_first,
                "{key} prompt {:?}: argmax differs",
                case["prompt"]
            );
        }
        for t in top {
            let id = t[0].as_u64().unwrap() as usize;
            let l = t[1].as_f64().unwrap() as f32;
            worst = worst.max((logits[id] - l).abs());
        }
        eprintln!(
            "{key} {:?}: our top {:?}, reference top {}",
            case["prompt"],
            &ours[..5],
            top.iter()
                .take(5)
                .map(|t| t[0].to_string())
                .collect::<Vec<_>>()
                .join(",")
        );
    }
    worst
}

#[test]
fn smollm2_logits_match_llamacpp() {
    let model = load(&util::smollm2(), WeightFormat::Q8);
    let worst = compare_with_llamacpp(&model, "smollm2");
    eprintln!("smollm2 Q8: largest |logit - llama.cpp| over reference top-10: {worst:.3}");
    assert!(worst < 1.0, "logits differ from llama.cpp by {worst}");
}

#[test]
fn gemma3_logits_match_llamacpp() {
    let model = load(&util::gemma3(), WeightFormat::Q8);
    let worst = compare_with_llamacpp(&model, "gemma3");
    eprintln!("gemma3 Q8: largest |logit - llama.cpp| over reference top-10: {worst:.3}");
    assert!(worst < 1.0, "logits differ from llama.cpp by {worst}");
}

fn engine(path: &std::path::Path, format: WeightFormat, limits: Option<(usize, usize)>) -> Engine {
    let mut opts = EngineOptions {
        weight_format: format,
        ..EngineOptions::default()
    };
    if let Some((s, t)) = limits {
        opts.limits.max_num_seqs = s;
        opts.limits.max_batched_tokens = t;
    }
    Engine::load(path, opts).expect("engine loads")
}

const TOPICS: [&str; 5] = [
    "Write one sentence about breakfast.",
    "Name three colors of the rainbow and say which one you like best, briefly.",
    "What does a pharmacist do? Answer in one short sentence please, with no more than twelve words.",
    "Say hello.",
    "Describe a quiet morning in a small town where a shopkeeper opens his pharmacy at seven, greets the first customer, and sorts the new deliveries, in two sentences.",
];

fn chat(q: &str) -> Prompt {
    Prompt::Chat(vec![Message::user(q)])
}

fn texts(results: Vec<humanoid::llm::error::Result<Response>>) -> Vec<String> {
    results
        .into_iter()
        .map(|r| match r.expect("request succeeds") {
            Response::Generated(g) => g.text,
            Response::Chosen(c) => format!("{:?}", c.probs),
        })
        .collect()
}

fn gen_requests(n_tokens: usize) -> Vec<Request> {
    TOPICS
        .iter()
        .map(|t| Request::Generate(GenerateRequest::new(chat(t), n_tokens)))
        .collect()
}

/// Runs each request alone, with a fresh prefix cache.
fn alone(e: &mut Engine, reqs: &[Request]) -> Vec<String> {
    reqs.iter()
        .map(|r| {
            e.clear_prefix_cache();
            texts(e.run(vec![r.clone()], |_| {})).remove(0)
        })
        .collect()
}

#[test]
fn batched_generation_equals_generation_alone_f32_and_q8() {
    for format in [WeightFormat::F32, WeightFormat::Q8] {
        let mut e = engine(&util::smollm2(), format, None);
        let reqs = gen_requests(24);
        let one_by_one = alone(&mut e, &reqs);
        e.clear_prefix_cache();
        let batched = texts(e.run(reqs.clone(), |_| {}));
        assert_eq!(
            batched, one_by_one,
            "{format:?}: batching changed greedy outputs"
        );
        assert!(batched.iter().all(|t| !t.trim().is_empty()), "{batched:?}");
        // Continuous batching with tight limits: sequences join as others finish.
        let mut small = engine(&util::smollm2(), format, Some((2, 48)));
        let limited = texts(small.run(reqs, |_| {}));
        assert_eq!(
            limited, one_by_one,
            "{format:?}: scheduling limits changed outputs"
        );
    }
}

#[test]
fn batched_logits_are_bit_identical_to_alone() {
    // Our kernels compute each row the same way whatever the batch: the measured
    // quantization-noise difference between batched and alone is exactly zero.
    let model = load(&util::smollm2(), WeightFormat::Q8);
    let prompts: Vec<Vec<u32>> = vec![
        (0..7).map(|i| 100 + i).collect(),
        (0..31).map(|i| 2000 + 3 * i).collect(),
        vec![42],
        (0..64).map(|i| 500 + i).collect(),
    ];
    let alone: Vec<Vec<f32>> = prompts.iter().map(|p| last_logits(&model, p)).collect();
    let mut caches: Vec<_> = prompts.iter().map(|p| model.new_cache(p.len())).collect();
    let mut inputs: Vec<SeqInput> = caches
        .iter_mut()
        .zip(&prompts)
        .map(|(c, p)| SeqInput {
            cache: c,
            tokens: p,
            logits: LogitsFor::Last,
        })
        .collect();
    let batched = model.forward(&mut inputs).unwrap();
    let mut worst = 0f32;
    for (a, b) in alone.iter().zip(&batched) {
        for (x, y) in a.iter().zip(b) {
            worst = worst.max((x - y).abs());
        }
    }
    eprintln!("largest |batched - alone| logit difference: {worst}");
    assert_eq!(worst, 0.0);
    // Then one decode step for all four at different positions.
    let next: Vec<u32> = vec![7, 8, 9, 10];
    let mut inputs: Vec<SeqInput> = caches
        .iter_mut()
        .zip(&next)
        .map(|(c, t)| SeqInput {
            cache: c,
            tokens: std::slice::from_ref(t),
            logits: LogitsFor::Last,
        })
        .collect();
    let step = model.forward(&mut inputs).unwrap();
    for (i, p) in prompts.iter().enumerate() {
        let mut full = p.clone();
        full.push(next[i]);
        assert_eq!(
            last_logits(&model, &full),
            step[i],
            "decode row {i} differs from a fresh prefill"
        );
    }
}

#[test]
fn matches_candle_stock_quantized_llama() {
    use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
    use candle_core::{Device, Tensor};
    let path = util::smollm2();
    let ids: Vec<u32> = util::llamacpp_reference()["smollm2"]["top_logits"][1]["ids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect();
    let stock_logits = |p: &std::path::Path| -> Vec<f32> {
        let mut f = std::fs::File::open(p).unwrap();
        let content = gguf_file::Content::read(&mut f).unwrap();
        let mut m = candle_transformers::models::quantized_llama::ModelWeights::from_gguf(
            content,
            &mut f,
            &Device::Cpu,
        )
        .unwrap();
        let input = Tensor::new(ids.as_slice(), &Device::Cpu)
            .unwrap()
            .unsqueeze(0)
            .unwrap();
        m.forward(&input, 0)
            .unwrap()
            .flatten_all()
            .unwrap()
            .to_vec1::<f32>()
            .unwrap()
    };
    // Same weight format on both sides: F32 (a dequantized copy of the file for candle).
    let dir = tempfile::tempdir().unwrap();
    let f32_path = dir.path().join("f32.gguf");
    {
        let mut f = std::fs::File::open(&path).unwrap();
        let content = gguf_file::Content::read(&mut f).unwrap();
        let mut tensors = Vec::new();
        for name in content.tensor_infos.keys() {
            let t = content.tensor(&mut f, name, &Device::Cpu).unwrap();
            let deq = t.dequantize(&Device::Cpu).unwrap();
            tensors.push((
                name.clone(),
                QTensor::quantize(&deq, GgmlDType::F32).unwrap(),
            ));
        }
        let md: Vec<(&str, &gguf_file::Value)> = content
            .metadata
            .iter()
            .map(|(k, v)| (k.as_str(), v))
            .collect();
        let ts: Vec<(&str, &QTensor)> = tensors.iter().map(|(k, v)| (k.as_str(), v)).collect();
        let mut out = std::fs::File::create(&f32_path).unwrap();
        gguf_file::write(&mut out, &md, &ts).unwrap();
    }
    let stock = stock_logits(&f32_path);
    let ours = last_logits(&load(&path, WeightFormat::F32), &ids);
    let worst = stock
        .iter()
        .zip(&ours)
        .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    eprintln!("F32 weights: largest |ours - candle stock| = {worst}");
    assert!(worst < 2e-3, "F32 forward differs from candle's by {worst}");
    // Quantized: candle's Q4_1 kernels vs our Q8_0 requantization — quantization noise only.
    let stock_q = stock_logits(&path);
    let ours_q = last_logits(&load(&path, WeightFormat::Q8), &ids);
    let worst_q = stock_q
        .iter()
        .zip(&ours_q)
        .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
    eprintln!("quantized: largest |ours Q8 - candle Q4_1| = {worst_q}");
    assert_eq!(top_k(&stock_q, 1), top_k(&ours_q, 1));
    assert!(
        worst_q < 1.5,
        "quantized forward differs from candle's by {worst_q}"
    );
}

#[test]
fn choose_prefers_obvious_answers_and_sums_to_one() {
    let mut e = engine(&util::smollm2(), WeightFormat::Q8, None);
    let cases: [(&str, &[&str], usize); 4] = [
        (
            "What is the capital of France? Answer with one word.",
            &["Paris", "Banana"],
            0,
        ),
        ("Is fire hot? Answer yes or no.", &["yes", "no"], 0),
        (
            "What color is the sky on a clear day? Answer with one word.",
            &["Green", "Blue"],
            1,
        ),
        (
            "Which animal says meow? Answer with one word.",
            &["Fish", "Cat"],
            1,
        ),
    ];
    let reqs: Vec<Request> = cases
        .iter()
        .map(|(q, opts, _)| Request::Choose(ChooseRequest::new(chat(q), opts.iter().copied())))
        .collect();
    for (r, (q, _, want)) in e.run(reqs, |_| {}).into_iter().zip(cases) {
        let Response::Chosen(c) = r.unwrap() else {
            panic!("a choice")
        };
        let sum: f32 = c.probs.iter().sum();
        assert!((sum - 1.0).abs() < 1e-4, "{q}: probabilities sum to {sum}");
        assert_eq!(c.index, want, "{q}: {:?}", c.probs);
    }
}

#[test]
fn shared_prefixes_change_nothing_but_cost() {
    let mut e = engine(&util::smollm2(), WeightFormat::Q8, None);
    let context =
        "You are John Lin, a pharmacy shopkeeper who lives with his wife Mei and son Eddy. \
                   It is 7:00 am on Tuesday. You just woke up and you are a bit hungry.";
    let questions = [
        "Are you hungry? Answer yes or no.",
        "Are you tired? Answer yes or no.",
        "Is it morning? Answer yes or no.",
    ];
    let mk = |q: &str| Prompt::Chat(vec![Message::system(context), Message::user(q)]);
    let mut reqs: Vec<Request> = questions
        .iter()
        .map(|q| Request::Choose(ChooseRequest::new(mk(q), ["yes", "no"])))
        .collect();
    reqs.push(Request::Generate(GenerateRequest::new(
        mk("What will you do first today?"),
        16,
    )));
    let separately = alone(&mut e, &reqs);
    e.clear_prefix_cache();
    let before = e.stats().reused_prompt_tokens;
    let together = texts(e.run(reqs.clone(), |_| {}));
    let reused = e.stats().reused_prompt_tokens - before;
    assert_eq!(together, separately);
    assert!(
        reused >= 3 * 30,
        "the shared system prompt was reused only {reused} tokens"
    );
    // And across calls: the same context again hits the prefix cache.
    let before = e.stats().reused_prompt_tokens;
    let again = texts(e.run(reqs, |_| {}));
    assert_eq!(again, separately);
    assert!(e.stats().reused_prompt_tokens - before >= 4 * 30);
}

#[test]
fn nested_shared_prefixes_are_computed_once_and_change_nothing() {
    // The shape of a simulation step: one context, a shared "is doing" line, then a question
    // each; and a request that leaves the context earlier.
    let mut e = engine(&util::smollm2(), WeightFormat::Q8, None);
    let context = "You are simulating John Lin, a pharmacy shopkeeper who lives with his wife \
                   Mei and son Eddy. It is 7:00 am on Tuesday. John Lin is feeling neutral.";
    let doing = "John Lin is doing: eating a bowl of rice porridge with pickles at the kitchen \
                 table before opening the pharmacy.";
    let questions = [
        "Does he eat or drink something filling while doing this?",
        "Is he with other people while doing this?",
        "Would he call this a leisure activity done for fun?",
        "Exercising or taking care of his health: yes or no?",
    ];
    let mk = |u: String| Prompt::Chat(vec![Message::system(context), Message::user(&u)]);
    let mut reqs: Vec<Request> = questions
        .iter()
        .map(|q| {
            Request::Choose(ChooseRequest::new(
                mk(format!("{doing} {q}")),
                ["yes", "no"],
            ))
        })
        .collect();
    reqs.push(Request::Generate(GenerateRequest::new(
        mk(format!("{doing} Describe this activity in three words.")),
        8,
    )));
    reqs.push(Request::Choose(ChooseRequest::new(
        mk("Where should John Lin be? Choose one of: kitchen, park.".into()),
        ["kitchen", "park"],
    )));
    let separately = alone(&mut e, &reqs);
    // The ideal cost: each distinct token prefix of the batch computed once (the questions
    // start with different words, so no shorter shared run is left out).
    let ids: Vec<Vec<u32>> = reqs
        .iter()
        .map(|r| match r {
            Request::Choose(c) => e.prompt_tokens(&c.prompt).unwrap(),
            Request::Generate(g) => e.prompt_tokens(&g.prompt).unwrap(),
        })
        .collect();
    let mut prefixes = std::collections::HashSet::new();
    for p in &ids {
        for k in 1..=p.len() {
            prefixes.insert(p[..k].to_vec());
        }
    }
    // What the five "is doing" requests share.
    let doing_len = (0..ids[0].len())
        .take_while(|&k| ids[..5].iter().all(|p| p.get(k) == ids[0].get(k)))
        .count();
    e.clear_prefix_cache();
    let computed = |e: &mut Engine, reqs: Vec<Request>| {
        let before = e.stats().clone();
        let out = texts(e.run(reqs, |_| {}));
        let after = e.stats();
        let n = (after.prompt_tokens - before.prompt_tokens)
            - (after.reused_prompt_tokens - before.reused_prompt_tokens);
        (out, n as usize)
    };
    let (together, first) = computed(&mut e, reqs.clone());
    assert_eq!(together, separately);
    assert_eq!(first, prefixes.len());
    // Again: the context and the shared "is doing" line come from the prefix cache, and only
    // each request's own question is computed.
    let where_to = reqs[5].clone();
    let (again, second) = computed(&mut e, reqs);
    assert_eq!(again, separately);
    assert_eq!(second, prefixes.len() - doing_len);
    // A question alone (in no shared prefix) leaves its context in the cache too: asked
    // again, only its last token is computed.
    e.clear_prefix_cache();
    let (alone_once, n1) = computed(&mut e, vec![where_to.clone()]);
    let (alone_twice, n2) = computed(&mut e, vec![where_to]);
    assert_eq!(
        (alone_once, n1),
        (vec![separately[5].clone()], ids[5].len())
    );
    assert_eq!((alone_twice, n2), (vec![separately[5].clone()], 1));
}

#[test]
fn gemma3_generates_and_chooses() {
    let mut e = engine(&util::gemma3(), WeightFormat::Q8, None);
    let g = e
        .generate(GenerateRequest::new(
            Prompt::Text("The capital of France is".into()),
            8,
        ))
        .unwrap();
    // llama.cpp's clear argmax after this prompt is " the" (18.99 vs 18.49 for " a").
    assert!(g.text.starts_with(" the"), "{:?}", g.text);
    let c = e
        .choose(ChooseRequest::new(
            Prompt::Text("The capital of France is".into()),
            [" Paris", " Banana"],
        ))
        .unwrap();
    assert_eq!(c.index, 0, "{:?}", c.probs);
}

#[test]
fn prompt_over_budget_is_a_typed_error() {
    let opts = EngineOptions {
        context_budget: 64,
        ..EngineOptions::default()
    };
    let mut e = Engine::load(&util::smollm2(), opts).unwrap();
    let long = "word ".repeat(200);
    let res = e.run(
        vec![
            Request::Generate(GenerateRequest::new(Prompt::Text(long.clone()), 4)),
            Request::Choose(ChooseRequest::new(Prompt::Text(long), ["a", "b"])),
            Request::Generate(GenerateRequest::new(Prompt::Text("Hi".into()), 4)),
        ],
        |_| {},
    );
    assert!(
        matches!(res[0], Err(LlmError::OverBudget { budget: 64, .. })),
        "{:?}",
        res[0]
    );
    assert!(matches!(res[1], Err(LlmError::OverBudget { .. })));
    assert!(res[2].is_ok(), "the other request still runs");
}

#[test]
fn bad_model_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let err = |p: &std::path::Path| match Engine::load(p, EngineOptions::default()) {
        Ok(_) => panic!("{} loaded", p.display()),
        Err(e) => e.to_string(),
    };
    let missing = dir.path().join("nope.gguf");
    assert!(err(&missing).contains("nope.gguf"));
    let bytes = std::fs::read(util::smollm2()).unwrap();
    let wrong_magic = dir.path().join("magic.gguf");
    std::fs::write(&wrong_magic, [b"GGML", &bytes[4..4096]].concat()).unwrap();
    assert!(err(&wrong_magic).contains("magic"), "{}", err(&wrong_magic));
    for cut in [
        0usize,
        3,
        10,
        24,
        1000,
        100_000,
        2_000_000,
        bytes.len() / 2,
        bytes.len() - 1,
    ] {
        let p = dir.path().join(format!("cut{cut}.gguf"));
        std::fs::write(&p, &bytes[..cut]).unwrap();
        let e = err(&p);
        assert!(e.contains(&format!("cut{cut}.gguf")), "cut at {cut}: {e}");
    }
    // A valid GGUF of an architecture we do not run.
    use candle_core::quantized::{gguf_file, GgmlDType, QTensor};
    let arch = gguf_file::Value::String("falcon".into());
    let t = QTensor::quantize(
        &candle_core::Tensor::zeros((32, 32), candle_core::DType::F32, &candle_core::Device::Cpu)
            .unwrap(),
        GgmlDType::F32,
    )
    .unwrap();
    let p = dir.path().join("falcon.gguf");
    let mut f = std::fs::File::create(&p).unwrap();
    gguf_file::write(
        &mut f,
        &[("general.architecture", &arch)],
        &[("token_embd.weight", &t)],
    )
    .unwrap();
    drop(f);
    let e = err(&p);
    assert!(e.contains("falcon"), "{e}");
}

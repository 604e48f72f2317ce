//! Tests of the model forward pass and the engine on the real default models.

use humanoid::llm::gguf::GgufFile;
use humanoid::llm::model::{LogitsFor, Model, SeqInput, WeightFormat};

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
            assert_eq!(ours[0], ref_first, "{key} prompt {:?}: argmax differs", case["prompt"]);
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
            top.iter().take(5).map(|t| t[0].to_string()).collect::<Vec<_>>().join(",")
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

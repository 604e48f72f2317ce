//! Tests of the sentence embedder on the real default model (all-MiniLM-L6-v2): agreement
//! with an independent numpy reference (tests/data/embed/), paraphrase ranking, batching,
//! normalisation, the cache, truncation and load errors that name the file.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

use humanoid::embed::{cosine, EmbedError, Embedder};
use humanoid::model_store::default_embed_model;

use crate::util;

/// The default model folder (fetched if absent).
fn model_dir() -> PathBuf {
    let weights = util::model_file("minilm-l6-v2", "model.safetensors");
    weights.parent().expect("model folder").to_path_buf()
}

/// One embedder shared by the tests (loaded through the model store, as the CLI does).
fn embedder() -> MutexGuard<'static, Embedder> {
    static EMBEDDER: OnceLock<Mutex<Embedder>> = OnceLock::new();
    EMBEDDER
        .get_or_init(|| {
            model_dir();
            let e = Embedder::load_spec(&default_embed_model(), &util::models_dir(), false)
                .expect("load the default embedding model");
            Mutex::new(e)
        })
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

fn reference() -> serde_json::Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/embed/reference.json");
    serde_json::from_str(&fs::read_to_string(&path).expect("reference.json")).expect("json")
}

fn norm(v: &[f32]) -> f32 {
    v.iter().map(|x| x * x).sum::<f32>().sqrt()
}

/// Agent-memory-like sentences of varied length.
fn sentences(n: usize) -> Vec<String> {
    let who = [
        "John Lin",
        "Isabella Rodriguez",
        "Klaus Mueller",
        "Maria Lopez",
        "Sam Moore",
    ];
    let what = [
        "is eating breakfast",
        "is reading about gentrification in the library",
        "is talking with Eddy about his music composition for the school concert",
        "is idle",
        "is planning a Valentine's Day party at Hobbs Cafe and inviting every customer",
        "went for a walk in the park after lunch",
        "is worried about the upcoming election",
    ];
    (0..n)
        .map(|i| {
            format!(
                "{} {} (memory {i}).",
                who[i % who.len()],
                what[(i / who.len() + i) % what.len()]
            )
        })
        .collect()
}

#[test]
fn embed_matches_independent_reference() {
    let reference = reference();
    let items = reference["sentences"].as_array().expect("sentences");
    let texts: Vec<&str> = items.iter().map(|s| s["text"].as_str().unwrap()).collect();
    let expected: Vec<Vec<f32>> = items
        .iter()
        .map(|s| {
            let v = s["vector"].as_array().unwrap();
            v.iter().map(|x| x.as_f64().unwrap() as f32).collect()
        })
        .collect();
    let e = embedder();
    assert_eq!(e.dim(), 384);
    assert_eq!(reference["dim"].as_u64(), Some(384));
    // All together (one padded batch of mixed lengths) and each alone.
    let together = e.embed_uncached(&texts).expect("embed");
    for (i, text) in texts.iter().enumerate() {
        let alone = e.embed_uncached(&[text]).expect("embed one");
        for (how, got) in [("batched", &together[i]), ("alone", &alone[0])] {
            assert_eq!(got.len(), 384);
            let c = cosine(got, &expected[i]);
            let max_diff = got
                .iter()
                .zip(&expected[i])
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            let short: String = text.chars().take(24).collect();
            println!("reference {how} {short:?}: cosine {c:.7}, max |diff| {max_diff:.1e}");
            assert!(c >= 0.999, "{how} {text:?}: cosine {c} with the reference");
        }
    }
}

#[test]
fn embed_paraphrase_beats_unrelated() {
    let mut e = embedder();
    let v = e
        .embed(&[
            "John is eating breakfast",
            "John has a meal in the morning",
            "The stock market fell today",
        ])
        .expect("embed");
    let para = cosine(&v[0], &v[1]);
    let unrel_a = cosine(&v[0], &v[2]);
    let unrel_b = cosine(&v[1], &v[2]);
    println!("paraphrase {para:.3}, unrelated {unrel_a:.3} and {unrel_b:.3}");
    assert!(para > 0.5, "paraphrase cosine {para}");
    assert!(
        para > unrel_a + 0.3 && para > unrel_b + 0.3,
        "paraphrase {para} vs unrelated {unrel_a}, {unrel_b}"
    );
}

#[test]
fn embed_batch_equals_single_and_keeps_order() {
    let e = embedder();
    let owned = sentences(45); // two chunks of up to 32, lengths interleaved
    let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
    let batched = e.embed_uncached(&texts).expect("batch");
    assert_eq!(batched.len(), texts.len());
    for (text, b) in texts.iter().zip(&batched) {
        let single = e.embed_uncached(&[text]).expect("single");
        let c = cosine(b, &single[0]);
        assert!(c >= 0.9999, "{text:?}: batch vs single cosine {c}");
    }
}

#[test]
fn embed_vectors_have_unit_norm() {
    let e = embedder();
    let mut owned = sentences(20);
    owned.extend([
        "".to_string(),
        " ".to_string(),
        "?!".to_string(),
        "\u{1F600}".to_string(),
    ]);
    let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
    for (text, v) in texts.iter().zip(e.embed_uncached(&texts).expect("embed")) {
        assert_eq!(v.len(), 384);
        assert!(
            v.iter().all(|x| x.is_finite()),
            "{text:?}: non-finite value"
        );
        assert!((norm(&v) - 1.0).abs() < 1e-4, "{text:?}: norm {}", norm(&v));
    }
    assert!(e.embed_uncached(&[]).expect("empty slice").is_empty());
}

#[test]
fn embed_cache_counts_hits_and_returns_same_vectors() {
    let mut e = embedder();
    let text = "Cache probe: Tom bought a newspaper at the Willows market.";
    let other = "Cache probe: the pharmacy closes at nine.";
    let (hits, misses) = (e.cache_hits(), e.cache_misses());
    let first = e.embed(&[text]).expect("first");
    assert_eq!((e.cache_hits(), e.cache_misses()), (hits, misses + 1));
    let second = e.embed(&[text]).expect("second");
    assert_eq!((e.cache_hits(), e.cache_misses()), (hits + 1, misses + 1));
    assert_eq!(first, second);
    // Repeats within one call cost one embedding too, and order is kept.
    let v = e.embed(&[other, text, other]).expect("mixed");
    assert_eq!((e.cache_hits(), e.cache_misses()), (hits + 3, misses + 2));
    assert_eq!(v[1], first[0]);
    assert_eq!(v[0], v[2]);
    assert!(cosine(&v[0], &v[1]) < 0.99);
    assert!(e.embed(&[]).expect("empty").is_empty());
    // With the cache off, nothing is counted and the vectors are the same.
    e.set_cache_enabled(false);
    let uncached = e.embed(&[text]).expect("uncached");
    e.set_cache_enabled(true);
    assert_eq!((e.cache_hits(), e.cache_misses()), (hits + 3, misses + 2));
    assert_eq!(uncached[0], first[0]);
}

#[test]
fn embed_cache_is_bounded() {
    let mut e = embedder();
    e.set_cache_capacity(4);
    let keep = "Bounded cache: the kept sentence.";
    e.embed(&[keep]).expect("embed");
    for i in 0..12 {
        let hits = e.cache_hits();
        e.embed(&[&format!("Bounded cache: filler number {i}.")])
            .expect("embed");
        assert!(e.cache_len() <= 4, "{} entries", e.cache_len());
        // Used at every step, so never evicted.
        e.embed(&[keep]).expect("embed");
        assert_eq!(e.cache_hits(), hits + 1, "step {i}");
    }
    let hits = e.cache_hits();
    e.embed(&["Bounded cache: filler number 0."])
        .expect("embed");
    assert_eq!(e.cache_hits(), hits, "an old entry was evicted");
    e.set_cache_capacity(humanoid::embed::DEFAULT_CACHE_CAPACITY);
    assert_eq!(e.cache_len(), 0);
}

#[test]
fn cosine_basics() {
    assert!((cosine(&[1.0, 0.0], &[2.0, 0.0]) - 1.0).abs() < 1e-6);
    assert!(cosine(&[1.0, 0.0], &[0.0, 3.0]).abs() < 1e-6);
    assert!((cosine(&[1.0, 1.0], &[-1.0, -1.0]) + 1.0).abs() < 1e-6);
    assert_eq!(cosine(&[1.0], &[1.0, 2.0]), 0.0);
    assert_eq!(cosine(&[0.0, 0.0], &[1.0, 2.0]), 0.0);
    assert_eq!(cosine(&[], &[]), 0.0);
}

#[test]
fn embed_truncates_long_texts() {
    let e = embedder();
    assert_eq!(e.max_tokens(), 512);
    assert_eq!(e.token_count("").expect("tokens"), 2); // [CLS] [SEP]
    let base = "the village baker opens the shop early every single morning ".repeat(80);
    let a = format!("{base} and then she sells apples.");
    let b = format!("{base} and then he repairs bicycles.");
    let v = e
        .embed_uncached(&[&a, &b, "short"])
        .expect("long texts embed");
    // Both share their first 512 tokens, so they embed identically.
    assert!(cosine(&v[0], &v[1]) > 0.99999, "{}", cosine(&v[0], &v[1]));
    assert!((norm(&v[0]) - 1.0).abs() < 1e-4);
}

fn copy_model_files(to: &Path, files: &[&str]) {
    let from = model_dir();
    for f in files {
        fs::copy(from.join(f), to.join(f)).expect("copy model file");
    }
}

fn load_err(dir: &Path) -> EmbedError {
    match Embedder::load(dir) {
        Ok(_) => panic!("{} loaded but should not", dir.display()),
        Err(e) => e,
    }
}

#[test]
fn embed_load_errors_name_the_file() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();

    // Empty folder: the first missing file is named.
    let err = load_err(dir);
    assert!(matches!(err, EmbedError::MissingFile { .. }), "{err:?}");
    assert!(err.to_string().contains("config.json"), "{err}");

    // Missing config.json only.
    copy_model_files(dir, &["tokenizer.json"]);
    fs::write(dir.join("model.safetensors"), b"x").unwrap();
    let err = load_err(dir);
    assert!(matches!(err, EmbedError::MissingFile { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(&dir.join("config.json").display().to_string()),
        "{msg}"
    );

    // A config.json that is not a BERT config.
    fs::write(dir.join("config.json"), r#"{"model_type": "bert"}"#).unwrap();
    let err = load_err(dir);
    assert!(matches!(err, EmbedError::Config { .. }), "{err:?}");
    assert!(err.to_string().contains("config.json"), "{err}");

    // Corrupt safetensors: garbage, then a truncated copy of the real file.
    copy_model_files(dir, &["config.json"]);
    fs::write(
        dir.join("model.safetensors"),
        b"this is not a safetensors file",
    )
    .unwrap();
    let err = load_err(dir);
    assert!(matches!(err, EmbedError::Weights { .. }), "{err:?}");
    assert!(err.to_string().contains("model.safetensors"), "{err}");
    let real = fs::read(model_dir().join("model.safetensors")).unwrap();
    fs::write(dir.join("model.safetensors"), &real[..real.len() / 2]).unwrap();
    let err = load_err(dir);
    assert!(matches!(err, EmbedError::Weights { .. }), "{err:?}");
    assert!(err.to_string().contains("model.safetensors"), "{err}");

    // Corrupt tokenizer.json.
    fs::write(dir.join("tokenizer.json"), "{ not json").unwrap();
    let err = load_err(dir);
    assert!(matches!(err, EmbedError::Tokenizer { .. }), "{err:?}");
    assert!(err.to_string().contains("tokenizer.json"), "{err}");

    // Sanity: the same folder with all three real files loads.
    copy_model_files(dir, &["tokenizer.json", "model.safetensors"]);
    let e = Embedder::load(dir).expect("a complete folder loads");
    assert_eq!(e.dim(), 384);
}

/// Throughput at batch 1 and 32 (sentences/s, cache off). Run with
/// `cargo test --release --test tests embed_throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn embed_throughput() {
    let mut e = embedder();
    let owned = sentences(128);
    let texts: Vec<&str> = owned.iter().map(String::as_str).collect();
    e.embed_uncached(&texts[..8]).expect("warm up");
    let tokens: usize = texts
        .iter()
        .map(|t| e.token_count(t).expect("tokens"))
        .sum();
    println!(
        "mean {:.1} tokens per sentence",
        tokens as f64 / texts.len() as f64
    );
    for batch in [1usize, 32] {
        e.set_max_batch(batch);
        let n = if batch == 1 { 64 } else { 128 };
        let t = Instant::now();
        for chunk in texts[..n].chunks(batch) {
            e.embed_uncached(chunk).expect("embed");
        }
        let per_s = n as f64 / t.elapsed().as_secs_f64();
        println!("embed batch {batch}: {per_s:.1} sentences/s ({n} sentences)");
    }
    e.set_max_batch(humanoid::embed::DEFAULT_MAX_BATCH);
}

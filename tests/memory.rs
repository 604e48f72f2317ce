//! Memory stream tests: importance and reflection on the real default chat model, HNSW recall
//! and save/load on thousands of memories.
//!
//! Embeddings here come from `HashingEmbedder`, a **test stand-in** (hashed bag of words,
//! 384 dimensions, L2-normalised), until the sentence embedder (src/embed) is wired in:
//! texts that share words are similar, paraphrases are not.

use std::time::Instant;

use std::cell::RefCell;
use std::sync::Arc;

use humanoid::agent::mind::Mind;
use humanoid::agent::reflect::reflect;
use humanoid::llm::batch::{drive, Port};
use humanoid::llm::constrain::TokenTable;
use humanoid::llm::{ChooseRequest, Engine, EngineOptions, Inference, Request, Response};
use humanoid::memory::importance::{
    importance_from_result, importance_prompt, importance_requests, IMPORTANCE_OPTIONS,
};
use humanoid::memory::index::{IndexConfig, VectorIndex};
use humanoid::memory::{
    GameTime, HashingEmbedder, Importance, MemoryKind, MemoryStream, NewMemory, ReflectionConfig,
    StreamConfig, TextEmbedder,
};

use crate::util;

const DIM: usize = 384;

fn engine() -> Engine {
    Engine::load(&util::smollm2(), EngineOptions::default()).expect("load SmolLM2")
}

/// The importance of each memory, rated in one batch as a run's tick rates them.
fn rate_importance(
    engine: &mut Engine,
    memories: &[&str],
) -> Vec<humanoid::memory::error::Result<Importance>> {
    engine
        .run(importance_requests(memories), |_| {})
        .into_iter()
        .map(importance_from_result)
        .collect()
}

/// Expected rating (unrounded) of each memory, in one batch.
fn expected_ratings(engine: &mut Engine, memories: &[&str]) -> Vec<f32> {
    let values: Vec<f32> = (1..=10).map(|v| v as f32).collect();
    let requests = memories
        .iter()
        .map(|m| Request::Choose(ChooseRequest::new(importance_prompt(m), IMPORTANCE_OPTIONS)))
        .collect();
    engine
        .run(requests, |_| {})
        .into_iter()
        .map(|r| match r.expect("choose runs") {
            Response::Chosen(c) => c.expected(&values),
            Response::Generated(_) => panic!("a choice"),
        })
        .collect()
}

/// SmolLM2-135M separates these only weakly: expected ratings span about 5.5–6.6, so the
/// rounded importances of a pair are often equal. The test checks the order of the expected
/// values (what the model can do) and prints the rounded ratings.
#[test]
fn importance_rates_life_changing_above_mundane() {
    let mut engine = engine();
    let pairs = [
        (
            "John ate cereal",
            "John's son was badly hurt in an accident",
        ),
        (
            "John brushed his teeth",
            "John's wife told him she wants a divorce",
        ),
        (
            "Eddy made his bed",
            "Eddy was accepted to the college of his dreams",
        ),
        ("Mei watered the plants", "Mei was diagnosed with cancer"),
        ("Tom read the newspaper", "Tom's house burned down"),
        (
            "Sam tied his shoes",
            "Sam got married to the love of his life",
        ),
        (
            "Isabella washed the dishes",
            "Isabella's mother died this morning",
        ),
        (
            "Klaus took a shower",
            "Klaus lost his job and cannot pay rent",
        ),
        (
            "Maria walked to the store",
            "Maria gave birth to her first child",
        ),
        (
            "Ayesha checked her email",
            "Ayesha won the national science prize",
        ),
    ];
    let texts: Vec<&str> = pairs.iter().flat_map(|(a, b)| [*a, *b]).collect();
    let t0 = Instant::now();
    let rated = rate_importance(&mut engine, &texts);
    eprintln!(
        "rated {} memories in one batch in {:?}",
        texts.len(),
        t0.elapsed()
    );
    let expected = expected_ratings(&mut engine, &texts);
    let (mut ordered, mut ordered_rounded, mut gap) = (0, 0, 0.0);
    for (i, (a, b)) in pairs.iter().enumerate() {
        let ia = rated[2 * i].as_ref().unwrap().get();
        let ib = rated[2 * i + 1].as_ref().unwrap().get();
        let (ea, eb) = (expected[2 * i], expected[2 * i + 1]);
        assert_eq!(ia, Importance::from_rating(ea).get());
        eprintln!("{a:?}: {ea:.2} → {ia}   vs   {b:?}: {eb:.2} → {ib}");
        ordered += usize::from(ea < eb);
        ordered_rounded += usize::from(ia < ib);
        gap += (eb - ea) / pairs.len() as f32;
    }
    eprintln!(
        "{ordered}/{n} pairs ordered by expected value (mean gap {gap:.2}), \
         {ordered_rounded}/{n} strictly by rounded importance",
        n = pairs.len()
    );
    assert!(
        expected[0] < expected[1],
        "mundane {} vs life-changing {}",
        expected[0],
        expected[1]
    );
    assert!(ordered >= 8, "only {ordered}/10 pairs ordered");
}

/// Twenty memories of John Lin, oldest first.
const JOHN: [&str; 20] = [
    "John Lin is a pharmacist at the Willow Market and Pharmacy",
    "John Lin lives with his wife Mei Lin, a college professor, and his son Eddy Lin",
    "Eddy Lin is a student who studies music theory",
    "John Lin woke up at 6 am and made coffee",
    "John Lin ate cereal for breakfast",
    "John Lin asked Eddy about his music composition over breakfast",
    "Eddy Lin said he is nervous about performing his composition at school",
    "John Lin walked to the pharmacy",
    "John Lin helped an elderly customer understand her new medication",
    "John Lin stayed late at the pharmacy to finish an inventory count",
    "Mei Lin called John to say she would grade papers late tonight",
    "John Lin cooked dinner for Eddy",
    "Eddy Lin played his new piano piece for John after dinner",
    "John Lin told Eddy he was proud of his music",
    "John Lin worried that he spends too little time with his family",
    "John Lin read a book about gardening before bed",
    "John Lin heard that the pharmacy might cut staff next month",
    "John Lin talked with his neighbor Tom Moreno about the local election",
    "Eddy Lin won first prize at the school music competition",
    "John Lin decided to leave work early on Friday to celebrate with Eddy",
];

#[test]
fn reflection_stores_insights_citing_existing_memories() {
    let mut engine = engine();
    let table = Arc::new(TokenTable::new(engine.tokenizer()));
    let embedder = HashingEmbedder::new(DIM);
    let mut stream = MemoryStream::new(DIM, StreamConfig::default()).unwrap();
    // A lower threshold than the default 150: twenty memories rarely sum to 150.
    let threshold = 60;
    stream.set_reflection_threshold(threshold);

    let t0 = Instant::now();
    let ratings = rate_importance(&mut engine, &JOHN);
    eprintln!("rated {} memories in {:?}", JOHN.len(), t0.elapsed());
    let mut sum = 0u32;
    let mut triggered_at = None;
    for (i, (text, r)) in JOHN.iter().zip(ratings).enumerate() {
        let imp = r.expect("importance");
        let kind = if i < 3 {
            MemoryKind::SeedStatement
        } else {
            MemoryKind::Observation
        };
        let v = embedder.embed_one(text);
        stream
            .add(NewMemory::new(
                kind,
                *text,
                GameTime(6 * 60 + 15 * i as u64),
                imp,
                v,
            ))
            .unwrap();
        sum += u32::from(imp.get());
        assert_eq!(stream.importance_since_reflection(), sum);
        assert_eq!(stream.should_reflect(), sum >= threshold, "after {}", i + 1);
        if triggered_at.is_none() && stream.should_reflect() {
            triggered_at = Some(i + 1);
        }
    }
    eprintln!("importance sum {sum}, reflection triggered after {triggered_at:?} memories");
    assert!(
        stream.should_reflect(),
        "sum {sum} below threshold {threshold}"
    );

    let now = GameTime(12 * 60);
    let t0 = Instant::now();
    // The simulation's reflection, through an agent's port, as a tick runs it.
    let before = stream.len() as u64;
    let engine: RefCell<Box<dyn Inference>> = RefCell::new(Box::new(engine));
    let embedder: RefCell<Box<dyn TextEmbedder>> = RefCell::new(Box::new(embedder));
    let port = Port::new(7);
    let config = ReflectionConfig::default();
    let date = chrono::NaiveDate::from_ymd_opt(2023, 1, 3).unwrap();
    let outcome = {
        let (p, stream, engine, embedder, table) =
            (port.clone(), &mut stream, &engine, &embedder, &table);
        let config = &config;
        let task = Box::pin(async move {
            let mind = Mind::new("John Lin", p, engine, table, date, 12 * 60);
            let r = reflect(&mind, stream, embedder, "John Lin", now, config).await;
            (r, mind.take_fallbacks())
        });
        drive(engine, vec![(port, task)], |_| {})
            .pop()
            .flatten()
            .expect("the reflection finishes")
    };
    let (outcome, fallbacks) = outcome;
    eprintln!(
        "reflection took {:?}; fallbacks: {fallbacks:?}",
        t0.elapsed()
    );
    for q in &outcome.questions {
        eprintln!("question: {q}");
    }
    let ids: Vec<u64> = (before..stream.len() as u64).collect();
    for (ins, id) in outcome.insights.iter().zip(&ids) {
        eprintln!("insight {id}: {ins}");
    }
    assert_eq!(outcome.questions.len(), 3);
    assert!(!ids.is_empty(), "no insight stored");
    assert_eq!(ids.len(), outcome.insights.len());
    for &id in &ids {
        let node = stream.get(id).expect("stored");
        assert_eq!(node.kind, MemoryKind::Reflection);
        assert_eq!(node.created, now);
        assert!(!node.evidence.is_empty(), "insight {id} has no evidence");
        for &e in &node.evidence {
            let cited = stream.get(e).expect("evidence id exists");
            assert!(e < id);
            assert_ne!(cited.kind, MemoryKind::Reflection);
        }
    }
    assert_eq!(stream.importance_since_reflection(), 0);
    assert!(!stream.should_reflect());
    assert_eq!(stream.last_reflection(), Some(now));
}

/// Varied memory-like sentences (the library's synthetic generator).
fn corpus(seed: u64, n: usize) -> Vec<String> {
    humanoid::memory::synthetic::memory_sentences(seed, n)
}

#[test]
fn hnsw_recall_at_10_against_exact() {
    // Real sentence embeddings (MiniLM) of 3000 varied memory sentences.
    let n = 3000;
    let mut embedder = humanoid::embed::Embedder::load(
        util::model_file("minilm-l6-v2", "model.safetensors")
            .parent()
            .unwrap(),
    )
    .unwrap();
    let texts = corpus(42, n);
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let vectors = embedder.embed(&refs).unwrap();
    let config = IndexConfig {
        exact_threshold: 1000,
        ..IndexConfig::default()
    };
    let mut index = VectorIndex::new(DIM, config).unwrap();
    let t0 = Instant::now();
    for (i, v) in vectors.iter().enumerate() {
        index.add(i as u64, v).unwrap();
    }
    index.prepare();
    let build = t0.elapsed();
    assert!(index.uses_hnsw() && index.graph_built());
    eprintln!(
        "built an HNSW graph of {n} vectors in {build:?}: {:.0} inserts/s",
        n as f64 / build.as_secs_f64()
    );

    let query_texts = corpus(4242, 200);
    let query_refs: Vec<&str> = query_texts.iter().map(String::as_str).collect();
    let queries = embedder.embed(&query_refs).unwrap();
    let k = 10;
    let (mut tie_aware, mut strict) = (0usize, 0usize);
    let (mut t_hnsw, mut t_exact) = (0f64, 0f64);
    for q in &queries {
        let t = Instant::now();
        let exact = index.search_exact(q, k).unwrap();
        t_exact += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let approx = index.search(q, k).unwrap();
        t_hnsw += t.elapsed().as_secs_f64();
        assert_eq!(approx.len(), k);
        // Near-duplicate sentences can tie: a result as similar as the k-th exact one counts.
        let kth = exact[k - 1].similarity;
        tie_aware += approx.iter().filter(|h| h.similarity >= kth - 1e-6).count();
        strict += approx
            .iter()
            .filter(|h| exact.iter().any(|e| e.id == h.id))
            .count();
    }
    let total = (queries.len() * k) as f64;
    let recall = tie_aware as f64 / total;
    eprintln!(
        "recall@10 {recall:.4} (id overlap {:.4}); per query: hnsw {:.3} ms, exact {:.3} ms",
        strict as f64 / total,
        1e3 * t_hnsw / queries.len() as f64,
        1e3 * t_exact / queries.len() as f64
    );
    assert!(recall >= 0.95, "recall@10 {recall}");

    // Reload rebuilds the same graph: identical results.
    let mut bytes = Vec::new();
    index.write_to(&mut bytes).unwrap();
    let t0 = Instant::now();
    let back = VectorIndex::read_from(&mut bytes.as_slice()).unwrap();
    back.prepare();
    eprintln!(
        "reload ({} KiB) with HNSW rebuild: {:?}",
        bytes.len() / 1024,
        t0.elapsed()
    );
    for q in queries.iter().take(50) {
        assert_eq!(back.search(q, k).unwrap(), index.search(q, k).unwrap());
    }
}

#[test]
fn stream_save_load_gives_identical_retrieval() {
    let embedder = HashingEmbedder::new(DIM);
    let mut config = StreamConfig::default();
    config.index.exact_threshold = 1500;
    let mut stream = MemoryStream::new(DIM, config).unwrap();
    let texts = corpus(7, 2500);
    for (i, t) in texts.iter().enumerate() {
        let m = NewMemory::new(
            MemoryKind::Observation,
            t.clone(),
            GameTime(i as u64 * 5),
            Importance::new((i % 10) as i64 + 1),
            embedder.embed_one(t),
        );
        stream.add(m).unwrap();
    }
    assert!(stream.index().uses_hnsw());
    let queries = corpus(99, 20);
    // Touch some memories first so last_accessed differs from created.
    for q in queries.iter().take(5) {
        stream
            .retrieve(&embedder.embed_one(q), GameTime(20_000))
            .unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("john.memory");
    let t0 = Instant::now();
    stream.save(&path).unwrap();
    let saved = t0.elapsed();
    let t0 = Instant::now();
    let mut back = MemoryStream::load(&path).unwrap();
    back.index().prepare();
    eprintln!(
        "save {saved:?}, load {:?} ({} KiB, {} memories)",
        t0.elapsed(),
        std::fs::metadata(&path).unwrap().len() / 1024,
        back.len()
    );
    assert!(back.nodes() == stream.nodes(), "nodes differ after load");
    for (i, q) in queries.iter().enumerate() {
        let v = embedder.embed_one(q);
        let now = GameTime(30_000 + 60 * i as u64);
        let a = stream.retrieve(&v, now).unwrap();
        let b = back.retrieve(&v, now).unwrap();
        assert_eq!(a, b, "query {q:?}");
        assert_eq!(a.len(), 10);
    }
    assert!(
        back.nodes() == stream.nodes(),
        "nodes differ after retrieval"
    );
}

use super::*;
use crate::memory::embedder::HashingEmbedder;

fn mem(kind: MemoryKind, text: &str, t: u64, imp: i64, v: Vec<f32>) -> NewMemory {
    NewMemory::new(kind, text, GameTime(t), Importance::new(imp), v)
}

fn ids(s: &[ScoredMemory]) -> Vec<u64> {
    s.iter().map(|m| m.id).collect()
}

#[test]
fn recency_decides_when_the_rest_is_equal() {
    let mut s = MemoryStream::new(2, StreamConfig::default()).unwrap();
    for t in [0, 600, 300] {
        s.add(mem(MemoryKind::Observation, "x", t, 5, vec![1.0, 1.0]))
            .unwrap();
    }
    let got = s.retrieve_k(&[1.0, 1.0], GameTime(2000), 3).unwrap();
    assert_eq!(ids(&got), vec![1, 2, 0]);
    // Retrieved nodes were touched.
    assert!(s.nodes().iter().all(|n| n.last_accessed == GameTime(2000)));
}

#[test]
fn importance_decides_when_the_rest_is_equal() {
    let mut s = MemoryStream::new(2, StreamConfig::default()).unwrap();
    for imp in [3, 9, 6] {
        s.add(mem(MemoryKind::Observation, "x", 60, imp, vec![0.0, 1.0]))
            .unwrap();
    }
    let got = s.retrieve_k(&[0.0, 1.0], GameTime(120), 2).unwrap();
    assert_eq!(ids(&got), vec![1, 2]);
    // Only the two retrieved were touched.
    assert_eq!(s.get(0).unwrap().last_accessed, GameTime(60));
    assert_eq!(s.get(1).unwrap().last_accessed, GameTime(120));
}

#[test]
fn relevance_decides_when_the_rest_is_equal() {
    let mut s = MemoryStream::new(3, StreamConfig::default()).unwrap();
    for v in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.7, 0.7, 0.0]] {
        s.add(mem(MemoryKind::Observation, "x", 60, 5, v.to_vec()))
            .unwrap();
    }
    let got = s.score(&[0.0, 1.0, 0.1], GameTime(60), 3).unwrap();
    assert_eq!(ids(&got), vec![1, 2, 0]);
    // `score` does not touch.
    let got = s.score(&[1.0, 0.0, 0.0], GameTime(900), 1).unwrap();
    assert_eq!(ids(&got), vec![0]);
    assert_eq!(s.get(0).unwrap().last_accessed, GameTime(60));
}

#[test]
fn reflection_trigger_at_threshold() {
    let mut s = MemoryStream::new(2, StreamConfig::default()).unwrap();
    for i in 0..14 {
        s.add(mem(MemoryKind::Observation, "x", i, 10, vec![1.0, 0.0]))
            .unwrap();
        assert!(!s.should_reflect(), "after {} memories", i + 1);
    }
    // Reflections do not count.
    s.add(mem(MemoryKind::Reflection, "r", 14, 10, vec![1.0, 0.0]))
        .unwrap();
    assert_eq!(s.importance_since_reflection(), 140);
    assert!(!s.should_reflect());
    s.add(mem(MemoryKind::Dialogue, "d", 15, 9, vec![1.0, 0.0]))
        .unwrap();
    assert!(!s.should_reflect());
    s.add(mem(MemoryKind::Plan, "p", 16, 1, vec![1.0, 0.0]))
        .unwrap();
    assert_eq!(s.importance_since_reflection(), 150);
    assert!(s.should_reflect());
    s.mark_reflected(GameTime(17));
    assert!(!s.should_reflect());
    assert_eq!(s.last_reflection(), Some(GameTime(17)));
    s.set_reflection_threshold(0);
    for _ in 0..20 {
        s.add(mem(MemoryKind::Observation, "x", 18, 10, vec![1.0, 0.0]))
            .unwrap();
    }
    assert!(!s.should_reflect());
}

#[test]
fn add_validates_and_is_atomic() {
    let mut s = MemoryStream::new(2, StreamConfig::default()).unwrap();
    assert!(s
        .add(mem(MemoryKind::Observation, "x", 0, 5, vec![1.0]))
        .is_err());
    assert!(matches!(
        s.add(mem(MemoryKind::Reflection, "r", 0, 5, vec![1.0, 0.0]).with_evidence(vec![0])),
        Err(MemoryError::UnknownId(0))
    ));
    let batch = vec![
        mem(MemoryKind::Observation, "a", 0, 5, vec![1.0, 0.0]),
        mem(MemoryKind::Observation, "b", 0, 5, vec![0.0, 0.0]),
    ];
    assert!(s.add_batch(batch).is_err());
    assert!(s.is_empty() && s.index().is_empty());
    let batch = vec![
        mem(MemoryKind::Observation, "a", 0, 5, vec![3.0, 4.0]),
        mem(MemoryKind::Reflection, "r", 0, 5, vec![0.0, 1.0]).with_evidence(vec![0, 0]),
    ];
    assert_eq!(s.add_batch(batch).unwrap(), vec![0, 1]);
    assert_eq!(s.get(1).unwrap().evidence, vec![0]);
    assert_eq!(s.get(0).unwrap().embedding, vec![0.6, 0.8]);
    assert!(s.score(&[f32::NAN, 0.0], GameTime(0), 1).is_err());
    assert!(s.score(&[1.0, 0.0], GameTime(0), 0).unwrap().is_empty());
}

#[test]
fn latest_returns_the_tail() {
    let mut s = MemoryStream::new(2, StreamConfig::default()).unwrap();
    assert!(s.latest(3).is_empty());
    for t in 0..5 {
        s.add(mem(MemoryKind::Observation, "x", t, 1, vec![1.0, 0.0]))
            .unwrap();
    }
    let ids: Vec<u64> = s.latest(3).iter().map(|n| n.id).collect();
    assert_eq!(ids, vec![2, 3, 4]);
    assert_eq!(s.latest(99).len(), 5);
}

fn sample_stream(config: StreamConfig, n: usize) -> MemoryStream {
    let e = HashingEmbedder::new(64);
    let mut s = MemoryStream::new(64, config).unwrap();
    let people = ["John", "Eddy", "Mei", "Sam", "Jennifer"];
    let acts = [
        "eats breakfast",
        "paints",
        "studies music",
        "walks",
        "reads",
    ];
    let places = ["kitchen", "park", "cafe", "library", "garden"];
    for i in 0..n {
        let text = format!(
            "{} {} in the {} ({})",
            people[i % 5],
            acts[(i / 5) % 5],
            places[(i / 25) % 5],
            i
        );
        let kind = if i % 7 == 0 {
            MemoryKind::Plan
        } else {
            MemoryKind::Observation
        };
        let m = mem(
            kind,
            &text,
            i as u64 * 15,
            (i % 10) as i64 + 1,
            e.embed_one(&text),
        );
        s.add(m).unwrap();
    }
    s
}

fn round_trip(config: StreamConfig, n: usize) {
    let e = HashingEmbedder::new(64);
    let mut s = sample_stream(config, n);
    s.retrieve_k(&e.embed_one("John paints"), GameTime(5000), 5)
        .unwrap();
    let mut bytes = Vec::new();
    s.write_to(&mut bytes).unwrap();
    let mut back = MemoryStream::read_from(&mut bytes.as_slice()).unwrap();
    assert!(back.nodes() == s.nodes(), "nodes differ");
    assert_eq!(back.config(), s.config());
    assert_eq!(back.index().uses_hnsw(), s.index().uses_hnsw());
    assert_eq!(
        back.importance_since_reflection(),
        s.importance_since_reflection()
    );
    for (i, q) in ["Mei walks in the park", "breakfast kitchen", "Sam reads"]
        .iter()
        .enumerate()
    {
        let now = GameTime(6000 + i as u64 * 100);
        let a = s.retrieve_k(&e.embed_one(q), now, 8).unwrap();
        let b = back.retrieve_k(&e.embed_one(q), now, 8).unwrap();
        assert_eq!(a, b, "query {q}");
        assert!(!a.is_empty());
    }
    assert!(back.nodes() == s.nodes(), "nodes differ");
    // Corrupt input is an error, not a panic.
    for cut in [0, 5, 20, bytes.len() / 2, bytes.len() - 1] {
        assert!(MemoryStream::read_from(&mut &bytes[..cut]).is_err());
    }
}

#[test]
fn save_load_round_trip_exact() {
    round_trip(StreamConfig::default(), 200);
}

#[test]
fn save_load_round_trip_hnsw() {
    let mut config = StreamConfig::default();
    config.index.exact_threshold = 50;
    config.retrieval.candidate_factor = 2;
    round_trip(config, 300);
}

#[test]
fn save_to_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("agent.mem");
    let s = sample_stream(StreamConfig::default(), 20);
    s.save(&path).unwrap();
    let back = MemoryStream::load(&path).unwrap();
    assert!(back.nodes() == s.nodes(), "nodes differ");
    assert!(MemoryStream::load(&dir.path().join("missing")).is_err());
}

#[test]
fn with_hnsw_the_newest_memories_still_compete() {
    // 300 old, unimportant memories close to the query, then one new, life-changing memory
    // unrelated to it: relevance candidates alone (k × 10 = 10) would never include it.
    let config = StreamConfig {
        index: IndexConfig {
            exact_threshold: 50,
            ..IndexConfig::default()
        },
        ..StreamConfig::default()
    };
    let mut s = MemoryStream::new(3, config).unwrap();
    for i in 0..300u64 {
        let v = vec![1.0, (i % 17) as f32 * 0.01, (i % 5) as f32 * 0.01];
        s.add(mem(MemoryKind::Observation, "old", i, 1, v)).unwrap();
    }
    let newest = s
        .add(mem(
            MemoryKind::Observation,
            "new",
            6000,
            10,
            vec![0.0, 0.0, 1.0],
        ))
        .unwrap();
    assert!(s.index.uses_hnsw());
    let got = s.score(&[1.0, 0.0, 0.0], GameTime(6000), 1).unwrap();
    assert_eq!(ids(&got), vec![newest]);
}

use super::parse::strip_marker;
use super::*;
use crate::memory::embedder::{HashingEmbedder, TextEmbedder};
use crate::memory::stream::StreamConfig;

fn shown(n: u64) -> Vec<(u64, String)> {
    (0..n)
        .map(|i| (100 + i, format!("statement {i}")))
        .collect()
}

#[test]
fn citations_parse_in_many_shapes() {
    let text = "Here are the insights:\n\
        1. John cares deeply about his family (because of 1, 3)\n\
        2) Eddy is passionate about music (because of 2 and 9)\n\
        - John works hard at the pharmacy because of 4\n\
        Insight 4: John enjoys quiet mornings (statements 2-4)\n\
        5. Mei is a thoughtful and kind teacher.\n\
        6. Too many insights here now (because of 1)";
    let got = parse_insights(text, &shown(4), 5, false);
    let pairs: Vec<(&str, Vec<u64>)> = got
        .iter()
        .map(|i| (i.text.as_str(), i.evidence.clone()))
        .collect();
    assert_eq!(
        pairs,
        vec![
            ("John cares deeply about his family", vec![100, 102]),
            ("Eddy is passionate about music", vec![101]),
            ("John works hard at the pharmacy", vec![103]),
            ("John enjoys quiet mornings", vec![101, 102, 103]),
            ("Mei is a thoughtful and kind teacher.", vec![]),
        ]
    );
    assert!(got[1].cited_by_model && !got[4].cited_by_model);
    let with_fallback = parse_insights(text, &shown(4), 5, true);
    assert_eq!(with_fallback[4].evidence, vec![100, 101, 102, 103]);
}

#[test]
fn insights_skip_junk_and_repeats() {
    let text = "1. statement 2 (because of 2)\n\
        2. ok\n\
        3. John likes tea a lot (because of 0, 1, 1)\n\
        4. john likes tea a lot (because of 2)\n\
        5. John likes tea a lot in the morning (because of 2)\n\
        6. John likes tea a lot's taste (because of 2)\n\
        \n\
        (because of 1)\n";
    let got = parse_insights(text, &shown(3), 5, false);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].text, "John likes tea a lot");
    assert_eq!(got[0].evidence, vec![100]);
    assert!(parse_insights("", &shown(3), 5, true).is_empty());
    assert!(parse_insights(
        "1. a b c (because of 99999999999999999999999)",
        &[],
        5,
        true
    )[0]
    .evidence
    .is_empty());
}

#[test]
fn questions_parse_defensively() {
    let text = "Sure! Here are three questions:\n\
        1. What does John value most?\n\
        2) How does Eddy feel about music?\n\
        Q3: Why is Mei worried?\n\
        4. What else?";
    assert_eq!(
        parse_questions(text, 3),
        vec![
            "What does John value most?",
            "How does Eddy feel about music?",
            "Why is Mei worried?"
        ]
    );
    // Unnumbered questions on one line.
    assert_eq!(
        parse_questions("Who is John? What does he like? ok", 3),
        vec!["Who is John?", "What does he like?"]
    );
    assert!(parse_questions("", 3).is_empty());
    assert!(parse_questions("I cannot answer that.", 3).is_empty());
}

#[test]
fn questions_fall_back_to_important_memories() {
    let node = |id: u64, imp: i64, text: &str| MemoryNode {
        id,
        kind: MemoryKind::Observation,
        text: text.into(),
        created: GameTime(0),
        last_accessed: GameTime(0),
        importance: Importance::new(imp),
        embedding: vec![1.0],
        evidence: vec![],
    };
    let nodes = [
        node(0, 2, "John ate cereal."),
        node(1, 9, "Eddy won a prize"),
        node(2, 9, "John lost his job"),
    ];
    let refs: Vec<&MemoryNode> = nodes.iter().collect();
    let q = questions_or_fallback("1. What does John value?", "John", &refs, 3);
    assert_eq!(
        q,
        vec![
            "What does John value?",
            "What does it say about John that John lost his job?",
            "What does it say about John that Eddy won a prize?",
        ]
    );
}

#[test]
fn store_insights_checks_evidence() {
    let mut e = HashingEmbedder::new(16);
    let mut s = MemoryStream::new(16, StreamConfig::default()).unwrap();
    s.add_texts(
        &mut e,
        MemoryKind::Observation,
        &["John ate cereal", "John went to work"],
        &[Importance::new(2), Importance::new(4)],
        GameTime(10),
    )
    .unwrap();
    let insights = vec![Insight {
        text: "John has a routine".into(),
        evidence: vec![1, 0, 42],
        cited_by_model: true,
    }];
    let emb = e.embed(&["John has a routine"]).unwrap();
    let ids = store_insights(&mut s, &insights, emb, &[Importance::new(6)], GameTime(20)).unwrap();
    assert_eq!(ids, vec![2]);
    let node = s.get(2).unwrap();
    assert_eq!(node.kind, MemoryKind::Reflection);
    assert_eq!(node.evidence, vec![1, 0]);
    assert_eq!(s.importance_since_reflection(), 6);
    assert!(store_insights(&mut s, &insights, vec![], &[], GameTime(20)).is_err());
}

#[test]
fn example_copies_are_skipped() {
    let q = "1. How does Bob Smith feel about his work as a baker?\n2. What does John want?";
    assert_eq!(parse_questions(q, 3), vec!["What does John want?"]);
    let i =
        "1. Bob Smith works hard as a baker (because of 1, 6)\n2. John works hard (because of 1)";
    let got = parse_insights(i, &shown(2), 5, false);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].text, "John works hard");
}

#[test]
fn marker_stripping() {
    assert_eq!(strip_marker("12. abc"), (true, "abc"));
    assert_eq!(strip_marker("  - abc"), (true, "abc"));
    assert_eq!(strip_marker("Question 2: abc"), (true, "abc"));
    assert_eq!(strip_marker("Q: abc"), (true, "abc"));
    assert_eq!(strip_marker("Queen of hearts"), (false, "Queen of hearts"));
    assert_eq!(strip_marker("3 cats sat"), (false, "3 cats sat"));
    assert_eq!(
        strip_marker("Insightful remark"),
        (false, "Insightful remark")
    );
    assert_eq!(
        strip_marker("1.5 million people"),
        (false, "1.5 million people")
    );
    assert_eq!(strip_marker("Insight 4: abc"), (true, "abc"));
    assert_eq!(strip_marker("7"), (false, "7"));
}

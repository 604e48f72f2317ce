//! Reflection as an agent task: the memory module's prompts and parsers, with every model
//! call going through the agent's port so reflections of all agents share batches.

use std::cell::RefCell;

use crate::memory::importance::{importance_from_result, importance_or, importance_requests};
use crate::memory::reflect::{
    add_new_insights, generated_text, insights_request, parse_insights, questions_or_fallback,
    questions_request, store_insights,
};
use crate::memory::{
    GameTime, Importance, Insight, MemoryNode, MemoryStream, ReflectionConfig, TextEmbedder,
};

use super::mind::{missing, Mind};

/// Reflection settings for simulation runs: the paper's threshold and three questions, with
/// fewer memories per prompt than the memory module's defaults so a reflection costs a few
/// seconds on a small model.
pub fn sim_reflection_config() -> ReflectionConfig {
    ReflectionConfig {
        recent: 50,
        questions: 3,
        insights_per_question: 2,
        memories_per_question: 10,
        question_max_tokens: 96,
        insight_max_tokens: 120,
        ..ReflectionConfig::default()
    }
}

/// What a reflection stored.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Reflection {
    pub questions: Vec<String>,
    pub insights: Vec<String>,
}

/// Reflects for `agent`: questions from the latest memories, insights per question, their
/// importance, storage; marks the stream reflected (also when nothing came back).
pub async fn reflect(
    mind: &Mind<'_>,
    stream: &mut MemoryStream,
    embedder: &RefCell<Box<dyn TextEmbedder>>,
    agent: &str,
    now: GameTime,
    config: &ReflectionConfig,
) -> Reflection {
    let recent: Vec<MemoryNode> = stream.latest(config.recent).to_vec();
    if recent.is_empty() {
        stream.mark_reflected(now);
        return Reflection::default();
    }
    let texts: Vec<String> = recent
        .iter()
        .map(|n| super::context::memory_line(&n.text))
        .collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut req = questions_request(agent, &refs, config);
    if let crate::llm::Request::Generate(g) = &mut req {
        g.seed = mind.port.next_seed();
    }
    let r = mind
        .port
        .run(vec![("reflection_questions".into(), req)])
        .await;
    let text = generated_text(r.into_iter().next().unwrap_or_else(missing)).unwrap_or_else(|e| {
        mind.fallback(
            "reflection_questions",
            e.to_string(),
            "",
            "questions about the most important memories",
        );
        String::new()
    });
    let parsed = crate::memory::reflect::parse_questions(&text, config.questions).len();
    if parsed < config.questions {
        mind.fallback(
            "reflection_questions",
            format!("{parsed} of {} questions parsed", config.questions),
            &text,
            "questions about the most important recent memories",
        );
    }
    let node_refs: Vec<&MemoryNode> = recent.iter().collect();
    let questions = questions_or_fallback(&text, agent, &node_refs, config.questions);

    let mut requests = Vec::new();
    for q in &questions {
        let scored = {
            let mut emb = embedder.borrow_mut();
            match stream.retrieve_text(&mut **emb, q, now, config.memories_per_question) {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "reflection retrieval failed");
                    Vec::new()
                }
            }
        };
        let mut shown: Vec<(u64, String)> = scored
            .iter()
            .filter_map(|s| Some((s.id, super::context::memory_line(&stream.get(s.id)?.text))))
            .collect();
        shown.sort_by_key(|(id, _)| *id);
        let mut ir = insights_request(agent, q, shown, config);
        if let crate::llm::Request::Generate(g) = &mut ir.request {
            g.seed = mind.port.next_seed();
        }
        requests.push(ir);
    }
    let results = mind
        .port
        .run(
            requests
                .iter()
                .map(|r| ("reflection_insights".to_string(), r.request.clone()))
                .collect(),
        )
        .await;
    let mut insights: Vec<Insight> = Vec::new();
    for (req, res) in requests.iter().zip(results) {
        let text = generated_text(res).unwrap_or_default();
        let parsed = parse_insights(
            &text,
            &req.shown,
            config.insights_per_question,
            config.cite_all_when_missing,
        );
        if parsed.is_empty() {
            mind.fallback(
                "reflection_insights",
                "no insight parsed",
                &text,
                "no insight",
            );
        }
        add_new_insights(&mut insights, parsed);
    }
    let insight_texts: Vec<&str> = insights.iter().map(|i| i.text.as_str()).collect();
    let fallback = Importance::from(config.fallback_importance);
    let importances: Vec<Importance> = if insight_texts.is_empty() {
        Vec::new()
    } else {
        let reqs = importance_requests(&insight_texts)
            .into_iter()
            .map(|r| ("importance".to_string(), r))
            .collect();
        mind.port
            .run(reqs)
            .await
            .into_iter()
            .map(|r| importance_or(importance_from_result(r), fallback))
            .collect()
    };
    let embeddings = {
        let mut emb = embedder.borrow_mut();
        crate::memory::embedder::embed_checked(&mut **emb, &insight_texts)
    };
    match embeddings.and_then(|e| store_insights(stream, &insights, e, &importances, now)) {
        Ok(_) => {}
        Err(e) => mind.fallback("reflection_store", e.to_string(), "", "no insight stored"),
    }
    stream.mark_reflected(now);
    Reflection {
        questions,
        insights: insights.into_iter().map(|i| i.text).collect(),
    }
}

//! Interviews (Park et al. 2023): ask an agent questions as it stood at the end of a
//! step, answered by the model from the agent's context and its retrieved memories.
//!
//! For each question the agent's memories are scored against the question (recency ×
//! importance × relevance, [`MemoryStream::score`](crate::memory::MemoryStream::score),
//! without touching them: an interview changes nothing), the best `k` go into the agent's
//! context (oldest first, trimmed to the context budget, lowest score first), and the model
//! (the in-process engine or a remote server) answers in one line, greedily. Every question of an interview is one batch. The answer
//! is untrusted text: [`clean_answer`] keeps its first line without quotes or a speaker
//! label; an empty answer or a failed request is a fallback (logged, reason kept).

use serde::Serialize;

use super::error::{EvalError, Result};
use super::snapshot::Snapshot;
use crate::agent::context::fitted_prompt;
use crate::agent::mind::{chat, clean_line};
use crate::llm::constrain::{ConstraintSpec, TokenTable};
use crate::llm::{GenerateRequest, Inference, Prompt, Request, Response, Sampling};
use crate::memory::{MemoryKind, TextEmbedder};

/// Memories retrieved per question by default.
pub const DEFAULT_MEMORIES: usize = 10;

/// Longest answer, in characters.
pub const ANSWER_CHARS: usize = 300;

/// A retrieved memory with its retrieval scores.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RecalledMemory {
    /// Its id in the agent's memory stream.
    pub id: u64,
    pub kind: MemoryKind,
    pub text: String,
    /// When it was created ("day 0 06:15").
    pub created: String,
    /// Its importance rating, 1–10.
    pub importance: u8,
    /// The retrieval score: the sum of the three weighted components below.
    pub score: f32,
    /// Recency, min–max normalised over the candidates (0–1).
    pub recency: f32,
    /// Importance, min–max normalised over the candidates (0–1).
    pub importance_score: f32,
    /// Relevance (cosine similarity to the query), min–max normalised (0–1).
    pub relevance: f32,
}

/// One question and the agent's answer.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Answer {
    pub question: String,
    /// The cleaned answer; empty when `fallback` says why there is none.
    pub answer: String,
    /// Why the model's answer was unusable (`None` when it was used).
    pub fallback: Option<String>,
    /// The memories retrieved for the question, best first.
    pub memories: Vec<RecalledMemory>,
}

/// Settings of an interview.
#[derive(Clone, Debug)]
pub struct InterviewOptions {
    /// Memories retrieved per question.
    pub memories: usize,
}

impl Default for InterviewOptions {
    fn default() -> Self {
        Self {
            memories: DEFAULT_MEMORIES,
        }
    }
}

/// Retrieves the best `k` memories of `agent` for each query, best first, without touching
/// them (the queries are embedded in one batch).
pub fn recall(
    snapshot: &Snapshot,
    agent: usize,
    embedder: &mut dyn TextEmbedder,
    queries: &[&str],
    k: usize,
) -> Result<Vec<Vec<RecalledMemory>>> {
    let stream = snapshot
        .memories
        .get(agent)
        .ok_or_else(|| EvalError::Invalid(format!("no agent {agent}")))?;
    let vectors = crate::memory::embedder::embed_checked(embedder, queries)
        .map_err(|e| EvalError::Model(format!("embedding the questions: {e}")))?;
    vectors
        .iter()
        .map(|v| {
            let scored = stream
                .score(v, snapshot.now, k)
                .map_err(|e| EvalError::Model(format!("retrieval: {e}")))?;
            Ok(scored
                .iter()
                .filter_map(|s| {
                    let n = stream.get(s.id)?;
                    Some(RecalledMemory {
                        id: n.id,
                        kind: n.kind,
                        text: n.text.clone(),
                        created: n.created.to_string(),
                        importance: n.importance.get(),
                        score: s.score,
                        recency: s.recency,
                        importance_score: s.importance,
                        relevance: s.relevance,
                    })
                })
                .collect())
        })
        .collect()
}

/// The prompt `make(system)` where `system` is `agent`'s context at the snapshot with as
/// many of `memories` as fit the engine's context budget less `reserve` tokens (lowest
/// scores dropped first; those kept shown oldest first).
pub fn fit_prompt(
    engine: &dyn Inference,
    snapshot: &Snapshot,
    agent: usize,
    memories: &[RecalledMemory],
    reserve: usize,
    make: impl Fn(&str) -> Prompt,
) -> Prompt {
    let mut by_age: Vec<&RecalledMemory> = memories.iter().collect();
    by_age.sort_by_key(|m| m.id);
    let memories: Vec<(String, f32)> = by_age.iter().map(|m| (m.text.clone(), m.score)).collect();
    fitted_prompt(
        engine,
        &snapshot.world.agents[agent],
        &snapshot.agents[agent],
        snapshot.date,
        snapshot.minutes,
        &memories,
        reserve,
        make,
    )
}

/// The instruction that ends an interviewed agent's system message.
pub fn interview_instruction(name: &str) -> String {
    format!(
        "{name} is being interviewed. Answer the question as {name}, in the first person (\"I\"), in one or two sentences."
    )
}

/// Interviews `agent` with every question in one batch. Errors: no questions, an empty
/// question, an embedding failure; a model failure on one question is that answer's
/// fallback.
pub fn interview(
    engine: &mut dyn Inference,
    embedder: &mut dyn TextEmbedder,
    snapshot: &Snapshot,
    agent: usize,
    questions: &[String],
    opts: &InterviewOptions,
) -> Result<Vec<Answer>> {
    if questions.is_empty() {
        return Err(EvalError::Invalid("no questions to ask".into()));
    }
    if let Some(i) = questions.iter().position(|q| q.trim().is_empty()) {
        return Err(EvalError::Invalid(format!("question {} is empty", i + 1)));
    }
    let name = snapshot.world.agents[agent].name.clone();
    let queries: Vec<&str> = questions.iter().map(|q| q.trim()).collect();
    let recalled = recall(snapshot, agent, embedder, &queries, opts.memories)?;
    let table = TokenTable::new(engine.tokenizer());
    let instruction = interview_instruction(&name);
    let max_tokens = ANSWER_CHARS / 2 + 16;
    let requests: Vec<Request> = queries
        .iter()
        .zip(&recalled)
        .map(|(q, mems)| {
            let prompt = fit_prompt(&*engine, snapshot, agent, mems, max_tokens, |sys| {
                chat(&format!("{sys}\n{instruction}"), q)
            });
            let mut g = GenerateRequest::new(prompt, max_tokens);
            g.sampling = Sampling::greedy();
            g.constrain(
                &table,
                ConstraintSpec::line(ANSWER_CHARS).in_letters(snapshot.world.letters()),
            );
            Request::Generate(g)
        })
        .collect();
    let results = engine.run(requests, &mut |_| {});
    let mut answers = Vec::with_capacity(questions.len());
    for ((q, memories), result) in queries.iter().zip(recalled).zip(results) {
        let (answer, fallback) = match result {
            Ok(Response::Generated(g)) => {
                let a = clean_answer(&g.text, &name);
                if a.is_empty() {
                    (a, Some(format!("empty answer (model wrote {:?})", g.text)))
                } else {
                    (a, None)
                }
            }
            Ok(Response::Chosen(_)) => (String::new(), Some("not a generation".into())),
            Err(e) => (String::new(), Some(e.to_string())),
        };
        if let Some(why) = &fallback {
            tracing::warn!(agent = %name, question = %q, reason = %why, "interview fallback: no answer");
        }
        answers.push(Answer {
            question: q.to_string(),
            answer,
            fallback,
            memories,
        });
    }
    Ok(answers)
}

/// Most sentences kept of an answer (small models run on and repeat themselves).
pub const ANSWER_SENTENCES: usize = 2;

/// The usable part of a model's answer: its first non-empty line, whitespace collapsed,
/// without surrounding quotes or a leading speaker label (`"John Lin:"`, `"A:"`,
/// `"Answer:"`), cut after [`ANSWER_SENTENCES`] sentences. Empty if nothing is left.
pub fn clean_answer(text: &str, name: &str) -> String {
    let s = strip_labels(text, name);
    let mut ends = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let at_end = chars.peek().is_none_or(|(_, n)| n.is_whitespace());
        if matches!(c, '.' | '!' | '?') && at_end {
            ends += 1;
            if ends == ANSWER_SENTENCES {
                return s[..i + c.len_utf8()].to_string();
            }
        }
    }
    s
}

fn strip_labels(text: &str, name: &str) -> String {
    let mut s = clean_line(text);
    loop {
        let lower = s.to_ascii_lowercase();
        let label = [name.to_ascii_lowercase(), "answer".into(), "a".into()]
            .into_iter()
            .find(|l| {
                lower.starts_with(l.as_str()) && lower[l.len()..].trim_start().starts_with(':')
            });
        let Some(label) = label else { break };
        let rest = s[label.len()..].trim_start();
        s = clean_line(&rest[1..]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_cleaned() {
        let n = "John Lin";
        assert_eq!(clean_answer("  \"I like tea.\"\nmore", n), "I like tea.");
        assert_eq!(
            clean_answer("John Lin: I am   a pharmacist.", n),
            "I am a pharmacist."
        );
        assert_eq!(clean_answer("john lin : A: \"Yes.\"", n), "Yes.");
        assert_eq!(clean_answer("Answer: Eddy.", n), "Eddy.");
        assert_eq!(clean_answer("\n\n  \n", n), "");
        assert_eq!(clean_answer("\"\"", n), "");
        assert_eq!(clean_answer("John Lin:", n), "");
        // A word that only starts like a label stays.
        assert_eq!(
            clean_answer("Apples: I sell them.", n),
            "Apples: I sell them."
        );
        assert_eq!(clean_answer("Äpfel: ja", n), "Äpfel: ja");
        // At most two sentences.
        assert_eq!(
            clean_answer("I ate. I ate! I ate? I ate.", n),
            "I ate. I ate!"
        );
        assert_eq!(
            clean_answer("It is 3.5 km... far. Yes", n),
            "It is 3.5 km... far."
        );
    }

    #[test]
    fn the_instruction_names_the_agent() {
        let q = interview_instruction("Eddy Lin");
        assert!(q.contains("as Eddy Lin, in the first person"), "{q}");
    }
}

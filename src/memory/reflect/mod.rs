//! Reflection (Park et al. 2023): from the latest memories, ask the model for the most
//! salient high-level questions; for each, retrieve memories and ask for insights that cite
//! them by number ("(because of 1, 5, 3)"); store the insights as reflection memories whose
//! evidence is the cited memories' ids.
//!
//! The stages are separate functions that build [`Request`]s and parse [`Response`]s, so a
//! tick driver can batch them with other agents' requests; `crate::agent::reflect` runs
//! the stages for an agent through its port. Parsing is defensive: the small default model does not always
//! follow the format, and every fallback is logged with `tracing` (info level: a small model often misses the format).

use serde::{Deserialize, Serialize};

use crate::llm::{GenerateRequest, LlmError, Message, Prompt, Request, Response};

use super::error::{MemoryError, Result};
use super::node::{GameTime, Importance, MemoryKind, MemoryNode, NewMemory};
use super::stream::MemoryStream;

mod parse;

use parse::dedup_case_insensitive;
pub use parse::{parse_insights, parse_questions, Insight};

/// Settings of reflection.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReflectionConfig {
    /// Latest memories the questions are drawn from.
    pub recent: usize,
    /// Questions asked.
    pub questions: usize,
    /// Most insights kept per question.
    pub insights_per_question: usize,
    /// Memories retrieved (and shown) per question.
    pub memories_per_question: usize,
    /// Generation limit of the questions.
    pub question_max_tokens: usize,
    /// Generation limit of each question's insights.
    pub insight_max_tokens: usize,
    /// An insight that cites no valid memory gets every memory shown for its question as
    /// evidence (it was inferred from them); if false it is stored without evidence.
    pub cite_all_when_missing: bool,
    /// Importance given to an insight whose rating failed.
    pub fallback_importance: u8,
}

impl Default for ReflectionConfig {
    fn default() -> Self {
        Self {
            recent: 100,
            questions: 3,
            insights_per_question: 5,
            memories_per_question: 30,
            question_max_tokens: 160,
            insight_max_tokens: 320,
            cite_all_when_missing: true,
            fallback_importance: 5,
        }
    }
}

const QUESTIONS_SYSTEM: &str = "You write questions about a person's life from facts about them.";

/// A worked example for the questions prompt (the small default model echoes the
/// instructions back without one).
const QUESTIONS_EXAMPLE: (&str, &str) = (
    "Facts about Bob Smith:\n- Bob Smith is a baker\n- Bob Smith burned a batch of bread\n\
     - Bob Smith called his sister Ann\n- Ann said she is moving away\n\n\
     Write the 3 most important questions these facts can answer.",
    "1. How does Bob Smith feel about his work as a baker?\n\
     2. What is Bob Smith's relationship with his sister Ann?\n\
     3. How will Ann moving away affect Bob Smith?",
);

const INSIGHTS_SYSTEM: &str = "You draw conclusions about a person from numbered facts. \
After each conclusion, cite the two or three facts that support it.";

/// A worked example for the insights prompt, showing the citation format.
const INSIGHTS_EXAMPLE: (&str, &str) = (
    "Facts about Bob Smith:\n1. Bob Smith is a baker\n2. Bob Smith burned a batch of bread\n\
     3. Bob Smith called his sister Ann\n4. Bob Smith went jogging\n5. Ann said she is moving away\n\
     6. Bob Smith stayed up late baking for a wedding\n7. Bob Smith ate a sandwich\n\n\
     Question: What matters to Bob Smith?\nWrite up to 5 conclusions, one per line.",
    "1. Bob Smith works hard as a baker (because of 1, 6)\n\
     2. Bob Smith makes mistakes when he is tired (because of 2, 6)\n\
     3. Bob Smith will miss his sister Ann (because of 3, 5)",
);

fn subject(agent: &str) -> &str {
    let a = agent.trim();
    if a.is_empty() {
        "the person"
    } else {
        a
    }
}

/// The prompt asking for the `n` most salient high-level questions about `memories`
/// (texts): an instruction, a worked example, then the memories.
pub fn questions_prompt(agent: &str, memories: &[&str], n: usize) -> Prompt {
    let mut user = format!("Facts about {}:\n", subject(agent));
    for m in memories {
        user.push_str("- ");
        user.push_str(m.trim());
        user.push('\n');
    }
    user.push_str(&format!(
        "\nWrite the {n} most important questions these facts can answer."
    ));
    Prompt::Chat(vec![
        Message::system(QUESTIONS_SYSTEM),
        Message::user(QUESTIONS_EXAMPLE.0),
        Message::assistant(QUESTIONS_EXAMPLE.1),
        Message::user(user),
    ])
}

/// The questions request for `memories` (texts, oldest first).
pub fn questions_request(agent: &str, memories: &[&str], config: &ReflectionConfig) -> Request {
    Request::Generate(GenerateRequest::new(
        questions_prompt(agent, memories, config.questions),
        config.question_max_tokens,
    ))
}

/// The text of a generation result.
pub fn generated_text(result: std::result::Result<Response, LlmError>) -> Result<String> {
    match result? {
        Response::Generated(g) => Ok(g.text),
        Response::Chosen(_) => Err(MemoryError::UnexpectedResponse {
            expected: "generation",
        }),
    }
}

/// [`parse_questions`], filled up to `n` when the model gave fewer: fallback questions about
/// the most important of `memories` (ties: the most recent), each logged as a warning.
pub fn questions_or_fallback(
    text: &str,
    agent: &str,
    memories: &[&MemoryNode],
    n: usize,
) -> Vec<String> {
    let mut questions = parse_questions(text, n);
    if questions.len() < n {
        let mut by_importance: Vec<&&MemoryNode> = memories.iter().collect();
        by_importance.sort_by(|a, b| b.importance.cmp(&a.importance).then(b.id.cmp(&a.id)));
        for node in by_importance {
            if questions.len() >= n {
                break;
            }
            let fact = node.text.trim().trim_end_matches(['.', '!', '?']).trim();
            if fact.is_empty() {
                continue;
            }
            let q = format!("What does it say about {} that {fact}?", subject(agent));
            tracing::info!(question = %q, "reflection: model gave too few questions; using a fallback");
            questions.push(q);
            dedup_case_insensitive(&mut questions);
        }
    }
    questions
}

/// An insights request with what it needs to be parsed: the question and the memories shown,
/// numbered from 1 in this order.
#[derive(Clone, Debug)]
pub struct InsightRequest {
    pub question: String,
    /// `(id, text)` of the memories shown; statement `i` is `shown[i - 1]`.
    pub shown: Vec<(u64, String)>,
    pub request: Request,
}

/// The prompt asking for up to `n` insights about `question` from numbered `statements`
/// (cited as "(because of 1, 5, 3)"): an instruction, a worked example, then the statements.
pub fn insights_prompt(agent: &str, question: &str, statements: &[&str], n: usize) -> Prompt {
    let mut user = format!("Facts about {}:\n", subject(agent));
    for (i, s) in statements.iter().enumerate() {
        user.push_str(&format!("{}. {}\n", i + 1, s.trim()));
    }
    user.push_str(&format!(
        "\nQuestion: {}\nWrite up to {n} conclusions, one per line.",
        question.trim()
    ));
    Prompt::Chat(vec![
        Message::system(INSIGHTS_SYSTEM),
        Message::user(INSIGHTS_EXAMPLE.0),
        Message::assistant(INSIGHTS_EXAMPLE.1),
        Message::user(user),
    ])
}

/// The insights request for `question` over `shown` memories (`(id, text)`, in the order
/// they are to be numbered).
pub fn insights_request(
    agent: &str,
    question: &str,
    shown: Vec<(u64, String)>,
    config: &ReflectionConfig,
) -> InsightRequest {
    let texts: Vec<&str> = shown.iter().map(|(_, t)| t.as_str()).collect();
    let prompt = insights_prompt(agent, question, &texts, config.insights_per_question);
    InsightRequest {
        question: question.to_string(),
        shown,
        request: Request::Generate(GenerateRequest::new(prompt, config.insight_max_tokens)),
    }
}

/// Appends the insights of `parsed` whose text (ignoring case) is not in `insights` yet.
pub fn add_new_insights(insights: &mut Vec<Insight>, parsed: Vec<Insight>) {
    for ins in parsed {
        if !insights
            .iter()
            .any(|x| x.text.eq_ignore_ascii_case(&ins.text))
        {
            insights.push(ins);
        }
    }
}

/// Stores `insights` as reflection memories created at `now`, with their embeddings (one
/// per insight) and importances (missing ones get the lowest); evidence ids not in the
/// stream are dropped. Returns the new ids.
pub fn store_insights(
    stream: &mut MemoryStream,
    insights: &[Insight],
    embeddings: Vec<Vec<f32>>,
    importances: &[Importance],
    now: GameTime,
) -> Result<Vec<u64>> {
    if embeddings.len() != insights.len() {
        return Err(MemoryError::EmbedderCount {
            expected: insights.len(),
            got: embeddings.len(),
        });
    }
    let memories = insights
        .iter()
        .zip(embeddings)
        .enumerate()
        .map(|(i, (ins, emb))| {
            let evidence: Vec<u64> = ins
                .evidence
                .iter()
                .copied()
                .filter(|&id| {
                    let ok = stream.get(id).is_some();
                    if !ok {
                        tracing::warn!(id, "reflection: dropping evidence id not in the stream");
                    }
                    ok
                })
                .collect();
            let imp = importances.get(i).copied().unwrap_or_default();
            NewMemory::new(MemoryKind::Reflection, ins.text.clone(), now, imp, emb)
                .with_evidence(evidence)
        })
        .collect();
    stream.add_batch(memories)
}

#[cfg(test)]
mod tests;

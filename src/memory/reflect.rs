//! Reflection (Park et al. 2023): from the latest memories, ask the model for the most
//! salient high-level questions; for each, retrieve memories and ask for insights that cite
//! them by number ("(because of 1, 5, 3)"); store the insights as reflection memories whose
//! evidence is the cited memories' ids.
//!
//! The stages are separate functions that build [`Request`]s and parse [`Response`]s, so a
//! tick driver can batch them with other agents' requests; [`reflect`] runs all stages on an
//! engine for one agent. Parsing is defensive: the small default model does not always
//! follow the format, and every fallback is logged with `tracing::warn`.

use serde::{Deserialize, Serialize};

use crate::llm::{Engine, GenerateRequest, LlmError, Message, Prompt, Request, Response};

use super::budget::fit_to_budget;
use super::embedder::{embed_checked, TextEmbedder};
use super::error::{MemoryError, Result};
use super::importance::{importance_from_result, importance_or, importance_requests};
use super::node::{GameTime, Importance, MemoryKind, MemoryNode, NewMemory};
use super::stream::MemoryStream;

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

/// Strips a list marker ("1.", "2)", "Q3:", "Question 1:", "-", "*", "•") from the start of
/// `line`; returns whether there was one and the rest.
fn strip_marker(line: &str) -> (bool, &str) {
    let s = line.trim_start();
    for bullet in ["-", "*", "•"] {
        if let Some(rest) = s.strip_prefix(bullet) {
            return (true, rest.trim_start());
        }
    }
    // An optional word ("Question 2:", "Q3.", "Insight:"), then digits, then '.', ')' or ':'.
    let lower = s.to_ascii_lowercase();
    let mut had_word = false;
    let mut t = s;
    for word in ["question", "insight", "q"] {
        if lower.starts_with(word) {
            let after = s[word.len()..].trim_start();
            if after.starts_with(|c: char| c.is_ascii_digit() || c == ':') {
                had_word = true;
                t = after;
            }
            break;
        }
    }
    let digits = t.bytes().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 && !had_word {
        return (false, s);
    }
    let after = t[digits..].trim_start();
    let mut chars = after.chars();
    match chars.next() {
        Some(')') | Some(':') => return (true, chars.as_str().trim_start()),
        // "1." but not "1.5".
        Some('.')
            if chars.as_str().is_empty() || chars.as_str().starts_with(char::is_whitespace) =>
        {
            return (true, chars.as_str().trim_start());
        }
        _ => {}
    }
    if had_word {
        (true, after)
    } else {
        (false, s)
    }
}

/// Whether `s` copies a line of a worked example (the small model sometimes parrots them).
fn is_example_echo(s: &str) -> bool {
    let key = normalize_sentence(split_citation(s).0);
    QUESTIONS_EXAMPLE
        .1
        .lines()
        .chain(INSIGHTS_EXAMPLE.1.lines())
        .any(|l| normalize_sentence(split_citation(strip_marker(l).1).0) == key)
}

fn word_count(s: &str) -> usize {
    s.split_whitespace().count()
}

/// Parses up to `n` questions from a generation: numbered or bulleted lines first, else any
/// line ending with '?'. Several questions on one line are split after each '?'.
pub fn parse_questions(text: &str, n: usize) -> Vec<String> {
    let mut marked = Vec::new();
    let mut asked = Vec::new();
    for line in text.lines() {
        for segment in split_after_question_marks(line) {
            let (has_marker, rest) = strip_marker(segment);
            let q = clean(rest);
            if word_count(&q) < 2 || q.ends_with(':') {
                continue;
            }
            if is_example_echo(&q) {
                tracing::warn!(question = %q, "reflection: skipping a copy of the example");
                continue;
            }
            if has_marker {
                marked.push(q);
            } else if q.ends_with('?') {
                asked.push(q);
            }
        }
    }
    let mut out = if marked.is_empty() { asked } else { marked };
    dedup_case_insensitive(&mut out);
    out.truncate(n);
    out
}

fn split_after_question_marks(line: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0;
    for (i, c) in line.char_indices() {
        if c == '?' {
            parts.push(&line[start..i + 1]);
            start = i + 1;
        }
    }
    if !line[start..].trim().is_empty() {
        parts.push(&line[start..]);
    }
    parts
}

/// Trims whitespace, quotes and trailing separators.
fn clean(s: &str) -> String {
    s.trim()
        .trim_matches(|c: char| c == '"' || c == '\'' || c == '`' || c == '*')
        .trim_end_matches([',', ';', '-', ' '])
        .trim()
        .to_string()
}

fn dedup_case_insensitive(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert(s.to_lowercase()));
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
            tracing::warn!(question = %q, "reflection: model gave too few questions; using a fallback");
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

/// One insight parsed from a generation.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Insight {
    pub text: String,
    /// Ids of the memories it rests on (all shown to the model).
    pub evidence: Vec<u64>,
    /// Whether the model cited at least one valid statement (false: fallback evidence).
    pub cited_by_model: bool,
}

/// Splits a line into the insight and its citation numbers: the last parenthesis holding a
/// digit, else the digits after "because of" / "because" / "based on".
fn split_citation(line: &str) -> (&str, Option<Vec<usize>>) {
    // ASCII lower-casing keeps byte offsets.
    let lower = line.to_ascii_lowercase();
    let mut paren = None;
    for (i, _) in line.match_indices('(') {
        let inner = &line[i + 1..];
        let inner = &inner[..inner.find(')').unwrap_or(inner.len())];
        if inner.bytes().any(|b| b.is_ascii_digit()) {
            paren = Some((i, inner));
        }
    }
    if let Some((i, inner)) = paren {
        return (&line[..i], Some(citation_numbers(inner)));
    }
    for key in ["because of", "because", "based on"] {
        if let Some(i) = lower.find(key) {
            let rest = &line[i + key.len()..];
            if rest.bytes().any(|b| b.is_ascii_digit()) {
                return (&line[..i], Some(citation_numbers(rest)));
            }
        }
    }
    (line, None)
}

/// The numbers in a citation; "2-4" is a range.
fn citation_numbers(s: &str) -> Vec<usize> {
    let mut out = Vec::new();
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut pending_range_from: Option<usize> = None;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let Ok(v) = s[start..i].parse::<usize>() else {
                continue;
            };
            match pending_range_from.take() {
                Some(from) if from < v && v - from <= 50 => out.extend(from + 1..=v),
                _ => out.push(v),
            }
            // A '-' (or en dash) right after the number starts a range.
            let rest = s[i..].trim_start();
            if rest.starts_with('-') || rest.starts_with('–') {
                pending_range_from = Some(v);
            }
        } else {
            i += 1;
        }
    }
    out
}

/// Parses up to `max` insights from a generation answering an [`InsightRequest`].
/// Citation numbers outside the statements shown are dropped (logged); an insight left
/// without citations gets all `shown` ids if `cite_all_when_missing`, else none. Lines that
/// are too short, headers, repeats (or an earlier insight with words appended, as a looping
/// model writes), copies of a statement or of the worked example are skipped.
pub fn parse_insights(
    text: &str,
    shown: &[(u64, String)],
    max: usize,
    cite_all_when_missing: bool,
) -> Vec<Insight> {
    let mut out: Vec<Insight> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    let statements: std::collections::HashSet<String> =
        shown.iter().map(|(_, t)| normalize_sentence(t)).collect();
    for line in text.lines() {
        if out.len() >= max {
            break;
        }
        let (_, body) = strip_marker(line);
        let (insight, numbers) = split_citation(body);
        let insight = clean(insight);
        if word_count(&insight) < 3 || insight.ends_with(':') {
            continue;
        }
        let key = normalize_sentence(&insight);
        if is_example_echo(&insight) {
            tracing::warn!(line = %insight, "reflection: skipping a copy of the example");
            continue;
        }
        if statements.contains(&key) {
            tracing::warn!(line = %insight, "reflection: skipping an insight that repeats a statement");
            continue;
        }
        // Repeats, and the run-on variants a looping model produces ("X", "X's family", ...).
        if seen.iter().any(|k: &String| {
            key == *k || key.starts_with(&format!("{k} ")) || key.starts_with(&format!("{k}'"))
        }) {
            continue;
        }
        seen.push(key);
        let mut evidence = Vec::new();
        for n in numbers.unwrap_or_default() {
            match n.checked_sub(1).and_then(|i| shown.get(i)) {
                Some((id, _)) if !evidence.contains(id) => evidence.push(*id),
                Some(_) => {}
                None => tracing::warn!(
                    citation = n,
                    statements = shown.len(),
                    "reflection: dropping a citation of a statement that was not shown"
                ),
            }
        }
        let cited_by_model = !evidence.is_empty();
        if !cited_by_model {
            tracing::warn!(insight = %insight, fallback_all = cite_all_when_missing,
                "reflection: insight cites no valid statement");
            if cite_all_when_missing {
                evidence = shown.iter().map(|(id, _)| *id).collect();
            }
        }
        out.push(Insight {
            text: insight,
            evidence,
            cited_by_model,
        });
    }
    out
}

fn normalize_sentence(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .trim_end_matches(['.', '!', '?', ' '])
        .to_lowercase()
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

/// What a reflection produced.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ReflectionOutcome {
    pub questions: Vec<String>,
    pub insights: Vec<Insight>,
    /// Ids of the stored reflection memories (one per insight).
    pub ids: Vec<u64>,
}

/// Token count of a prompt on `engine` (`usize::MAX` if it cannot be rendered).
fn prompt_len(engine: &Engine, prompt: &Prompt) -> usize {
    engine
        .prompt_tokens(prompt)
        .map(|t| t.len())
        .unwrap_or(usize::MAX)
}

/// Runs a whole reflection for one agent on `engine`: questions from the latest memories,
/// retrieval and insights per question (one batch), importance of the insights (one batch),
/// storage; then resets the stream's reflection count (also when nothing usable came back,
/// so a failing model does not retry every tick).
pub fn reflect(
    engine: &mut Engine,
    embedder: &mut dyn TextEmbedder,
    stream: &mut MemoryStream,
    agent: &str,
    now: GameTime,
    config: &ReflectionConfig,
) -> Result<ReflectionOutcome> {
    let recent: Vec<MemoryNode> = stream.latest(config.recent).to_vec();
    if recent.is_empty() {
        stream.mark_reflected(now);
        return Ok(ReflectionOutcome::default());
    }
    // 1. Questions, dropping the oldest memories if the prompt is too long.
    let texts: Vec<&str> = recent.iter().map(|n| n.text.as_str()).collect();
    let order: Vec<f32> = (0..texts.len()).map(|i| i as f32).collect();
    let budget = engine
        .context_budget()
        .saturating_sub(config.question_max_tokens);
    let texts = fit_to_budget(&texts, &order, budget, |kept| {
        prompt_len(engine, &questions_prompt(agent, kept, config.questions))
    })?;
    let request = questions_request(agent, &texts, config);
    let text = match engine.run(vec![request], |_| {}).pop() {
        Some(r) => generated_text(r).unwrap_or_else(|e| {
            tracing::warn!(error = %e, "reflection: questions request failed");
            String::new()
        }),
        None => String::new(),
    };
    let recent_refs: Vec<&MemoryNode> = recent.iter().collect();
    let questions = questions_or_fallback(&text, agent, &recent_refs, config.questions);

    // 2. Retrieval and insights per question.
    let question_refs: Vec<&str> = questions.iter().map(String::as_str).collect();
    let query_vectors = embed_checked(embedder, &question_refs)?;
    let insight_budget = engine
        .context_budget()
        .saturating_sub(config.insight_max_tokens);
    let mut requests = Vec::with_capacity(questions.len());
    for (q, v) in questions.iter().zip(&query_vectors) {
        let scored = stream.retrieve_k(v, now, config.memories_per_question)?;
        // Show them oldest first; fit by retrieval score.
        let mut shown: Vec<((u64, String), f32)> = scored
            .iter()
            .filter_map(|s| Some(((s.id, stream.get(s.id)?.text.clone()), s.score)))
            .collect();
        shown.sort_by_key(|((id, _), _)| *id);
        let (items, scores): (Vec<(u64, String)>, Vec<f32>) = shown.into_iter().unzip();
        let kept = fit_to_budget(&items, &scores, insight_budget, |kept| {
            let t: Vec<&str> = kept.iter().map(|(_, s)| s.as_str()).collect();
            prompt_len(
                engine,
                &insights_prompt(agent, q, &t, config.insights_per_question),
            )
        })?;
        requests.push(insights_request(agent, q, kept, config));
    }
    let responses = engine.run(requests.iter().map(|r| r.request.clone()).collect(), |_| {});
    let mut insights: Vec<Insight> = Vec::new();
    for (req, resp) in requests.iter().zip(responses) {
        let text = generated_text(resp).unwrap_or_else(|e| {
            tracing::warn!(error = %e, question = %req.question, "reflection: insights request failed");
            String::new()
        });
        let parsed = parse_insights(
            &text,
            &req.shown,
            config.insights_per_question,
            config.cite_all_when_missing,
        );
        if parsed.is_empty() {
            tracing::warn!(question = %req.question, output = %text, "reflection: no insight parsed");
        }
        for ins in parsed {
            if !insights
                .iter()
                .any(|x| x.text.eq_ignore_ascii_case(&ins.text))
            {
                insights.push(ins);
            }
        }
    }

    // 3. Importance of the insights, then storage.
    let insight_texts: Vec<&str> = insights.iter().map(|i| i.text.as_str()).collect();
    let fallback = Importance::from(config.fallback_importance);
    let importances: Vec<Importance> = if insight_texts.is_empty() {
        Vec::new()
    } else {
        engine
            .run(importance_requests(&insight_texts), |_| {})
            .into_iter()
            .map(|r| importance_or(importance_from_result(r), fallback))
            .collect()
    };
    let embeddings = embed_checked(embedder, &insight_texts)?;
    let ids = store_insights(stream, &insights, embeddings, &importances, now)?;
    stream.mark_reflected(now);
    Ok(ReflectionOutcome {
        questions,
        insights,
        ids,
    })
}

/// [`reflect`] if the stream's importance count reached its threshold, else `None`.
pub fn maybe_reflect(
    engine: &mut Engine,
    embedder: &mut dyn TextEmbedder,
    stream: &mut MemoryStream,
    agent: &str,
    now: GameTime,
    config: &ReflectionConfig,
) -> Result<Option<ReflectionOutcome>> {
    if !stream.should_reflect() {
        return Ok(None);
    }
    reflect(engine, embedder, stream, agent, now, config).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::embedder::HashingEmbedder;
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
        let ids =
            store_insights(&mut s, &insights, emb, &[Importance::new(6)], GameTime(20)).unwrap();
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
        let i = "1. Bob Smith works hard as a baker (because of 1, 6)\n2. John works hard (because of 1)";
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
}

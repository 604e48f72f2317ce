//! The defensive parsers of reflection: questions and cited insights from a small model's
//! output, tolerant of list markers, citation shapes, repeats and copies of the worked
//! examples.

use serde::Serialize;

use super::{INSIGHTS_EXAMPLE, QUESTIONS_EXAMPLE};

/// Strips a list marker ("1.", "2)", "Q3:", "Question 1:", "-", "*", "•") from the start of
/// `line`; returns whether there was one and the rest.
pub(super) fn strip_marker(line: &str) -> (bool, &str) {
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
                tracing::info!(question = %q, "reflection: skipping a copy of the example");
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

pub(super) fn dedup_case_insensitive(v: &mut Vec<String>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|s| seen.insert(s.to_lowercase()));
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

/// Parses up to `max` insights from a generation answering an
/// [`InsightRequest`](super::InsightRequest).
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
            tracing::info!(line = %insight, "reflection: skipping a copy of the example");
            continue;
        }
        if statements.contains(&key) {
            tracing::info!(line = %insight, "reflection: skipping an insight that repeats a statement");
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
                None => tracing::info!(
                    citation = n,
                    statements = shown.len(),
                    "reflection: dropping a citation of a statement that was not shown"
                ),
            }
        }
        let cited_by_model = !evidence.is_empty();
        if !cited_by_model {
            tracing::info!(insight = %insight, fallback_all = cite_all_when_missing,
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

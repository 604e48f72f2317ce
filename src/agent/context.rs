//! The agent's context: who they are, where and when, how they feel, what they remember.
//! Every prompt of an agent's step starts with the same context, so the engine prefills it
//! once and reuses it for every question of the step.

use chrono::NaiveDate;

use crate::llm::{Inference, Prompt};
use crate::memory::{
    fit_to_budget, GameTime, MemoryKind, MemoryStream, ScoredMemory, TextEmbedder,
};
use crate::world::{clock, closeness_phrase, display_path, AgentSpec};

use super::state::AgentState;

/// Longest memory text shown in a prompt, in characters.
pub const MEMORY_CHARS: usize = 160;

/// Memories retrieved for a step's context.
pub const CONTEXT_MEMORIES: usize = 3;

/// "John Lin, 45, friendly, kind and patient. John Lin is a pharmacy shopkeeper ..."
pub fn identity(spec: &AgentSpec) -> String {
    let traits = super::state::join_and(&spec.traits);
    format!(
        "{} is {} years old and {}. {}",
        spec.name,
        spec.age,
        traits,
        spec.description.join(" ")
    )
}

/// The system message for an agent's step: identity, time, place, feelings, memories.
pub fn system_prompt(
    spec: &AgentSpec,
    state: &AgentState,
    date: chrono::NaiveDate,
    minutes: u32,
    memories: &[String],
) -> String {
    let mut s = format!(
        "{} {} is at {}.",
        placeless_prompt(spec, state, date, minutes),
        spec.name,
        display_path(&state.location),
    );
    if !memories.is_empty() {
        s.push_str(&format!("\n{} remembers:", spec.name));
        for m in memories {
            s.push_str("\n- ");
            s.push_str(m);
        }
    }
    s
}

/// The system message without the agent's place or memories (a prefix of
/// [`system_prompt`]): for choosing where to go, where naming the current place would
/// pull a small model to it whatever the activity.
pub fn placeless_prompt(
    spec: &AgentSpec,
    state: &AgentState,
    date: chrono::NaiveDate,
    minutes: u32,
) -> String {
    format!(
        "You are simulating {}. {}\nIt is {}, {}. {} is {}.",
        spec.name,
        identity(spec),
        clock::format_date(date),
        clock::format_time(minutes),
        spec.name,
        state.feeling(),
    )
}

/// Who `other` is to `state`'s agent and how close they feel: "Eddy Lin is John Lin's son.
/// John Lin is feeling close to Eddy Lin."
pub fn relationship_sentence(state: &AgentState, other: &str) -> String {
    let who = relation_sentence(state, other);
    match state.relationship(other) {
        Some(r) => format!(
            "{who} {} is feeling {} to {other}.",
            state.name,
            closeness_phrase(r.closeness),
        ),
        None => who,
    }
}

/// Who `other` is to `state`'s agent, without closeness: "Eddy Lin is John Lin's son.", or
/// "John Lin does not know Eddy Lin well."
pub fn relation_sentence(state: &AgentState, other: &str) -> String {
    match state.relationship(other) {
        Some(r) => format!("{other} is {}'s {}.", state.name, r.relationship),
        None => format!("{} does not know {} well.", state.name, other),
    }
}

/// Shortens a memory for a prompt.
pub fn memory_line(text: &str) -> String {
    if text.chars().count() <= MEMORY_CHARS {
        return text.to_string();
    }
    let mut s: String = text.chars().take(MEMORY_CHARS).collect();
    s.push('…');
    s
}

/// Retrieves up to `k` memories for `query` (touching them), oldest first, shortened;
/// on an embedding error the context simply has no memories (logged).
pub fn recall(
    stream: &mut MemoryStream,
    embedder: &mut dyn TextEmbedder,
    query: &str,
    now: GameTime,
    k: usize,
) -> Vec<String> {
    recall_kinds(stream, embedder, query, now, k)
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

/// [`recall`] with each memory's kind.
pub fn recall_kinds(
    stream: &mut MemoryStream,
    embedder: &mut dyn TextEmbedder,
    query: &str,
    now: GameTime,
    k: usize,
) -> Vec<(MemoryKind, String)> {
    if stream.is_empty() || query.trim().is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<ScoredMemory> = match stream.retrieve_text(embedder, query, now, k) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(error = %e, "retrieval failed; prompt without memories");
            return Vec::new();
        }
    };
    scored.sort_by_key(|s| s.id);
    scored
        .iter()
        .filter_map(|s| stream.get(s.id))
        .map(|n| (n.kind, memory_line(&n.text)))
        .collect()
}

/// The prompt `make(system)` where `system` is the agent's [`system_prompt`] with as many of
/// `memories` (texts oldest first, with their retrieval scores) as fit `engine`'s context
/// budget less `reserve` tokens: the lowest scores are dropped first.
#[allow(clippy::too_many_arguments)]
pub fn fitted_prompt(
    engine: &dyn Inference,
    spec: &AgentSpec,
    state: &AgentState,
    date: NaiveDate,
    minutes: u32,
    memories: &[(String, f32)],
    reserve: usize,
    make: impl Fn(&str) -> Prompt,
) -> Prompt {
    let lines: Vec<String> = memories.iter().map(|(t, _)| memory_line(t)).collect();
    let scores: Vec<f32> = memories.iter().map(|(_, s)| *s).collect();
    let build = |kept: &[String]| make(&system_prompt(spec, state, date, minutes, kept));
    let budget = engine.context_budget().saturating_sub(reserve);
    let kept = fit_to_budget(&lines, &scores, budget, |kept| {
        engine
            .prompt_tokens(&build(kept))
            .map_or(usize::MAX, |t| t.len())
    })
    .unwrap_or_default();
    build(&kept)
}

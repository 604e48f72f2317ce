//! Doing an activity: where it happens (a walk down the location tree, preferring to stay),
//! how it feels (emotion), which needs it satisfies, and a two-emoji summary. The closed
//! sets go through `choose`; the emoji are generated under an emoji-only constraint.

use rand::Rng;

use crate::formats::emoji::is_emoji_text;
use crate::llm::constrain::ConstraintSpec;
use crate::llm::{Request, Response};
use crate::world::{display_path, Decay, Emotion, Need, World, NEED_MAX};

use super::mind::{chat, missing, Mind};
use super::state::AgentState;

/// The current place is kept when its probability is at least this share of the best one's.
pub const STAY_RATIO: f32 = 0.8;
/// Weight of the relevance prior: each place's probability is multiplied by
/// `exp(PLACE_PRIOR * cosine(activity, place))` and renormalised. A small model's answer to
/// "where" barely depends on the activity (it favours an option by position); the sentence
/// embedding of the activity and the place's path is a strong, cheap prior, and a capable
/// model's clear preference still wins.
pub const PLACE_PRIOR: f32 = 15.0;
/// The model's place probabilities are raised to this power before the prior is applied:
/// a small model's strong preference for the last-listed option is flattened.
pub const MODEL_SHARPNESS: f32 = 0.5;
/// Used when the model's emoji are unusable.
pub const FALLBACK_EMOJI: &str = "🙂📅";

/// What the agent judged about an activity.
#[derive(Clone, Debug, Default)]
pub struct Evaluation {
    /// The new emotion (`None` when frozen or when the model gave nothing).
    pub emotion: Option<Emotion>,
    pub satisfied: Vec<Need>,
    pub emoji: String,
    pub location: Vec<String>,
}

/// The yes/no question asking whether an activity satisfies `need`.
pub fn need_question(need: Need, name: &str) -> String {
    match need {
        Need::Fullness => format!("Does {name} eat or drink something filling while doing this?"),
        Need::Social => format!("Does {name} spend time with other people while doing this?"),
        Need::Fun => format!("Is this a leisure activity that {name} does for fun?"),
        Need::Health => format!("Is {name} exercising or taking care of their health?"),
        Need::Energy => format!("Does {name} rest or sleep while doing this?"),
    }
}

/// The question asking which emotion an activity leaves the agent in (the options are
/// [`emotion_labels`]).
pub fn emotion_question(name: &str) -> String {
    format!(
        "Which emotion does {name} feel now? Everyday routines usually leave a person neutral; pleasant leisure makes them happy."
    )
}

/// Solved examples put before the agent's context in the judgement questions (not activities
/// of the labelled sets in `tests/data/judge/`). The same text for every agent and step, so the
/// engine computes it once and serves it from the prefix cache afterwards.
pub const JUDGE_EXAMPLES: &str = "How everyday activities are judged, with examples \
(eats or drinks something filling / spends time with other people / leisure done for fun / \
exercise or health care / rest or sleep; the feeling it leaves):
- have a plate of dumplings at the kitchen table: filling yes, people no, fun no, health no, rest no; neutral
- sing karaoke with friends at a bar: filling no, people yes, fun yes, health no, rest no; happy
- wipe the kitchen windows: filling no, people no, fun no, health no, rest no; neutral
- build a model airplane at the desk: filling no, people no, fun yes, health no, rest no; happy
- jump rope in the back yard: filling no, people no, fun no, health yes, rest no; neutral
- lie in a hammock and doze off: filling no, people no, fun no, health no, rest yes; neutral
- sort receipts for the accountant: filling no, people no, fun no, health no, rest no; neutral
- pack up the belongings of a late uncle: filling no, people no, fun no, health no, rest no; sad
- argue with a plumber about an overcharged bill: filling no, people yes, fun no, health no, rest no; angry
";

/// How the judgement questions are put: after the agent's context alone, or after
/// [`JUDGE_EXAMPLES`] (`eval judge --prompt` compares them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JudgePrompt {
    Plain,
    Examples,
}

/// The judgement prompt a run uses.
pub const RUN_JUDGE_PROMPT: JudgePrompt = JudgePrompt::Examples;

impl std::str::FromStr for JudgePrompt {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "plain" => Ok(JudgePrompt::Plain),
            "examples" => Ok(JudgePrompt::Examples),
            other => Err(format!("unknown prompt `{other}` (plain, examples)")),
        }
    }
}

impl std::fmt::Display for JudgePrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            JudgePrompt::Plain => "plain",
            JudgePrompt::Examples => "examples",
        })
    }
}

/// The system message of the judgement questions: the agent's context, after the solved
/// examples when `prompt` says so.
pub fn judgement_system(system: &str, prompt: JudgePrompt) -> String {
    match prompt {
        JudgePrompt::Plain => system.to_string(),
        JudgePrompt::Examples => format!("{JUDGE_EXAMPLES}\n{system}"),
    }
}

/// The questions a run asks about a new activity, in order: the emotion (when `ask_emotion`),
/// then each need's yes/no ([`Need::ALL`] order), each keyed by its purpose (`emotion`,
/// `need_fullness`, ...). `eval judge` asks exactly these.
pub fn judgement_requests(
    system: &str,
    name: &str,
    activity: &str,
    ask_emotion: bool,
    prompt: JudgePrompt,
) -> Vec<(String, Request)> {
    let system = judgement_system(system, prompt);
    let system = system.as_str();
    let doing = format!("{name} is doing: {activity}.");
    let mut requests = Vec::with_capacity(6);
    if ask_emotion {
        let q = format!("{doing} {}", emotion_question(name));
        requests.push((
            "emotion".into(),
            Mind::choose_request(system, &q, &emotion_labels()),
        ));
    }
    for need in Need::ALL {
        let q = format!("{doing} {}", need_question(need, name));
        requests.push((
            format!("need_{}", need.as_str()),
            Mind::yes_no_request(system, &q),
        ));
    }
    requests
}

/// The emotion labels in [`Emotion::ALL`] order (the options of the emotion question).
pub fn emotion_labels() -> Vec<&'static str> {
    Emotion::ALL.iter().map(|e| e.as_str()).collect()
}

fn place_question(state: &AgentState, activity: &str, options: &[&str]) -> String {
    format!(
        "{} is doing: {}. Where should {} be for this? Choose one of: {}.",
        state.name,
        activity,
        state.name,
        options.join(", ")
    )
}

/// A place as the relevance prior sees it: its path, and for a place with parts, the names
/// of its innermost places ("Lin family's house: Kitchen, Living room, ...").
fn place_description(world: &World, parent: &[String], name: &str) -> String {
    let mut p = parent.to_vec();
    p.push(name.to_string());
    let leaves: Vec<String> = world
        .locations
        .leaves()
        .into_iter()
        .filter(|l| l.len() > p.len() && l.starts_with(&p))
        .filter_map(|l| l.last().cloned())
        .collect();
    if leaves.is_empty() {
        display_path(&p)
    } else {
        format!("{}: {}", display_path(&p), leaves.join(", "))
    }
}

/// Multiplies `probs` by the relevance prior and renormalises (unchanged without one).
fn with_prior(probs: &[f32], similarities: Option<Vec<f32>>) -> Vec<f32> {
    let Some(sims) = similarities.filter(|s| s.len() == probs.len()) else {
        return probs.to_vec();
    };
    let weighted: Vec<f32> = probs
        .iter()
        .zip(&sims)
        .map(|(p, s)| p.powf(MODEL_SHARPNESS) * (PLACE_PRIOR * s).exp())
        .collect();
    let sum: f32 = weighted.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        weighted.iter().map(|w| w / sum).collect()
    } else {
        probs.to_vec()
    }
}

/// Picks an option by its probabilities, keeping `current` when it is nearly as likely as
/// the best.
fn prefer_stay(probs: &[f32], best: usize, current: Option<usize>) -> usize {
    match current {
        Some(c) if probs.get(c).copied().unwrap_or(0.0) >= STAY_RATIO * probs[best] => c,
        _ => best,
    }
}

/// Evaluates `activity` for the agent: location, emotion, needs and emoji. The first level
/// of the location walk and every judgement go to the engine in one batch.
/// `system` is the agent's context; `placeless` the same without the current place, for
/// the location questions.
pub async fn act(
    mind: &Mind<'_>,
    world: &World,
    state: &AgentState,
    system: &str,
    placeless: &str,
) -> Evaluation {
    let name = &state.name;
    let activity = &state.activity;
    let doing = format!("{name} is doing: {activity}.");
    let roots = world.locations.roots();
    let emotions = emotion_labels();
    let mut requests: Vec<(String, Request)> = Vec::new();
    requests.push((
        "location".into(),
        Mind::choose_request(placeless, &place_question(state, activity, &roots), &roots),
    ));
    requests.extend(judgement_requests(
        system,
        name,
        activity,
        !state.emotion_frozen,
        RUN_JUDGE_PROMPT,
    ));
    // The emoji question shares the judgements' system message, so the engine computes the
    // "is doing" line once for all of them.
    let q = format!("{doing} Describe this activity with two emoji.");
    let judging = judgement_system(system, RUN_JUDGE_PROMPT);
    requests.push((
        "emoji".into(),
        mind.generate_request(chat(&judging, &q), ConstraintSpec::Emoji { count: 2 }, 24),
    ));
    let mut results = mind.port.run(requests).await.into_iter();
    let mut next = || results.next().unwrap_or_else(missing);

    let mut eval = Evaluation::default();
    let root_result = next();
    if !state.emotion_frozen {
        let r = next();
        eval.emotion = mind
            .chosen("emotion", r, &emotions, 0)
            .map(|c| Emotion::ALL[c.index]);
    }
    for (need, threshold) in Need::ALL.into_iter().zip(mind.yes_threshold) {
        let purpose = format!("need_{}", need.as_str());
        if mind.yes_above(&purpose, next(), false, threshold) {
            eval.satisfied.push(need);
        }
    }
    eval.emoji = match mind.generated("emoji", next()) {
        Some(t) if is_emoji_text(&t, Some(2)) => t,
        Some(t) => {
            mind.fallback("emoji", "not two emoji", &t, FALLBACK_EMOJI);
            FALLBACK_EMOJI.to_string()
        }
        None => FALLBACK_EMOJI.to_string(),
    };
    eval.location = walk(mind, world, state, placeless, root_result).await;
    eval
}

/// Walks down the location tree from the roots to a leaf, one `choose` per level with more
/// than one option, preferring the agent's current place.
async fn walk(
    mind: &Mind<'_>,
    world: &World,
    state: &AgentState,
    system: &str,
    first: Result<Response, crate::llm::LlmError>,
) -> Vec<String> {
    let mut path: Vec<String> = Vec::new();
    let mut pending = Some(first);
    loop {
        let options: Vec<&str> = if path.is_empty() {
            world.locations.roots()
        } else {
            world.locations.children(&path)
        };
        if options.is_empty() {
            break;
        }
        let depth = path.len();
        let current = if state.location.len() > depth && state.location[..depth] == path[..] {
            options.iter().position(|o| *o == state.location[depth])
        } else {
            None
        };
        let pick = if options.len() == 1 {
            0
        } else {
            let result = match pending.take() {
                Some(r) => r,
                None => {
                    let q = format!(
                        "{} is doing: {}. Which part of {} should {} be in? Choose one of: {}.",
                        state.name,
                        state.activity,
                        display_path(&path),
                        state.name,
                        options.join(", ")
                    );
                    let req = Mind::choose_request(system, &q, &options);
                    let mut r = mind.port.run(vec![("location".into(), req)]).await;
                    r.pop().unwrap_or_else(missing)
                }
            };
            let fallback = current.unwrap_or(0);
            match mind.chosen("location", result, &options, fallback) {
                Some(c) => {
                    let paths: Vec<String> = options
                        .iter()
                        .map(|o| place_description(world, &path, o))
                        .collect();
                    let probs = with_prior(&c.probs, mind.similarities(&state.activity, &paths));
                    let best = (0..probs.len())
                        .max_by(|&a, &b| probs[a].total_cmp(&probs[b]).then(b.cmp(&a)))
                        .unwrap_or(0);
                    tracing::debug!(agent = %state.name, activity = %state.activity, ?options, model = ?c.probs, ?probs, "location");
                    prefer_stay(&probs, best, current)
                }
                None => fallback,
            }
        };
        pending = None;
        path.push(options[pick].to_string());
        if world.locations.is_leaf(&path) {
            break;
        }
    }
    if !world.locations.is_leaf(&path) {
        mind.fallback(
            "location",
            "the walk did not reach a leaf",
            &display_path(&path),
            &display_path(&state.location),
        );
        return state.location.clone();
    }
    path
}

/// Applies an evaluation's needs: +1 for each satisfied need; every other need drops by its
/// expected drop per step of `step_minutes` under `decay` (the whole part, and one more with
/// the probability of the fraction, drawn from `rng`). Clamped to 0–10.
pub fn update_needs(
    state: &mut AgentState,
    satisfied: &[Need],
    decay: &Decay,
    step_minutes: u32,
    rng: &mut impl Rng,
) {
    for need in Need::ALL {
        let v = state.needs.get(need);
        if satisfied.contains(&need) {
            state.needs.set(need, v.saturating_add(1).min(NEED_MAX));
        } else {
            let drop = Decay::drop_of(decay.per_step(need, step_minutes), rng.gen::<f64>());
            state.needs.set(need, v.saturating_sub(drop));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn agent() -> AgentState {
        let world = World::parse(
            include_str!("../../worlds/lin-family.toml"),
            std::path::Path::new("worlds/lin-family.toml"),
        )
        .expect("the bundled world parses");
        AgentState::from_spec(&world.agents[0], false)
    }

    #[test]
    fn a_satisfied_need_rises_by_one_and_stops_at_ten() {
        let mut s = agent();
        s.needs.set(Need::Fullness, 9);
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        update_needs(&mut s, &[Need::Fullness], &Decay::default(), 15, &mut rng);
        assert_eq!(s.needs.get(Need::Fullness), 10);
        update_needs(&mut s, &[Need::Fullness], &Decay::default(), 15, &mut rng);
        assert_eq!(s.needs.get(Need::Fullness), 10, "clamped");
    }

    #[test]
    fn unmet_needs_drop_at_the_decay_rate_and_stop_at_zero() {
        // Over 20,000 steps of 15 minutes (5,000 hours) every need, never satisfied, drops
        // as often as its rate says: the paper's 1, 4, 4, 1, 5 per 5 hours.
        let decay = Decay::default();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut drops = [0u32; 5];
        let mut s = agent();
        for _ in 0..20_000 {
            for n in Need::ALL {
                s.needs.set(n, 5);
            }
            update_needs(&mut s, &[], &decay, 15, &mut rng);
            for (i, n) in Need::ALL.iter().enumerate() {
                drops[i] += u32::from(5 - s.needs.get(*n));
            }
        }
        for (i, want) in [1.0, 4.0, 4.0, 1.0, 5.0].iter().enumerate() {
            let per_5h = f64::from(drops[i]) / 1000.0;
            assert!(
                (per_5h - want).abs() < 0.15 * want,
                "{:?}: {per_5h} per 5 h",
                Need::ALL[i]
            );
        }
        // A need at 0 stays at 0.
        s.needs.set(Need::Energy, 0);
        for _ in 0..100 {
            update_needs(&mut s, &[], &decay, 15, &mut rng);
        }
        assert_eq!(s.needs.get(Need::Energy), 0);
    }

    #[test]
    fn staying_wins_when_nearly_as_likely() {
        assert_eq!(prefer_stay(&[0.5, 0.6], 1, Some(0)), 0);
        assert_eq!(prefer_stay(&[0.2, 0.8], 1, Some(0)), 1);
        assert_eq!(prefer_stay(&[0.2, 0.8], 1, None), 1);
    }
}

//! Doing an activity: where it happens (a walk down the location tree, preferring to stay),
//! how it feels (emotion), which needs it satisfies, and a two-emoji summary. The closed
//! sets go through `choose`; the emoji are generated under an emoji-only constraint.

use rand::Rng;

use crate::formats::emoji::is_emoji_text;
use crate::llm::constrain::ConstraintSpec;
use crate::llm::Request;
use crate::world::{Decay, Emotion, Need, World, NEED_MAX};

use super::mind::{chat, missing, Mind};
use super::place;
use super::state::AgentState;

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
- hear the smoke alarm go off in the middle of the night: filling no, people no, fun no, health no, rest no; afraid
- find a dead mouse behind the sofa: filling no, people no, fun no, health no, rest no; disgusted
- get an unexpected call from a cousin who moved abroad years ago: filling no, people yes, fun no, health no, rest no; surprised
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
    let emotions = emotion_labels();
    let mut requests: Vec<(String, Request)> = Vec::new();
    let placed = place::placed_activity(state, mind.minutes);
    let asks_where = place::asks_where(world, state, &placed);
    if asks_where {
        requests.push((
            "location".into(),
            place::place_request(
                placeless,
                place::RUN_PLACE_PROMPT,
                world,
                name,
                &placed,
                &[],
            ),
        ));
    }
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
    let root_result = asks_where.then(&mut next);
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
    eval.location = place::walk(mind, world, state, &placed, placeless, root_result).await;
    eval
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
        let world = crate::world::bundled("lin-family.toml");
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
    fn per_step_seeds_as_a_run_derives_them_drop_at_the_rate_too() {
        // A run seeds each agent-step's draws afresh (`key_of(seed, step, agent, 2)`, as in
        // sim::tick); over many seeds, agents and steps the drops must still follow the rate,
        // with and without the needs before energy being satisfied (which shifts its draw).
        let decay = Decay::default();
        for satisfied in [vec![], vec![Need::Fun, Need::Social]] {
            let mut drops = [0u32; 5];
            let mut n = 0u32;
            for seed in 0..40u64 {
                for who in 0..3u64 {
                    for step in 0..72u64 {
                        let key = crate::llm::batch::key_of(&[seed, step, who, 2]);
                        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(key);
                        let mut s = agent();
                        for need in Need::ALL {
                            s.needs.set(need, 5);
                        }
                        update_needs(&mut s, &satisfied, &decay, 15, &mut rng);
                        for (i, need) in Need::ALL.iter().enumerate() {
                            drops[i] += u32::from(5u8.saturating_sub(s.needs.get(*need)));
                        }
                        n += 1;
                    }
                }
            }
            for (i, need) in Need::ALL.iter().enumerate() {
                if satisfied.contains(need) {
                    continue;
                }
                let p = decay.per_step(*need, 15);
                let want = p * f64::from(n);
                let sd = (want * (1.0 - p)).sqrt();
                let got = f64::from(drops[i]);
                assert!(
                    (got - want).abs() < 4.0 * sd,
                    "{need:?} (satisfied {satisfied:?}): {got} drops in {n} steps, expected {want:.0} ± {sd:.0}"
                );
            }
        }
    }
}

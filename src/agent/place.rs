//! Where an activity happens: a walk down the location tree, one `choose` per level with
//! more than one option, each answer weighted by a relevance prior (sentence embeddings of
//! the activity and the places) and a preference for staying where the agent is.
//!
//! The decision at one level ([`decide`]) is a pure function of the model's probabilities,
//! the similarities and [`PlaceWeights`], so `eval place` can replay it under other weights
//! from the same model answers.

use crate::world::{display_path, World};

use super::mind::{missing, Mind};
use super::state::AgentState;

/// The current place is kept when its probability is at least this share of the best one's.
pub const STAY_RATIO: f32 = 0.8;
/// Weight of the relevance prior: each place's probability is multiplied by
/// `exp(PLACE_PRIOR * cosine(activity, place))` and renormalised. The sentence embedding of
/// the activity and the place's description is a cheap prior that corrects the model where
/// it is unsure. Chosen with [`MODEL_SHARPNESS`] and [`RUN_PLACE_PROMPT`] on the labelled
/// development set (`eval place tests/data/place/lin-family-dev.csv`, the 1.5B).
pub const PLACE_PRIOR: f32 = 5.0;
/// The model's place probabilities are raised to this power before the prior is applied:
/// a small model's over-confident answers are flattened.
pub const MODEL_SHARPNESS: f32 = 0.25;
/// How a run puts the walk's questions.
pub const RUN_PLACE_PROMPT: PlacePrompt = PlacePrompt::Numbered;

/// How a level's answer is decided: the model's probabilities to the power `sharpness`,
/// times `exp(prior * cosine)`, renormalised; the current place kept at `stay_ratio` of the
/// best.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PlaceWeights {
    pub prior: f32,
    pub sharpness: f32,
    pub stay_ratio: f32,
}

impl Default for PlaceWeights {
    /// A run's weights.
    fn default() -> Self {
        Self {
            prior: PLACE_PRIOR,
            sharpness: MODEL_SHARPNESS,
            stay_ratio: STAY_RATIO,
        }
    }
}

/// The question of the first level (the world's top-level places).
pub fn root_question(name: &str, activity: &str, options: &[&str]) -> String {
    format!(
        "{name} is doing: {activity}. Where should {name} be for this? Choose one of: {}.",
        options.join(", ")
    )
}

/// The question of a deeper level: which part of `parent`.
pub fn part_question(name: &str, activity: &str, parent: &[String], options: &[&str]) -> String {
    format!(
        "{name} is doing: {activity}. Which part of {} should {name} be in? Choose one of: {}.",
        display_path(parent),
        options.join(", ")
    )
}

/// How the walk's questions put the options to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PlacePrompt {
    /// The places' names in one sentence; the model's answer is a name.
    Names,
    /// Where some option has parts: the places as a numbered list, each with its parts
    /// ([`place_description`]), answered by a number (one token, so no option wins for
    /// starting with a common word such as "The"). Among innermost places only: as `names`.
    Numbered,
}

impl std::str::FromStr for PlacePrompt {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "names" => Ok(PlacePrompt::Names),
            "numbered" => Ok(PlacePrompt::Numbered),
            other => Err(format!("unknown place prompt `{other}` (names, numbered)")),
        }
    }
}

impl std::fmt::Display for PlacePrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PlacePrompt::Names => "names",
            PlacePrompt::Numbered => "numbered",
        })
    }
}

/// The `choose` request of one level of the walk: the question for `parent` (the top level
/// when empty) put as `prompt` says, after `system`.
pub fn place_request(
    system: &str,
    prompt: PlacePrompt,
    world: &World,
    name: &str,
    activity: &str,
    parent: &[String],
) -> crate::llm::Request {
    let options = options(world, parent);
    let options = options.as_slice();
    let has_parts = options.iter().any(|o| {
        let mut p = parent.to_vec();
        p.push(o.to_string());
        !world.locations.is_leaf(&p)
    });
    match prompt {
        PlacePrompt::Numbered if has_parts => {
            let ask = if parent.is_empty() {
                format!("Where should {name} be for this?")
            } else {
                format!(
                    "Which part of {} should {name} be in?",
                    display_path(parent)
                )
            };
            let list: Vec<String> = options
                .iter()
                .enumerate()
                .map(|(i, o)| format!("{}. {}", i + 1, place_description(world, parent, o)))
                .collect();
            let numbers: Vec<String> = (1..=options.len()).map(|i| i.to_string()).collect();
            let numbers: Vec<&str> = numbers.iter().map(String::as_str).collect();
            let q = format!(
                "{name} is doing: {activity}. {ask}\n{}\nAnswer with the number.",
                list.join("\n")
            );
            Mind::choose_request(system, &q, &numbers)
        }
        _ => {
            let q = if parent.is_empty() {
                root_question(name, activity, options)
            } else {
                part_question(name, activity, parent, options)
            };
            Mind::choose_request(system, &q, options)
        }
    }
}

/// The places below `parent` ([] for the top level).
pub fn options<'w>(world: &'w World, parent: &[String]) -> Vec<&'w str> {
    if parent.is_empty() {
        world.locations.roots()
    } else {
        world.locations.children(parent)
    }
}

/// A place as the relevance prior sees it: its path, and for a place with parts, the names
/// of its innermost places ("Lin family's house: Kitchen, Living room, ...").
pub fn place_description(world: &World, parent: &[String], name: &str) -> String {
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

/// Multiplies `probs` (to the power `w.sharpness`) by the relevance prior and renormalises
/// (unchanged without similarities).
pub fn with_prior(probs: &[f32], similarities: Option<&[f32]>, w: PlaceWeights) -> Vec<f32> {
    let Some(sims) = similarities.filter(|s| s.len() == probs.len()) else {
        return probs.to_vec();
    };
    let weighted: Vec<f32> = probs
        .iter()
        .zip(sims)
        .map(|(p, s)| p.powf(w.sharpness) * (w.prior * s).exp())
        .collect();
    let sum: f32 = weighted.iter().sum();
    if sum > 0.0 && sum.is_finite() {
        weighted.iter().map(|v| v / sum).collect()
    } else {
        probs.to_vec()
    }
}

/// Picks an option by its probabilities, keeping `current` when it is at least
/// `stay_ratio` of the best.
pub fn prefer_stay(probs: &[f32], best: usize, current: Option<usize>, stay_ratio: f32) -> usize {
    match current {
        Some(c) if probs.get(c).copied().unwrap_or(0.0) >= stay_ratio * probs[best] => c,
        _ => best,
    }
}

/// The option chosen at one level from the model's probabilities, the similarities of the
/// activity to each option's [`place_description`] and the option the agent is in.
pub fn decide(
    model: &[f32],
    similarities: Option<&[f32]>,
    current: Option<usize>,
    w: PlaceWeights,
) -> usize {
    if model.is_empty() {
        return current.unwrap_or(0);
    }
    let probs = with_prior(model, similarities, w);
    let best = (0..probs.len())
        .max_by(|&a, &b| probs[a].total_cmp(&probs[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    prefer_stay(&probs, best, current, w.stay_ratio)
}

/// Which of `options` the agent's `location` is in, at `depth` below `path`.
pub fn current_option(location: &[String], path: &[String], options: &[&str]) -> Option<usize> {
    let depth = path.len();
    if location.len() > depth && location[..depth] == path[..] {
        options.iter().position(|o| *o == location[depth])
    } else {
        None
    }
}

/// Walks down the location tree from the roots to a leaf, one `choose` per level with more
/// than one option, preferring the agent's current place. `first` is the answer to the
/// first level's question (asked in the step's batch); `system` is the agent's context
/// without its place.
pub async fn walk(
    mind: &Mind<'_>,
    world: &World,
    state: &AgentState,
    system: &str,
    first: Result<crate::llm::Response, crate::llm::LlmError>,
) -> Vec<String> {
    let w = PlaceWeights::default();
    let mut path: Vec<String> = Vec::new();
    let mut pending = Some(first);
    loop {
        let options = options(world, &path);
        if options.is_empty() {
            break;
        }
        let current = current_option(&state.location, &path, &options);
        let pick = if options.len() == 1 {
            0
        } else {
            let result = match pending.take() {
                Some(r) => r,
                None => {
                    let req = place_request(
                        system,
                        RUN_PLACE_PROMPT,
                        world,
                        &state.name,
                        &state.activity,
                        &path,
                    );
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
                    let sims = mind.similarities(&state.activity, &paths);
                    let pick = decide(&c.probs, sims.as_deref(), current, w);
                    tracing::debug!(agent = %state.name, activity = %state.activity, ?options, model = ?c.probs, pick, "location");
                    pick
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staying_wins_when_nearly_as_likely() {
        assert_eq!(prefer_stay(&[0.5, 0.6], 1, Some(0), STAY_RATIO), 0);
        assert_eq!(prefer_stay(&[0.2, 0.8], 1, Some(0), STAY_RATIO), 1);
        assert_eq!(prefer_stay(&[0.2, 0.8], 1, None, STAY_RATIO), 1);
    }

    #[test]
    fn the_prior_decides_when_the_model_is_flat_and_yields_to_a_clear_model() {
        let w = PlaceWeights::default();
        let sims = [0.1, 0.4];
        assert_eq!(decide(&[0.5, 0.5], Some(&sims), None, w), 1);
        assert_eq!(decide(&[0.5, 0.5], None, None, w), 0);
        // 0.3 of cosine is exp(1.5) = 4.5x in the prior; a model 10^4 : 1 sure still wins
        // at sharpness 0.25 (10x).
        assert_eq!(decide(&[0.9999, 0.0001], Some(&sims), None, w), 0);
        let no_prior = PlaceWeights { prior: 0.0, ..w };
        assert_eq!(decide(&[0.6, 0.4], Some(&sims), None, no_prior), 0);
        assert_eq!(decide(&[], Some(&sims), Some(1), w), 1);
    }
}

//! Where an activity happens: a walk down the location tree, one `choose` per level with
//! more than one option, each answer weighted by a relevance prior (sentence embeddings of
//! the activity and the places) and a preference for staying where the agent is.
//!
//! The decision at one level ([`decide`]) is a pure function of the model's probabilities,
//! the similarities and [`PlaceWeights`], so `eval place` can replay it under other weights
//! from the same model answers.

use crate::world::{display_path, World};

use super::mind::{missing, Mind};
use super::plan::{stays_put, talks_here};
use super::state::AgentState;

mod marks;
mod part_of;
mod prompt;
mod stay;
pub use marks::{current_option, named_places, others_rooms};
pub use part_of::placed_activity;
pub use prompt::{part_question, place_request, root_question, PlacePrompt};
pub use stay::stay_place;

/// The current place is kept when its probability is at least this share of the best one's.
/// 0.7 on the development set of `eval place` (0.748 of it fits against 0.706 at 0.6, the
/// ratio chosen with [`OTHERS_ROOM`] before named places and [`BUILDING_STAY`] came), the run
/// rows and the two check sets moving by one row at most (BENCHMARKS.md, session 42).
pub const STAY_RATIO: f32 = 0.7;
/// Weight of the relevance prior: each place's probability is multiplied by
/// `exp(PLACE_PRIOR * cosine(activity, place))` and renormalised. The sentence embedding of
/// the activity and the place's description is a cheap prior that corrects the model where
/// it is unsure. Chosen with [`MODEL_SHARPNESS`] and [`RUN_PLACE_PROMPT`] on the labelled
/// development set (`eval place tests/data/place/lin-family-dev.csv`, the 1.5B).
pub const PLACE_PRIOR: f32 = 5.0;
/// The model's place probabilities are raised to this power before the prior is applied:
/// a small model's over-confident answers are flattened.
pub const MODEL_SHARPNESS: f32 = 0.25;
/// An innermost place named for another agent ("John Lin's bedroom" when Eddy Lin moves)
/// has its probability multiplied by this: a private room the agent rarely goes into.
pub const OTHERS_ROOM: f32 = 0.1;
/// An option the activity names ("unpack deliveries in the storage room": the market, then its
/// storage room) has its probability multiplied by this before the current place is
/// preferred ([`named_places`]; chosen on `eval place`'s sets).
pub const NAMED_PLACE: f32 = 4.0;
/// The stay ratio between buildings (the top level): leaving the building takes a clearer
/// answer than changing rooms. 0.3, with a named place winning over staying ([`decide`]),
/// is the best of 0.6/0.3 on all four labelled sets of `eval place` (BENCHMARKS.md); 0.3
/// without that rule kept John at home for "greeting the customers at the counter".
pub const BUILDING_STAY: f32 = 0.3;
/// How a run puts the walk's questions.
pub const RUN_PLACE_PROMPT: PlacePrompt = PlacePrompt::Numbered;

/// How a level's answer is decided: the model's probabilities to the power `sharpness`,
/// times `exp(prior * cosine)`, renormalised; the current place kept at `stay_ratio` of the
/// best; another agent's room weighed by `others_room`, a place the activity names by
/// `named`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct PlaceWeights {
    pub prior: f32,
    pub sharpness: f32,
    pub stay_ratio: f32,
    pub others_room: f32,
    pub named: f32,
    /// The stay ratio at the top level (between buildings).
    pub building_stay: f32,
}

impl PlaceWeights {
    /// The weights for the level below `parent`: at the top level the stay ratio is
    /// `building_stay`.
    pub fn at(self, parent: &[String]) -> Self {
        if parent.is_empty() {
            Self {
                stay_ratio: self.building_stay,
                ..self
            }
        } else {
            self
        }
    }
}

impl Default for PlaceWeights {
    /// A run's weights.
    fn default() -> Self {
        Self {
            prior: PLACE_PRIOR,
            sharpness: MODEL_SHARPNESS,
            stay_ratio: STAY_RATIO,
            others_room: OTHERS_ROOM,
            named: NAMED_PLACE,
            building_stay: BUILDING_STAY,
        }
    }
}

/// The path of `name` inside `parent`.
fn child(parent: &[String], name: &str) -> Vec<String> {
    let mut p = parent.to_vec();
    p.push(name.to_string());
    p
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
    let p = child(parent, name);
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
/// activity to each option's [`place_description`], the option the agent is in, which
/// options are other agents' rooms ([`others_rooms`]) and which the activity names
/// ([`named_places`]; empty: none).
pub fn decide(
    model: &[f32],
    similarities: Option<&[f32]>,
    current: Option<usize>,
    others: &[bool],
    named: &[bool],
    w: PlaceWeights,
) -> usize {
    if model.is_empty() {
        return current.unwrap_or(0);
    }
    let mut probs = with_prior(model, similarities, w);
    let is_named = |i: usize| named.get(i).copied().unwrap_or(false);
    // Another agent's room the activity names is not weighed down: a lonely Sheldon Cooper
    // "goes to Leonard's lab in Caltech to talk with Leonard Hofstadter" stayed in his office
    // three times in a Big Bang Theory day of session 31.
    for (i, (p, &other)) in probs.iter_mut().zip(others).enumerate() {
        if other && !is_named(i) {
            *p *= w.others_room;
        }
    }
    for (p, &named) in probs.iter_mut().zip(named) {
        if named {
            *p *= w.named;
        }
    }
    let best = (0..probs.len())
        .max_by(|&a, &b| probs[a].total_cmp(&probs[b]).then(b.cmp(&a)))
        .unwrap_or(0);
    // A place the activity names wins over staying in one it does not name.
    if w.named > 1.0 && is_named(best) && current.is_some_and(|c| !is_named(c)) {
        return best;
    }
    prefer_stay(&probs, best, current, w.stay_ratio)
}

/// A walk down the location tree from the roots, one level at a time. Levels with a single
/// option are taken on the way; [`Descent::next_choice`] stops at each level with more.
#[derive(Clone, Debug)]
pub struct Descent<'w> {
    world: &'w World,
    /// The agent walking, for [`Choice::others`].
    name: String,
    /// What the agent is doing, for [`Choice::named`].
    activity: String,
    /// Where the agent is (a leaf), for [`Choice::current`].
    location: Vec<String>,
    path: Vec<String>,
}

/// One level of a [`Descent`] with more than one option.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice<'w> {
    /// The place whose parts are chosen between ([] for the top level).
    pub parent: Vec<String>,
    pub options: Vec<&'w str>,
    /// The option the agent is in, if any.
    pub current: Option<usize>,
    /// Which options are other agents' rooms ([`others_rooms`]).
    pub others: Vec<bool>,
    /// Which options the activity names ([`named_places`]).
    pub named: Vec<bool>,
}

impl<'w> Descent<'w> {
    /// A walk for the agent `name` at `location`, doing `activity`; a remedy taken where the
    /// agent is ([`stays_put`]) starts and ends at `location` (when it is a leaf), or out of
    /// a bathroom in a room to sit in ([`stay_place`]); a talk with another agent there
    /// ([`talks_here`]) at `location` itself.
    pub fn new(world: &'w World, name: &str, activity: &str, location: &[String]) -> Self {
        let talk = talks_here(world, activity, name);
        let here = (talk || stays_put(activity, name)) && world.locations.is_leaf(location);
        Self {
            world,
            name: name.to_string(),
            activity: activity.to_string(),
            location: location.to_vec(),
            path: if here && talk {
                location.to_vec()
            } else if here {
                stay_place(world, name, location)
            } else {
                Vec::new()
            },
        }
    }

    /// The next level to choose at, or `None` once the walk is at a leaf (or at a place
    /// without parts).
    pub fn next_choice(&mut self) -> Option<Choice<'w>> {
        loop {
            if self.world.locations.is_leaf(&self.path) {
                return None;
            }
            let options = options(self.world, &self.path);
            match options.len() {
                0 => return None,
                1 => self.path.push(options[0].to_string()),
                _ => {
                    let current = current_option(&self.location, &self.path, &options);
                    return Some(Choice {
                        parent: self.path.clone(),
                        current,
                        others: others_rooms(self.world, &self.name, &self.path, &options),
                        named: named_places(
                            self.world,
                            &self.name,
                            &self.activity,
                            &self.path,
                            &options,
                            current,
                        ),
                        options,
                    });
                }
            }
        }
    }

    /// Goes into option `pick` of `choice` (an option out of range counts as the first).
    pub fn take(&mut self, choice: &Choice<'_>, pick: usize) {
        let pick = if pick < choice.options.len() { pick } else { 0 };
        self.path.push(choice.options[pick].to_string());
    }

    /// The place reached so far.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// Whether the walk ended at a leaf.
    pub fn at_leaf(&self) -> bool {
        self.world.locations.is_leaf(&self.path)
    }
}

/// Whether the walk for `activity` (as [`placed_activity`] gives it) asks where at all: a
/// remedy taken where the agent is ([`stays_put`]) asks nothing, so a step's batch leaves out
/// its top-level question.
pub fn asks_where(world: &World, state: &AgentState, activity: &str) -> bool {
    !Descent::new(world, &state.name, activity, &state.location).at_leaf()
}

/// Walks down the location tree from the roots to a leaf, one `choose` per level with more
/// than one option, preferring the agent's current place, for `activity` as
/// [`placed_activity`] gives it. `first` is the answer to the top level's question, asked in
/// the step's batch where [`asks_where`] (unused when the top level has one place); `system`
/// is the agent's context without its place.
pub async fn walk(
    mind: &Mind<'_>,
    world: &World,
    state: &AgentState,
    activity: &str,
    system: &str,
    first: Option<Result<crate::llm::Response, crate::llm::LlmError>>,
) -> Vec<String> {
    let w = PlaceWeights::default();
    let mut descent = Descent::new(world, &state.name, activity, &state.location);
    let mut pending = first;
    while let Some(choice) = descent.next_choice() {
        let result = match pending.take().filter(|_| choice.parent.is_empty()) {
            Some(r) => r,
            None => {
                let req = place_request(
                    system,
                    RUN_PLACE_PROMPT,
                    world,
                    &state.name,
                    activity,
                    &choice.parent,
                );
                let mut r = mind.port.run(vec![("location".into(), req)]).await;
                r.pop().unwrap_or_else(missing)
            }
        };
        let fallback = choice.current.unwrap_or(0);
        let pick = match mind.chosen("location", result, &choice.options, fallback) {
            Some(c) => {
                let paths: Vec<String> = choice
                    .options
                    .iter()
                    .map(|o| place_description(world, &choice.parent, o))
                    .collect();
                let sims = mind.similarities(activity, &paths);
                let pick = decide(
                    &c.probs,
                    sims.as_deref(),
                    choice.current,
                    &choice.others,
                    &choice.named,
                    w.at(&choice.parent),
                );
                tracing::debug!(agent = %state.name, activity = %activity, options = ?choice.options, model = ?c.probs, pick, "location");
                pick
            }
            None => fallback,
        };
        descent.take(&choice, pick);
    }
    if !descent.at_leaf() {
        mind.fallback(
            "location",
            "the walk did not reach a leaf",
            &display_path(descent.path()),
            &display_path(&state.location),
        );
        return state.location.clone();
    }
    descent.path().to_vec()
}

#[cfg(test)]
mod tests;

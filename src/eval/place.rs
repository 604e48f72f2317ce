//! `eval place`: how often the location walk puts an activity where a person would do it,
//! against a labelled CSV, without making a run.
//!
//! Each row names an agent, a time, the place the agent is at, an activity and the places
//! that fit it. The model is asked the walk's question at every place of the world with
//! more than one part (the top level included), in the agent's context without its place,
//! as a run asks it ([`crate::agent::place`]). The walk is then replayed from those answers
//! under each [`PlaceWeights`] asked for, so weights are compared on the same answers.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::error::{EvalError, Result};
use crate::agent::context::placeless_prompt;
use crate::agent::place::{
    decide, options, place_description, place_request, Descent, PlacePrompt, PlaceWeights,
};
use crate::agent::state::AgentState;
use crate::llm::{Inference, Request, Response};
use crate::memory::TextEmbedder;
use crate::world::{clock, display_path, parse_path, World};

/// One row of a place CSV.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaceItem {
    /// 1-based line in the file.
    pub line: u64,
    /// Index of the agent in `world.agents`.
    pub agent: usize,
    /// Minutes after midnight of the world's first day.
    pub minutes: u32,
    /// Where the agent is before the activity (a leaf).
    pub from: Vec<String>,
    pub activity: String,
    /// The leaves that fit the activity.
    pub places: Vec<Vec<String>>,
}

/// Reads a CSV with the columns `activity` and `places` (leaf paths separated by `;`) and
/// optional `agent` (default: the world's first), `time` (default 10:00 am) and `from`
/// (default: the agent's starting place). Errors name the file, line and column.
pub fn read_items(path: &Path, world: &World) -> Result<Vec<PlaceItem>> {
    let csv_err = EvalError::csv(path);
    let cell = |line: u64, column: usize, name: &str, reason: String| {
        EvalError::cell(path, line, column, name, reason)
    };
    let (mut reader, header) = super::error::open_csv(path)?;
    let col = |name: &str| header.iter().position(|h| h == name);
    let required = |name: &str| super::error::required_column(path, &header, name);
    let activity_col = required("activity")?;
    let places_col = required("places")?;
    let (agent_col, time_col, from_col) = (col("agent"), col("time"), col("from"));
    let leaf = |line: u64, column: usize, name: &str, text: &str| {
        let p = parse_path(text).map_err(|e| cell(line, column, name, e))?;
        if world.locations.is_leaf(&p) {
            Ok(p)
        } else {
            Err(cell(
                line,
                column,
                name,
                format!(
                    "{text:?} is not an innermost place of the world (places: {})",
                    world
                        .locations
                        .leaves()
                        .iter()
                        .map(|l| display_path(l))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ))
        }
    };
    let mut items = Vec::new();
    for record in reader.records() {
        let record = record.map_err(csv_err)?;
        let line = record.position().map_or(0, |p| p.line());
        let get = |c: Option<usize>| c.and_then(|c| record.get(c)).map_or("", str::trim);
        let activity = get(Some(activity_col));
        if activity.is_empty() {
            return Err(cell(line, activity_col, "activity", "is empty".into()));
        }
        let agent = match agent_col {
            Some(c) if !get(Some(c)).is_empty() => {
                world.agent_index(get(Some(c))).ok_or_else(|| {
                    cell(
                        line,
                        c,
                        "agent",
                        format!(
                            "{:?} is not an agent of the world ({})",
                            get(Some(c)),
                            world.agent_list()
                        ),
                    )
                })?
            }
            _ => 0,
        };
        let minutes = match time_col {
            Some(c) if !get(Some(c)).is_empty() => {
                clock::parse_time(get(Some(c))).ok_or_else(|| {
                    cell(
                        line,
                        c,
                        "time",
                        format!("{:?} is not a time like \"10:00 am\"", get(Some(c))),
                    )
                })?
            }
            _ => 600,
        };
        let from = match from_col {
            Some(c) if !get(Some(c)).is_empty() => leaf(line, c, "from", get(Some(c)))?,
            _ => world.agents[agent].location.clone(),
        };
        let mut places = Vec::new();
        for p in get(Some(places_col)).split(';').map(str::trim) {
            if !p.is_empty() {
                places.push(leaf(line, places_col, "places", p)?);
            }
        }
        if places.is_empty() {
            return Err(cell(line, places_col, "places", "names no place".into()));
        }
        items.push(PlaceItem {
            line,
            agent,
            minutes,
            from,
            activity: activity.to_string(),
            places,
        });
    }
    super::error::non_empty(path, items, "rows")
}

/// Every place whose parts the walk chooses between (more than one option), the top level
/// (`[]`) first.
pub fn choice_points(world: &World) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = Vec::new();
    for leaf in world.locations.leaves() {
        for depth in 0..leaf.len() {
            let p = leaf[..depth].to_vec();
            if options(world, &p).len() > 1 && !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// The model's answer and the similarities at each choice point of one item.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Answers {
    /// Option probabilities per choice point (`None`: the question failed).
    #[serde(with = "super::place_kept::pairs")]
    pub model: BTreeMap<Vec<String>, Option<Vec<f32>>>,
    /// Cosine of the activity and each option's description (`None` without an embedder).
    #[serde(with = "super::place_kept::pairs")]
    pub similarities: BTreeMap<Vec<String>, Option<Vec<f32>>>,
}

/// The walk's questions about `item`, one per choice point of `points`, as a run asks them.
pub fn item_requests(
    world: &World,
    item: &PlaceItem,
    points: &[Vec<String>],
    prompt: PlacePrompt,
) -> Vec<Request> {
    let spec = &world.agents[item.agent];
    let mut state = AgentState::from_spec(spec, false);
    state.location = item.from.clone();
    let system = placeless_prompt(spec, &state, world.start_date, item.minutes);
    points
        .iter()
        .map(|p| place_request(&system, prompt, world, &spec.name, &item.activity, p))
        .collect()
}

/// Asks every item's questions at every choice point (put as `prompt` says), `batch` items
/// per engine call, and embeds the activities (`progress` is told how many items are done).
pub fn ask_items(
    engine: &mut dyn Inference,
    mut embedder: Option<&mut dyn TextEmbedder>,
    world: &World,
    items: &[PlaceItem],
    prompt: PlacePrompt,
    batch: usize,
    progress: &mut dyn FnMut(usize),
) -> Result<Vec<Answers>> {
    let points = choice_points(world);
    let descriptions: Vec<Vec<String>> = points
        .iter()
        .map(|p| {
            options(world, p)
                .iter()
                .map(|o| place_description(world, p, o))
                .collect()
        })
        .collect();
    let described: Option<Vec<Vec<Vec<f32>>>> = match embedder.as_deref_mut() {
        Some(e) => {
            let mut out = Vec::new();
            for d in &descriptions {
                let texts: Vec<&str> = d.iter().map(String::as_str).collect();
                out.push(
                    crate::memory::embedder::embed_checked(e, &texts)
                        .map_err(|err| EvalError::Model(format!("embedding places: {err}")))?,
                );
            }
            Some(out)
        }
        None => None,
    };
    let mut answers = Vec::with_capacity(items.len());
    for chunk in items.chunks(batch.max(1)) {
        let mut requests: Vec<Request> = Vec::new();
        for item in chunk {
            requests.extend(item_requests(world, item, &points, prompt));
        }
        let mut results = engine.run(requests, &mut |_| {}).into_iter();
        let activities: Vec<&str> = chunk.iter().map(|i| i.activity.as_str()).collect();
        let embedded = match (embedder.as_deref_mut(), &described) {
            (Some(e), Some(_)) => Some(
                crate::memory::embedder::embed_checked(e, &activities)
                    .map_err(|err| EvalError::Model(format!("embedding activities: {err}")))?,
            ),
            _ => None,
        };
        for (k, item) in chunk.iter().enumerate() {
            let mut a = Answers::default();
            for (j, p) in points.iter().enumerate() {
                let probs = match results.next() {
                    Some(Ok(Response::Chosen(c))) => Some(c.probs),
                    other => {
                        let why = match other {
                            Some(Err(e)) => e.to_string(),
                            Some(Ok(_)) => "not a choice".into(),
                            None => "no result".into(),
                        };
                        tracing::warn!(line = item.line, place = %display_path(p), reason = %why,
                            "place question failed: the walk keeps the current place there");
                        None
                    }
                };
                a.model.insert(p.clone(), probs);
                let sims = match (&embedded, &described) {
                    (Some(v), Some(d)) => Some(
                        d[j].iter()
                            .map(|o| crate::embed::cosine(&v[k], o))
                            .collect(),
                    ),
                    _ => None,
                };
                a.similarities.insert(p.clone(), sims);
            }
            answers.push(a);
        }
        progress(answers.len());
    }
    Ok(answers)
}

/// The leaf a run's walk reaches for `item` from `answers` under weights `w`.
pub fn replay(world: &World, item: &PlaceItem, answers: &Answers, w: PlaceWeights) -> Vec<String> {
    let mut descent = Descent::new(
        world,
        &world.agents[item.agent].name,
        &item.activity,
        &item.from,
    );
    while let Some(choice) = descent.next_choice() {
        let pick = match answers.model.get(&choice.parent).and_then(Option::as_ref) {
            Some(probs) => decide(
                probs,
                answers
                    .similarities
                    .get(&choice.parent)
                    .and_then(Option::as_deref),
                choice.current,
                &choice.others,
                &choice.named,
                w.at(&choice.parent),
            ),
            None => choice.current.unwrap_or(0),
        };
        descent.take(&choice, pick);
    }
    descent.path().to_vec()
}

/// The scores of one set of weights.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlaceScore {
    pub weights: PlaceWeights,
    /// Share of items whose chosen place is one of the labelled places.
    pub fits: f64,
    /// Share of items whose chosen place is in the building (top-level place) of a
    /// labelled place.
    pub building: f64,
    /// Share of items where the agent stays where it was.
    pub stays: f64,
    /// The items whose place does not fit: (line, activity, chosen place).
    #[serde(skip)]
    pub misses: Vec<(u64, String, String)>,
}

/// Scores the walk under `w` on every item.
pub fn score(
    world: &World,
    items: &[PlaceItem],
    answers: &[Answers],
    w: PlaceWeights,
) -> PlaceScore {
    let n = items.len().max(1) as f64;
    let (mut fits, mut building, mut stays) = (0usize, 0usize, 0usize);
    let mut misses = Vec::new();
    for (item, a) in items.iter().zip(answers) {
        let got = replay(world, item, a, w);
        if item.places.contains(&got) {
            fits += 1;
        } else {
            misses.push((item.line, item.activity.clone(), display_path(&got)));
        }
        if item.places.iter().any(|p| p.first() == got.first()) {
            building += 1;
        }
        if got == item.from {
            stays += 1;
        }
    }
    PlaceScore {
        weights: w,
        fits: fits as f64 / n,
        building: building as f64 / n,
        stays: stays as f64 / n,
        misses,
    }
}

/// Share of items where staying put would fit (the constant answer's score).
pub fn stay_baseline(items: &[PlaceItem]) -> f64 {
    let n = items.len().max(1) as f64;
    items.iter().filter(|i| i.places.contains(&i.from)).count() as f64 / n
}

/// The whole report of `eval place`.
#[derive(Clone, Debug, Serialize)]
pub struct PlaceReport {
    pub model: String,
    /// How the questions were put.
    pub prompt: PlacePrompt,
    pub world: String,
    pub items: usize,
    /// Questions that failed (the walk kept the current place there).
    pub failed_questions: usize,
    /// Share of items where staying put fits.
    pub stay_baseline: f64,
    /// One score per weights asked for, in the order asked.
    pub scores: Vec<PlaceScore>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        crate::world::bundled("lin-family.toml")
    }

    fn item(from: &str, places: &[&str]) -> PlaceItem {
        PlaceItem {
            line: 2,
            agent: 0,
            minutes: 600,
            from: parse_path(from).unwrap(),
            activity: "brush teeth".into(),
            places: places.iter().map(|p| parse_path(p).unwrap()).collect(),
        }
    }

    #[test]
    fn choice_points_are_the_top_level_and_every_place_with_parts() {
        let points: Vec<String> = choice_points(&world())
            .iter()
            .map(|p| display_path(p))
            .collect();
        assert_eq!(
            points,
            [
                "",
                "Lin family's house",
                "The Willows Market and Pharmacy",
                "Oak Hill College"
            ]
        );
    }

    #[test]
    fn the_replay_follows_the_answers_and_keeps_the_place_without_one() {
        let w = world();
        let it = item(
            "Lin family's house/Kitchen",
            &["Lin family's house/Bathroom"],
        );
        let mut a = Answers::default();
        // Top level: the house (option 0) clearly; inside: the bathroom (option 4).
        a.model
            .insert(vec![], Some(vec![0.9, 0.025, 0.025, 0.025, 0.025]));
        a.model.insert(
            vec!["Lin family's house".into()],
            Some(vec![0.01, 0.01, 0.01, 0.01, 0.96]),
        );
        let no_prior = PlaceWeights {
            prior: 0.0,
            ..PlaceWeights::default()
        };
        assert_eq!(
            display_path(&replay(&w, &it, &a, no_prior)),
            "Lin family's house/Bathroom"
        );
        let s = score(
            &w,
            std::slice::from_ref(&it),
            std::slice::from_ref(&a),
            no_prior,
        );
        assert_eq!((s.fits, s.building, s.stays), (1.0, 1.0, 0.0));
        // No answer inside the house: the agent stays in the kitchen.
        a.model.insert(vec!["Lin family's house".into()], None);
        assert_eq!(
            display_path(&replay(&w, &it, &a, no_prior)),
            "Lin family's house/Kitchen"
        );
        assert_eq!(stay_baseline(&[it]), 0.0);
    }

    #[test]
    fn rows_are_read_and_bad_cells_are_named() {
        let w = world();
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.csv");
        std::fs::write(
            &good,
            "agent,time,from,activity,places\nEddy Lin,07:00 am,Lin family's house/Kitchen,brush teeth,Lin family's house/Bathroom\n,,,sleep,Lin family's house/John Lin's bedroom; Lin family's house/Living room\n",
        )
        .unwrap();
        let items = read_items(&good, &w).unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(
            (items[0].agent, items[0].minutes, items[0].line),
            (1, 420, 2)
        );
        assert_eq!(items[1].from, w.agents[0].location);
        assert_eq!(items[1].places.len(), 2);
        let bad = dir.path().join("bad.csv");
        std::fs::write(
            &bad,
            "activity,places\nbrush teeth,Lin family's house/Attic\n",
        )
        .unwrap();
        let e = read_items(&bad, &w).unwrap_err().to_string();
        assert!(e.contains("bad.csv: line 2, column 2 (places)"), "{e}");
        assert!(e.contains("Attic"), "{e}");
    }
}

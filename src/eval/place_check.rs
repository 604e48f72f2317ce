//! `eval place --checker`: how well the quality report's place rule ([`PlaceFit`]) agrees
//! with hand-labelled places, without a model. For every labelled activity and every
//! innermost place of the world, the rule's verdict is set against the label (the place
//! fits if the row lists it): the share of fitting places the rule accepts and the share of
//! other places it flags.

use serde::Serialize;

use super::place::PlaceItem;
use crate::memory::TextEmbedder;
use crate::report::place_fit::{embed, names_leaf, PlaceFit};
use crate::report::quality::Share;
use crate::world::{display_path, World};

/// The rule against the labels.
#[derive(Clone, Debug, Serialize)]
pub struct CheckerScore {
    /// Labelled places the rule accepts.
    pub fitting_accepted: Share,
    /// Places not labelled that the rule flags.
    pub others_flagged: Share,
    /// The mean of the two (balanced accuracy).
    pub balanced: f64,
}

/// Scores the place rule on `items`; `None` (logged) if the embedder fails.
pub fn checker_score(
    world: &World,
    items: &[PlaceItem],
    embedder: &mut dyn TextEmbedder,
) -> Option<CheckerScore> {
    let fit = PlaceFit::new(world, embedder)?;
    let texts: Vec<String> = items.iter().map(|i| i.activity.clone()).collect();
    let vectors = embed(embedder, &texts)?;
    let mut fitting = Share::default();
    let mut others = Share::default();
    for (item, v) in items.iter().zip(&vectors) {
        let name = world.agents.get(item.agent).map_or("", |a| a.name.as_str());
        for (leaf, near) in fit.leaves.iter().zip(fit.fitting(v)) {
            let accepted = near || names_leaf(world, name, &item.activity, &item.from, leaf);
            let example = || {
                format!(
                    "line {}: {} at {}",
                    item.line,
                    item.activity,
                    display_path(leaf)
                )
            };
            if item.places.contains(leaf) {
                fitting.add(accepted, example);
            } else {
                others.add(!accepted, example);
            }
        }
    }
    let (fitting, others) = (fitting.done(), others.done());
    Some(CheckerScore {
        balanced: (fitting.share + others.share) / 2.0,
        fitting_accepted: fitting,
        others_flagged: others,
    })
}

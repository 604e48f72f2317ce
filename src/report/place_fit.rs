//! The quality report's place rule: does an agent's place fit its activity? By the
//! embedding model, the place's cosine with the activity is within [`PLACE_MARGIN`] of the
//! best place's; or the activity names the place as the walk reads names ([`names_leaf`]).
//! `eval place --checker` scores the rule against hand-labelled places (BENCHMARKS.md: it
//! agrees with the labels about three times in four, so the share is a rough signal, not a
//! count of misplaced steps).

use crate::agent::place::{current_option, named_places, options};
use crate::embed::cosine;
use crate::memory::embedder::embed_checked;
use crate::memory::TextEmbedder;
use crate::world::{display_path, World};

/// A place fits when its cosine with the activity is at least the best place's minus this.
/// Chosen on `tests/data/place/lin-family-dev.csv` with `eval place --checker`: balanced
/// accuracy 0.771 against 0.729 for the rule before it (the place among the third most like
/// the activity); 0.05 scored 0.779 but accepted fewer of the labelled places (0.729 vs
/// 0.785), so a clean day would read lower.
pub const PLACE_MARGIN: f32 = 0.07;

/// The world's innermost places, embedded once.
pub struct PlaceFit {
    /// Every innermost place of the world, in the world's order.
    pub leaves: Vec<Vec<String>>,
    vectors: Vec<Vec<f32>>,
}

impl PlaceFit {
    /// Embeds `world`'s innermost places (as "House/Kitchen"); `None` (logged) if the
    /// embedder fails.
    pub fn new(world: &World, embedder: &mut dyn TextEmbedder) -> Option<Self> {
        let leaves = world.locations.leaves();
        let texts: Vec<String> = leaves.iter().map(|l| display_path(l)).collect();
        let vectors = embed(embedder, &texts)?;
        Some(Self { leaves, vectors })
    }

    /// The index of `leaf` among the world's innermost places.
    pub fn index(&self, leaf: &[String]) -> Option<usize> {
        self.leaves.iter().position(|l| l == leaf)
    }

    /// Whether place `here` (an index of [`PlaceFit::leaves`]) fits an activity embedded as
    /// `activity`: its cosine is within [`PLACE_MARGIN`] of the best place's.
    pub fn fits(&self, activity: &[f32], here: usize) -> bool {
        self.fitting(activity).get(here).copied().unwrap_or(false)
    }

    /// For every place of [`PlaceFit::leaves`], whether it fits the activity ([`Self::fits`]).
    pub fn fitting(&self, activity: &[f32]) -> Vec<bool> {
        let sims: Vec<f32> = self.vectors.iter().map(|p| cosine(activity, p)).collect();
        let best = sims.iter().copied().fold(f32::MIN, f32::max);
        sims.iter().map(|&s| s >= best - PLACE_MARGIN).collect()
    }
}

/// Whether agent `name`'s `activity`, begun at `location`, names the innermost place
/// `leaf` as the walk down the location tree reads names ([`named_places`]): at the leaf's
/// own level the leaf is named among its siblings, and at each level above its place is
/// named or none is (a mark on every sibling, as "home" puts on the rooms of home, names
/// none). "John Lin begins by greeting the customers at the counter" names the
/// pharmacy's Counter, which the embedding model put below a third of the world's places.
pub fn names_leaf(
    world: &World,
    name: &str,
    activity: &str,
    location: &[String],
    leaf: &[String],
) -> bool {
    (0..leaf.len()).all(|depth| {
        let parent = &leaf[..depth];
        let opts = options(world, parent);
        let Some(i) = opts.iter().position(|o| *o == leaf[depth]) else {
            return false;
        };
        let current = current_option(location, parent, &opts);
        let named = named_places(world, name, activity, parent, &opts, current);
        // A mark on every option ("home" at home, "with the family") says no place of them.
        let says = |j: usize| named[j] && (opts.len() == 1 || named.contains(&false));
        says(i) || (depth + 1 < leaf.len() && !(0..opts.len()).any(says))
    })
}

/// Embeds `texts` ([`embed_checked`]), or logs why not (the place share is then left out).
pub fn embed(embedder: &mut dyn TextEmbedder, texts: &[String]) -> Option<Vec<Vec<f32>>> {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    embed_checked(embedder, &refs)
        .map_err(|err| tracing::warn!(error = %err, "embedding failed: place share left out"))
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An embedder that puts each text on an axis by the first word it knows.
    struct Axes;

    impl TextEmbedder for Axes {
        fn dim(&self) -> usize {
            3
        }
        fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>, String> {
            Ok(texts
                .iter()
                .map(|t| {
                    let t = t.to_lowercase();
                    if t.contains("kitchen") || t.contains("cook") {
                        vec![1.0, 0.0, 0.0]
                    } else if t.contains("bedroom") || t.contains("sleep") {
                        vec![0.0, 1.0, 0.0]
                    } else {
                        vec![0.0, 0.2, 1.0]
                    }
                })
                .collect())
        }
    }

    #[test]
    fn the_best_place_and_those_near_it_fit() {
        let world = crate::world::bundled("lin-family.toml");
        let mut e = Axes;
        let fit = PlaceFit::new(&world, &mut e).expect("embedded");
        let kitchen = fit
            .index(&["Lin family's house".to_string(), "Kitchen".to_string()])
            .expect("a kitchen");
        let bedroom = fit
            .index(&["Lin family's house".into(), "John Lin's bedroom".into()])
            .expect("a bedroom");
        let cook = e.embed(&["cook dinner"]).unwrap().remove(0);
        assert!(fit.fits(&cook, kitchen));
        assert!(!fit.fits(&cook, bedroom));
        let sleep = e.embed(&["go to sleep"]).unwrap().remove(0);
        assert!(fit.fits(&sleep, bedroom));
        assert!(!fit.fits(&sleep, kitchen));
        assert!(!fit.fits(&sleep, fit.leaves.len()), "no such place");
    }

    #[test]
    fn a_place_the_activity_names_is_named_and_home_names_no_room() {
        let world = crate::world::bundled("lin-family.toml");
        let path = |p: &[&str]| -> Vec<String> { p.iter().map(|s| s.to_string()).collect() };
        let counter = path(&["The Willows Market and Pharmacy", "Counter"]);
        let kitchen = path(&["Lin family's house", "Kitchen"]);
        let living = path(&["Lin family's house", "Living room"]);
        let john = "John Lin";
        let greet = "John Lin begins by greeting the customers at the counter.";
        assert!(names_leaf(&world, john, greet, &counter, &counter));
        assert!(!names_leaf(&world, john, greet, &counter, &kitchen));
        let paper = "reads the newspaper in the living room";
        assert!(names_leaf(&world, john, paper, &kitchen, &living));
        assert!(!names_leaf(&world, john, paper, &kitchen, &kitchen));
        // "home" marks every room of home: none of them is named.
        let home = "walk home to start dinner";
        assert!(!names_leaf(&world, john, home, &counter, &living));
        assert!(!names_leaf(
            &world,
            john,
            "serve customers",
            &counter,
            &counter
        ));
    }
}

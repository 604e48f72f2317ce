//! The model's answers to a place set's questions kept in a file (`eval place --answers`), so
//! that the walk's rules and weights can be tuned on them in seconds without the model.
//!
//! The file names the model and holds a digest of every question asked: answers to other
//! questions (another set, world, prompt wording or model) are refused, never replayed.

use std::path::Path;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::error::{EvalError, Result};
use super::place::{choice_points, item_requests, Answers, PlaceItem};
use crate::agent::place::PlacePrompt;
use crate::world::World;

/// The contents of an answers file.
#[derive(Serialize, Deserialize)]
struct Kept {
    /// The model file's name.
    model: String,
    /// How the questions put the options.
    prompt: String,
    /// Sha256 of every question of every item, in order.
    questions: String,
    answers: Vec<Answers>,
}

/// The digest of the questions a set's items are asked.
fn questions_digest(world: &World, items: &[PlaceItem], prompt: PlacePrompt) -> String {
    let points = choice_points(world);
    let mut h = Sha256::new();
    for item in items {
        for r in item_requests(world, item, &points, prompt) {
            h.update(format!("{r:?}\n").as_bytes());
        }
    }
    format!("{:x}", h.finalize())
}

/// The answers kept in `path` for these questions and `model`; `None` when there is no file.
/// A file holding answers to other questions or of another model is an error that says so.
pub fn read(
    path: &Path,
    model: &str,
    world: &World,
    items: &[PlaceItem],
    prompt: PlacePrompt,
) -> Result<Option<Vec<Answers>>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(EvalError::Io {
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let bad = |reason: String| EvalError::Sheet {
        path: path.to_path_buf(),
        reason,
    };
    let kept: Kept = serde_json::from_str(&text)
        .map_err(|e| bad(format!("not a file of kept place answers: {e}")))?;
    if kept.model != model {
        return Err(bad(format!(
            "holds the answers of {}, not of {model}; remove it or name another file",
            kept.model
        )));
    }
    if kept.prompt != prompt.to_string()
        || kept.questions != questions_digest(world, items, prompt)
        || kept.answers.len() != items.len()
    {
        return Err(bad(
            "holds the answers to other questions (another set, world or prompt, or the \
             questions' wording changed); remove it or name another file"
                .into(),
        ));
    }
    Ok(Some(kept.answers))
}

/// Writes `answers` to `path` for [`read`] to find.
pub fn write(
    path: &Path,
    model: &str,
    world: &World,
    items: &[PlaceItem],
    prompt: PlacePrompt,
    answers: &[Answers],
) -> Result<()> {
    let kept = Kept {
        model: model.to_string(),
        prompt: prompt.to_string(),
        questions: questions_digest(world, items, prompt),
        answers: answers.to_vec(),
    };
    let text = serde_json::to_string(&kept).map_err(|e| EvalError::Invalid(e.to_string()))?;
    std::fs::write(path, text).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// Serde for a map keyed by place paths as a list of pairs (JSON keys must be strings).
pub(super) mod pairs {
    use std::collections::BTreeMap;

    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, V: Serialize>(
        m: &BTreeMap<Vec<String>, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(m.iter())
    }

    pub fn deserialize<'de, D: Deserializer<'de>, V: Deserialize<'de>>(
        d: D,
    ) -> Result<BTreeMap<Vec<String>, V>, D::Error> {
        Ok(Vec::<(Vec<String>, V)>::deserialize(d)?
            .into_iter()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_come_back_for_the_same_questions_only() {
        let world = crate::world::bundled("lin-family.toml");
        let items = super::super::place::read_items(
            Path::new(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/data/place/lin-family-dev.csv"
            )),
            &world,
        )
        .unwrap();
        let items = &items[..3];
        let mut a = Answers::default();
        a.model
            .insert(vec!["Lin family's house".into()], Some(vec![0.25, 0.75]));
        a.model.insert(vec![], None);
        a.similarities.insert(vec![], Some(vec![0.5]));
        let answers = vec![a.clone(), a.clone(), a];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("answers.json");
        let prompt = PlacePrompt::Numbered;
        assert!(read(&path, "m.gguf", &world, items, prompt)
            .unwrap()
            .is_none());
        write(&path, "m.gguf", &world, items, prompt, &answers).unwrap();
        let back = read(&path, "m.gguf", &world, items, prompt)
            .unwrap()
            .unwrap();
        assert_eq!(format!("{back:?}"), format!("{answers:?}"));
        let other_model = read(&path, "n.gguf", &world, items, prompt).unwrap_err();
        assert!(
            other_model.to_string().contains("not of n.gguf"),
            "{other_model}"
        );
        let other_items = read(&path, "m.gguf", &world, &items[..2], prompt).unwrap_err();
        assert!(
            other_items.to_string().contains("other questions"),
            "{other_items}"
        );
        let other_prompt = read(&path, "m.gguf", &world, items, PlacePrompt::Names).unwrap_err();
        assert!(
            other_prompt.to_string().contains("other questions"),
            "{other_prompt}"
        );
        std::fs::write(&path, "{").unwrap();
        let broken = read(&path, "m.gguf", &world, items, prompt).unwrap_err();
        assert!(broken.to_string().contains("answers.json"), "{broken}");
    }
}

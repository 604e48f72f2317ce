//! How the walk's questions are put to the model.

use crate::world::{display_path, World};

use super::super::mind::Mind;
use super::{child, options, place_description};

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
#[serde(rename_all = "kebab-case")]
pub enum PlacePrompt {
    /// The places' names in one sentence; the model's answer is a name.
    Names,
    /// Where some option has parts: the places as a numbered list, each with its parts
    /// ([`place_description`]), answered by a number (one token, so no option wins for
    /// starting with a common word such as "The"). Among innermost places only: as `names`.
    Numbered,
    /// A numbered list at every level, innermost places included.
    AllNumbered,
}

impl std::str::FromStr for PlacePrompt {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "names" => Ok(PlacePrompt::Names),
            "numbered" => Ok(PlacePrompt::Numbered),
            "all-numbered" => Ok(PlacePrompt::AllNumbered),
            other => Err(format!(
                "unknown place prompt `{other}` (names, numbered, all-numbered)"
            )),
        }
    }
}

impl std::fmt::Display for PlacePrompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PlacePrompt::Names => "names",
            PlacePrompt::Numbered => "numbered",
            PlacePrompt::AllNumbered => "all-numbered",
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
    let has_parts = options
        .iter()
        .any(|o| !world.locations.is_leaf(&child(parent, o)));
    match prompt {
        PlacePrompt::AllNumbered | PlacePrompt::Numbered
            if has_parts || prompt == PlacePrompt::AllNumbered =>
        {
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
                "{name} is doing: {activity}.{} {ask}\n{}\nAnswer with the number.",
                home_sentence(world, name),
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

/// " NAME lives at HOME." for an agent of the world with a home ([`crate::world::AgentSpec::home`]: the
/// world's `home`, or the building of a starting bedroom; HOME is its last name), else ""
/// (Rachel, starting in the wedding hall with no `home`, has none).
fn home_sentence(world: &World, name: &str) -> String {
    world
        .agents
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| a.home()?.last())
        .map_or(String::new(), |home| format!(" {name} lives at {home}."))
}

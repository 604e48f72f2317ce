//! Worlds: the TOML schema, loading and validation, the location tree, the clock, basic needs,
//! emotions, relationships, experimental conditions and synthetic towns.
//!
//! [`World::load`] reads and checks a world file; every problem comes back at once in a
//! [`WorldError::Invalid`], each with its line, column and field path. The format is described
//! in `worlds/README.md`.

mod checker;
mod condition;
mod emotion;
mod error;
mod generate;
pub mod import;
mod locate;
mod location;
mod needs;
mod schema;
mod validate;
mod validate_agents;
mod write;

/// The clock and plan-line formats, re-exported from their home in [`crate::formats`].
pub use crate::formats::clock;

pub use condition::{Condition, ConditionError};
pub use emotion::{closeness_phrase, Emotion, Relationship, CLOSENESS_DEFAULT, CLOSENESS_MAX};
pub use error::{Problem, WorldError};
pub use location::{display_path, parse_path, LocationNode, LocationTree};
pub use needs::{need_state_phrase, Decay, Need, Needs, YesThresholds, NEED_MAX, UNMET_NEED};

use crate::formats::script::{main_script, Letters, Script};
use chrono::NaiveDate;
use std::path::Path;

/// A simulated world: places, people and the days to simulate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct World {
    /// The world's name.
    pub name: String,
    /// A free description (may be empty).
    pub description: String,
    /// The first simulated day.
    pub start_date: NaiveDate,
    /// How many days to simulate (1–365).
    pub days: u32,
    /// When each day's simulation starts, in minutes after midnight (default 360, 06:00).
    pub day_start: u32,
    /// When each day's simulation ends, in minutes after midnight (default 1440, 24:00).
    pub day_end: u32,
    /// Minutes per step (divides 60; default 15).
    pub step_minutes: u32,
    /// A pair of agents does not start another conversation within this many minutes.
    pub conversation_cooldown_minutes: u32,
    /// How fast the needs drop (`[needs.decay]`; the paper's rates by default).
    pub decay: Decay,
    /// The places.
    pub locations: LocationTree,
    /// Events told to the agents when they plan the day of each.
    pub events: Vec<DayEvent>,
    /// The agents, in file order.
    pub agents: Vec<AgentSpec>,
    /// The TOML text as read (written to the run directory).
    pub source: String,
}

/// Something that happens on one day, shown to every agent when it plans that day.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DayEvent {
    /// The day.
    pub date: NaiveDate,
    /// What happens, in one sentence.
    pub text: String,
}

/// An agent as the world file describes it at the start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentSpec {
    /// Unique name.
    pub name: String,
    /// Age in years (1–150).
    pub age: u32,
    /// Personality traits, e.g. "friendly".
    pub traits: Vec<String>,
    /// Sentences describing the agent.
    pub description: Vec<String>,
    /// A typical day, one `"hh:mm am: activity"` line per entry, times increasing.
    pub example_day_plan: Vec<String>,
    /// Starting place: the path of a leaf of the location tree.
    pub location: Vec<String>,
    /// Where the agent lives, as written: the path of any place of the location tree.
    /// [`AgentSpec::home`] also infers it when absent.
    pub home: Option<Vec<String>>,
    /// Starting emotion.
    pub emotion: Emotion,
    /// Starting needs.
    pub needs: Needs,
    /// Relationships to other agents, in file order.
    pub relationships: Vec<(String, Relationship)>,
}

impl AgentSpec {
    /// Where the agent lives: `home` when the world gives it, else the top-level place of a
    /// starting room whose name contains "bedroom" (`None` when neither).
    pub fn home(&self) -> Option<&[String]> {
        if let Some(h) = &self.home {
            return Some(h);
        }
        let in_bedroom = self.location.len() > 1
            && self
                .location
                .last()
                .is_some_and(|room| room.to_lowercase().contains("bedroom"));
        in_bedroom.then(|| &self.location[..1])
    }
}

/// A bundled world by file name (`"lin-family.toml"`), parsed, for unit tests.
#[cfg(test)]
pub(crate) fn bundled(file: &str) -> World {
    let path = format!("{}/worlds/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).expect("a bundled world is readable");
    World::parse(&text, std::path::Path::new(&path)).expect("the bundled world parses")
}

impl World {
    /// Reads and checks a world file.
    pub fn load(path: &Path) -> Result<World, WorldError> {
        let bytes = std::fs::read(path).map_err(|source| WorldError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| WorldError::Invalid {
            path: path.to_path_buf(),
            problems: vec![not_utf8(e.as_bytes(), e.utf8_error().valid_up_to())],
        })?;
        World::parse(&text, path)
    }

    /// Parses and checks the text of a world file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<World, WorldError> {
        let invalid = |problems| WorldError::Invalid {
            path: path.to_path_buf(),
            problems,
        };
        let raw: schema::RawWorld =
            toml::from_str(text).map_err(|e| invalid(vec![toml_problem(text, &e)]))?;
        validate::check(raw, text).map_err(invalid)
    }

    /// The main script of the world, as its agents' example day plans are written.
    pub fn script(&self) -> Script {
        main_script(
            self.agents
                .iter()
                .flat_map(|a| a.example_day_plan.iter().map(String::as_str)),
        )
    }

    /// The letters its agents' generated text may use: no Chinese, Japanese or Korean in a
    /// world written in an alphabet.
    pub fn letters(&self) -> Letters {
        Letters::for_script(self.script())
    }

    /// The day (0-based) and minutes after midnight of step `step` (0-based).
    pub fn step_time(&self, step: u64) -> (u64, u32) {
        let per_day = u64::from(self.steps_per_day().max(1));
        let day = step / per_day;
        let minutes = self.day_start + (step % per_day) as u32 * self.step_minutes;
        (day, minutes)
    }

    /// The state file name of step `step` (0-based), e.g. `state_2023-01-03_06h15.json`.
    pub fn state_file_of(&self, step: u64) -> String {
        let (day, minutes) = self.step_time(step);
        let date = self.start_date + chrono::Days::new(day);
        clock::state_file_name(date, minutes)
    }

    /// Steps in one simulated day.
    pub fn steps_per_day(&self) -> u32 {
        self.day_end.saturating_sub(self.day_start) / self.step_minutes.max(1)
    }

    /// Every simulated date, in order.
    pub fn dates(&self) -> Vec<NaiveDate> {
        self.start_date
            .iter_days()
            .take(self.days as usize)
            .collect()
    }

    /// The texts of the events of one date, in file order.
    pub fn events_on(&self, date: NaiveDate) -> Vec<&str> {
        self.events
            .iter()
            .filter(|e| e.date == date)
            .map(|e| e.text.as_str())
            .collect()
    }

    /// The index of the agent with this name.
    pub fn agent_index(&self, name: &str) -> Option<usize> {
        self.agents.iter().position(|a| a.name == name)
    }

    /// The agents' names, comma-separated, for messages.
    pub fn agent_list(&self) -> String {
        self.agents
            .iter()
            .map(|a| a.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Overrides every agent's starting state: a need level, the emotion, or the closeness of
    /// every relationship.
    pub fn apply_conditions(&mut self, conditions: &[Condition]) {
        for cond in conditions {
            for a in &mut self.agents {
                match *cond {
                    Condition::Need(need, v) => a.needs.set(need, v),
                    Condition::Emotion(e) => a.emotion = e,
                    Condition::Closeness(c) => {
                        for (_, r) in &mut a.relationships {
                            r.closeness = c.min(CLOSENESS_MAX);
                        }
                    }
                }
            }
        }
    }
}

/// The problem of a file that is not UTF-8: where its first invalid byte is (`valid` bytes
/// before it are valid UTF-8).
fn not_utf8(bytes: &[u8], valid: usize) -> Problem {
    let before = std::str::from_utf8(&bytes[..valid]).unwrap_or_default();
    let (line, column) = locate::line_col(before, valid);
    Problem {
        line: Some(line),
        column: Some(column),
        field: locate::header_path(before, valid),
        message: format!(
            "not UTF-8 text: byte {valid} (0x{:02x}) is not valid UTF-8; save the world file as UTF-8",
            bytes.get(valid).copied().unwrap_or(0)
        ),
    }
}

/// A problem from the TOML parser or the schema, with the field path found from its span.
fn toml_problem(text: &str, e: &toml::de::Error) -> Problem {
    let offset = e.span().map_or(0, |s| s.start);
    let (line, column) = locate::line_col(text, offset);
    let (mut field, syntax) = locate::field_at(text, offset);
    // The parser's message may span lines ("invalid array\nexpected `]`"); a problem is one
    // line of the error, so its lines are joined.
    let msg = e
        .message()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
        .replace("expected i64", "expected an integer")
        .replace("expected a sequence", "expected a list like [\"...\"]");
    let msg = msg.as_str();
    let quoted = |prefix: &str| {
        msg.strip_prefix(prefix)
            .and_then(|r| r.split('`').next())
            .map(str::to_string)
    };
    let message = if syntax {
        format!("invalid TOML: {msg}")
    } else if let Some(name) = quoted("missing field `") {
        field = locate::join(&field, &name);
        format!("{msg} (required here: {})", required_here(&field))
    } else if let Some(name) = quoted("unknown field `") {
        field = locate::join(&field, &name);
        msg.to_string()
    } else {
        msg.to_string()
    };
    Problem {
        line: Some(line),
        column: Some(column),
        field,
        message,
    }
}

/// The required fields of the table that holds `field`.
fn required_here(field: &str) -> &'static str {
    let table = field.rsplit_once('.').map_or("", |(t, _)| t);
    if table.contains(".relationships.") {
        "relationship"
    } else if table.starts_with("agents[") {
        "name, age, traits, description, example_day_plan, location"
    } else if table.starts_with("events[") {
        "date, text"
    } else {
        "name, start_date"
    }
}

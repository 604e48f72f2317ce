//! Importing a world of the original Humanoid Agents (Wang, Chiu & Chiu 2023, the
//! `humanoidagents` Python package): its map YAML (a nested `World` of places and the `Agents`'
//! starting places), its agent JSON files (`specific_agents/*.json`), and optionally its daily
//! events YAML (`date: event`) and default agent config (`default_agent_config.json`: the basic
//! needs' start values and per-step decline likelihoods).
//!
//! [`convert`] accepts the original's looser forms and records every change it makes as an
//! [`ImportWarning`] naming the file and field: a plan or description given as one string,
//! one-digit hours and other spellings of plan times, plan lines out of time order (sorted),
//! closeness outside 0–30 (clamped), relationships with agents not in the world (left out).
//! What it cannot resolve is an [`ImportError`] naming the file, line (where known) and field.
//! The text it returns has been checked with [`World::parse`].

mod agent;
mod error;
mod events;
mod map;
mod needs;
mod plan;
mod render;
mod source;
#[cfg(test)]
mod tests;

pub use error::{ImportError, ImportWarning, SourceProblem};
pub use source::Source;

use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use super::World;
use error::Report;
use render::{AgentOut, Draft};

/// The original's default first day (`run_simulation.py --start_date`).
pub const ORIGINAL_START_DATE: (i32, u32, u32) = (2023, 1, 3);

/// The name the converted text is validated under (it is not yet a file).
const CONVERTED: &str = "converted world";

/// Where the original's files are.
#[derive(Clone, Debug, Default)]
pub struct ImportFiles {
    /// The map YAML (`locations/*.yaml`).
    pub map: PathBuf,
    /// The agent JSON files, in the order the world lists the agents.
    pub agents: Vec<PathBuf>,
    /// The daily events YAML, if any.
    pub events: Option<PathBuf>,
    /// The default agent config (`default_agent_config.json`), if any.
    pub agent_config: Option<PathBuf>,
}

/// What the original's files do not say: each has a default, named in the header comment.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// The world's name (default: from the map file's name).
    pub name: Option<String>,
    /// The first simulated day (default: the original's, 2023-01-03).
    pub start_date: Option<NaiveDate>,
    /// How many days (default: 1, as the original, or up to the last event).
    pub days: Option<u32>,
}

/// The original's files, read.
#[derive(Clone, Debug)]
pub struct Sources {
    /// The map YAML.
    pub map: Source,
    /// The agent JSON files.
    pub agents: Vec<Source>,
    /// The daily events YAML.
    pub events: Option<Source>,
    /// The default agent config JSON.
    pub agent_config: Option<Source>,
}

/// A converted world.
#[derive(Debug)]
pub struct Imported {
    /// The world file's text (header comment included); it loads as [`Imported::world`].
    pub toml: String,
    /// The world as loaded from that text.
    pub world: World,
    /// Every change made to fit our format, in the order made.
    pub warnings: Vec<ImportWarning>,
}

impl Sources {
    /// Reads the files.
    pub fn read(files: &ImportFiles) -> Result<Sources, ImportError> {
        let opt = |p: &Option<PathBuf>| p.as_deref().map(Source::read).transpose();
        Ok(Sources {
            map: Source::read(&files.map)?,
            agents: files
                .agents
                .iter()
                .map(|p| Source::read(p))
                .collect::<Result<_, _>>()?,
            events: opt(&files.events)?,
            agent_config: opt(&files.agent_config)?,
        })
    }
}

/// Reads and converts the original's files.
pub fn import_files(files: &ImportFiles, opts: &ImportOptions) -> Result<Imported, ImportError> {
    convert(&Sources::read(files)?, opts)
}

/// Converts the original's files (already read) into our world file's text.
pub fn convert(src: &Sources, opts: &ImportOptions) -> Result<Imported, ImportError> {
    if src.agents.is_empty() {
        return Err(ImportError::Option {
            flag: "AGENT.json",
            message: "give at least one agent file".into(),
        });
    }
    if let Some(d) = opts.days.filter(|d| !(1..=365).contains(d)) {
        return Err(ImportError::Option {
            flag: "--days",
            message: format!("{d}: must be 1–365"),
        });
    }
    let mut r = Report::default();
    let map = map::read(&src.map, &mut r);
    let config = src
        .agent_config
        .as_ref()
        .and_then(|s| needs::read(s, &mut r));
    let mut drafts: Vec<agent::AgentDraft> = Vec::new();
    for s in &src.agents {
        let Some(d) = agent::read(s, &mut r) else {
            continue;
        };
        if let Some(first) = drafts.iter().find(|o| o.name == d.name) {
            r.error(
                &s.name,
                s.json_line(&["name"]),
                "name",
                format!(
                    "{:?} is also the agent of {}: agent names must be unique",
                    d.name, first.file
                ),
            );
            continue;
        }
        drafts.push(d);
    }
    let events = src
        .events
        .as_ref()
        .map(|s| events::read(s, &mut r))
        .unwrap_or_default();

    let names: Vec<String> = drafts.iter().map(|d| d.name.clone()).collect();
    let mut agents = Vec::new();
    if let Some(map) = &map {
        for s in map.starts.iter().filter(|s| !names.contains(&s.agent)) {
            r.warn(
                &src.map.name,
                &super::locate::join("Agents", &s.agent),
                format!("no agent file was given for {:?}: left out", s.agent),
            );
        }
        for d in drafts {
            if let Some(a) = place_agent(d, map, &names, config.as_ref(), &src.map, &mut r) {
                agents.push(a);
            }
        }
    }
    let (start_date, days, how_long) = dates(opts, &events);
    let Some(last) = start_date.checked_add_days(chrono::Days::new(u64::from(days) - 1)) else {
        return Err(ImportError::Option {
            flag: "--start-date",
            message: format!("{start_date} plus {days} days is past the last date we know"),
        });
    };
    let file_of_events = src.events.as_ref().map_or("", |s| s.name.as_str());
    let mut kept = Vec::new();
    for e in events {
        if e.date < start_date || e.date > last {
            r.warn(
                file_of_events,
                &e.field,
                format!(
                    "{} is outside the simulated days {start_date} to {last}: left out (--start-date, --days)",
                    e.date
                ),
            );
        } else {
            kept.push((e.date, e.text));
        }
    }
    // Warnings and problems in the order of the files, then as found.
    let files: Vec<&str> = std::iter::once(&src.map)
        .chain(&src.agents)
        .chain(&src.events)
        .chain(&src.agent_config)
        .map(|s| s.name.as_str())
        .collect();
    let rank = |f: &str| files.iter().position(|&x| x == f).unwrap_or(files.len());
    r.warnings.sort_by_key(|w| rank(&w.file));
    r.problems.sort_by_key(|p| rank(&p.file));
    if !r.problems.is_empty() {
        return Err(ImportError::Input(r.problems));
    }
    let Some(map) = map else {
        return Err(ImportError::Input(r.problems));
    };
    let name = match opts
        .name
        .as_deref()
        .map(str::trim)
        .filter(|n| !n.is_empty())
    {
        Some(n) => n.to_string(),
        None => name_from_file(&src.map.name),
    };
    let draft = Draft {
        header: header(
            src,
            opts,
            &name,
            start_date,
            days,
            how_long,
            config.is_some(),
            &r,
        ),
        description: format!(
            "Imported from the Humanoid Agents map {} and {} agent file{}.",
            file_name(&src.map.name),
            src.agents.len(),
            if src.agents.len() == 1 { "" } else { "s" }
        ),
        name,
        start_date,
        days,
        locations: map.leaves(),
        decay: config.map(|c| c.decay_per_5_hours).unwrap_or_default(),
        events: kept,
        agents,
    };
    let (toml, world) = checked(render::render(&draft))?;
    Ok(Imported {
        toml,
        world,
        warnings: r.warnings,
    })
}

/// The converted text and its world, if it passes our own validation.
fn checked(toml: String) -> Result<(String, World), ImportError> {
    let world = World::parse(&toml, Path::new(CONVERTED)).map_err(ImportError::Invalid)?;
    Ok((toml, world))
}

/// An agent with its starting place, relationships to agents not in the world left out, and
/// the config's needs.
fn place_agent(
    d: agent::AgentDraft,
    map: &map::Map,
    names: &[String],
    config: Option<&needs::NeedsConfig>,
    map_src: &Source,
    r: &mut Report,
) -> Option<AgentOut> {
    let field = super::locate::join("Agents", &d.name);
    let Some(start) = map.starts.iter().find(|s| s.agent == d.name) else {
        r.error(
            &map_src.name,
            map_src.find_line(&["Agents".to_string()]),
            &field,
            format!(
                "no starting place for {:?} (of {}): add \"- {}: <place>\" under Agents",
                d.name, d.file, d.name
            ),
        );
        return None;
    };
    let location = match map.resolve(&start.place) {
        Ok((path, warning)) => {
            if let Some(w) = warning {
                r.warn(&map_src.name, &field, w);
            }
            path.join("/")
        }
        Err(msg) => {
            let line = map_src.find_line(&["Agents".to_string(), d.name.clone()]);
            r.error(&map_src.name, line, &field, msg);
            return None;
        }
    };
    let mut relationships = Vec::new();
    for rel in d.relationships {
        if names.contains(&rel.other) {
            relationships.push(rel);
        } else {
            r.warn(
                &d.file,
                &super::locate::join("social_relationships", &rel.other),
                format!("{:?} is not an agent of this world: left out", rel.other),
            );
        }
    }
    let needs = config
        .map(|c| c.start)
        .filter(|n| *n != crate::world::Needs::default());
    Some(AgentOut {
        name: d.name,
        age: d.age,
        traits: d.traits,
        description: d.description,
        example_day_plan: d.example_day_plan,
        location,
        emotion: d.emotion,
        needs,
        relationships,
    })
}

/// The first day, the number of days and where that number came from.
fn dates(opts: &ImportOptions, events: &[events::EventDraft]) -> (NaiveDate, u32, &'static str) {
    let (y, m, d) = ORIGINAL_START_DATE;
    let start = opts
        .start_date
        .or_else(|| NaiveDate::from_ymd_opt(y, m, d))
        .unwrap_or_default();
    if let Some(days) = opts.days {
        return (start, days, "given with --days");
    }
    let last = events.iter().map(|e| e.date).filter(|&d| d >= start).max();
    match last {
        Some(last) if last > start => {
            let days = ((last - start).num_days() + 1).clamp(1, 365) as u32;
            (start, days, "up to the last event; --days to change")
        }
        _ => (
            start,
            1,
            "one day, the original's default; --days to change",
        ),
    }
}

/// The last part of a path.
fn file_name(path: &str) -> &str {
    Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(path)
}

/// A world name from the map's file name: `locations/lin_family_map.yaml` → `Lin family`.
fn name_from_file(path: &str) -> String {
    let stem = Path::new(path)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("");
    let mut words = stem.replace(['_', '-'], " ").trim().to_string();
    for suffix in [" map", " Map", " MAP"] {
        if let Some(w) = words.strip_suffix(suffix) {
            words = w.trim().to_string();
        }
    }
    let mut chars = words.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => "Imported world".to_string(),
    }
}

/// The header comment: where the world came from, the defaults used, and every adjustment.
#[allow(clippy::too_many_arguments)]
fn header(
    src: &Sources,
    opts: &ImportOptions,
    name: &str,
    start: NaiveDate,
    days: u32,
    how_long: &str,
    config: bool,
    r: &Report,
) -> Vec<String> {
    let mut h = vec![
        "Imported by `humanoid world import` from a world of the original Humanoid Agents:"
            .to_string(),
        format!("  map:    {}", src.map.name),
        format!(
            "  agents: {}",
            src.agents
                .iter()
                .map(|a| a.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ];
    if let Some(e) = &src.events {
        h.push(format!("  events: {}", e.name));
    }
    if let Some(c) = &src.agent_config {
        h.push(format!("  agent config: {}", c.name));
    }
    h.push("The original's files have no world name, start date or number of days:".into());
    h.push(format!(
        "  name {name:?} ({}),",
        if opts.name.is_some() {
            "given with --name"
        } else {
            "from the map's file name; --name to change"
        }
    ));
    h.push(format!(
        "  start_date {start} ({}),",
        if opts.start_date.is_some() {
            "given with --start-date"
        } else {
            "the original's default; --start-date to change"
        }
    ));
    h.push(format!("  days {days} ({how_long})."));
    h.push(
        "The rest keeps our defaults: each day runs 06:00-24:00 in 15-minute steps (as the".into(),
    );
    h.push(
        "original's), two agents wait 120 minutes before talking again (the original has no".into(),
    );
    if config {
        h.push("wait), and the needs start and drop as the agent config says.".into());
    } else {
        h.push(
            "wait), and needs start at 5 (energy 10) and drop at the paper's stated rates (for"
                .into(),
        );
        h.push("the original code's rates, import again with --agent-config default_agent_config.json).".into());
    }
    if r.warnings.is_empty() {
        h.push("Nothing had to be changed to fit our format.".into());
    } else {
        h.push(format!(
            "Changed to fit our format ({}; also printed as warnings):",
            r.warnings.len()
        ));
        h.extend(r.warnings.iter().map(|w| format!("  {w}")));
    }
    h.push("The format is described in worlds/README.md.".into());
    h
}

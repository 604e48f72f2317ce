//! Semantic checks of a parsed world file: dates, times, ranges, locations and events (the
//! agents are checked in `validate_agents`). Every problem is collected with its line, column
//! and field path.

use super::checker::Checker;
use super::clock::{self, format_hhmm, parse_date, parse_hhmm};
use super::error::Problem;
use super::location::{parse_path, LocationTree};
use super::schema::RawWorld;
use super::{DayEvent, World};
use chrono::NaiveDate;
use std::collections::HashMap;
use toml::Spanned;

/// Longest allowed conversation cooldown: a year.
const MAX_COOLDOWN: i64 = 365 * 24 * 60;

/// Checks a parsed world; the world, or every problem found.
pub(crate) fn check(raw: RawWorld, text: &str) -> Result<World, Vec<Problem>> {
    let mut c = Checker {
        text,
        problems: Vec::new(),
    };
    let name = c.text(&raw.name, "name", "the world name");
    let description = raw
        .description
        .as_ref()
        .map(|d| d.get_ref().clone())
        .unwrap_or_default();

    let start_date = parse_date(&raw.start_date.get_ref().0);
    if start_date.is_none() {
        c.at(
            raw.start_date.span(),
            "start_date",
            format!(
                "invalid date {:?}: write a real date as \"YYYY-MM-DD\", e.g. \"2023-01-03\"",
                raw.start_date.get_ref().0
            ),
        );
    }
    let days = match &raw.days {
        Some(d) => c.int(d, "days", 1, 365),
        None => Some(1),
    };
    let step_minutes = match &raw.step_minutes {
        Some(s) if (1..=60).contains(s.get_ref()) && 60 % *s.get_ref() == 0 => {
            Some(*s.get_ref() as u32)
        }
        Some(s) => {
            c.at(
                s.span(),
                "step_minutes",
                format!(
                    "{} does not divide an hour: use one of 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30, 60",
                    s.get_ref()
                ),
            );
            None
        }
        None => Some(15),
    };
    let mut time_of_day = |v: &Option<Spanned<super::schema::Text>>, field: &str, default: u32| {
        let Some(v) = v else { return Some(default) };
        let t = parse_hhmm(&v.get_ref().0)
            .filter(|&m| field == "day_end" || m < clock::MINUTES_PER_DAY);
        let Some(t) = t else {
            c.at(
                v.span(),
                field,
                format!(
                    "invalid time {:?}: write 24-hour \"HH:MM\", e.g. \"{}\"{}",
                    v.get_ref().0,
                    format_hhmm(default),
                    if field == "day_end" {
                        " (\"24:00\" is the end of the day)"
                    } else {
                        ""
                    }
                ),
            );
            return None;
        };
        if let Some(step) = step_minutes.filter(|s| t % s != 0) {
            c.at(
                v.span(),
                field,
                format!(
                    "{:?} is not a multiple of step_minutes ({step}) after midnight",
                    v.get_ref().0
                ),
            );
        }
        Some(t)
    };
    let day_start = time_of_day(&raw.day_start, "day_start", 360);
    let day_end = time_of_day(&raw.day_end, "day_end", clock::MINUTES_PER_DAY);
    if let (Some(s), Some(e)) = (day_start, day_end) {
        if s >= e {
            let span = raw
                .day_end
                .as_ref()
                .or(raw.day_start.as_ref())
                .map_or(0..0, |v| v.span());
            c.at(
                span,
                "day_end",
                format!(
                    "the day ends at {} but starts at {}: day_end must be later than day_start",
                    format_hhmm(e),
                    format_hhmm(s)
                ),
            );
        }
    }
    let cooldown = match &raw.conversation_cooldown_minutes {
        Some(v) => c.int(v, "conversation_cooldown_minutes", 0, MAX_COOLDOWN),
        None => Some(120),
    };

    let decay = check_decay(&mut c, &raw);
    let locations = check_locations(&mut c, &raw);
    let events = check_events(&mut c, &raw, start_date, days);
    let agents = super::validate_agents::check_agents(&mut c, &raw.agents, &locations);

    if !c.problems.is_empty() {
        return Err(c.problems);
    }
    match (start_date, days, day_start, day_end, step_minutes, cooldown) {
        (Some(start_date), Some(days), Some(day_start), Some(day_end), Some(step), Some(cool)) => {
            Ok(World {
                name,
                description,
                start_date,
                days,
                day_start,
                day_end,
                step_minutes: step,
                conversation_cooldown_minutes: cool,
                decay,
                locations,
                events,
                agents,
                source: text.to_string(),
            })
        }
        _ => Err(vec![Problem {
            line: None,
            column: None,
            field: String::new(),
            message: "invalid world".to_string(),
        }]),
    }
}

/// Most a need may drop per hour.
const MAX_DECAY_PER_HOUR: f64 = 60.0;

/// `[needs.decay]`: the paper's rates for the needs it does not name.
fn check_decay(c: &mut Checker, raw: &RawWorld) -> crate::world::Decay {
    use crate::world::{Decay, Need};
    let mut decay = Decay::default();
    let Some(d) = raw.needs.as_ref().and_then(|n| n.decay.as_ref()) else {
        return decay;
    };
    let hours = match &d.per {
        None => 5.0,
        Some(p) => match p.get_ref().trim() {
            "5 hours" | "5h" => 5.0,
            "hour" | "1 hour" | "1h" => 1.0,
            other => {
                c.at(
                    p.span(),
                    "needs.decay.per",
                    format!("{other:?}: expected \"5 hours\" or \"hour\""),
                );
                5.0
            }
        },
    };
    let given = [&d.fullness, &d.social, &d.fun, &d.health, &d.energy];
    for (i, (need, v)) in Need::ALL.iter().zip(given).enumerate() {
        let Some(v) = v else { continue };
        let rate = *v.get_ref() / hours;
        if !rate.is_finite() || !(0.0..=MAX_DECAY_PER_HOUR).contains(&rate) {
            c.at(
                v.span(),
                format!("needs.decay.{}", need.as_str()),
                format!(
                    "{}: a drop per {} must be a number from 0 to {} per hour",
                    v.get_ref(),
                    if hours == 1.0 { "hour" } else { "5 hours" },
                    MAX_DECAY_PER_HOUR
                ),
            );
            continue;
        }
        decay.per_hour[i] = rate;
    }
    decay
}

fn check_locations(c: &mut Checker, raw: &RawWorld) -> LocationTree {
    let mut tree = LocationTree::default();
    let Some(list) = raw.locations.as_ref().filter(|l| !l.get_ref().is_empty()) else {
        let msg = "at least one location is needed: locations = [\"House/Kitchen\", \"Park\"]";
        match &raw.locations {
            Some(l) => c.at(l.span(), "locations", msg),
            None => c.nowhere("locations", msg),
        }
        return tree;
    };
    let mut first_line: HashMap<Vec<String>, usize> = HashMap::new();
    for (i, entry) in list.get_ref().iter().enumerate() {
        let field = format!("locations[{i}]");
        match parse_path(entry.get_ref()) {
            Err(msg) => c.at(entry.span(), field, msg),
            Ok(segs) => {
                if let Some(line) = first_line.get(&segs) {
                    c.at(
                        entry.span(),
                        field,
                        format!("location {:?} is listed twice (first on line {line}); list each path once", entry.get_ref()),
                    );
                } else {
                    first_line.insert(segs.clone(), c.line_of(entry.span()));
                    tree.insert(&segs);
                }
            }
        }
    }
    tree
}

fn check_events(
    c: &mut Checker,
    raw: &RawWorld,
    start: Option<NaiveDate>,
    days: Option<u32>,
) -> Vec<DayEvent> {
    let mut out = Vec::new();
    for (i, ev) in raw.events.iter().enumerate() {
        let text = c.text(&ev.text, &format!("events[{i}].text"), "an event's text");
        let field = format!("events[{i}].date");
        let Some(date) = parse_date(&ev.date.get_ref().0) else {
            c.at(
                ev.date.span(),
                field,
                format!(
                    "invalid date {:?}: write \"YYYY-MM-DD\", e.g. \"2023-01-04\"",
                    ev.date.get_ref().0
                ),
            );
            continue;
        };
        if let (Some(start), Some(days)) = (start, days) {
            let last = start + chrono::Days::new(u64::from(days) - 1);
            if date < start || date > last {
                c.at(
                    ev.date.span(),
                    field,
                    format!("event date {date} is outside the simulated days {start} to {last} (start_date and days)"),
                );
            }
        }
        out.push(DayEvent { date, text });
    }
    out
}

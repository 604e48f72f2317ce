//! Planning: the day plan, its hourly and 15-minute decompositions, and plan changes (`change.rs`)
//! when the agent's emotion or needs call for one, an urgent need met by a remedy (`remedy.rs`);
//! sleep at night by rule (`sleep.rs`); an hour's 15-minute plan asked in parts (`quarter.rs`) and
//! again when it has a fault (`starts.rs`), one fault a step another line's activity by the embedding model
//! (`line_fit.rs`). Every plan is written under a constraint (`hh:mm am/pm:
//! activity` lines, times as required), so it is well-formed by construction; if too few lines come
//! back, a logged fallback fills the gaps.

use std::collections::BTreeSet;

use crate::llm::constrain::PlanTimes;
use crate::world::{clock, AgentSpec, World};

use super::mind::Mind;
use super::state::{line_at, plan_text, PlanLine};
use super::utterance::topic_words;

/// Longest activity in a plan line, in characters. At 60, 15% of the 1.5B's plan lines of a
/// Lin morning reached the limit and some ended cut ("John Lin begins by handing the customer
/// the filled"); at 80, 7% (mostly a second sentence, which is dropped anyway: BENCHMARKS.md).
pub const ACTIVITY_CHARS: usize = 80;
/// Lines of a day plan.
pub const DAY_PLAN_LINES: (usize, usize) = (4, 12);

/// How the fallback of the rule that gives an hourly line about none of the day plan's
/// lines for its hour, or a piece of a sentence, the day plan's line ends its reason ("3
/// hours about ...").
pub const DAY_PLAN_RULE: &str =
    "hours about none of the day plan's lines for them or pieces of a sentence";
/// How the fallback of the rule that keeps 15-minute lines from starting the day again or
/// going to bed in the day (`sleep.rs`) ends its reason.
pub const AWAKE_RULE: &str = "lines start the day again or go to bed in the day";

/// How the fallback of the rule that keeps a rewritten plan (a plan change) asleep at night
/// and awake in the day (`change.rs`) ends its reason.
pub const SLEEP_RULE: &str =
    "lines asleep in the day, awake after going to bed at night or where the day plan sleeps";

/// Whether a fallback's reason is one of the plan rules' ([`DAY_PLAN_RULE`],
/// [`AWAKE_RULE`], [`SLEEP_RULE`]): the model wrote a well-formed line the rules mend, not an
/// unusable one.
pub fn is_plan_rule(reason: &str) -> bool {
    [DAY_PLAN_RULE, AWAKE_RULE, SLEEP_RULE]
        .iter()
        .any(|r| reason.ends_with(r))
}

/// Writes the day plan from the example day, the traits and description and today's events.
pub async fn day_plan(
    mind: &Mind<'_>,
    world: &World,
    spec: &AgentSpec,
    system: &str,
) -> Vec<PlanLine> {
    let mut q = format!(
        "An example of a day of {}:\n{}\n",
        spec.name,
        spec.example_day_plan.join("\n")
    );
    for e in world.events_on(mind.date) {
        q.push_str(&format!("Today: {e}\n"));
    }
    q.push_str(&format!(
        "Write {}'s plan for today, {}, one activity per line as 'hh:mm am: activity', from {} on.",
        spec.name,
        clock::format_date(mind.date),
        clock::format_time(world.day_start)
    ));
    // The example day's times anchor the plan (a small model picks poor times on its own);
    // with too short an example the model picks increasing times itself.
    let example = example_plan(spec, world);
    let times = if example.len() >= DAY_PLAN_LINES.0 {
        PlanTimes::Fixed(example.iter().map(|l| l.minutes).collect())
    } else {
        PlanTimes::Increasing {
            after: world.day_start.checked_sub(world.step_minutes),
            last: world.day_end.saturating_sub(world.step_minutes),
            min_lines: DAY_PLAN_LINES.0,
            max_lines: DAY_PLAN_LINES.1,
        }
    };
    let (mut lines, text) = mind
        .ask_plan("day_plan", system, &q, times, ACTIVITY_CHARS)
        .await;
    if lines.len() >= DAY_PLAN_LINES.0 {
        by_building(world, &mut lines);
        return lines;
    }
    mind.fallback(
        "day_plan",
        format!("{} well-formed lines", lines.len()),
        &text,
        "the example day plan",
    );
    example
}

/// The example day plan as plan lines (validated by the world loader), within the day. A
/// day starting later than the example's first line starts with the line in effect then (a
/// Lin day from 2 pm began John's plan at 5 pm, and the hours before it were taken for the
/// night before: asleep at 2 pm).
pub fn example_plan(spec: &AgentSpec, world: &World) -> Vec<PlanLine> {
    let all: Vec<(u32, &str)> = spec
        .example_day_plan
        .iter()
        .filter_map(|l| clock::parse_plan_line(l))
        .collect();
    let mut out: Vec<PlanLine> = all
        .iter()
        .filter(|(m, _)| *m >= world.day_start && *m < world.day_end)
        .map(|&(m, a)| PlanLine::new(m, a))
        .collect();
    let in_effect = all.iter().rfind(|(m, _)| *m < world.day_start);
    if let Some(&(_, a)) =
        in_effect.filter(|_| out.first().is_none_or(|l| l.minutes > world.day_start))
    {
        out.insert(0, PlanLine::new(world.day_start, a));
    }
    if out.is_empty() {
        out.push(PlanLine::new(world.day_start, "go about the day"));
    }
    out
}

/// Names each place path of the world in `lines` by its building (`LocationTree::by_building`):
/// the model copies the context's "Joey Tribbiani is at Central Perk/Counter." into its plans
/// ("Joey Tribbiani enters Central Perk/Counter.", "Arrive at Oak Hill College/Library": 14
/// activities in the runs of sessions 28–32).
fn by_building(world: &World, lines: &mut [PlanLine]) {
    world
        .locations
        .name_by_building(lines.iter_mut().map(|l| &mut l.activity));
}

/// The hour starts of the day.
pub fn hours(world: &World) -> Vec<u32> {
    (world.day_start..world.day_end).step_by(60).collect()
}

/// Decomposes the day plan into one activity per hour.
pub async fn hourly_plan(
    mind: &Mind<'_>,
    world: &World,
    spec: &AgentSpec,
    system: &str,
    day_plan: &[PlanLine],
) -> Vec<PlanLine> {
    let times = hours(world);
    let outline = day_outline(&times, day_plan);
    let q = format!(
        "{}'s plan for today, hour by hour:\n{}\nRewrite this plan with one concrete activity for each hour.",
        spec.name,
        plan_text(&outline)
    );
    let (lines, text) = mind
        .ask_plan(
            "hourly_plan",
            system,
            &q,
            PlanTimes::Fixed(times.clone()),
            ACTIVITY_CHARS,
        )
        .await;
    let mut lines = fill_fixed("hourly_plan", mind, &times, lines, &text, &outline);
    by_building(world, &mut lines);
    // An hour the day plan sleeps through stays the day plan's ("go to bed", "asleep").
    for (l, o) in lines.iter_mut().zip(&outline) {
        let hour_end = l.minutes + 60 - world.step_minutes;
        if asleep_in_plan(day_plan, l.minutes) && asleep_in_plan(day_plan, hour_end) {
            l.activity = o.activity.clone();
        }
    }
    let strayed = keep_to_the_day_plan(&spec.name, &mut lines, &outline, day_plan);
    if strayed > 0 {
        mind.fallback(
            "hourly_plan",
            format!("{strayed} {DAY_PLAN_RULE}"),
            &text,
            "the day plan's line",
        );
    }
    lines
}

/// Gives each hourly line that shares no topic word ([`topic_words`]) with the day plan's
/// lines for its hour (the one in effect at its start and those starting within it) the
/// `outline`'s activity for that hour; how many. The 1.5B's rewrite runs ahead of the day
/// plan: Monica Geller went to Il Forno at 9 am where her plan had coffee at Central Perk, and
/// Penny called her friends back home from 9 am to noon where hers had her unpack (47 of 774
/// hourly lines in 17 Lin, Friends and Big Bang Theory days of sessions 26-31, by
/// `benches/hourly_vs_day_plan.py`). A line with no topic word ("Go to bed") is kept.
/// A line that begins in lower case and is none of those lines is a piece of a sentence the
/// model ran across the hours, and takes the outline's too: one hourly plan of Eddy Lin
/// read "08:00 am: at the kitchen and then goes to Oak Hill for another music", "09:00 am:
/// theory lecture.", "09:00 pm: piano and revises the composition with the family.", and
/// the 15-minute plans copied them (a Table 2 day of session 40; 11 such lines of 1,350 in
/// 36 saved Lin and Friends days of the 1.5B, none elsewhere, nor in 828 of SmolLM2's).
fn keep_to_the_day_plan(
    name: &str,
    lines: &mut [PlanLine],
    outline: &[PlanLine],
    day_plan: &[PlanLine],
) -> usize {
    let mut strayed = 0;
    for (l, o) in lines.iter_mut().zip(outline) {
        let its_lines: Vec<&str> = day_plan
            .iter()
            .filter(|d| d.minutes > l.minutes && d.minutes < l.minutes + 60)
            .map(|d| d.activity.as_str())
            .chain([o.activity.as_str()])
            .collect();
        let planned: BTreeSet<String> = its_lines
            .iter()
            .flat_map(|a| topic_words(a, &[name]))
            .collect();
        let words = topic_words(&l.activity, &[name]);
        let strays = !words.is_empty() && !planned.is_empty() && words.is_disjoint(&planned);
        let piece = l.activity.trim_start().starts_with(char::is_lowercase)
            && !its_lines.iter().any(|p| same_words(p, &l.activity));
        if strays || piece {
            l.activity = o.activity.clone();
            strayed += 1;
        }
    }
    strayed
}

/// What the sleeping hours before the day plan's first line say in the hourly outline.
pub const ASLEEP: &str = "asleep";

/// The day plan's activity at each of `times`; before its first line the agent is
/// [`ASLEEP`] (not already doing the first line: that made agents wake up twice).
pub fn day_outline(times: &[u32], day_plan: &[PlanLine]) -> Vec<PlanLine> {
    times
        .iter()
        .map(|&t| {
            let act = match line_at(day_plan, t) {
                Some(l) => l.activity.as_str(),
                None if day_plan.is_empty() => "go about the day",
                None => ASLEEP,
            };
            PlanLine::new(t, act)
        })
        .collect()
}

/// Keeps the lines at `times`; any time without a line takes the activity the `outline`
/// has at that time (a logged fallback).
fn fill_fixed(
    purpose: &str,
    mind: &Mind<'_>,
    times: &[u32],
    lines: Vec<PlanLine>,
    text: &str,
    outline: &[PlanLine],
) -> Vec<PlanLine> {
    let mut out = Vec::with_capacity(times.len());
    let mut missing = 0;
    for &t in times {
        match lines.iter().find(|l| l.minutes == t) {
            Some(l) => out.push(l.clone()),
            None => {
                missing += 1;
                let act = line_at(outline, t)
                    .or(outline.first())
                    .map_or("go about the day", |l| l.activity.as_str());
                out.push(PlanLine::new(t, act));
            }
        }
    }
    if missing > 0 {
        mind.fallback(
            purpose,
            format!("{missing} of {} lines missing", times.len()),
            text,
            "the activity of the coarser plan at those times",
        );
    }
    out
}

/// An activity trimmed, without its final full stop.
pub fn unstopped(activity: &str) -> &str {
    activity.trim().trim_end_matches('.')
}

/// Whether two activities are the same words (case and a final full stop aside).
pub fn same_words(a: &str, b: &str) -> bool {
    unstopped(a).to_lowercase() == unstopped(b).to_lowercase()
}

mod change;
pub mod line_fit;
mod quarter;
mod remedy;
mod sleep;
pub mod starts;

pub use change::{
    apply_change, change_question, change_threshold, maybe_change_plan, part_of_day, PlanChange,
    URGENT_NEED,
};
pub use quarter::{
    carry_over, covers_hour, hour_parts, part_line, quarter_plan, quarter_slots, with_lines_within,
    HourPart,
};
pub use remedy::{came_to_talk, remedies, stays_put, talk_wait, talks_here, Remedy, Whereabouts};
pub use sleep::{
    asleep_at, asleep_in_plan, is_sleep, sleep_in_plan, starts_the_day, DAY_FROM_HOUR,
    SLEEP_FROM_HOUR,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_path_in_a_plan_is_named_by_its_building() {
        let world = crate::world::bundled("friends.toml");
        let mut lines = vec![
            PlanLine::new(1260, "Joey Tribbiani enters Central Perk/Counter."),
            PlanLine::new(1275, "sits at a table in Central Perk/Couch and waits"),
            PlanLine::new(1290, "goes to Monica's apartment/Monica's bedroom"),
            PlanLine::new(1305, "reads the menu and/or orders a coffee"),
        ];
        by_building(&world, &mut lines);
        let acts: Vec<&str> = lines.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                "Joey Tribbiani enters Central Perk.",
                "sits at a table in Central Perk and waits",
                "goes to Monica's apartment",
                "reads the menu and/or orders a coffee",
            ]
        );
    }

    #[test]
    fn an_hourly_line_about_none_of_the_day_plans_lines_takes_the_plans() {
        let day: Vec<PlanLine> = [
            (390, "wake up and make the bed"),
            (510, "have coffee on the couch at Central Perk"),
            (600, "go to Il Forno and prepare the sauces for lunch"),
            (690, "cook through the lunch service"),
        ]
        .iter()
        .map(|&(m, a)| PlanLine::new(m, a))
        .collect();
        let times: Vec<u32> = (6..12).map(|h| h * 60).collect();
        let outline = day_outline(&times, &day);
        let mut hourly: Vec<PlanLine> = [
            "Go to bed",
            "Make the bed and make breakfast",
            "Drink coffee at Central Perk",
            "Go to Il Forno and prepare the sauces for lunch",
            "Prepare the sauces",
            "Call friends back home",
        ]
        .iter()
        .zip(&times)
        .map(|(a, &m)| PlanLine::new(m, *a))
        .collect();
        let n = keep_to_the_day_plan("Monica Geller", &mut hourly, &outline, &day);
        let acts: Vec<&str> = hourly.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                "Go to bed",
                // Words of three letters do not count ("bed"), nor "make": replaced, though
                // the same thing.
                "wake up and make the bed",
                "Drink coffee at Central Perk",
                "have coffee on the couch at Central Perk",
                "Prepare the sauces",
                "go to Il Forno and prepare the sauces for lunch",
            ]
        );
        assert_eq!(n, 3);
        // Pieces of a sentence run across the hours take the day plan's line; its own
        // lines in lower case stay.
        let day = [
            PlanLine::new(510, "go to Oak Hill College for a music theory lecture"),
            PlanLine::new(1200, "practise the piano and revise the composition"),
        ];
        let times = [540, 600, 1200, 1260];
        let outline = day_outline(&times, &day);
        let mut hourly: Vec<PlanLine> = [
            "at the kitchen and then goes to Oak Hill for another music",
            "theory lecture.",
            "practise the piano and revise the composition",
            "piano and revises the composition with the family.",
        ]
        .iter()
        .zip(&times)
        .map(|(a, &m)| PlanLine::new(m, *a))
        .collect();
        let n = keep_to_the_day_plan("Eddy Lin", &mut hourly, &outline, &day);
        let acts: Vec<&str> = hourly.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                "go to Oak Hill College for a music theory lecture",
                "go to Oak Hill College for a music theory lecture",
                "practise the piano and revise the composition",
                "practise the piano and revise the composition",
            ]
        );
        assert_eq!(n, 3);
    }

    #[test]
    fn a_day_starting_late_starts_with_the_example_line_in_effect() {
        let text = include_str!("../../../worlds/lin-family.toml");
        let late = text.replacen("days = 2\n", "days = 2\nday_start = \"14:00\"\n", 1);
        let world = World::parse(&late, std::path::Path::new("lin.toml")).unwrap();
        let john = example_plan(&world.agents[0], &world);
        assert_eq!(john[0].minutes, 14 * 60);
        assert_eq!(
            john[0].activity,
            "unpack deliveries in the storage room and restock the shelves"
        );
        assert_eq!(john[1].minutes, 17 * 60);
        let world = World::parse(text, std::path::Path::new("lin.toml")).unwrap();
        let eddy = example_plan(&world.agents[1], &world);
        assert_eq!(
            eddy[0].minutes,
            7 * 60,
            "a plan starting after the day is left as it is"
        );
    }

    #[test]
    fn the_outline_sleeps_before_the_day_plan_starts() {
        let plan = [
            PlanLine::new(7 * 60, "wake up"),
            PlanLine::new(9 * 60, "work"),
        ];
        let outline = day_outline(&[360, 420, 480, 540], &plan);
        let acts: Vec<_> = outline.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(acts, [ASLEEP, "wake up", "wake up", "work"]);
        let empty = day_outline(&[360], &[]);
        assert_eq!(empty[0].activity, "go about the day");
    }
}

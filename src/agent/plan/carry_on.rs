//! An hour that goes on with the hour before's activity: what its 15-minute plan is told, and
//! what counts as starting the activity over.
//!
//! The hourly plan stretches a day-plan line over every hour until the next one ("have dinner
//! with the family" from 7 to 11 pm), and each hour's 15-minute plan was asked as if the
//! activity began then: Rachel Green ate dinner at 8:30, again at 9:30 and a steak dinner at
//! 10:15 pm; Eddy Lin "arrives at Oak Hill College" at 9, 10 and 11 am; Joey Tribbiani "enters
//! Central Perk" at 8 and 9 pm (a Friends day at e27410f and a Lin day at 5f55c87).

use crate::agent::state::{line_at, PlanLine};
use crate::world::clock;

use super::{same_words, sleep::is_sleep, unstopped};

/// When the run of hourly lines with the same words as the one in effect at `minutes`
/// began, if it began before the hour (the hour before had the same activity); `None` for a
/// new activity, or sleep.
pub fn going_on_since(hourly: &[PlanLine], minutes: u32) -> Option<u32> {
    let now = line_at(hourly, minutes)?;
    if is_sleep(&now.activity) {
        return None;
    }
    let mut since = None;
    for l in hourly.iter().rev().filter(|l| l.minutes < now.minutes) {
        if !same_words(&l.activity, &now.activity) {
            break;
        }
        since = Some(l.minutes);
    }
    since
}

/// The steps of `quarter` (the agent's last 15-minute plan) in the hour before `minutes`,
/// as "a; b; c" (empty when there are none).
pub fn last_steps(quarter: &[PlanLine], minutes: u32) -> String {
    quarter
        .iter()
        .filter(|l| l.minutes < minutes && l.minutes + 60 >= minutes)
        .map(|l| unstopped(&l.activity))
        .filter(|a| !a.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

/// What the 15-minute question adds for an hour that goes on with an activity under way
/// since `since`, whose last steps were `last` ([`last_steps`]).
pub fn going_on_sentence(name: &str, since: u32, last: &str) -> String {
    let done = if last.is_empty() {
        String::new()
    } else {
        format!(" The last steps were: {last}.")
    };
    format!(
        " {name} has been at this since {}.{done} Go on from where it stands: no arriving, \
         entering or starting it again.",
        clock::format_time(since)
    )
}

/// Words that, first in an activity (after the agent's name or a pronoun), start something:
/// arriving, entering, starting, beginning, waking.
const START_VERBS: [&str; 11] = [
    "arrive", "arrives", "enter", "enters", "start", "starts", "begin", "begins", "wake", "wakes",
    "restart",
];

/// Verbs of going that start something when "to" or "into" follows ("goes to the lecture
/// room", "walks into Central Perk"); not "goes to bed" (sleep is not counted).
const GOING_VERBS: [&str; 10] = [
    "go", "goes", "head", "heads", "walk", "walks", "get", "gets", "come", "comes",
];

/// Whether `activity` starts something: its first word after the agent's `name` (full or
/// first) or a pronoun is an arrival or a start ("Arrive at Oak Hill College", "Joey
/// Tribbiani enters Central Perk", "starts to eat her dinner", "goes to the lecture room").
/// Sleep is not starting over.
pub fn starts_something(activity: &str, name: &str) -> bool {
    if is_sleep(activity) {
        return false;
    }
    let lower = activity.trim().to_lowercase();
    let full = name.to_lowercase();
    let first = full
        .split_whitespace()
        .next()
        .unwrap_or_default()
        .to_string();
    let mut rest = lower.as_str();
    for p in [full.as_str(), first.as_str(), "he", "she", "they"] {
        if let Some(r) = rest.strip_prefix(p).filter(|r| r.starts_with(' ')) {
            rest = r;
            break;
        }
    }
    let mut words = rest
        .split(|c: char| !c.is_alphabetic())
        .filter(|w| !w.is_empty());
    match (words.next(), words.next()) {
        (Some(w), _) if START_VERBS.contains(&w) => true,
        (Some(w), Some(next)) => GOING_VERBS.contains(&w) && ["to", "into"].contains(&next),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(lines: &[(u32, &str)]) -> Vec<PlanLine> {
        lines.iter().map(|&(t, a)| PlanLine::new(t, a)).collect()
    }

    #[test]
    fn an_hour_goes_on_when_the_hour_before_had_the_same_words() {
        let hourly = plan(&[
            (18 * 60, "Sit alone in the bridal suite"),
            (19 * 60, "Have dinner with the family"),
            (20 * 60, "have dinner with the family."),
            (21 * 60, "Have dinner with the family"),
            (22 * 60, "go to sleep"),
            (23 * 60, "go to sleep"),
        ]);
        assert_eq!(going_on_since(&hourly, 19 * 60), None);
        assert_eq!(going_on_since(&hourly, 20 * 60), Some(19 * 60));
        assert_eq!(going_on_since(&hourly, 21 * 60 + 30), Some(19 * 60));
        assert_eq!(
            going_on_since(&hourly, 23 * 60),
            None,
            "sleep goes on as it is"
        );
        assert_eq!(going_on_since(&[], 9 * 60), None);
    }

    #[test]
    fn the_last_steps_are_the_hour_before() {
        let quarter = plan(&[
            (20 * 60, "sits down at the table"),
            (20 * 60 + 15, "starts to eat her dinner."),
            (20 * 60 + 30, ""),
            (20 * 60 + 45, "finishes eating her dinner"),
            (21 * 60, "enters the dining room"),
        ]);
        assert_eq!(
            last_steps(&quarter, 21 * 60),
            "sits down at the table; starts to eat her dinner; finishes eating her dinner"
        );
        assert_eq!(last_steps(&quarter, 20 * 60), "");
        let s = going_on_sentence("Rachel Green", 19 * 60, "eats");
        assert!(
            s.contains("since 07:00 pm. The last steps were: eats."),
            "{s}"
        );
        assert!(!going_on_sentence("R", 60, "").contains("last steps"));
    }

    #[test]
    fn arrivals_and_starts_start_something() {
        let name = "Eddy Lin";
        for a in [
            "Arrive at Oak Hill College",
            "Eddy Lin arrives at the library.",
            "Eddy starts revising the composition.",
            "He begins practising the piano",
            "Go to the music theory lecture room",
            "Eddy Lin walks into the college library",
            "Wake up and get dressed",
        ] {
            assert!(starts_something(a, name), "{a}");
        }
        for a in [
            "Continue the lecture",
            "Take notes on the lecture.",
            "Eddy Lin goes to bed.",
            "Eddy Lin goes for a walk",
            "Eddy Lin finishes eating his dinner",
            "Startle the cat",
            "",
        ] {
            assert!(!starts_something(a, name), "{a}");
        }
    }
}

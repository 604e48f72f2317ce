//! Whether an activity starts something (arrives, enters, starts, begins): in an hour that
//! goes on with an activity begun before it, that is starting it over.
//!
//! The hourly plan stretches a day-plan line over every hour until the next one ("have dinner
//! with the family" from 7 to 11 pm), and each hour's 15-minute plan is asked for that hour:
//! Rachel Green ate dinner at 8:30, again at 9:30 and a steak dinner at 10:15 pm; Eddy Lin
//! "arrives at Oak Hill College" at 9, 10 and 11 am (a Friends day at e27410f, a Lin day at
//! 5f55c87). `check --quality` counts such steps ([`starts_something`]). Three ways of asking
//! were measured and not kept (BENCHMARKS.md): telling the 1.5B that the hour goes on with an
//! activity under way, with or without its last steps, and asking for the whole run of hours
//! at once; it copied the last steps or the hour's line, or repeated an hour-long cycle.

use super::sleep::is_sleep;

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

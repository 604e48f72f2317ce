//! The rules that keep sleep at night: what counts as sleep, when the waking day and the
//! night are, the hours a day plan sleeps through, and rewritten plans that neither wake up
//! after going to bed nor sleep in the day.

use super::super::state::{line_at, PlanLine};
use super::remedy::{REST, SHORT_REST};

/// From this hour a tired agent is asked to "rest or sleep"; before it, to rest for a while.
/// Told "rest or sleep" at 7:15 pm, Eddy Lin went to bed and the rewritten lines had him
/// "wake up and go to bed" every 15 minutes (a Lin day at 08dd1ec: no sleep in the day 0.969).
pub const SLEEP_FROM_HOUR: u32 = 21;

/// From this hour until [`SLEEP_FROM_HOUR`] a plan change does not send an agent to sleep.
pub const DAY_FROM_HOUR: u32 = 8;

/// Whether an activity is sleeping or going to bed (not a nap).
pub fn is_sleep(activity: &str) -> bool {
    let a = activity.to_lowercase();
    !a.contains("nap")
        && [
            "sleep",
            "go to bed",
            "goes to bed",
            "asleep",
            "bedtime",
            "turn in for the night",
            "turns in for the night",
        ]
        .iter()
        .any(|w| a.contains(w))
}

/// From this hour an agent who is awake does not start the day again.
pub const NOON_HOUR: u32 = 12;

/// Whether an activity is waking up or getting out of bed (not from a nap).
fn wakes_up(activity: &str) -> bool {
    let a = activity.to_lowercase();
    !a.contains("nap")
        && [
            "wake up",
            "wakes up",
            "waking up",
            "get out of bed",
            "gets out of bed",
        ]
        .iter()
        .any(|w| a.contains(w))
}

/// Whether an activity starts the day: waking up, getting out of bed, breakfast, "starts
/// the day" (not waking from a nap).
pub fn starts_the_day(activity: &str) -> bool {
    let a = activity.to_lowercase();
    wakes_up(activity)
        || (!a.contains("nap")
            && [
                "breakfast",
                "start the day",
                "starts the day",
                "starting the day",
            ]
            .iter()
            .any(|w| a.contains(w)))
}

/// Whether an activity goes to bed or gets ready for it ([`is_sleep`], "getting ready for
/// bed", "prepares for bed").
fn goes_to_bed(activity: &str) -> bool {
    is_sleep(activity) || activity.to_lowercase().contains("for bed")
}

/// The 15-minute `lines` of an agent who is awake, none starting the day again or going to
/// bed in the day: from [`NOON_HOUR`] on none that starts the day ([`starts_the_day`]),
/// before it none that wakes up when the agent has been `up_for_an_hour`, and in the waking
/// day ([`is_day`]) none that goes to bed ([`goes_to_bed`]). Such a line becomes `instead`
/// (the hour's activity), unless that would do the same. How many changed. Asked to break
/// "see whether Monica has any food" into steps at 5 pm, the 1.5B began with "Joey Tribbiani
/// wakes up"; for "watch television in his apartment" at 6 pm it wrote "starts the day by
/// getting ready for bed" and "takes a quick shower, then goes to bed"; Monica Geller, up
/// since 6:30, had "Wake up" at 10 am (a Friends day of session 31); Eddy Lin, up at 7, had
/// "Wake up and get dressed" again at 8 for the hour of "eat breakfast in the kitchen" (a Lin
/// day of session 31).
pub fn keep_awake(lines: &mut [PlanLine], instead: &str, up_for_an_hour: bool) -> usize {
    let afternoon = |l: &PlanLine| l.minutes / 60 >= NOON_HOUR;
    let mut changed = 0;
    for l in lines.iter_mut() {
        let (restarts, instead_restarts) = if afternoon(l) {
            (starts_the_day(&l.activity), starts_the_day(instead))
        } else {
            (up_for_an_hour && wakes_up(&l.activity), wakes_up(instead))
        };
        let to_bed = is_day(l.minutes) && goes_to_bed(&l.activity) && !goes_to_bed(instead);
        if (restarts && !instead_restarts) || to_bed {
            l.activity = instead.to_string();
            changed += 1;
        }
    }
    changed
}

/// Whether `minutes` (of the day) is in the waking day, from [`DAY_FROM_HOUR`] to
/// [`SLEEP_FROM_HOUR`].
pub(super) fn is_day(minutes: u32) -> bool {
    (DAY_FROM_HOUR..SLEEP_FROM_HOUR).contains(&(minutes / 60))
}

/// Whether `minutes` (of the day) is from [`SLEEP_FROM_HOUR`] on.
pub(super) fn is_bedtime(minutes: u32) -> bool {
    minutes / 60 >= SLEEP_FROM_HOUR
}

/// Whether the day plan has the agent asleep at `minutes`: before its first line (the night
/// before) or from a line that goes to bed at night ([`SLEEP_FROM_HOUR`] on). An empty plan
/// has no sleep.
pub fn asleep_in_plan(day_plan: &[PlanLine], minutes: u32) -> bool {
    !day_plan.is_empty()
        && line_at(day_plan, minutes).is_none_or(|l| is_bedtime(l.minutes) && is_sleep(&l.activity))
}

/// Whether the agent is asleep at each of `times` (increasing): where the day plan sleeps
/// ([`asleep_in_plan`]), and once asleep at night ([`SLEEP_FROM_HOUR`] on; `was_asleep` before
/// the first time) for the rest of the night, whatever the plan says later (Eddy Lin, sent to
/// bed at 9:30 pm by a plan change, woke at 10 pm for his plan's piano practice).
pub fn asleep_at(day_plan: &[PlanLine], times: &[u32], mut was_asleep: bool) -> Vec<bool> {
    times
        .iter()
        .map(|&t| {
            was_asleep = asleep_in_plan(day_plan, t) || (was_asleep && is_bedtime(t));
            was_asleep
        })
        .collect()
}

/// Each of `lines` the agent is asleep at ([`asleep_at`]) says so: "NAME goes to bed."
/// where the agent was awake before it (`was_asleep` for the first line), "NAME is asleep."
/// after. A model asked to break "go to bed" into 15-minute steps wound John Lin down for
/// an hour without sleeping, and a plan change sent him to a gym at 11 pm (a Lin day of
/// session 28); before his plan's 7 am Eddy Lin lay down, fell asleep and woke up.
pub fn sleep_in_plan(
    name: &str,
    day_plan: &[PlanLine],
    lines: &mut [PlanLine],
    mut was_asleep: bool,
) {
    let times: Vec<u32> = lines.iter().map(|l| l.minutes).collect();
    for (l, asleep) in lines
        .iter_mut()
        .zip(asleep_at(day_plan, &times, was_asleep))
    {
        if asleep {
            l.activity = if was_asleep {
                format!("{name} is asleep.")
            } else {
                format!("{name} goes to bed.")
            };
        }
        was_asleep = asleep;
    }
}

/// The lines of a plan change outside the waking day ([`is_day`]) at times the day plan sleeps
/// through ([`asleep_in_plan`]) that are not sleep become "NAME goes to bed." (after a waking line)
/// or "NAME is asleep.": the rewrite of a lonely Eddy Lin's plan at 11:15 pm put garbage over his
/// plan's 11:30 pm "go to sleep" (SmolLM2-135M). In the day a change stands (a SmolLM2 plan
/// starting at 11 am would otherwise have sent a resting John back to bed at 8:45 am). How many
/// were changed.
pub(super) fn keep_plans_sleep(name: &str, day_plan: &[PlanLine], lines: &mut [PlanLine]) -> usize {
    let mut changed = 0;
    let mut before_asleep = false;
    for l in lines.iter_mut() {
        if asleep_in_plan(day_plan, l.minutes) && !is_day(l.minutes) && !is_sleep(&l.activity) {
            l.activity = if before_asleep {
                format!("{name} is asleep.")
            } else {
                format!("{name} goes to bed.")
            };
            changed += 1;
        }
        before_asleep = is_sleep(&l.activity);
    }
    changed
}

/// The rule of a rewritten plan (a plan change): every line after going to bed at night
/// asleep; and the same for the day: a line that goes to sleep from
/// [`DAY_FROM_HOUR`] to [`SLEEP_FROM_HOUR`] rests instead (Monica Geller "goes to bed and
/// sleeps for the night" at 5:30 pm in a Friends day of session 21). The lines, and how
/// many were changed.
pub(super) fn asleep_after_bed(name: &str, mut lines: Vec<PlanLine>) -> (Vec<PlanLine>, usize) {
    let mut in_bed = false;
    let mut changed = 0;
    for l in &mut lines {
        if in_bed && !is_sleep(&l.activity) {
            l.activity = format!("{name} is asleep.");
            changed += 1;
        } else if is_day(l.minutes) && is_sleep(&l.activity) {
            l.activity = format!("{name} {SHORT_REST}.");
            changed += 1;
        }
        in_bed |= is_bedtime(l.minutes) && is_sleep(&l.activity);
    }
    (lines, changed)
}

/// The rest to use instead of a plan change `suggestion` that sends `name` to sleep in the
/// day (at `now`, minutes of the day, from [`DAY_FROM_HOUR`] to [`SLEEP_FROM_HOUR`]).
pub(super) fn rest_instead_of_sleep(name: &str, suggestion: &str, now: u32) -> Option<String> {
    (is_day(now) && is_sleep(suggestion)).then(|| format!("{name} {REST}."))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_to_sleep_in_the_day_becomes_a_rest() {
        let bed = "Eddy Lin should change his plan to go to bed before 7 pm.";
        assert_eq!(
            rest_instead_of_sleep("Eddy Lin", bed, 18 * 60 + 15).as_deref(),
            Some("Eddy Lin sits down and rests for a while.")
        );
        assert_eq!(rest_instead_of_sleep("Eddy Lin", bed, 21 * 60 + 30), None);
        assert_eq!(rest_instead_of_sleep("Eddy Lin", bed, 6 * 60 + 30), None);
        let nap = "Eddy Lin should take a short nap on the sofa.";
        assert_eq!(rest_instead_of_sleep("Eddy Lin", nap, 15 * 60), None);
        assert!(is_sleep("Go to bed.") && is_sleep("sleep in his bedroom"));
        assert!(is_sleep("Monica turns in for the night.") && !is_sleep("turn in the essay"));
        assert!(!is_sleep("take a nap on the sofa") && !is_sleep("make the bed"));
    }

    #[test]
    fn a_plan_change_keeps_the_day_plans_sleep() {
        let plan = [
            PlanLine::new(420, "wake up"),
            PlanLine::new(1410, "go to sleep"),
        ];
        let mut lines: Vec<PlanLine> = [(1395, "practise"), (1410, "реалис"), (1425, "read")]
            .iter()
            .map(|&(m, a)| PlanLine::new(m, a))
            .collect();
        assert_eq!(keep_plans_sleep("Eddy Lin", &plan, &mut lines), 2);
        let acts: Vec<_> = lines.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            ["practise", "Eddy Lin goes to bed.", "Eddy Lin is asleep."]
        );
        // Already asleep by the change: kept as it is.
        let mut bed = vec![
            PlanLine::new(1395, "Eddy Lin goes to bed."),
            PlanLine::new(1410, "Eddy Lin is asleep."),
        ];
        assert_eq!(keep_plans_sleep("Eddy Lin", &plan, &mut bed), 0);
    }

    #[test]
    fn after_going_to_bed_at_night_the_rewrite_stays_asleep() {
        let lines = |l: &[(u32, &str)]| -> Vec<PlanLine> {
            l.iter().map(|&(m, a)| PlanLine::new(m, a)).collect()
        };
        let night = lines(&[
            (1260, "John Lin goes to bed immediately."),
            (1275, "John Lin wakes up and goes to the living room."),
            (1290, "John Lin sleeps soundly."),
            (1305, "John Lin walks to the market."),
        ]);
        let (out, woke) = asleep_after_bed("John Lin", night);
        let acts: Vec<_> = out.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                "John Lin goes to bed immediately.",
                "John Lin is asleep.",
                "John Lin sleeps soundly.",
                "John Lin is asleep."
            ]
        );
        assert_eq!(woke, 2);
        // In the day sleep becomes a rest; a nap stays a nap.
        let day = lines(&[(1050, "goes to bed and sleeps"), (1065, "take a nap")]);
        let (out, changed) = asleep_after_bed("Monica Geller", day);
        assert_eq!(changed, 1);
        assert_eq!(out[0].activity, "Monica Geller rests for a while.");
        assert_eq!(out[1].activity, "take a nap");
        // In the morning neither rule applies.
        let morning = lines(&[(405, "asleep"), (420, "wake up and stretch")]);
        assert_eq!(asleep_after_bed("John Lin", morning.clone()), (morning, 0));
    }

    #[test]
    fn the_day_plan_sleeps_before_its_first_line_and_after_bed_at_night() {
        let plan: Vec<PlanLine> = [
            (420, "wake up and get dressed"),
            (1020, "take a nap"),
            (1080, "go to bed early"),
            (1200, "practise the piano"),
            (1320, "go to bed"),
        ]
        .iter()
        .map(|&(m, a)| PlanLine::new(m, a))
        .collect();
        let asleep: Vec<bool> = [360, 405, 420, 1030, 1090, 1200, 1319, 1320, 1425]
            .map(|m| asleep_in_plan(&plan, m))
            .to_vec();
        // Asleep before 7 am and from 10 pm; not for a nap nor for "bed" before 9 pm.
        assert_eq!(
            asleep,
            [true, true, false, false, false, false, false, true, true]
        );
        assert!(!asleep_in_plan(&[], 360), "no plan, no sleep");
        let mut quarter: Vec<PlanLine> = [1290, 1305, 1320, 1335]
            .map(|m| PlanLine::new(m, "play a few bars"))
            .to_vec();
        sleep_in_plan("Eddy Lin", &plan, &mut quarter, false);
        let acts: Vec<_> = quarter.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                "play a few bars",
                "play a few bars",
                "Eddy Lin goes to bed.",
                "Eddy Lin is asleep."
            ]
        );
        // Gone to bed at 9:30 pm by a change, Eddy stays asleep through his plan's practice.
        assert_eq!(asleep_at(&plan, &[1290, 1305], true), [true, true]);
        assert_eq!(asleep_at(&plan, &[1290, 1305], false), [false, false]);
        // Asleep before the day's plan, he still wakes at its first line.
        assert_eq!(asleep_at(&plan, &[405, 420], true), [true, false]);
        let mut morning: Vec<PlanLine> = [360, 375].map(|m| PlanLine::new(m, "")).to_vec();
        sleep_in_plan("Eddy Lin", &plan, &mut morning, true);
        assert!(morning.iter().all(|l| l.activity == "Eddy Lin is asleep."));
    }

    #[test]
    fn an_awake_agent_does_not_start_the_day_again() {
        let lines = |acts: &[(u32, &str)]| -> Vec<PlanLine> {
            acts.iter().map(|&(m, a)| PlanLine::new(m, a)).collect()
        };
        let mut five = lines(&[
            (1020, "Joey Tribbiani wakes up"),
            (1035, "Joey Tribbiani checks the fridge."),
            (1050, "Joey eats breakfast cereal"),
            (1065, "Joey wakes up from his nap"),
        ]);
        let food = "See whether Monica has any food";
        assert_eq!(keep_awake(&mut five, food, true), 2);
        let acts: Vec<&str> = five.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                food,
                "Joey Tribbiani checks the fridge.",
                food,
                "Joey wakes up from his nap"
            ]
        );
        // In the morning a wake-up goes only when the agent has been up for an hour, and
        // breakfast stays; when the hour itself would start the day again, the line stays.
        let morning = lines(&[(600, "Wake up"), (615, "Make breakfast")]);
        let mut ten = morning.clone();
        assert_eq!(keep_awake(&mut ten, "Go to Il Forno", true), 1);
        assert_eq!(ten[0].activity, "Go to Il Forno");
        assert_eq!(ten[1].activity, "Make breakfast");
        let mut just_up = morning.clone();
        assert_eq!(keep_awake(&mut just_up, "Go to Il Forno", false), 0);
        let mut late = lines(&[(780, "Wake up")]);
        assert_eq!(keep_awake(&mut late, "Have a late breakfast", true), 0);
        let mut eight = lines(&[(480, "Wake up and get dressed")]);
        let breakfast = "Eat breakfast in the kitchen";
        assert_eq!(keep_awake(&mut eight, breakfast, true), 1);
        assert_eq!(eight[0].activity, breakfast);
        let mut woken = lines(&[(480, "Wake up")]);
        assert_eq!(keep_awake(&mut woken, "Wake up and get dressed", true), 0);
        // In the waking day no line goes to bed, unless the hour does.
        let tv = "Watch television in his apartment";
        let mut six = lines(&[
            (
                1080,
                "Joey Tribbiani starts the day by getting ready for bed.",
            ),
            (
                1095,
                "Joey Tribbiani takes a quick shower, then goes to bed.",
            ),
            (1110, "Joey Tribbiani makes the bed."),
            (1125, "Joey Tribbiani takes a nap on the couch."),
        ]);
        assert_eq!(keep_awake(&mut six, tv, true), 2);
        let acts: Vec<&str> = six.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                tv,
                tv,
                "Joey Tribbiani makes the bed.",
                "Joey Tribbiani takes a nap on the couch."
            ]
        );
        let mut bedtime = lines(&[(1260, "Joey Tribbiani goes to bed.")]);
        assert_eq!(keep_awake(&mut bedtime, tv, true), 0);
        let mut early = lines(&[(1230, "Get ready for bed")]);
        assert_eq!(keep_awake(&mut early, "Go to bed early", true), 0);
    }
}

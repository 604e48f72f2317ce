//! An hour's 15-minute plan: the hour in parts by the day-plan lines that start inside it,
//! each part asked for its steps (all parts in one batch), a part with a fault asked again
//! ([`starts::asked_again`]), the steps a plan change carried into the hour kept.

use crate::llm::constrain::PlanTimes;
use crate::world::{clock, World};

use super::sleep::{self, asleep_at, asleep_in_plan, is_sleep, sleep_in_plan};
use super::{by_building, fill_fixed, same_words, starts, unstopped, ACTIVITY_CHARS, AWAKE_RULE};
use crate::agent::mind::Mind;
use crate::agent::state::{line_at, plan_text, AgentState, PlanLine};

/// The hour's activity with the day plan's lines that start inside the hour (after `from`,
/// before `end`): "make breakfast for the family in the kitchen, then at 07:30 am: walk to
/// The Willows Market and Pharmacy and open the shop". The hourly plan has one line an
/// hour, so without them John Lin's 7 am hour never left the kitchen, and at 8 am, told to
/// serve customers at the counter while at home, the 1.5B had him take four breaks to go to
/// the bathroom (a Lin day of session 29).
pub fn with_lines_within(hour: &str, day_plan: &[PlanLine], from: u32, end: u32) -> String {
    let mut text = unstopped(hour).to_string();
    for l in lines_within(hour, day_plan, from, end) {
        text.push_str(&format!(
            ", then at {}: {}",
            clock::format_time(l.minutes),
            unstopped(&l.activity)
        ));
    }
    text
}

/// The day plan's lines that start after `from` and before `end`, other than the `hour`'s own
/// activity again.
fn lines_within<'a>(
    hour: &'a str,
    day_plan: &'a [PlanLine],
    from: u32,
    end: u32,
) -> impl Iterator<Item = &'a PlanLine> {
    day_plan
        .iter()
        .filter(move |l| l.minutes > from && l.minutes < end && !same_words(&l.activity, hour))
}

/// The activity a step at `minutes` is part of, in the hour from `hour_start` whose line is
/// `hour_line`: the last day-plan line begun inside the hour by then (after its start, other
/// than the hour's line again), else the hour's line. One rule for the parts an hour is asked
/// in ([`hour_parts`]) and the line a step is placed with
/// ([`crate::agent::place::placed_activity`]).
pub fn part_line<'a>(
    hour_line: &'a str,
    day_plan: &'a [PlanLine],
    hour_start: u32,
    minutes: u32,
) -> &'a str {
    day_plan
        .iter()
        .rev()
        .find(|l| {
            l.minutes > hour_start && l.minutes <= minutes && !same_words(&l.activity, hour_line)
        })
        .map_or(hour_line, |l| l.activity.as_str())
}

/// A part of an hour's 15-minute plan: its slots, from the first to `end`, and the activity
/// they are all part of.
#[derive(Clone, Debug, PartialEq)]
pub struct HourPart {
    pub from: u32,
    pub end: u32,
    /// The day-plan (or hourly) line in effect.
    pub line: String,
    /// The line with the day plan's lines that start in the part but at no slot of it.
    pub activity: String,
    pub slots: Vec<u32>,
}

/// An hour's `slots` in parts: from the first, the hour's activity (`hour_line`), or the
/// day-plan line begun inside the hour before it (a plan asked for mid-hour); from the first
/// slot at or after each day-plan line that starts inside the hour, that line's
/// ([`part_line`]).
/// A line between the last slot and the hour's end, or two lines before one slot, are named
/// in the part they fall in ([`with_lines_within`]). Asked as one part with "then at 12:30
/// pm: grab lunch at Hobbs Cafe", the 1.5B kept Eddy Lin in the library through his lunch
/// (a Lin day of session 38).
pub fn hour_parts(
    hour_line: &str,
    day_plan: &[PlanLine],
    slots: &[u32],
    step_minutes: u32,
) -> Vec<HourPart> {
    let (Some(&from), Some(&last)) = (slots.first(), slots.last()) else {
        return Vec::new();
    };
    let end = last + step_minutes;
    let hour_start = from / 60 * 60;
    let mut parts: Vec<(u32, &str, Vec<u32>)> = Vec::new();
    for &t in slots {
        let act = part_line(hour_line, day_plan, hour_start, t);
        match parts.last_mut() {
            Some((_, a, s)) if same_words(a, act) => s.push(t),
            _ => parts.push((t, act, vec![t])),
        }
    }
    let starts: Vec<u32> = parts.iter().skip(1).map(|p| p.0).chain([end]).collect();
    parts
        .into_iter()
        .zip(starts)
        .map(|((from, act, slots), end)| HourPart {
            from,
            end,
            line: act.to_string(),
            activity: with_lines_within(act, day_plan, from, end),
            slots,
        })
        .collect()
}

/// The 15-minute slots from `from` to the end of its hour (and before the day ends).
pub fn quarter_slots(world: &World, from: u32) -> Vec<u32> {
    let hour_end = (from / 60 + 1) * 60;
    (from..hour_end.min(world.day_end))
        .step_by(world.step_minutes as usize)
        .collect()
}

/// Puts the steps `carried` over from a plan change in the hour before (a rest that goes on)
/// in place of the `lines` at the same times.
pub fn carry_over(lines: &mut [PlanLine], carried: &[PlanLine]) {
    for c in carried {
        if let Some(l) = lines.iter_mut().find(|l| l.minutes == c.minutes) {
            *l = c.clone();
        }
    }
}

/// Whether `plan` has a line at each 15-minute slot from `minutes` to the end of its hour.
pub fn covers_hour(world: &World, plan: &[PlanLine], minutes: u32) -> bool {
    quarter_slots(world, minutes)
        .iter()
        .all(|&t| plan.iter().any(|l| l.minutes == t))
}

/// Decomposes the hour starting at (or containing) `minutes` into 15-minute activities,
/// beginning with the steps a plan change in the hour before carried into it (a rest that
/// goes on: [`carry_over`]).
pub async fn quarter_plan(
    mind: &Mind<'_>,
    world: &World,
    state: &AgentState,
    system: &str,
) -> Vec<PlanLine> {
    let carried: Vec<PlanLine> = state
        .quarter_plan
        .iter()
        .filter(|l| l.minutes >= mind.minutes)
        .cloned()
        .collect();
    let mut lines = new_quarter_plan(mind, world, state, system).await;
    carry_over(&mut lines, &carried);
    lines
}

/// The hour's 15-minute activities as the model breaks the hour down (none carried).
async fn new_quarter_plan(
    mind: &Mind<'_>,
    world: &World,
    state: &AgentState,
    system: &str,
) -> Vec<PlanLine> {
    let slots = quarter_slots(world, mind.minutes);
    // Asleep by the day plan, or for the night, the agent is not asked what it does.
    let was_asleep = mind.minutes == world.day_start || is_sleep(&state.activity);
    if asleep_at(&state.day_plan, &slots, was_asleep)
        .iter()
        .all(|&a| a)
    {
        let mut lines: Vec<PlanLine> = slots.iter().map(|&t| PlanLine::new(t, "")).collect();
        sleep_in_plan(&state.name, &state.day_plan, &mut lines, was_asleep);
        return lines;
    }
    let hour_line = line_at(&state.hourly_plan, mind.minutes)
        .map_or("go about the day".to_string(), |l| l.activity.clone());
    // The hours around this one are enough context (and keep the prompt short).
    let around: Vec<PlanLine> = state
        .hourly_plan
        .iter()
        .filter(|l| l.minutes + 60 >= mind.minutes && l.minutes <= mind.minutes + 120)
        .cloned()
        .collect();
    let parts = hour_parts(&hour_line, &state.day_plan, &slots, world.step_minutes);
    // Each part is named with its end and what comes before as done: without that, models
    // restart the day ("wake up and get dressed") at every hour (seen on the 1.5B).
    let questions: Vec<String> = parts
        .iter()
        .map(|p| {
            format!(
                "{name}'s plan around this time:\n{}\nIt is {now}; what comes before is already \
                 done. From {now} to {end}, {name} will: {what}. Break only this part of the day \
                 into {n} {steps} of 15 minutes, all part of \"{what}\": for each, the concrete \
                 thing {name} does then, as a short action (no durations, no explanations), each \
                 step different from the one before.",
                plan_text(&around),
                name = state.name,
                now = clock::format_time(p.from),
                end = clock::format_time(p.end),
                what = p.activity,
                n = p.slots.len(),
                steps = if p.slots.len() == 1 { "step" } else { "steps" },
            )
        })
        .collect();
    let asked = questions
        .iter()
        .zip(&parts)
        .map(|(q, p)| (q.clone(), PlanTimes::Fixed(p.slots.clone())))
        .collect();
    let answers = mind
        .ask_plans("15m_plan", system, asked, ACTIVITY_CHARS)
        .await;
    let mut lines = Vec::with_capacity(slots.len());
    let mut texts = Vec::with_capacity(parts.len());
    for ((p, q), first) in parts.iter().zip(&questions).zip(answers) {
        let (part, text) = starts::asked_again(mind, state, system, q, &p.slots, first).await;
        let outline = [PlanLine::new(p.from, p.line.clone())];
        lines.extend(fill_fixed(
            "15m_plan", mind, &p.slots, part, &text, &outline,
        ));
        texts.push(text);
    }
    let text = texts.join("\n");
    by_building(world, &mut lines);
    sleep_in_plan(&state.name, &state.day_plan, &mut lines, was_asleep);
    let up_for_an_hour = !asleep_in_plan(&state.day_plan, mind.minutes.saturating_sub(60));
    let restarts = keep_parts_awake(
        &mut lines,
        &parts,
        &state.day_plan,
        was_asleep,
        up_for_an_hour,
    );
    if restarts > 0 {
        mind.fallback(
            "15m_plan",
            format!("{restarts} {AWAKE_RULE}"),
            &text,
            "the hour's activity",
        );
    }
    lines
}

/// [`sleep::keep_awake`] on each part of an hour's `lines` with the part's line: in an hour
/// the agent was awake at the start of (`was_asleep` false; up for an hour or not), and in a
/// part after an awake one, which is up. How many lines changed. Eddy Lin, told to "eat
/// breakfast in the kitchen" at 7:30 after "wake up and get dressed" at 7, had "Wake up" at
/// 7:30 (a Lin day of session 40).
fn keep_parts_awake(
    lines: &mut [PlanLine],
    parts: &[HourPart],
    day_plan: &[PlanLine],
    was_asleep: bool,
    up_for_an_hour: bool,
) -> usize {
    let mut restarts = 0;
    let mut at = 0;
    for (i, p) in parts.iter().enumerate() {
        let end = (at + p.slots.len()).min(lines.len());
        let part = &mut lines[at..end];
        at = end;
        let after_awake =
            i > 0 && !is_sleep(&parts[i - 1].line) && !asleep_in_plan(day_plan, parts[i - 1].from);
        if !was_asleep || after_awake {
            restarts += sleep::keep_awake(part, &p.line, up_for_an_hour || after_awake);
        }
    }
    restarts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_hour_names_the_day_plans_lines_that_start_inside_it() {
        let plan = [
            PlanLine::new(390, "make breakfast"),
            PlanLine::new(450, "walk to the shop"),
            PlanLine::new(480, "serve customers"),
        ];
        assert_eq!(
            with_lines_within("Make breakfast.", &plan, 420, 480),
            "Make breakfast, then at 07:30 am: walk to the shop"
        );
        assert_eq!(
            with_lines_within("serve customers", &plan, 480, 540),
            "serve customers"
        );
        // A line at the hour's own start or end is not inside it.
        assert_eq!(with_lines_within("walk", &plan, 450, 480), "walk");
    }

    #[test]
    fn an_hour_is_asked_in_parts_at_the_day_plans_lines_inside_it() {
        let plan = [
            PlanLine::new(690, "study harmony in the college library"),
            PlanLine::new(750, "grab lunch at Hobbs Cafe"),
            PlanLine::new(830, "work on his composition"),
        ];
        let slots = [720, 735, 750, 765];
        let parts = hour_parts("study harmony in the college library", &plan, &slots, 15);
        let got: Vec<_> = parts
            .iter()
            .map(|p| (p.from, p.end, p.activity.as_str(), p.slots.clone()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    720,
                    750,
                    "study harmony in the college library",
                    vec![720, 735]
                ),
                (750, 780, "grab lunch at Hobbs Cafe", vec![750, 765]),
            ]
        );
        // A line between slots starts its part at the next slot and is named in the part
        // before; a line after the last slot is named in the last part.
        let plan = [
            PlanLine::new(780, "grab lunch"),
            PlanLine::new(800, "walk home"),
            PlanLine::new(830, "work on his composition"),
        ];
        let parts = hour_parts("grab lunch", &plan, &[780, 795, 810, 825], 15);
        let got: Vec<_> = parts
            .iter()
            .map(|p| (p.from, p.line.as_str(), p.activity.as_str(), p.slots.len()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    780,
                    "grab lunch",
                    "grab lunch, then at 01:20 pm: walk home",
                    2
                ),
                (
                    810,
                    "walk home",
                    "walk home, then at 01:50 pm: work on his composition",
                    2
                ),
            ]
        );
        // The hour's own line again inside it makes no part; no slots, no parts.
        let plan = [
            PlanLine::new(480, "serve customers"),
            PlanLine::new(510, "Serve customers."),
        ];
        assert_eq!(
            hour_parts("serve customers", &plan, &[480, 495, 510, 525], 15).len(),
            1
        );
        assert!(hour_parts("serve customers", &plan, &[], 15).is_empty());
        // Asked mid-hour, the first part is the line begun inside the hour before it.
        let plan = [
            PlanLine::new(690, "study harmony in the college library"),
            PlanLine::new(750, "grab lunch at Hobbs Cafe"),
        ];
        let parts = hour_parts(&plan[0].activity, &plan, &[765], 15);
        assert_eq!(parts[0].line, "grab lunch at Hobbs Cafe");
        assert_eq!(
            part_line(&plan[0].activity, &plan, 720, 735),
            plan[0].activity
        );
    }

    #[test]
    fn a_part_after_an_awake_one_does_not_wake_up_again() {
        let plan = [
            PlanLine::new(420, "wake up and get dressed"),
            PlanLine::new(450, "eat breakfast in the kitchen"),
        ];
        let parts = hour_parts("wake up and get dressed", &plan, &[420, 435, 450, 465], 15);
        let mut lines = vec![
            PlanLine::new(420, "Eddy Lin wakes up"),
            PlanLine::new(435, "Eddy Lin puts on his shoes"),
            PlanLine::new(450, "Wake up"),
            PlanLine::new(465, "Get dressed"),
        ];
        // Asleep before the hour: its first part may wake up, the part after may not.
        assert_eq!(keep_parts_awake(&mut lines, &parts, &plan, true, false), 1);
        let acts: Vec<&str> = lines.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            acts,
            [
                "Eddy Lin wakes up",
                "Eddy Lin puts on his shoes",
                "eat breakfast in the kitchen",
                "Get dressed"
            ]
        );
        // A part after one the plan sleeps through is not up.
        let night = [PlanLine::new(450, "wake up and get dressed")];
        let parts = hour_parts("asleep", &night, &[420, 435, 450, 465], 15);
        let mut lines = vec![
            PlanLine::new(420, "sleeping"),
            PlanLine::new(435, "sleeping"),
            PlanLine::new(450, "Wake up"),
            PlanLine::new(465, "Get dressed"),
        ];
        assert_eq!(keep_parts_awake(&mut lines, &parts, &night, true, false), 0);
    }
}

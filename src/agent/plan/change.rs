//! Plan changes: whether the agent's emotion or needs call for one, and the new lines for
//! the rest of the hour and the next hour (kept asleep at night by `sleep.rs`).

use crate::llm::constrain::PlanTimes;
use crate::world::{clock, AgentSpec, Need, Needs, World};

use super::super::mind::Mind;
use super::super::state::{join_and, line_at, plan_text, AgentState, PlanLine};
use super::remedy::{pick_remedy, remedies, remedy_lines, Remedy, Whereabouts};
use super::sleep::{
    asleep_after_bed, is_bedtime, is_day, is_sleep, keep_plans_sleep, rest_instead_of_sleep,
};
use super::{by_building, fill_fixed, quarter_slots, ACTIVITY_CHARS, SLEEP_RULE};

/// A need at or below this level is urgent: a plan change is asked to meet it.
pub const URGENT_NEED: u8 = 1;

/// Whether `need` is urgent at these levels (at or below [`URGENT_NEED`]).
fn is_urgent(needs: &Needs, need: Need) -> bool {
    needs.get(need) <= URGENT_NEED
}

/// What a plan change did.
pub struct PlanChange {
    pub suggestion: String,
    /// The rewritten lines (the rest of this hour, then the next hour's line).
    pub lines: Vec<PlanLine>,
    /// The first steps of the next hour's 15-minute plan, when a remedy goes on into it.
    pub carry: Vec<PlanLine>,
    /// A remedy: the hour's own steps after it are kept, still part of the hour's line.
    pub remedy: bool,
}

/// Asks whether the agent changes the plan because of how they feel; if so, how. For an
/// urgent need the agent takes one of its remedies for its steps, and the plan goes on;
/// otherwise the model says how in one sentence and rewrites the rest of the hour and the
/// next hour with that change. `others` are where the other agents are (a lonely agent goes
/// to one of them; with nobody it knows seen awake it keeps its plan unasked:
/// `lonely_with_nobody_up`).
pub async fn maybe_change_plan(
    mind: &Mind<'_>,
    world: &World,
    spec: &AgentSpec,
    state: &AgentState,
    others: &[Whereabouts],
    system: &str,
) -> Option<PlanChange> {
    // Asleep at night, an agent does not reconsider the plan (John Lin, in bed since 9 pm,
    // "wakes up, goes to bed immediately after waking up" at 10 pm in a day of session 21).
    // Nor asleep before the waking day (Eddy Lin, asleep until his plan's 7 am).
    // What the agent is about to do counts, not what it did: at 6 am Eddy Lin, whose plan
    // sleeps until 7, got up to eat at the first step of a starving day.
    let doing = line_at(&state.quarter_plan, mind.minutes).map_or(&state.activity, |l| &l.activity);
    if !is_day(mind.minutes) && is_sleep(doing) {
        return None;
    }
    let options = remedies(
        world,
        spec,
        &state.needs,
        &state.location,
        others,
        mind.minutes,
    );
    if lonely_with_nobody_up(&state.needs, &options) {
        tracing::info!(agent = %state.name, "lonely with nobody awake to talk to: plan kept");
        return None;
    }
    let mut times = quarter_slots(world, mind.minutes);
    let next_hour = (mind.minutes / 60 + 1) * 60;
    if next_hour < world.day_end {
        times.push(next_hour);
    }
    let upcoming: Vec<PlanLine> = times
        .iter()
        .map(|&t| {
            let src = if t >= next_hour {
                &state.hourly_plan
            } else {
                &state.quarter_plan
            };
            let act = line_at(src, t).map_or("go about the day", |l| l.activity.as_str());
            PlanLine::new(t, act)
        })
        .collect();
    let q = change_question(state, mind.minutes, &upcoming);
    if !mind
        .ask_yes_no_above(
            "change_plan",
            system,
            &q,
            change_threshold(&state.needs, mind.change_threshold),
        )
        .await
    {
        return None;
    }
    if let Some(r) = pick_remedy(mind, system, &state.feeling(), options).await {
        let in_hour: Vec<PlanLine> = upcoming
            .iter()
            .filter(|l| l.minutes < next_hour)
            .cloned()
            .collect();
        let (mut lines, mut carry) =
            remedy_lines(&state.name, &r, &in_hour, world.step_minutes, world.day_end);
        keep_plans_sleep(&state.name, &state.day_plan, &mut lines);
        keep_plans_sleep(&state.name, &state.day_plan, &mut carry);
        return Some(PlanChange {
            lines,
            carry,
            suggestion: r.activity,
            remedy: true,
        });
    }
    let suggestion = free_suggestion(mind, state, &upcoming, system).await?;
    // The old lines are not shown: shown them, the 1.5B copied them and put the change
    // last (an exhausted agent kept writing and went to sleep "at 3 pm").
    // The time of day and "what comes before is already done", as the 15-minute plans have
    // them: told only the time, the 1.5B had a rested Eddy Lin "eat breakfast" at 6:30 pm and
    // "wake up and get dressed" at 7 pm (a Lin day of session 21).
    let rewrite = format!(
        "{name} has decided to change the plan: {suggestion}\nIt is {now}, in the {part}; \
         what comes before is already done. Write what {name} does from now on, starting with \
         this change, as short concrete actions, each following on from the one before.",
        name = state.name,
        now = clock::format_time(mind.minutes),
        part = part_of_day(mind.minutes),
    );
    let (lines, text) = mind
        .ask_plan(
            "replan",
            system,
            &rewrite,
            PlanTimes::Fixed(times.clone()),
            ACTIVITY_CHARS,
        )
        .await;
    let mut lines = fill_fixed("replan", mind, &times, lines, &text, &upcoming);
    by_building(world, &mut lines);
    let lines = stay_asleep(mind, state, lines, &text);
    Some(PlanChange {
        suggestion,
        lines,
        carry: Vec::new(),
        remedy: false,
    })
}

/// Whether the agent keeps its plan without being asked: loneliness is urgent and no remedy
/// is at hand (`options` empty: nobody it knows is seen awake, and no other need is urgent,
/// since each of those has a remedy). Whatever else it feels short of urgent (a mood, a need
/// at 2 or 3) waits with it. Asked for a change in its own words instead, the 1.5B had a
/// lonely John Lin at 6 am, his son asleep, "stops by the local restaurant for lunch" at 6:30
/// am, "heads home for dinner" at 6:45 and "finishes dinner and goes to bed" at 7 am, or go to
/// "the library" for five lines to meet "a group of music enthusiasts" instead of opening his
/// shop (the seed-0 and seed-1 lonely Lin days of Table 2 at 5f55c87). The plan is
/// reconsidered an hour later, as for any unmet need.
fn lonely_with_nobody_up(needs: &Needs, options: &[Remedy]) -> bool {
    options.is_empty() && is_urgent(needs, Need::Social)
}

/// The change in one sentence, as the model writes it (for a feeling with no urgent need, or
/// an urgent need with no remedy at hand); `None` (a logged fallback) when none came back.
async fn free_suggestion(
    mind: &Mind<'_>,
    state: &AgentState,
    upcoming: &[PlanLine],
    system: &str,
) -> Option<String> {
    let (needs, purpose) = urgent_needs(state, mind.minutes);
    let how = format!(
        "{} is {}. {}'s plan from now:\n{}{needs}\nIn one sentence, how should {} change the plan{purpose}?",
        state.name,
        state.feeling(),
        state.name,
        plan_text(upcoming),
        state.name
    );
    let Some(suggestion) = mind.ask_line("plan_change", system, &how, 150).await else {
        mind.fallback("plan_change", "no sentence", "", "keep the plan");
        return None;
    };
    // Asked to rest, the 1.5B still sent a tired Eddy Lin "to bed before 7 pm" at 6:15 pm
    // and had him wake up at 6:45 pm (a Lin day of session 21: no sleep in the day 0.979):
    // in the day such a suggestion becomes the rest that was asked for.
    Some(
        match rest_instead_of_sleep(&state.name, &suggestion, mind.minutes) {
            Some(rest) => {
                mind.fallback("plan_change", "sleep in the day", &suggestion, &rest);
                rest
            }
            None => suggestion,
        },
    )
}

/// The urgent needs (level 0 or 1) with what meets them, as a sentence for the plan and
/// a purpose for the question ("" and "" when none). Asked only "how should the plan
/// change", the 1.5B had an exhausted agent "write for an additional 20 minutes"; named at
/// every unmet level, a slightly tired John went home to sleep at 4 pm (a Lin day: no sleep
/// in the day 1.000 -> 0.927).
fn urgent_needs(state: &AgentState, now: u32) -> (String, String) {
    let unmet: Vec<_> = state
        .unmet_needs()
        .into_iter()
        .filter(|(n, _)| is_urgent(&state.needs, *n))
        .collect();
    if unmet.is_empty() {
        return (String::new(), String::new());
    }
    let phrases: Vec<String> = unmet.iter().map(|(_, p)| p.clone()).collect();
    let remedies: Vec<String> = unmet
        .iter()
        .map(|(n, _)| remedy(*n, now).to_string())
        .collect();
    (
        format!(
            "\nBeing {}, {} needs to {} soon.",
            join_and(&phrases),
            state.name,
            join_and(&remedies)
        ),
        format!(" so that {} can {} now", state.name, join_and(&remedies)),
    )
}

/// The part of the day at `minutes`: morning, afternoon, evening or night.
pub fn part_of_day(minutes: u32) -> &'static str {
    match minutes / 60 % 24 {
        5..=11 => "morning",
        12..=16 => "afternoon",
        17..=20 => "evening",
        _ => "night",
    }
}

/// The rewritten `lines` with every line after going to bed at night asleep, none asleep in
/// the day, and the day plan's sleep outside the waking day kept ([`keep_plans_sleep`]); a
/// logged fallback when that changes one. The 1.5B sent John Lin to bed at 9 pm and had him
/// wake up at 9:15 pm and walk to his shop (a day of session 21).
fn stay_asleep(
    mind: &Mind<'_>,
    state: &AgentState,
    lines: Vec<PlanLine>,
    text: &str,
) -> Vec<PlanLine> {
    let (mut lines, woke) = asleep_after_bed(&state.name, lines);
    let slept = keep_plans_sleep(&state.name, &state.day_plan, &mut lines);
    if woke + slept > 0 {
        mind.fallback(
            "replan",
            format!("{} {SLEEP_RULE}", woke + slept),
            text,
            "a rest in the day, asleep at night",
        );
    }
    lines
}

/// What meets `need` at `now` (minutes of the day), as a plan change is asked for it.
fn remedy(need: Need, now: u32) -> &'static str {
    match need {
        Need::Energy if !is_bedtime(now) => "sit down and rest for a while",
        n => n.remedy(),
    }
}

/// The P(yes) above which the plan changes: the model's tuned threshold, but at most 0.5 (the
/// more probable answer) while a need is urgent, so that replanning is not suppressed while
/// an agent starves. On `eval replan`'s development set this keeps micro-F1 (0.766 against
/// 0.772 with the tuned threshold alone) and raises yes-F1 (0.713 against 0.647).
pub fn change_threshold(needs: &Needs, tuned: f32) -> f32 {
    let urgent = Need::ALL.iter().any(|&n| is_urgent(needs, n));
    if urgent {
        tuned.min(0.5)
    } else {
        tuned
    }
}

/// The yes/no question whether the agent changes `upcoming` (the plan from `now`, minutes of
/// the day) because of how they feel, as a run asks it (`eval replan` asks it too). A run changes the plan when
/// P(yes) is above the model's `yes_threshold.change_plan` (0.5 unless tuned).
pub fn change_question(state: &AgentState, now: u32, upcoming: &[PlanLine]) -> String {
    let (needs, _) = urgent_needs(state, now);
    format!(
        "{} is {}. {}'s plan from now:\n{}{needs}\nShould {} change this plan because of how {} feels?",
        state.name,
        state.feeling(),
        state.name,
        plan_text(upcoming),
        state.name,
        state.name,
    )
}

/// Applies a plan change: replaces the rest of the hour and the next hour's line, and keeps
/// the steps carried into the next hour in the 15-minute plan (the next hour's plan begins
/// with them).
pub fn apply_change(state: &mut AgentState, change: &PlanChange, now: u32) {
    let next_hour = (now / 60 + 1) * 60;
    state.quarter_plan.retain(|l| l.minutes < now);
    for l in &change.lines {
        if l.minutes < next_hour {
            state.quarter_plan.push(l.clone());
        } else if let Some(h) = state
            .hourly_plan
            .iter_mut()
            .find(|h| h.minutes == l.minutes)
        {
            h.activity = l.activity.clone();
        }
    }
    state.quarter_plan.extend(change.carry.iter().cloned());
    // Gone to bed at night, the agent sleeps through the rest of the day plan too (John Lin,
    // asleep from 9 pm by a change, "wakes up and gets ready for bed" at 11 pm by the old
    // hourly line in a day of session 21).
    if let Some(last) = change.lines.last() {
        if is_bedtime(last.minutes) && is_sleep(&last.activity) {
            for h in state
                .hourly_plan
                .iter_mut()
                .filter(|h| h.minutes > last.minutes)
            {
                h.activity = format!("{} is asleep.", state.name);
            }
        }
    }
    state.suggested_change = Some(change.suggestion.clone());
    // The hour's steps a remedy leaves are still part of the hour's line (placed with it);
    // a rewritten hour is no longer.
    if !change.remedy {
        state.part_of = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> AgentState {
        let world = crate::world::bundled("lin-family.toml");
        let mut s = AgentState::from_spec(&world.agents[0], false);
        s.hourly_plan = (6..24).map(|h| PlanLine::new(h * 60, "work")).collect();
        s.quarter_plan = (0..4)
            .map(|q| PlanLine::new(10 * 60 + q * 15, "write code"))
            .collect();
        s
    }

    #[test]
    fn a_lonely_agent_with_nobody_awake_keeps_its_plan() {
        let world = crate::world::bundled("lin-family.toml");
        let john = &world.agents[0];
        let eddy = |activity: &str| Whereabouts {
            name: world.agents[1].name.clone(),
            location: world.agents[1].location.clone(),
            activity: activity.to_string(),
        };
        let here = john.location.clone();
        let mut needs = Needs::default();
        needs.set(Need::Social, 0);
        let keeps = |needs: &Needs, others: &[Whereabouts]| {
            let options = remedies(&world, john, needs, &here, others, 6 * 60);
            lonely_with_nobody_up(needs, &options)
        };
        assert!(keeps(&needs, &[eddy("Eddy Lin is asleep.")]));
        assert!(
            !keeps(&needs, &[eddy("Eddy Lin eats breakfast.")]),
            "a talk"
        );
        needs.set(Need::Fullness, 1);
        assert!(!keeps(&needs, &[eddy("Eddy Lin is asleep.")]), "a meal");
        needs.set(Need::Social, 5);
        needs.set(Need::Fullness, 5);
        assert!(
            !keeps(&needs, &[]),
            "not lonely: the plan may change for a feeling"
        );
    }

    #[test]
    fn the_parts_of_the_day() {
        let parts: Vec<_> = [6, 12, 18, 21, 2].map(|h| part_of_day(h * 60)).to_vec();
        assert_eq!(parts, ["morning", "afternoon", "evening", "night", "night"]);
    }

    #[test]
    fn gone_to_bed_at_night_the_rest_of_the_day_plan_sleeps() {
        let mut s = state();
        let bed = change(
            "go to bed",
            &[(1275, "go to bed"), (1320, "John Lin is asleep.")],
        );
        apply_change(&mut s, &bed, 1275);
        let name = s.name.clone();
        assert_eq!(
            line_at(&s.hourly_plan, 1320).unwrap().activity,
            format!("{name} is asleep.")
        );
        assert_eq!(
            line_at(&s.hourly_plan, 1380).unwrap().activity,
            format!("{name} is asleep.")
        );
        assert_eq!(line_at(&s.hourly_plan, 1200).unwrap().activity, "work");
        // A change that ends awake leaves the later hours alone.
        let mut s = state();
        apply_change(
            &mut s,
            &change("read", &[(1275, "read"), (1320, "read")]),
            1275,
        );
        assert_eq!(line_at(&s.hourly_plan, 1380).unwrap().activity, "work");
    }

    fn change(suggestion: &str, lines: &[(u32, &str)]) -> PlanChange {
        PlanChange {
            suggestion: suggestion.into(),
            lines: lines.iter().map(|&(m, a)| PlanLine::new(m, a)).collect(),
            carry: Vec::new(),
            remedy: false,
        }
    }

    #[test]
    fn a_change_rewrites_the_rest_of_the_hour_and_the_next_hours_line() {
        let mut s = state();
        let eat = change(
            "eat now",
            &[(630, "eat lunch"), (645, "eat lunch"), (660, "nap")],
        );
        apply_change(&mut s, &eat, 630);
        let quarter: Vec<_> = s.quarter_plan.iter().map(ToString::to_string).collect();
        assert_eq!(
            quarter,
            [
                "10:00 am: write code",
                "10:15 am: write code",
                "10:30 am: eat lunch",
                "10:45 am: eat lunch"
            ]
        );
        assert_eq!(line_at(&s.hourly_plan, 660).unwrap().activity, "nap");
        assert_eq!(line_at(&s.hourly_plan, 720).unwrap().activity, "work");
    }

    /// A rest decided at 3:45 pm goes on into the next hour: its steps stay in the 15-minute
    /// plan, and the next hour's plan begins with them.
    #[test]
    fn a_remedy_carried_past_the_hour_begins_the_next_hours_plan() {
        let mut s = state();
        let mut rest = change("rest", &[(945, "rest")]);
        rest.carry = vec![PlanLine::new(960, "rest"), PlanLine::new(975, "rest")];
        apply_change(&mut s, &rest, 945);
        assert_eq!(line_at(&s.quarter_plan, 960).unwrap().activity, "rest");
        let mut next: Vec<PlanLine> = [960, 975, 990, 1005]
            .iter()
            .map(|&m| PlanLine::new(m, "work"))
            .collect();
        let carried: Vec<PlanLine> = s
            .quarter_plan
            .iter()
            .filter(|l| l.minutes >= 960)
            .cloned()
            .collect();
        super::super::carry_over(&mut next, &carried);
        let acts: Vec<&str> = next.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(acts, ["rest", "rest", "work", "work"]);
    }

    /// The suggested change lives from the change that made it until the next change or the
    /// next day, whatever steps pass between.
    #[test]
    fn a_suggested_change_lasts_until_the_next_change_or_the_next_day() {
        let mut s = state();
        assert_eq!(s.suggested_change, None);
        apply_change(&mut s, &change("eat now", &[(630, "eat lunch")]), 630);
        assert_eq!(s.suggested_change.as_deref(), Some("eat now"));
        s.activity = "eat lunch".into();
        s.needs_attention(700);
        assert_eq!(s.suggested_change.as_deref(), Some("eat now"), "kept");
        apply_change(&mut s, &change("take a nap", &[(900, "nap")]), 900);
        assert_eq!(
            s.suggested_change.as_deref(),
            Some("take a nap"),
            "replaced"
        );
        s.start_day();
        assert_eq!(s.suggested_change, None, "gone the next day");
        assert!(s.day_plan.is_empty() && s.hourly_plan.is_empty() && s.quarter_plan.is_empty());
    }
}

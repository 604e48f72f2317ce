//! What an agent does about an urgent need when it changes its plan: one of a closed set of
//! remedies (rest, bed, a meal, a walk, something fun, a talk with someone the agent knows
//! who is awake), picked with `choose` when there are several. Asked for a sentence instead,
//! the 1.5B ignored the need it was told about in most plan changes of a day: an exhausted
//! John Lin "should reduce the time from 7:30 am to 07:00 pm", an exhausted Joey Tribbiani
//! went "to the gym", and a lonely Sheldon Cooper set out for "his friend John" (no John in
//! that world) five hours running. Given a remedy and asked to write the rest of the plan,
//! it turned a rest into a nap and had Joey Tribbiani "get out of bed" and "wake up" at 3, 4
//! and 5 pm: the remedy now takes its steps by itself (into the next hour when it must), and
//! the plan goes on.

use crate::agent::activity_text::has_phrase;
use crate::world::{AgentSpec, Need, Needs, World, UNMET_NEED};

use super::super::mind::Mind;
use super::super::state::{AgentState, PlanLine};
use super::sleep::{is_bedtime, is_sleep};
use super::{same_words, URGENT_NEED};

/// A rest in the day: the remedy for a tired agent, and what a plan change's sleep in the
/// day becomes.
pub(super) const REST: &str = "sits down and rests for a while";
/// What a plan rule writes for a line that sleeps in the day.
pub(super) const SHORT_REST: &str = "rests for a while";
const FUN_BREAK: &str = "takes a break to do something fun";
const WALK: &str = "goes for a walk";
const EAT: &str = "gets something to eat";
/// A talk with someone already there, and the way to someone elsewhere: "talks with Eddy
/// Lin", "goes to the kitchen in Lin family's house to talk with Eddy Lin".
const TALKS_WITH: &str = "talks with";
const GOES_TO: &str = "goes to";
const TO_TALK_WITH: &str = "to talk with";
/// Words that make a place one to walk in, in its name (whole words, any case).
const OUTDOOR_WORDS: &[&str] = &[
    "park",
    "garden",
    "beach",
    "woods",
    "forest",
    "trail",
    "promenade",
    "boardwalk",
];
/// Words that make a place one to eat in, in its name.
const EATING_WORDS: &[&str] = &[
    "cafe",
    "café",
    "cafeteria",
    "canteen",
    "restaurant",
    "diner",
    "bistro",
    "dining room",
];

/// Whether `activity` is a remedy done where the agent is (a rest, the plan rules' rest in
/// place of sleep in the day, a break for something fun, a walk that names no place):
/// the walk down the location tree keeps the agent's place. Asked where to "sit down and
/// rest for a while", the 1.5B sent John Lin home from his counter to his bedroom and back,
/// and Eddy Lin from the college; a short walk went to a bedroom or a bathroom (11 of 34
/// remedies of a labelled set placed where they fit: BENCHMARKS.md, session 42).
pub fn stays_put(activity: &str, name: &str) -> bool {
    [REST, SHORT_REST, FUN_BREAK, WALK]
        .iter()
        .any(|r| same_words(activity, &format!("{name} {r}")))
}

/// Whether `activity` is the remedy of talking with an agent of `world` already where `name`
/// is ("Eddy Lin talks with John Lin."): the walk down the location tree keeps the agent's
/// place exactly, or the talk it is for is lost. On the fast model Eddy Lin, lonely in the
/// bathroom beside his father, was walked to his bedroom to talk with him (a test of
/// session 46).
pub fn talks_here(world: &World, activity: &str, name: &str) -> bool {
    world
        .agents
        .iter()
        .any(|a| a.name != name && talks_with(activity, name, &a.name))
}

/// Whether `activity` is "NAME talks with OTHER", the remedy's words for a talk there.
fn talks_with(activity: &str, name: &str, other: &str) -> bool {
    same_words(activity, &format!("{name} {TALKS_WITH} {other}"))
}

/// Whether `activity`, of the agent `name`, is the remedy of going to talk with `other`
/// (on the way, or there): such an agent starts the talk when they meet, whatever the time
/// since their last. Penny, lonely, went to Sheldon Cooper's office "to talk with" him and
/// was with him for an hour without a word (neither wanted to start: a Big Bang Theory day
/// of session 45); 13 of 32 such remedies of the saved 1.5B days of sessions 40–45 came to
/// no talk within their half hour.
pub fn came_to_talk(activity: &str, name: &str, other: &str) -> bool {
    talks_with(activity, name, other) || {
        let text = activity.trim().trim_end_matches('.');
        text.starts_with(&format!("{name} {GOES_TO} "))
            && text.ends_with(&format!(" {TO_TALK_WITH} {other}"))
    }
}

/// Minutes a pair of agents waits between talks: the world's `cooldown`, or when one came to
/// talk with the other ([`came_to_talk`]) the remedy's length in steps of `step_minutes`, so
/// that the talk come for is not kept waiting and is not held twice (Penny and Sheldon talked
/// at 11:30 and again at 11:45 am when the cooldown was waived for the whole remedy).
pub fn talk_wait(a: &AgentState, b: &AgentState, cooldown: u64, step_minutes: u32) -> u64 {
    if came_to_talk(&a.activity, &a.name, &b.name) || came_to_talk(&b.activity, &b.name, &a.name) {
        REMEDY_STEPS as u64 * u64::from(step_minutes)
    } else {
        cooldown
    }
}

/// The first innermost place of `world` (of those inside `within` when given) whose own
/// name holds one of `words` as whole words, any case, else the first inside a place whose
/// name does: "Johnson Park" for a walk, "Caltech/Cafeteria" and "Il Forno
/// restaurant/Dining room" (not its kitchen) for a meal.
fn place_for(world: &World, words: &[&str], within: Option<&[String]>) -> Option<Vec<String>> {
    let names = |part: &String| {
        let part = part.to_lowercase();
        words.iter().any(|w| has_phrase(&part, w))
    };
    let leaves: Vec<Vec<String>> = world
        .locations
        .leaves()
        .into_iter()
        .filter(|leaf| within.is_none_or(|w| leaf.starts_with(w)))
        .collect();
    let own = leaves.iter().find(|leaf| leaf.last().is_some_and(names));
    own.or_else(|| leaves.iter().find(|leaf| leaf.iter().any(names)))
        .cloned()
}

/// " in PLACE" or " at PLACE" for a remedy going to `place` ("at Hobbs Cafe", "in the
/// cafeteria in Caltech").
fn to_place(place: &[String]) -> String {
    let at = if place.len() == 1 { "at" } else { "in" };
    format!(" {at} {}", place_phrase(place))
}

/// A walk: in the world's first place to walk in ([`OUTDOOR_WORDS`]) unless the agent
/// is there, else where the agent is ([`stays_put`]).
fn walk_activity(world: &World, location: &[String]) -> String {
    match place_for(world, OUTDOOR_WORDS, None) {
        Some(p) if !location.starts_with(&p) => format!("{WALK} in {}", place_phrase(&p)),
        _ => WALK.to_string(),
    }
}

/// Something to eat: in a place to eat of the building the agent is in ([`EATING_WORDS`]),
/// else in its kitchen (a friend's too), else, away from home, at the world's first place to
/// eat; at a home with neither, in no named place. Asked where to "get something to eat",
/// the 1.5B sent John Lin home from his shop and Eddy Lin home from the college, and kept
/// Leonard Hofstadter in his living room.
fn eat_activity(world: &World, spec: &AgentSpec, location: &[String]) -> String {
    let at_home = spec.home().is_some_and(|h| location.starts_with(h));
    let building = &location[..location.len().min(1)];
    let place = place_for(world, EATING_WORDS, Some(building))
        .or_else(|| place_for(world, &["kitchen"], Some(building)))
        .or_else(|| {
            (!at_home)
                .then(|| place_for(world, EATING_WORDS, None))
                .flatten()
        });
    match place {
        Some(p) => format!("{EAT}{}", to_place(&p)),
        None => EAT.to_string(),
    }
}

/// Where another agent is at the start of a step, as a remedy for loneliness sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Whereabouts {
    pub name: String,
    /// Path of the leaf the agent is in.
    pub location: Vec<String>,
    /// The agent's current activity.
    pub activity: String,
}

impl Whereabouts {
    /// Where `agent` is and what it is doing.
    pub fn of(agent: &AgentState) -> Self {
        Self {
            name: agent.name.clone(),
            location: agent.location.clone(),
            activity: agent.activity.clone(),
        }
    }

    /// Seen doing something other than sleep (before a run's first step no one has been
    /// seen doing anything: at 6 am of a lonely Lin day John went to talk with Eddy in the
    /// bedroom where Eddy's plan had him asleep until 7).
    fn awake(&self) -> bool {
        !self.activity.trim().is_empty() && !is_sleep(&self.activity)
    }
}

/// Steps a remedy takes (half an hour), the plan going on after it: a starving agent ate
/// for a whole hour at 6 am.
pub const REMEDY_STEPS: usize = 2;

/// Steps a rest or a walk takes at the level of the need it meets: until the need is no
/// longer unmet (each step of it gives one level), at least [`REMEDY_STEPS`]. Half an hour
/// of rest an hour (a plan change falls at most hourly) left an exhausted John Lin at energy
/// 0 to 2 all evening; after half an hour's walk, John Lin of a day at health 0 stayed
/// unwell (2 and 3) from 6:30 am to midnight and walked no more (a Table 2 day of session
/// 44). A meal and a break for fun keep half an hour: meals come in the plan, and fun falls
/// too fast for a longer break to last.
fn steps_until_met(level: u8) -> usize {
    usize::from(UNMET_NEED + 1 - level.min(UNMET_NEED)).max(REMEDY_STEPS)
}

/// One remedy: the short answer `choose` weighs, the activity it becomes, and for how many
/// steps.
#[derive(Clone, Debug, PartialEq)]
pub struct Remedy {
    pub option: String,
    pub activity: String,
    pub steps: usize,
}

/// The remedies for the agent's urgent needs (level at or below [`URGENT_NEED`]) at `now` (minutes
/// of the day), in need order: for energy a rest before [`SLEEP_FROM_HOUR`](super::SLEEP_FROM_HOUR)
/// (until no longer tired: four steps from 0, three from 1) and bed from it, for health a walk
/// (until no longer unwell, as the rest), for social a talk with
/// each agent of the world that `spec` has a relationship with and who is awake (going to where
/// that agent is, unless already there). Empty when no need is urgent or nobody is there to talk
/// to. A rest, a break for fun and a walk with nowhere to walk are taken where the agent is
/// ([`stays_put`]); a walk goes to the world's park, a meal away from home to a place to eat.
pub fn remedies(
    world: &World,
    spec: &AgentSpec,
    needs: &Needs,
    location: &[String],
    others: &[Whereabouts],
    now: u32,
) -> Vec<Remedy> {
    let name = &spec.name;
    let one = |option: &str, rest: &str| Remedy {
        option: option.to_string(),
        activity: format!("{name} {rest}."),
        steps: REMEDY_STEPS,
    };
    let mut out = Vec::new();
    for need in Need::ALL {
        if needs.get(need) > URGENT_NEED {
            continue;
        }
        match need {
            Need::Energy if !is_bedtime(now) => out.push(Remedy {
                steps: steps_until_met(needs.get(need)),
                ..one("rest for a while", REST)
            }),
            Need::Energy => out.push(one("go to bed", "goes to bed")),
            Need::Fullness => out.push(one("eat something", &eat_activity(world, spec, location))),
            Need::Health => out.push(Remedy {
                steps: steps_until_met(needs.get(need)),
                ..one("go for a walk", &walk_activity(world, location))
            }),
            Need::Fun => out.push(one("do something fun", FUN_BREAK)),
            Need::Social => {
                for (other, _) in &spec.relationships {
                    let Some(w) = others.iter().find(|w| &w.name == other && w.awake()) else {
                        continue;
                    };
                    let rest = if w.location == location {
                        format!("{TALKS_WITH} {other}")
                    } else {
                        format!(
                            "{GOES_TO} {} {TO_TALK_WITH} {other}",
                            place_phrase(&w.location)
                        )
                    };
                    out.push(one(&format!("talk with {other}"), &rest));
                }
            }
        }
    }
    out
}

/// A leaf's path as words the walk recognises: "the kitchen in Lin family's house",
/// "Leonard's lab in Caltech". A room's name of common words ("Living room", "Kitchen") takes
/// "the" and a small letter ("goes to Living room in Apartment 4A" read as a form); one with
/// an owner or a capital after its first word is a name and stays as it is.
fn place_phrase(path: &[String]) -> String {
    let mut parts: Vec<String> = path.iter().rev().cloned().collect();
    if let (true, Some(room)) = (path.len() > 1, parts.first_mut()) {
        let common = !room.contains('\'')
            && !room.contains('\u{2019}')
            && room
                .split_whitespace()
                .skip(1)
                .all(|w| !w.starts_with(char::is_uppercase));
        if common {
            let mut chars = room.chars();
            if let Some(first) = chars.next() {
                *room = format!("the {}{}", first.to_lowercase(), chars.as_str());
            }
        }
    }
    parts.join(" in ")
}

/// The plan lines taking remedy `r` from the first of `planned` (the rest of the hour as
/// planned): its activity for `r.steps` steps of `step_minutes` (one judgement for all: a
/// continued activity keeps it), then the plan; going to bed, asleep after the first. The
/// second list holds the steps that go on past the hour (before `day_end`): they begin the
/// next hour's 15-minute plan.
pub fn remedy_lines(
    name: &str,
    r: &Remedy,
    planned: &[PlanLine],
    step_minutes: u32,
    day_end: u32,
) -> (Vec<PlanLine>, Vec<PlanLine>) {
    let bed = is_sleep(&r.activity);
    let hour = planned
        .iter()
        .enumerate()
        .map(|(i, l)| match i {
            0 => PlanLine::new(l.minutes, r.activity.clone()),
            _ if bed => PlanLine::new(l.minutes, format!("{name} is asleep.")),
            i if i < r.steps => PlanLine::new(l.minutes, r.activity.clone()),
            _ => l.clone(),
        })
        .collect();
    let Some(start) = planned.first().map(|l| l.minutes).filter(|_| !bed) else {
        return (hour, Vec::new());
    };
    let carry = (planned.len()..r.steps)
        .map(|i| start + i as u32 * step_minutes)
        .take_while(|&t| t < day_end)
        .map(|t| PlanLine::new(t, r.activity.clone()))
        .collect();
    (hour, carry)
}

/// The remedy the agent takes: the only one, or the one the model finds most likely
/// (`choose` over a numbered list, so that a long option is not less likely for its length;
/// the first on error, with a logged fallback). `None` when there is none.
pub async fn pick_remedy(
    mind: &Mind<'_>,
    system: &str,
    feeling: &str,
    remedies: Vec<Remedy>,
) -> Option<Remedy> {
    if remedies.len() < 2 {
        return remedies.into_iter().next();
    }
    let numbers: Vec<String> = (1..=remedies.len()).map(|i| i.to_string()).collect();
    let numbers: Vec<&str> = numbers.iter().map(String::as_str).collect();
    let q = remedy_question(&mind.name, feeling, &remedies);
    let i = mind
        .ask_choice("remedy", system, &q, &numbers, 0)
        .await
        .map_or(0, |c| c.index);
    remedies.into_iter().nth(i)
}

/// "NAME is FEELING. Which of these does NAME do now?" with the options numbered.
fn remedy_question(name: &str, feeling: &str, remedies: &[Remedy]) -> String {
    let list: Vec<String> = remedies
        .iter()
        .enumerate()
        .map(|(i, r)| format!("{}. {}", i + 1, r.option))
        .collect();
    format!(
        "{name} is {feeling}. Which of these does {name} do now?\n{}\nAnswer with the number.",
        list.join("\n")
    )
}

#[cfg(test)]
mod tests;

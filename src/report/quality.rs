//! `humanoid check --quality DIR`: whether a run's days make sense, beyond being well-formed.
//!
//! Read from the state files (the agents' day plans, activities, places and conversations):
//! - **distinct plan lines**: the share of a day plan's activities that are not repeats of an
//!   earlier line of the same plan (a plan of six "EDIE: Sunny day" lines scores low);
//! - **in the world's script**: the share of activities written in the script of the world's
//!   own example days (Latin for an English world; "行停！" in one fails, and so does one
//!   Chinese word in an English line);
//! - **not an action**: activities that name an agent, are empty, or repeat the planning
//!   instructions ("break into activities of 15 minutes") or the agent's context ("Rachel
//!   Green is feeling neutral, ...");
//! - **activities that end whole**: not on a word that cannot end a phrase ("... and
//!   prepares the"), as a line cut at the length limit does, nor inside a parenthesis
//!   ("Serve the dinner (e.g.");
//! - **sleep outside the night**: steps between 08:00 and 20:00 whose activity is sleeping or
//!   going to bed (a nap is fine);
//! - **asleep when the plan sleeps**: steps the agent's day plan sleeps through (before its
//!   first line, and from a line that goes to bed at night) whose activity is sleep (John Lin
//!   "goes to the gym" at 11 pm, an hour after his plan's "go to bed", fails);
//! - **the day restarting**: steps from noon on whose activity is waking up or breakfast
//!   (a 15-minute plan that starts the day again at 3 pm);
//! - **an activity under way goes on**: steps under a day-plan line begun at least an hour
//!   before the step's hour ([`goes_on`]) that do not start something again
//!   ([`starts_something`]: "Arrive at Oak Hill College" at 10 am, an hour into the lecture;
//!   "starts to eat her dinner" at 9:30 pm, two hours into dinner);
//! - **steps of a day-plan line not gone back to**: awake steps whose activity (the agent's
//!   name aside) is not one the agent did earlier under the same day-plan line with other steps
//!   between (an hour-long cycle of steps asked again each hour: Eddy Lin leaves, arrives, sits
//!   and listens three times over; the same step going on over several steps is fine);
//! - **steps of their own plan line**: awake steps that are not, word for word, another line
//!   of the day plan ([`copies_other_line`]: Eddy Lin's "Walk around Johnson Park to clear
//!   his head", the 5 pm line, at 6:15 pm, at dinner);
//! - **steps like their own plan line** (with an embedder): awake steps about as like the
//!   day-plan line in effect as any other waking line ([`super::step_fit`]: Eddy Lin "review
//!   the composition and make adjustments" at dinner is another line's work in other words);
//! - **place follows the day plan**: steps whose day-plan line names one top-level place
//!   ("eat lunch at Hobbs Cafe", "serve customers at the counter": the pharmacy; by the
//!   walk's own [`named_places`]) with the agent in it, the line's first step (on the way)
//!   left out;
//! - **urgent needs met within the hour**: a need falling to 0 or 1 rises within four steps
//!   ([`super::urgent_needs`]);
//! - **place fits the activity** (with an embedder): the agent's place is about as like the
//!   activity as the world's most like place ([`super::place_fit`]; a rough signal);
//! - **speaker labels or stage directions** in utterances ("John: hi", "*smiles*", "(laughs)");
//! - **utterances out of the speaker's voice**: the speaker named by their own first name
//!   ("Sounds good, Joey!" said by Joey; an introduction, "I'm Joey", is fine), the context's
//!   closeness or emotion sentence repeated ("I'm feeling distant to Joey Tribbiani", "I'm
//!   just feeling neutral"), or an assistant's
//!   refusal ("I'm sorry, but I can't assist with that");
//! - **utterances about something**: sharing a word with either speaker's activity or
//!   description ("How's the composition coming along?"), not small talk alone ("How's it
//!   going?", "I'm ready!").

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::agent::mind::ends_unfinished;
use crate::agent::place::named_places;
use crate::agent::plan::starts::{copies_other_line, goes_on, starts_something, step_key};
use crate::agent::plan::{asleep_in_plan, is_sleep, starts_the_day};
use crate::agent::state::{line_at, parse_plan_text};
use crate::agent::utterance::{about_situation, out_of_voice, repeats_earlier, topic_words};
use crate::agent::PlanLine;
use crate::formats::script::{script_of, Letters, Script};
use crate::memory::TextEmbedder;
use crate::sim::StateFile;
use crate::world::{clock, display_path, World};

use super::place_fit::{embed, names_leaf, PlaceFit};
use super::step_fit::step_share;
use crate::agent::plan::line_fit::StepCase;

/// Words of the planning prompts and the agent's context that, in an activity, mean the
/// model copied them.
const PROMPT_WORDS: [&str; 8] = [
    "15 minutes",
    "activity per line",
    "hh:mm",
    "plan for today",
    "one concrete activity",
    "rewrite this plan",
    "is feeling",
    "remembers:",
];

/// Counts behind one share.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Share {
    pub good: usize,
    pub total: usize,
    /// `good / total` (1 when there is nothing to count).
    pub share: f64,
    /// A few of the bad cases, for the reader.
    pub examples: Vec<String>,
}

impl Share {
    /// Counts one case, keeping its example if it is one of the first five bad ones.
    pub fn add(&mut self, good: bool, example: impl FnOnce() -> String) {
        self.total += 1;
        if good {
            self.good += 1;
        } else if self.examples.len() < 5 {
            self.examples.push(example());
        }
    }

    /// The finished share.
    pub fn done(mut self) -> Self {
        self.share = if self.total == 0 {
            1.0
        } else {
            self.good as f64 / self.total as f64
        };
        self
    }
}

/// The whole quality report: every share counts the good cases (1.0 is clean).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct QualityReport {
    /// Day-plan lines that are not a repeat within their plan.
    pub distinct_plan_lines: Share,
    /// Activities (one per agent-step) in the world's script.
    pub activities_in_script: Share,
    /// Activities that are actions (not a name, not empty, not a copy of the prompt).
    pub activities_are_actions: Share,
    /// Activities that do not end on a word that cannot end a phrase ([`ends_unfinished`]).
    pub whole_activities: Share,
    /// Agent-steps in the day (08:00 to 20:00) that are not sleep.
    pub no_sleep_in_the_day: Share,
    /// Agent-steps the day plan sleeps through ([`asleep_in_plan`]) whose activity is sleep.
    pub asleep_when_planned: Share,
    /// Agent-steps from noon to midnight that do not start the day again (waking up,
    /// breakfast).
    pub no_restart_after_noon: Share,
    /// Agent-steps awake under a day-plan line begun at least an hour before the step's hour
    /// ([`goes_on`]) that do not start something again ([`starts_something`]).
    #[serde(default)]
    pub going_on_not_restarted: Share,
    /// Agent-steps awake under a day-plan line whose activity ([`step_key`]) is not one done
    /// earlier under the same line with other steps between.
    #[serde(default)]
    pub steps_not_gone_back_to: Share,
    /// Agent-steps awake under a day-plan line that are not another line of the day plan
    /// ([`copies_other_line`]).
    #[serde(default)]
    pub steps_of_their_line: Share,
    /// Agent-steps awake under a day-plan line about as like it as any other waking line of
    /// the day plan, by [`super::step_fit`] (only with an embedder).
    pub steps_like_their_line: Option<Share>,
    /// Agent-steps in the place their day-plan line names ([`named_places`]; only steps whose
    /// line names one top-level place, after the line's first step).
    pub place_follows_plan: Share,
    /// Onsets of an urgent need met within the hour ([`super::urgent_needs`]).
    #[serde(default)]
    pub urgent_needs_met: Share,
    /// Agent-steps whose place fits the activity by [`super::place_fit::PlaceFit`] (only
    /// with an embedder).
    pub place_fits_activity: Option<Share>,
    /// Utterances without speaker labels or stage directions.
    pub clean_utterances: Share,
    /// Utterances in the speaker's own voice ([`out_of_voice`] false).
    pub own_voice_utterances: Share,
    /// Utterances that do not repeat an earlier line of their conversation
    /// ([`repeats_earlier`] false).
    pub fresh_utterances: Share,
    /// Utterances about something in the situation ([`about_situation`]: a word of either
    /// speaker's activity or description), not small talk alone.
    #[serde(default)]
    pub utterances_about_something: Share,
}

/// The topic keys of a conversation's situation: each participant's activity and their
/// description in the world (`people`: name and activity).
pub fn talk_situation(world: &World, people: &[(&str, &str)]) -> BTreeSet<String> {
    let names: Vec<&str> = world.agents.iter().map(|a| a.name.as_str()).collect();
    let mut keys = BTreeSet::new();
    for (name, activity) in people {
        keys.extend(topic_words(activity, &names));
        if let Some(spec) = world.agents.iter().find(|a| a.name == *name) {
            keys.extend(topic_words(&spec.description.join(" "), &names));
        }
    }
    keys
}

/// Whether at least 90% of `text`'s letters are in `script` (text without letters passes),
/// and, in a world written in an alphabet, none is a Chinese, Japanese or Korean character:
/// "filling prescriptions at the柜台" is one foreign word among forty letters, and wrong.
fn in_script(text: &str, script: Script) -> bool {
    let letters: Vec<Script> = text.chars().filter_map(script_of).collect();
    let mostly = letters.iter().filter(|&&s| s == script).count() * 10 >= letters.len() * 9;
    let foreign_cjk = !Letters::for_script(script).allows_all(text);
    letters.is_empty() || (mostly && !foreign_cjk)
}

/// Whether an utterance carries a speaker label ("John Lin: ...", "Eddy:") or a stage
/// direction (`*smiles*`, `(laughs)`, `[pause]`).
pub fn has_label_or_direction(text: &str, names: &[String]) -> bool {
    let t = text.trim();
    let labelled = names.iter().any(|n| {
        let first = n.split_whitespace().next().unwrap_or(n);
        [n.as_str(), first].iter().any(|p| {
            t.strip_prefix(p)
                .is_some_and(|r| r.trim_start().starts_with(':'))
        })
    });
    let direction = |open: char, close: char| {
        t.find(open)
            .is_some_and(|i| t[i + open.len_utf8()..].contains(close))
    };
    labelled || direction('*', '*') || direction('(', ')') || direction('[', ']')
}

/// Whether an activity is not an action: empty, an agent's name, or the prompt copied.
pub fn not_an_action(activity: &str, names: &[String]) -> bool {
    let a = activity.trim().trim_end_matches(['.', '!']).to_lowercase();
    a.is_empty()
        || names.iter().any(|n| {
            let n = n.to_lowercase();
            a == n
                || a == n.split_whitespace().next().unwrap_or("")
                || a.starts_with(&format!("{n}:"))
        })
        || PROMPT_WORDS.iter().any(|w| a.contains(w))
}

/// The report over `states` (a run's state files in step order) of `world`. With an
/// embedder, places are judged too; an embedding failure leaves that share out (logged).
pub fn quality(
    world: &World,
    states: &[StateFile],
    embedder: Option<&mut dyn TextEmbedder>,
) -> QualityReport {
    let names: Vec<String> = world.agents.iter().map(|a| a.name.clone()).collect();
    let script = world.script();
    let mut r = QualityReport::default();
    // Each distinct day plan once per agent.
    let mut plans_seen: BTreeSet<(String, String)> = BTreeSet::new();
    let mut line_steps = LineSteps::default();
    let mut step_cases = Vec::new();
    for st in states {
        let minutes = clock::parse_time(&st.time);
        for a in &st.agents {
            if !a.most_recent_day_plan.is_empty()
                && plans_seen.insert((a.name.clone(), a.most_recent_day_plan.clone()))
            {
                let mut seen = BTreeSet::new();
                for line in a.most_recent_day_plan.lines() {
                    let act = clock::parse_plan_line(line).map_or(line, |(_, a)| a);
                    let key = act.trim().to_lowercase();
                    let fresh = seen.insert(key);
                    r.distinct_plan_lines
                        .add(fresh, || format!("{}: {line}", a.name));
                }
            }
            let at = || format!("{} {}: {}", st.time, a.name, a.activity);
            r.activities_in_script
                .add(in_script(&a.activity, script), at);
            r.activities_are_actions
                .add(!not_an_action(&a.activity, &names), at);
            r.whole_activities.add(!ends_unfinished(&a.activity), at);
            if minutes.is_some_and(|m| (8 * 60..20 * 60).contains(&m)) {
                r.no_sleep_in_the_day.add(!is_sleep(&a.activity), at);
            }
            if let Some(m) = minutes {
                let plan = parse_plan_text(&a.most_recent_day_plan);
                let asleep = asleep_in_plan(&plan, m);
                if asleep {
                    r.asleep_when_planned.add(is_sleep(&a.activity), at);
                }
                let awake = !asleep && !is_sleep(&a.activity);
                if let Some(line) = line_at(&plan, m).filter(|_| awake) {
                    let shown = || {
                        format!(
                            "{} {}: {} (plan: {})",
                            st.time, a.name, a.activity, line.activity
                        )
                    };
                    let under = (
                        a.name.clone(),
                        st.date.clone(),
                        a.most_recent_day_plan.clone(),
                        line.minutes,
                    );
                    let again = line_steps.gone_back(under, step_key(&a.activity, &a.name));
                    r.steps_not_gone_back_to.add(!again, shown);
                    r.steps_of_their_line
                        .add(!copies_other_line(&a.activity, &a.name, &plan, m), shown);
                    step_cases.extend(StepCase::new(&a.activity, &a.name, &plan, m, shown()));
                    if goes_on(&plan, m) {
                        r.going_on_not_restarted
                            .add(!starts_something(&a.activity, &a.name), shown);
                    }
                }
                if let Some(inside) = in_plans_place(world, &a.name, &plan, m, &a.location) {
                    r.place_follows_plan.add(inside, || {
                        format!(
                            "{} {}: {} at {} (plan: {})",
                            st.time,
                            a.name,
                            a.activity,
                            display_path(&a.location),
                            line_at(&plan, m).map_or("", |l| l.activity.as_str())
                        )
                    });
                }
            }
            if minutes.is_some_and(|m| m >= 12 * 60) {
                r.no_restart_after_noon
                    .add(!starts_the_day(&a.activity), at);
            }
        }
        for convs in st.conversations.values() {
            for conv in convs {
                let mut people: Vec<(&str, &str)> = Vec::new();
                for t in conv {
                    if !people.iter().any(|(n, _)| *n == t.name) {
                        let activity = st.agents.iter().find(|a| a.name == t.name);
                        people.push((&t.name, activity.map_or("", |a| a.activity.as_str())));
                    }
                }
                let situation = talk_situation(world, &people);
                let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
                for (k, turn) in conv.iter().enumerate() {
                    let Some(text) = &turn.text else { continue };
                    r.utterances_about_something
                        .add(about_situation(text, &situation, &name_refs), || {
                            format!("{}: {text}", turn.name)
                        });
                    let said: Vec<&str> =
                        conv[..k].iter().filter_map(|t| t.text.as_deref()).collect();
                    r.fresh_utterances.add(!repeats_earlier(text, &said), || {
                        format!("{}: {text}", turn.name)
                    });
                    r.clean_utterances
                        .add(!has_label_or_direction(text, &names), || {
                            format!("{}: {text}", turn.name)
                        });
                    r.own_voice_utterances
                        .add(!out_of_voice(text, &turn.name), || {
                            format!("{}: {text}", turn.name)
                        });
                }
            }
        }
    }
    if let Some(e) = embedder {
        r.place_fits_activity = place_share(world, states, e);
        r.steps_like_their_line = step_share(&step_cases, e);
    }
    QualityReport {
        distinct_plan_lines: r.distinct_plan_lines.done(),
        activities_in_script: r.activities_in_script.done(),
        activities_are_actions: r.activities_are_actions.done(),
        whole_activities: r.whole_activities.done(),
        no_sleep_in_the_day: r.no_sleep_in_the_day.done(),
        asleep_when_planned: r.asleep_when_planned.done(),
        no_restart_after_noon: r.no_restart_after_noon.done(),
        going_on_not_restarted: r.going_on_not_restarted.done(),
        steps_not_gone_back_to: r.steps_not_gone_back_to.done(),
        steps_of_their_line: r.steps_of_their_line.done(),
        steps_like_their_line: r.steps_like_their_line.map(Share::done),
        place_follows_plan: r.place_follows_plan.done(),
        urgent_needs_met: super::urgent_needs::urgent_needs_met(states).done(),
        place_fits_activity: r.place_fits_activity.map(Share::done),
        clean_utterances: r.clean_utterances.done(),
        own_voice_utterances: r.own_voice_utterances.done(),
        fresh_utterances: r.fresh_utterances.done(),
        utterances_about_something: r.utterances_about_something.done(),
    }
}

/// A day-plan line as one agent followed it: agent, date, the day plan's text, line start.
type Under = (String, String, String, u32);

/// The steps done under each day-plan line, in order.
#[derive(Default)]
struct LineSteps {
    done: BTreeSet<(Under, String)>,
    last: BTreeMap<Under, String>,
}

impl LineSteps {
    /// Records `step` under `under`; whether it goes back to a step done there before with
    /// other steps between (the same step going on is not going back).
    fn gone_back(&mut self, under: Under, step: String) -> bool {
        let fresh = self.done.insert((under.clone(), step.clone()));
        let going_on = self.last.get(&under) == Some(&step);
        self.last.insert(under, step);
        !fresh && !going_on
    }
}

/// Whether an agent at `location` at `minutes` is in the top-level place its day-plan line
/// names; `None` where the line names none or several, is sleep, or starts at `minutes`.
fn in_plans_place(
    world: &World,
    name: &str,
    plan: &[PlanLine],
    minutes: u32,
    location: &[String],
) -> Option<bool> {
    let line = line_at(plan, minutes).filter(|l| l.minutes < minutes && !is_sleep(&l.activity))?;
    let roots = world.locations.roots();
    let here = location.first()?;
    let current = roots.iter().position(|r| r == here);
    let named = named_places(world, name, &line.activity, &[], &roots, current);
    let mut which = named.iter().enumerate().filter(|(_, &n)| n).map(|(i, _)| i);
    match (which.next(), which.next()) {
        (Some(i), None) => Some(roots[i] == here.as_str()),
        _ => None,
    }
}

/// Whether each agent-step's place fits its activity ([`PlaceFit`]).
fn place_share(
    world: &World,
    states: &[StateFile],
    embedder: &mut dyn TextEmbedder,
) -> Option<Share> {
    let fit = PlaceFit::new(world, embedder)?;
    let activities: BTreeSet<&str> = states
        .iter()
        .flat_map(|s| s.agents.iter().map(|a| a.activity.as_str()))
        .collect();
    let activities: Vec<String> = activities.into_iter().map(str::to_string).collect();
    let act_vecs = embed(embedder, &activities)?;
    let mut share = Share::default();
    for st in states {
        for a in &st.agents {
            let Some(ai) = activities.iter().position(|x| *x == a.activity) else {
                continue;
            };
            let Some(pi) = fit.index(&a.location) else {
                continue;
            };
            let fits = fit.fits(&act_vecs[ai], pi)
                || names_leaf(world, &a.name, &a.activity, &a.location, &a.location);
            share.add(fits, || {
                format!(
                    "{} {}: {} at {}",
                    st.time,
                    a.name,
                    a.activity,
                    display_path(&a.location)
                )
            });
        }
    }
    Some(share)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Vec<String> {
        vec!["John Lin".into(), "Eddy Lin".into()]
    }

    #[test]
    fn a_step_follows_the_place_its_plan_line_names() {
        let world = crate::world::bundled("lin-family.toml");
        let plan = [
            PlanLine::new(720, "eat lunch at Hobbs Cafe"),
            PlanLine::new(780, "unpack deliveries in the storage room"),
            PlanLine::new(1020, "take a walk"),
        ];
        let at = |m: u32, place: &str| {
            let loc = crate::world::parse_path(place).unwrap();
            in_plans_place(&world, "John Lin", &plan, m, &loc)
        };
        assert_eq!(at(735, "Hobbs Cafe"), Some(true));
        assert_eq!(at(735, "Lin family's house/Kitchen"), Some(false));
        assert_eq!(at(720, "Lin family's house/Kitchen"), None, "on the way");
        assert_eq!(
            at(795, "The Willows Market and Pharmacy/Counter"),
            Some(true),
            "the storage room is the pharmacy's"
        );
        assert_eq!(at(1035, "Johnson Park"), None, "names no place");
    }

    #[test]
    fn scripts_are_told_apart() {
        use crate::formats::script::main_script;
        assert!(in_script("eat breakfast with the family", Script::Latin));
        assert!(in_script("café au lait", Script::Latin));
        assert!(!in_script("行停！", Script::Latin));
        assert!(!in_script(
            "Begin serving customers and filling prescriptions at the柜台.",
            Script::Latin
        ));
        assert!(in_script("아침을 먹다", Script::Hangul));
        // A Latin word in a Chinese line is not flagged by this rule (a name, a brand).
        assert!(in_script("去学校上音乐课", Script::Han));
        assert_eq!(
            main_script(["吃早饭", "去学校 school"].into_iter()),
            Script::Han
        );
    }

    #[test]
    fn steps_gone_back_to_are_found_under_one_line() {
        let mut steps = LineSteps::default();
        let under = |m| ("Eddy Lin".into(), "2023-01-03".into(), "plan".into(), m);
        let seq = ["arrive", "sit", "sit", "listen", "arrive", "sit"];
        let gone: Vec<bool> = seq
            .iter()
            .map(|s| steps.gone_back(under(510), s.to_string()))
            .collect();
        assert_eq!(gone, [false, false, false, false, true, true]);
        assert!(
            !steps.gone_back(under(690), "arrive".into()),
            "another line"
        );
    }

    #[test]
    fn restarting_the_day_is_found() {
        assert!(starts_the_day("Wake up"));
        assert!(starts_the_day("Joey wakes up and eats cereal."));
        assert!(starts_the_day("Make breakfast"));
        assert!(!starts_the_day("plan tomorrow's specials"));
        assert!(!starts_the_day("go to bed"));
        assert!(!starts_the_day(
            "Rachel Green wakes up from her nap and feels refreshed."
        ));
    }

    #[test]
    fn labels_and_stage_directions_are_found() {
        let n = names();
        assert!(has_label_or_direction("John Lin: Good morning!", &n));
        assert!(has_label_or_direction("Eddy: hi dad", &n));
        assert!(has_label_or_direction("*smiles* Hello there.", &n));
        assert!(has_label_or_direction("Well (laughs) maybe.", &n));
        assert!(!has_label_or_direction(
            "Good morning, Eddy! Did you sleep well?",
            &n
        ));
        assert!(!has_label_or_direction(
            "Dad: it's 3:00 pm already?",
            &["Mei".into()]
        ));
    }

    #[test]
    fn unfinished_activities_are_found() {
        for cut in [
            "John Lin checks the fridge for ingredients and prepares the",
            "Play the third section of the composition to see if it's",
            "Serve the first customer's prescription and ask about their ",
            "John Lin starts by taking a break from the counter to grab",
            "Joey puts the plates in",
            "Leonard Hofstadter starts reading the new comic book he",
            "Monica walks to the kitchen and cooks on",
            "Serve the dinner (e.g.",
        ] {
            assert!(ends_unfinished(cut), "{cut:?}");
        }
        for whole in [
            "Wake up",
            "Go to bed.",
            "The",
            "Walk to the pharmacy",
            "Decide what to make",
            "Go out to get lunch",
            "Monica Geller settles in",
            "Joey carries on",
            "Put it on",
            "Rachel checked in",
            "Joey is dropping in",
            "吃早饭",
            "Call Mei (his wife)",
        ] {
            assert!(!ends_unfinished(whole), "{whole:?}");
        }
    }

    #[test]
    fn non_actions_are_found() {
        let n = names();
        assert!(not_an_action("EDIE", &["Edie".into()]));
        assert!(not_an_action("John Lin", &n));
        assert!(not_an_action("break into activities of 15 minutes", &n));
        assert!(not_an_action("  ", &n));
        assert!(not_an_action(
            "Rachel Green is feeling neutral, slightly unwell and very, *",
            &n
        ));
        assert!(!not_an_action("serve customers at the counter", &n));
    }
}

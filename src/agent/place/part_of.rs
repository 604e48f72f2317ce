//! The plan line a step is part of, which the walk weighs with the step's own words.

use crate::agent::plan::{part_line, same_words, stays_put, unstopped};
use crate::agent::state::AgentState;

/// The activity as the walk weighs it at `minutes`: the step with the plan line it is part
/// of ("John Lin sits down at the table (part of: eat lunch at Hobbs Cafe)"), so that a
/// step that names no place stays where its part of the plan happens. The line is the one
/// the hour's 15-minute plan was asked for at that time ([`part_line`]: a day-plan line
/// begun inside the hour by then, else the hour's); the step alone when that is the same
/// words or sleep, when a plan change rewrote the hour, when the step is the remedy a
/// change took (the plan's own steps after it keep their line), or when the step is sleep
/// (after going to bed as a remedy, "John Lin is asleep. (part of: Read the newspaper in the
/// living room)" took him from his bed to the living room for the night: a Lin day at
/// e5016f9, session 44). Asked about the step alone,
/// the 1.5B took John Lin home from Hobbs Cafe to sit down for lunch, and from his counter
/// to "continue to serve customers" (a Lin day of session 29); after a meal at home it kept
/// him unpacking the shop's deliveries in his kitchen (a Lin day of session 40).
pub fn placed_activity(state: &AgentState, minutes: u32) -> String {
    let step = state.activity.trim();
    let hour_start = minutes / 60 * 60;
    let alone = crate::agent::plan::is_sleep(step)
        || stays_put(step, &state.name)
        || state
            .suggested_change
            .as_deref()
            .is_some_and(|s| same_words(step, s));
    let part = state
        .part_of
        .as_deref()
        .map(|hour| part_line(hour, &state.day_plan, hour_start, minutes).trim());
    match part {
        Some(part)
            if !alone
                && !part.is_empty()
                && part != crate::agent::plan::ASLEEP
                && !crate::agent::plan::is_sleep(part)
                && !same_words(step, part) =>
        {
            format!("{} (part of: {part})", unstopped(step))
        }
        _ => step.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::World;

    fn lin() -> World {
        crate::world::bundled("lin-family.toml")
    }

    #[test]
    fn a_step_is_placed_with_the_hour_it_is_part_of() {
        use crate::agent::PlanLine;
        let world = lin();
        let mut s = AgentState::from_spec(&world.agents[0], false);
        s.activity = "John Lin sits down at the table.".into();
        s.part_of = Some("Eat lunch at Hobbs Cafe".into());
        assert_eq!(
            placed_activity(&s, 735),
            "John Lin sits down at the table (part of: Eat lunch at Hobbs Cafe)"
        );
        for alone in [
            "Go to bed",
            ASLEEP_LINE,
            "john lin sits down at the table",
            " ",
        ] {
            s.part_of = Some(alone.into());
            assert_eq!(placed_activity(&s, 735), s.activity, "{alone}");
        }
        s.part_of = None;
        assert_eq!(placed_activity(&s, 735), s.activity);
        // A day-plan line that started inside the hour is the part, from its time on.
        s.activity = "John Lin walks down the street.".into();
        s.part_of = Some("Make breakfast in the kitchen".into());
        s.day_plan = vec![
            PlanLine::new(390, "make breakfast in the kitchen"),
            PlanLine::new(450, "walk to the pharmacy"),
        ];
        assert!(placed_activity(&s, 435).ends_with("(part of: Make breakfast in the kitchen)"));
        assert!(placed_activity(&s, 450).ends_with("(part of: walk to the pharmacy)"));
    }

    #[test]
    fn a_remedy_is_placed_alone_and_the_hours_steps_after_it_with_their_line() {
        use crate::agent::plan::{apply_change, PlanChange};
        use crate::agent::PlanLine;
        let world = lin();
        let mut s = AgentState::from_spec(&world.agents[0], false);
        let unpack = "unpack deliveries in the storage room";
        s.part_of = Some(unpack.into());
        s.quarter_plan = vec![
            PlanLine::new(960, "John Lin opens a box."),
            PlanLine::new(975, "John Lin opens another box."),
            PlanLine::new(990, "He places the items on the shelf."),
        ];
        let eat = "John Lin gets something to eat.";
        let remedy = PlanChange {
            suggestion: eat.into(),
            lines: vec![
                PlanLine::new(960, eat),
                PlanLine::new(975, eat),
                PlanLine::new(990, "He places the items on the shelf."),
            ],
            carry: Vec::new(),
            remedy: true,
        };
        apply_change(&mut s, &remedy, 960);
        s.activity = eat.into();
        assert_eq!(placed_activity(&s, 975), eat);
        s.activity = "He places the items on the shelf.".into();
        assert_eq!(
            placed_activity(&s, 990),
            format!("He places the items on the shelf (part of: {unpack})")
        );
        // A rewritten hour is no longer part of its line.
        let rewritten = PlanChange {
            remedy: false,
            suggestion: "take the afternoon off".into(),
            ..remedy
        };
        apply_change(&mut s, &rewritten, 990);
        assert_eq!(placed_activity(&s, 990), s.activity);
    }

    #[test]
    fn sleep_after_going_to_bed_as_a_remedy_is_placed_alone() {
        use crate::agent::plan::{apply_change, PlanChange};
        use crate::agent::PlanLine;
        let world = lin();
        let mut s = AgentState::from_spec(&world.agents[0], false);
        s.part_of = Some("Read the newspaper in the living room".into());
        let bed = "John Lin goes to bed.";
        let asleep = "John Lin is asleep.";
        let remedy = PlanChange {
            suggestion: bed.into(),
            lines: vec![PlanLine::new(1290, bed), PlanLine::new(1305, asleep)],
            carry: Vec::new(),
            remedy: true,
        };
        apply_change(&mut s, &remedy, 1290);
        s.activity = asleep.into();
        assert_eq!(placed_activity(&s, 1305), asleep);
    }

    const ASLEEP_LINE: &str = crate::agent::plan::ASLEEP;
}

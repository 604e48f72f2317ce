//! The plan line a step is part of, which the walk weighs with the step's own words.

use crate::agent::plan::{same_words, unstopped};
use crate::agent::state::AgentState;

/// The activity as the walk weighs it at `minutes`: the step with the plan line it is part
/// of ("John Lin sits down at the table (part of: eat lunch at Hobbs Cafe)"), so that a
/// step that names no place stays where its part of the plan happens. The line is the day
/// plan's when one starts inside the hour by then (the 15-minute plan is asked in parts at
/// those, [`crate::agent::plan::hour_parts`]), else the hour's; the step alone when that is the
/// same words, sleep, or rewritten by a plan change. Asked about the step alone, the 1.5B
/// took John Lin home from Hobbs Cafe to sit down for lunch, and from his counter to
/// "continue to serve customers" (a Lin day of session 29).
pub fn placed_activity(state: &AgentState, minutes: u32) -> String {
    let step = state.activity.trim();
    let hour_start = minutes / 60 * 60;
    let part = state.part_of.as_deref().map(|hour| {
        crate::agent::state::line_at(&state.day_plan, minutes)
            .filter(|l| l.minutes > hour_start)
            .map_or(hour, |l| l.activity.as_str())
            .trim()
    });
    match part {
        Some(part)
            if !part.is_empty()
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

    const ASLEEP_LINE: &str = crate::agent::plan::ASLEEP;
}

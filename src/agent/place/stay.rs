//! Where a remedy taken where the agent is happens: the agent's place, unless it is a
//! bathroom.

use crate::agent::activity_text::has_phrase;
use crate::world::World;

use super::{child, options, others_rooms};

/// Words that make a room one passed through, not one to sit in (whole words, any case).
const PASSING_ROOMS: &[&str] = &["bathroom", "toilet", "restroom", "washroom", "shower room"];
/// Words that make a room one to sit in: the first choice on leaving a bathroom.
const SITTING_ROOMS: &[&str] = &[
    "living room",
    "sitting room",
    "family room",
    "lounge",
    "den",
];

/// Where `name`, at the leaf `location`, rests, takes a break for fun or goes for a walk
/// that names no place: `location` itself, except a bathroom (`PASSING_ROOMS`); then a
/// room of the same place to sit in (`SITTING_ROOMS`), else its first room that is
/// neither a bathroom nor another agent's, else the bathroom after all. Penny, out of the
/// shower at 6:45 pm, sat down and rested in her bathroom until 7:45 pm (a Big Bang Theory
/// day of session 45).
pub fn stay_place(world: &World, name: &str, location: &[String]) -> Vec<String> {
    let room = |o: &str, words: &[&str]| {
        let o = o.to_lowercase();
        words.iter().any(|w| has_phrase(&o, w))
    };
    let Some((here, parent)) = location.split_last() else {
        return location.to_vec();
    };
    if parent.is_empty() || !room(here, PASSING_ROOMS) {
        return location.to_vec();
    }
    let siblings = options(world, parent);
    let others = others_rooms(world, name, parent, &siblings);
    let open: Vec<&str> = siblings
        .iter()
        .zip(&others)
        .filter(|(o, other)| {
            !**other && !room(o, PASSING_ROOMS) && world.locations.is_leaf(&child(parent, o))
        })
        .map(|(o, _)| *o)
        .collect();
    open.iter()
        .find(|o| room(o, SITTING_ROOMS))
        .or(open.first())
        .map_or_else(|| location.to_vec(), |o| child(parent, o))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::world::bundled;

    fn path(p: &str) -> Vec<String> {
        p.split('/').map(str::to_string).collect()
    }

    #[test]
    fn a_rest_in_a_bathroom_moves_to_a_room_to_sit_in() {
        let bbt = bundled("big-bang-theory.toml");
        let at = |name: &str, place: &str| stay_place(&bbt, name, &path(place));
        assert_eq!(
            at("Penny", "Apartment 4B/Bathroom"),
            path("Apartment 4B/Living room")
        );
        assert_eq!(
            at("Sheldon Cooper", "Apartment 4A/Bathroom"),
            path("Apartment 4A/Living room")
        );
        // Elsewhere the place is kept: a room, a place without parts.
        assert_eq!(
            at("Penny", "Apartment 4B/Bedroom"),
            path("Apartment 4B/Bedroom")
        );
        assert_eq!(at("Penny", "Stairwell"), path("Stairwell"));
        assert_eq!(
            at("Sheldon Cooper", "Caltech/Cafeteria"),
            path("Caltech/Cafeteria")
        );
    }

    #[test]
    fn without_a_room_to_sit_in_the_first_that_is_not_anothers() {
        let world = World::parse(
            r#"
name = "T"
start_date = "2024-01-01"
locations = ["Flat/Ann's bedroom", "Flat/Bathroom", "Flat/Bob's bedroom", "Office/Restroom"]
[[agents]]
name = "Bob"
age = 30
location = "Flat/Bob's bedroom"
traits = ["t"]
description = ["d"]
example_day_plan = ["08:00 am: work"]
[[agents]]
name = "Ann"
age = 30
location = "Flat/Ann's bedroom"
traits = ["t"]
description = ["d"]
example_day_plan = ["08:00 am: work"]
"#,
            std::path::Path::new("t.toml"),
        )
        .unwrap();
        assert_eq!(
            stay_place(&world, "Bob", &path("Flat/Bathroom")),
            path("Flat/Bob's bedroom")
        );
        // Nowhere else in the building: the restroom after all.
        assert_eq!(
            stay_place(&world, "Bob", &path("Office/Restroom")),
            path("Office/Restroom")
        );
    }
}

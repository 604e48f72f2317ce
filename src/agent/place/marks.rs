//! Marks on a level's options that weigh the walk's decision: which are other agents' rooms,
//! which the activity names, and which holds the agent now.

use std::collections::BTreeSet;

use crate::agent::activity_text::has_phrase;
use crate::world::World;

use super::child;

/// Which of `options` (the parts of `parent`) are innermost places named for an agent of the
/// world other than `name`: "John Lin's bedroom" or "John's bedroom" when Eddy Lin moves.
pub fn others_rooms(world: &World, name: &str, parent: &[String], options: &[&str]) -> Vec<bool> {
    let owners: Vec<(String, String)> = world
        .agents
        .iter()
        .filter(|a| a.name != name)
        .map(|a| {
            let full = a.name.to_lowercase();
            let first = full
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
            (format!("{full}'s"), format!("{first}'s"))
        })
        .collect();
    options
        .iter()
        .map(|o| {
            let leaf = world.locations.is_leaf(&child(parent, o));
            let o = lower(o);
            leaf && owners
                .iter()
                .any(|(full, first)| o.contains(full.as_str()) || o.contains(first.as_str()))
        })
        .collect()
}

/// Which of `options` (the parts of `parent`) the activity names: the option's own name or
/// the name of one of its parts, as whole words in any case, a leading "The" left out and a
/// plural "s" allowed ("the kitchen counters" names a Counter); a place named for `name`
/// ("Eddy Lin's bedroom") also by "his/her/their/my/own bedroom", and any agent's place by
/// the first name ("John's bedroom"); a bedroom with a word before it also by its room or
/// bed ("the spare room"); the agent's own bedroom by bed, sleep, a nap or dressing; the
/// agent's home by "home" (not when leaving it); a building by its last word after "to the",
/// "at the" or "in the" ("head to the college"); a place called for its owner by the owner's
/// first name and a part ("Monica's kitchen") or a bare "at Monica's"; a bathroom also by a
/// shower, a bath, the toilet or teeth. A part that several options hold (a kitchen in two
/// buildings) names the agent's home when the option the agent is in (`current`) has no
/// such part ("play a game in the living room" at the office; not a bathroom break), and
/// none of them otherwise. Going to bed with no bedroom of one's own, when nothing else is
/// named, names the place where the world starts the agent; the family, when nothing else
/// is named, the agent's home.
pub fn named_places(
    world: &World,
    name: &str,
    activity: &str,
    parent: &[String],
    options: &[&str],
    current: Option<usize>,
) -> Vec<bool> {
    let text = lower(activity);
    let me = name.to_lowercase();
    // "go to bed", "take a nap": the agent's own bedroom; not "make up the spare bed" (the
    // bed of a room the world names, which names that room).
    let mut beds_left = text.clone();
    for leaf in world.locations.leaves() {
        let room = leaf.last().map(|r| lower(r)).unwrap_or_default();
        if let Some(stem) = room.strip_suffix(" bedroom").filter(|s| !s.is_empty()) {
            beds_left = beds_left.replace(&format!("{stem} bed"), &room);
        }
    }
    let sleeps = [
        "bed", "sleep", "sleeping", "asleep", "nap", "napping", "turn in", "turns in",
    ]
    .iter()
    .any(|w| has_phrase(&beds_left, w));
    // "get dressed", "change into his pyjamas", "a clean shirt": the agent's own bedroom
    // (where the labelled place sets put every such line of an agent with a bedroom).
    let dresses = [
        "dressed",
        "dress",
        "pyjamas",
        "pajamas",
        "clothes",
        "shirt",
        "trousers",
        "wardrobe",
        "change into",
        "changes into",
        "change out of",
        "changes out of",
    ]
    .iter()
    .any(|w| has_phrase(&text, w));
    // "take a shower", "brush his teeth": a bathroom, and one at home if the agent's building
    // has none; "go to the bathroom", "use the toilet": the one where the agent is.
    let washes = ["shower", "bath", "bathe", "teeth"]
        .iter()
        .any(|w| has_phrase(&text, w));
    let toilet = has_phrase(&text, "toilet");
    // An agent with no bedroom of their own goes to bed where the world starts them (Rachel
    // Green wakes in the wedding hall's bridal suite; she went to bed in Monica's kitchen in a
    // Friends day of session 31, and in Monica's spare bedroom, a bedroom nobody's name is on,
    // after session 32's rule, where the labels have her in the suite). One who is asleep
    // already stays.
    let to_bed = ["bed", "sleep", "turn in", "turns in"]
        .iter()
        .any(|w| has_phrase(&beds_left, w));
    let first_name = me.split_whitespace().next().unwrap_or(&me);
    let own_bedroom = world.locations.leaves().iter().any(|l| {
        l.last().is_some_and(|part| {
            let part = lower(part);
            part == format!("{me}'s bedroom") || part == format!("{first_name}'s bedroom")
        })
    });
    let names_place = |place: &str| {
        let place = lower(place);
        let bare = place.strip_prefix("the ").unwrap_or(&place);
        if says_room(&text, bare) || (bare == "bathroom" && (washes || toilet)) {
            return true;
        }
        let Some((owner, rest)) = bare.split_once("'s ") else {
            return false;
        };
        let first = owner.split_whitespace().next().unwrap_or(owner);
        says_room(&text, &format!("{first}'s {rest}"))
            || ((owner == me || Some(owner) == me.split_whitespace().next())
                && (["his", "her", "their", "my", "own"]
                    .iter()
                    .any(|p| says_room(&text, &format!("{p} {rest}")))
                    || (rest == "bedroom" && (sleeps || dresses))))
    };
    let home = world
        .agents
        .iter()
        .find(|a| a.name == name)
        .and_then(|a| a.home());
    let start = world
        .agents
        .iter()
        .find(|a| a.name == name)
        .map(|a| a.location.as_slice());
    let bed_at_start =
        |o: &str| to_bed && !own_bedroom && start.is_some_and(|s| s.starts_with(&child(parent, o)));
    let is_home = |o: &str| {
        let p = child(parent, o);
        home.is_some_and(|h| h.starts_with(&p) || p.starts_with(h))
    };
    // "walk home", "at home": the agent's home and the places in it, unless leaving it.
    let says_home = has_phrase(&text, "home") && !text.contains("leav");
    // The parts each option holds (lowercased), and those the activity names.
    let leaves = world.locations.leaves();
    let held: Vec<BTreeSet<String>> = options
        .iter()
        .map(|o| {
            let p = child(parent, o);
            leaves
                .iter()
                .filter(|l| l.len() > p.len() && l.starts_with(&p))
                .flat_map(|l| l[p.len()..].iter())
                .map(|part| lower(part))
                .collect()
        })
        .collect();
    let named: Vec<BTreeSet<&String>> = held
        .iter()
        .map(|parts| parts.iter().filter(|part| names_place(part)).collect())
        .collect();
    // A part that two options hold ("the kitchen" of two flats and a restaurant) names none
    // of them: it says which room, not which building.
    let shared = |part: &String| named.iter().filter(|ps| ps.contains(part)).count() > 1;
    // Such a room the agent's building lacks is the one at home, except a bathroom wanted
    // for itself (at work one uses the one there, whatever the world lists).
    let lacked = |part: &String| {
        (part != "bathroom" || washes)
            && current.is_some_and(|c| held.get(c).is_some_and(|h| !h.contains(part)))
    };
    // A building by its last word after "to the", "at the" or "in the" ("head to the
    // college": Oak Hill College; "at the pharmacy": The Willows Market and Pharmacy; not
    // "cross the hall"), where no other option ends in that word.
    let heads: Vec<Option<String>> = options
        .iter()
        .map(|o| {
            let o = lower(o);
            let mut words = o.split_whitespace();
            let last = words.next_back()?;
            words.next()?;
            Some(last.to_string())
        })
        .collect();
    let by_head = |i: usize| {
        heads[i].as_ref().is_some_and(|h| {
            heads.iter().filter(|x| x.as_ref() == Some(h)).count() == 1
                && ["to", "at", "in", "into", "inside"]
                    .iter()
                    .any(|p| has_phrase(&text, &format!("{p} the {h}")))
        })
    };
    let marks: Vec<bool> = options
        .iter()
        .zip(held.iter().zip(&named))
        .enumerate()
        .map(|(i, (o, (held, named)))| {
            (says_home && is_home(o))
                || (parent.is_empty() && by_head(i))
                || names_place(o)
                || named.iter().any(|part| !shared(part))
                || names_by_owner(&text, o, held)
                || (is_home(o) && named.iter().any(|part| lacked(part)))
        })
        .collect();
    // The starting place is a bed's default: a place the activity names comes first ("goes
    // to sleep in the spare room").
    if marks.contains(&true) {
        return marks;
    }
    // "have dinner with the family", named nowhere else: the agent's home, unless leaving
    // it. Eddy Lin, in Johnson Park at 6 pm, had dinner with the family there (the 1.5B's
    // answer barely preferred home; a Lin day of session 40).
    let with_family = has_phrase(&text, "family") && !text.contains("leav");
    options
        .iter()
        .map(|o| bed_at_start(o) || (with_family && is_home(o)))
        .collect()
}

/// Lowercase, with typographic apostrophes as plain ones ("Monica’s" and "monica's" match).
fn lower(s: &str) -> String {
    s.to_lowercase().replace('\u{2019}', "'")
}

/// Whether `text` names a place called for its owner ("Monica's apartment") by the owner's
/// first name and one of the parts it holds ("Monica's kitchen", even where other buildings
/// have a kitchen) or by the bare possessive ("dinner at Monica's.", "Monica's place").
fn names_by_owner(text: &str, option: &str, held: &BTreeSet<String>) -> bool {
    let option = lower(option);
    let Some((owner, _)) = option.split_once("'s ") else {
        return false;
    };
    let first = owner.split_whitespace().next().unwrap_or(owner);
    let possessive = format!("{first}'s");
    let bare = text.match_indices(&possessive).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let rest = text[i + possessive.len()..].trim_start();
        !before.is_some_and(char::is_alphanumeric)
            && (!rest.starts_with(char::is_alphanumeric) || rest.starts_with("place"))
    });
    bare || held.iter().any(|part| {
        let part = part.strip_prefix("the ").unwrap_or(part);
        has_phrase(text, &format!("{possessive} {part}"))
    })
}

/// Names of a place of stairs, each named by any of them: Penny, back from Caltech, went on
/// "carrying the last box up the stairs" in its cafeteria (a Big Bang Theory day of session
/// 45, whose world has a Stairwell).
const STAIRS: &[&str] = &["stairwell", "staircase", "stairway", "stairs"];

/// Whether `text` names the room `room` (lowercased): its name as whole words, a place of
/// stairs by any word for stairs ([`STAIRS`]), and a bedroom with a word before it also by
/// its room or its bed ("Spare bedroom": "the spare room", "the spare bed"; "Joey's
/// bedroom": "Joey's room").
fn says_room(text: &str, room: &str) -> bool {
    if has_phrase(text, room)
        || (STAIRS.contains(&room) && STAIRS.iter().any(|w| has_phrase(text, w)))
    {
        return true;
    }
    room.strip_suffix(" bedroom").is_some_and(|stem| {
        !stem.is_empty()
            && (has_phrase(text, &format!("{stem} room"))
                || has_phrase(text, &format!("{stem} bed")))
    })
}

/// Which of `options` the agent's `location` is in, at `depth` below `path`.
pub fn current_option(location: &[String], path: &[String], options: &[&str]) -> Option<usize> {
    let depth = path.len();
    if location.len() > depth && location[..depth] == path[..] {
        options.iter().position(|o| *o == location[depth])
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::options;

    use super::super::tests::lin;
    use super::*;
    use crate::world::bundled;

    /// The options under `parent` that `activity` names for `agent`, by name.
    fn named_in(
        world: &World,
        agent: &str,
        activity: &str,
        parent: &[String],
        current: Option<&str>,
    ) -> Vec<String> {
        let opts = options(world, parent);
        let current = current.and_then(|c| opts.iter().position(|o| *o == c));
        named_places(world, agent, activity, parent, &opts, current)
            .into_iter()
            .zip(&opts)
            .filter(|(n, _)| *n)
            .map(|(_, o)| o.to_string())
            .collect()
    }

    #[test]
    fn an_activity_names_a_place_by_its_name_a_part_or_a_possessive() {
        let world = lin();
        let top = options(&world, &[]);
        let named = |agent: &str, activity: &str, parent: &[String]| {
            named_in(&world, agent, activity, parent, None)
        };
        assert_eq!(top.len(), 5, "{top:?}");
        // A part names its building; "the" and case do not matter.
        assert_eq!(
            named("John Lin", "John Lin greets customers at the counter.", &[]),
            ["The Willows Market and Pharmacy"]
        );
        assert_eq!(
            named("John Lin", "unpack deliveries in the Storage Room", &[]),
            ["The Willows Market and Pharmacy"]
        );
        assert_eq!(
            named("Eddy Lin", "walk around Johnson Park", &[]),
            ["Johnson Park"]
        );
        // Whole words only, a plural allowed.
        assert!(named("John Lin", "encounters an old friend", &[]).is_empty());
        assert_eq!(
            named("John Lin", "wipe the counters", &[]),
            ["The Willows Market and Pharmacy"]
        );
        // "his bedroom" is the agent's own; another's by the first name.
        let house = vec!["Lin family's house".to_string()];
        assert_eq!(
            named("Eddy Lin", "work on his composition in his bedroom", &house),
            ["Eddy Lin's bedroom"]
        );
        assert_eq!(
            named("Eddy Lin", "tidy up John's bedroom", &house),
            ["John Lin's bedroom"]
        );
        assert!(named("Eddy Lin", "play the piano", &house).is_empty());
        // Bed, sleep or a nap: the agent's own bedroom, not another's.
        assert_eq!(
            named("Eddy Lin", "Eddy Lin goes to bed.", &house),
            ["Eddy Lin's bedroom"]
        );
        assert_eq!(
            named("John Lin", "take a nap before dinner", &house),
            ["John Lin's bedroom"]
        );
        assert!(named("John Lin", "make breakfast", &house).is_empty());
        // "home" is the agent's home and every room in it, except when leaving.
        assert_eq!(
            named("John Lin", "close the shop and walk home", &[]),
            ["Lin family's house"]
        );
        assert_eq!(named("John Lin", "relax at home", &house).len(), 5);
        assert!(named("John Lin", "leave home for work", &[]).is_empty());
        // The family, named nowhere else, is at home.
        assert_eq!(
            named("Eddy Lin", "have dinner with the family", &[]),
            ["Lin family's house"]
        );
        assert_eq!(
            named("Eddy Lin", "have lunch with the family at Hobbs Cafe", &[]),
            ["Hobbs Cafe"]
        );
        assert!(named("Eddy Lin", "leave the family dinner early", &[]).is_empty());
    }

    #[test]
    fn a_building_is_named_by_its_last_word_after_the() {
        let lin = lin();
        let named = |agent: &str, activity: &str| named_in(&lin, agent, activity, &[], None);
        assert_eq!(
            named("Eddy Lin", "head to the college for the lecture"),
            ["Oak Hill College"]
        );
        assert_eq!(
            named("Eddy Lin", "drop in on his father at the pharmacy"),
            ["The Willows Market and Pharmacy"]
        );
        assert!(named("Eddy Lin", "apply to a college abroad").is_empty());
        let house = vec!["Lin family's house".to_string()];
        assert_eq!(
            named_in(&lin, "Eddy Lin", "change into his pyjamas", &house, None),
            ["Eddy Lin's bedroom"]
        );
        // A remedy's words (`remedy::place_phrase`) name the building and the room.
        let remedy =
            "John Lin goes to the living room in Lin family's house to talk with Eddy Lin.";
        assert_eq!(named("John Lin", remedy), ["Lin family's house"]);
        assert_eq!(
            named_in(&lin, "John Lin", remedy, &house, None),
            ["Living room"]
        );
        let friends = bundled("friends.toml");
        // Two apartments: "the apartment" says which room, not which building.
        assert!(named_in(&friends, "Joey Tribbiani", "leave the apartment", &[], None).is_empty());
    }

    #[test]
    fn stairs_name_a_stairwell() {
        let bbt = bundled("big-bang-theory.toml");
        let named = |activity: &str| named_in(&bbt, "Penny", activity, &[], None);
        assert_eq!(
            named("Penny continues by carrying the last box up the stairs."),
            ["Stairwell"]
        );
        assert_eq!(named("wait on the staircase"), ["Stairwell"]);
        // Not "upstairs" or "downstairs": they say where, not a stairwell.
        assert!(named("Penny goes downstairs").is_empty());
        assert!(named("Penny goes upstairs for a drink").is_empty());
    }

    #[test]
    fn a_room_that_several_buildings_have_names_none_of_them() {
        let world = bundled("friends.toml");
        let top = options(&world, &[]);
        let named = |activity: &str, parent: &[String]| {
            named_in(&world, "Rachel Green", activity, parent, None)
        };
        assert!(top.len() >= 4, "{top:?}");
        // Two flats and a restaurant have a kitchen: the line names no building...
        assert!(named("Rachel walks to the kitchen and grabs a cup", &[]).is_empty());
        // ...but in a flat it names the room.
        let flat = vec!["Monica's apartment".to_string()];
        assert_eq!(named("walk to the kitchen", &flat), ["Kitchen"]);
        // A room only one building has still names it.
        assert_eq!(named("sit in the bridal suite", &[]).len(), 1);
        // The owner's first name says which building's kitchen; so does "at Monica's".
        assert_eq!(
            named("Joey Tribbiani enters Monica's kitchen", &[]),
            ["Monica's apartment"]
        );
        assert_eq!(
            named("cross the hall for breakfast at Monica's.", &[]),
            ["Monica's apartment"]
        );
        assert_eq!(named("Joey's living room", &[]), ["Joey's apartment"]);
        assert!(named("look at Monica's food bowl", &[]).is_empty());
        // A room named for the first name is the agent's own ("Joey's bedroom").
        assert_eq!(
            named_in(&world, "Joey Tribbiani", "go to bed", &[], None),
            ["Joey's apartment"]
        );
        assert_eq!(
            named_in(&world, "Monica Geller", "turn in for the night", &[], None),
            ["Monica's apartment"]
        );
        // With no bedroom of one's own, a bed is where the world starts the agent.
        let flat = vec!["Monica's apartment".to_string()];
        let hall = vec!["Long Island wedding hall".to_string()];
        assert_eq!(
            named_in(
                &world,
                "Rachel Green",
                "Rachel Green goes to bed.",
                &[],
                None
            ),
            ["Long Island wedding hall"]
        );
        assert_eq!(
            named_in(
                &world,
                "Rachel Green",
                "Rachel turns in for the night.",
                &hall,
                None
            ),
            ["Bridal suite"]
        );
        assert!(named_in(&world, "Rachel Green", "Rachel goes to sleep.", &flat, None).is_empty());
        assert_eq!(
            named_in(&world, "Rachel Green", "sleep in the spare room", &[], None),
            ["Monica's apartment"]
        );
        assert_eq!(
            named_in(
                &world,
                "Monica Geller",
                "make up the spare bed",
                &flat,
                None
            ),
            ["Spare bedroom"]
        );
        assert_eq!(
            named_in(&world, "Monica Geller", "tidy Joey's room", &[], None),
            ["Joey's apartment"]
        );
        assert!(named_in(&world, "Rachel Green", "Rachel Green is asleep.", &[], None).is_empty());
        assert!(named_in(&world, "Joey Tribbiani", "go to bed", &flat, None).is_empty());
    }

    #[test]
    fn a_room_the_agents_building_lacks_is_the_one_at_home() {
        let world = bundled("big-bang-theory.toml");
        let named = |agent: &str, activity: &str, at: &str| {
            named_in(&world, agent, activity, &[], Some(at))
        };
        // From a Big Bang Theory day (session 24), both kept where they were.
        assert_eq!(
            named(
                "Sheldon Cooper",
                "play an online game in the living room",
                "Caltech"
            ),
            ["Apartment 4A"]
        );
        assert_eq!(
            named("Penny", "Penny takes a shower.", "The Cheesecake Factory"),
            ["Apartment 4B"]
        );
        // A bathroom break at work is taken there, not at home.
        assert!(named(
            "Leonard Hofstadter",
            "Take a break and go to the bathroom.",
            "Caltech"
        )
        .is_empty());
        // Where the building has one, the room names no building: the agent stays.
        assert!(named("Penny", "go to the bathroom", "Apartment 4B").is_empty());
        assert!(named("Penny", "go to the kitchen", "The Cheesecake Factory").is_empty());
        // Without knowing where the agent is, a shared room still names none.
        assert!(named_in(&world, "Penny", "take a shower", &[], None).is_empty());
    }
}

//! Tests of the remedies for urgent needs.

use super::*;
use crate::world::World;

fn bbt() -> World {
    crate::world::bundled("big-bang-theory.toml")
}

fn at(name: &str, place: &str, activity: &str) -> Whereabouts {
    Whereabouts {
        name: name.into(),
        location: place.split('/').map(String::from).collect(),
        activity: activity.into(),
    }
}

fn needs(energy: u8, social: u8) -> Needs {
    let mut n = Needs::default();
    for need in Need::ALL {
        n.set(need, 6);
    }
    n.set(Need::Energy, energy);
    n.set(Need::Social, social);
    n
}

#[test]
fn a_tired_agent_rests_in_the_day_and_goes_to_bed_at_night() {
    let w = bbt();
    let sheldon = &w.agents[0];
    let here = &sheldon.location;
    let day = remedies(&w, sheldon, &needs(0, 6), here, &[], 19 * 60);
    assert_eq!(day.len(), 1);
    assert_eq!(
        day[0].activity,
        "Sheldon Cooper sits down and rests for a while."
    );
    let night = remedies(&w, sheldon, &needs(1, 6), here, &[], 21 * 60 + 15);
    assert_eq!(night[0].activity, "Sheldon Cooper goes to bed.");
    let planned = [
        PlanLine::new(1275, "read"),
        PlanLine::new(1290, "read"),
        PlanLine::new(1305, "read"),
    ];
    let (bed, carry) = remedy_lines(&sheldon.name, &night[0], &planned, 15, 24 * 60);
    assert_eq!(bed[2].activity, "Sheldon Cooper is asleep.");
    assert!(
        carry.is_empty(),
        "asleep for the night: the day plan sleeps on"
    );
    assert!(remedies(&w, sheldon, &needs(2, 2), here, &[], 600).is_empty());
    // A rest lasts until the agent is no longer tired: from 0, an hour.
    let steps: Vec<usize> = [0, 1]
        .map(|e| remedies(&w, sheldon, &needs(e, 6), here, &[], 600)[0].steps)
        .to_vec();
    assert_eq!(steps, [4, 3]);
}

#[test]
fn a_lonely_agent_goes_to_someone_it_knows_who_is_awake() {
    let w = bbt();
    let sheldon = &w.agents[0];
    let here: Vec<String> = vec!["Caltech".into(), "Sheldon's office".into()];
    let others = [
        at(
            "Leonard Hofstadter",
            "Caltech/Leonard's lab",
            "align the lasers",
        ),
        at("Penny", "Apartment 4B/Penny's bedroom", "Penny is asleep."),
        at("John", "Caltech/Sheldon's office", "work"),
    ];
    let r = remedies(&w, sheldon, &needs(5, 0), &here, &others, 15 * 60);
    let acts: Vec<_> = r.iter().map(|r| r.activity.as_str()).collect();
    assert_eq!(
        acts,
        ["Sheldon Cooper goes to Leonard's lab in Caltech to talk with Leonard Hofstadter."]
    );
    assert_eq!(
        place_phrase(&["Apartment 4A".into(), "Living room".into()]),
        "the living room in Apartment 4A"
    );
    assert_eq!(place_phrase(&["Stairwell".into()]), "Stairwell");
    assert_eq!(
        place_phrase(&["Caltech".into(), "Leonard's lab".into()]),
        "Leonard's lab in Caltech"
    );
    assert_eq!(r[0].option, "talk with Leonard Hofstadter");
    // Not yet seen doing anything (before a run's first step): not known to be awake.
    let unseen = [at("Penny", "Apartment 4B/Living room", "")];
    assert!(remedies(&w, sheldon, &needs(5, 0), &here, &unseen, 15 * 60).is_empty());
    let beside = [at("Leonard Hofstadter", "Caltech/Sheldon's office", "read")];
    let r = remedies(&w, sheldon, &needs(0, 1), &here, &beside, 15 * 60);
    let acts: Vec<_> = r.iter().map(|r| r.activity.as_str()).collect();
    assert_eq!(
        acts,
        [
            "Sheldon Cooper talks with Leonard Hofstadter.",
            "Sheldon Cooper sits down and rests for a while.",
        ]
    );
    // Both remedy texts say whom the agent came to talk with; nothing else does.
    let came = |activity: &str, other: &str| came_to_talk(activity, "Sheldon Cooper", other);
    assert!(came(acts[0], "Leonard Hofstadter"));
    assert!(came(
        "Sheldon Cooper goes to Leonard's lab in Caltech to talk with Leonard Hofstadter.",
        "Leonard Hofstadter"
    ));
    assert!(!came(acts[0], "Penny"));
    assert!(!came(acts[1], "Leonard Hofstadter"));
    assert!(!came(
        "Sheldon Cooper goes to the lab to talk with Leonard Hofstadter about string theory.",
        "Leonard Hofstadter"
    ));
    assert!(!came(
        "Leonard Hofstadter talks with Leonard Hofstadter.",
        "Leonard Hofstadter"
    ));
    let planned: Vec<PlanLine> = [900, 915, 930, 945]
        .iter()
        .map(|&m| PlanLine::new(m, "calculate"))
        .collect();
    let text =
        |lines: &[PlanLine]| -> Vec<String> { lines.iter().map(ToString::to_string).collect() };
    // Extremely tired (energy 0): a rest of four steps, until no longer tired.
    let rest = |n: usize| vec![r[1].activity.clone(); n];
    let (lines, carry) = remedy_lines("Sheldon Cooper", &r[1], &planned, 15, 24 * 60);
    assert_eq!(
        lines.iter().map(|l| l.activity.clone()).collect::<Vec<_>>(),
        rest(4)
    );
    assert!(carry.is_empty());
    // Talking takes half an hour.
    let (lines, _) = remedy_lines("Sheldon Cooper", &r[0], &planned, 15, 24 * 60);
    assert_eq!(lines[1].activity, r[0].activity);
    assert_eq!(lines[2].activity, "calculate");
    // Decided at 3:45 pm, the rest goes on into the next hour, but not past the day's end.
    let (lines, carry) = remedy_lines("Sheldon Cooper", &r[1], &planned[3..], 15, 24 * 60);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        text(&carry),
        [
            "04:00 pm: Sheldon Cooper sits down and rests for a while.",
            "04:15 pm: Sheldon Cooper sits down and rests for a while.",
            "04:30 pm: Sheldon Cooper sits down and rests for a while.",
        ]
    );
    let (_, carry) = remedy_lines("Sheldon Cooper", &r[1], &planned[3..], 15, 16 * 60 + 15);
    assert_eq!(carry.len(), 1);
    let q = remedy_question("Sheldon Cooper", "feeling neutral and lonely", &r);
    assert!(
        q.ends_with(
            "\n1. talk with Leonard Hofstadter\n2. rest for a while\nAnswer with the number."
        ),
        "{q}"
    );
}

#[test]
fn a_walk_goes_to_the_park_a_meal_out_to_a_place_to_eat_a_rest_stays_put() {
    let lin = crate::world::bundled("lin-family.toml");
    let john = &lin.agents[0];
    let path = |p: &str| -> Vec<String> { p.split('/').map(String::from).collect() };
    let mut needs = Needs::default();
    for need in [Need::Fullness, Need::Health] {
        needs.set(need, 0);
    }
    let acts = |place: &str| -> Vec<String> {
        remedies(&lin, john, &needs, &path(place), &[], 600)
            .into_iter()
            .map(|r| r.activity)
            .collect()
    };
    assert_eq!(
        acts("The Willows Market and Pharmacy/Counter"),
        [
            "John Lin gets something to eat at Hobbs Cafe.",
            "John Lin goes for a walk in Johnson Park.",
        ]
    );
    // At home in its kitchen; in the park the walk stays there.
    assert_eq!(acts("Johnson Park")[1], "John Lin goes for a walk.");
    // The walk lasts until the agent is no longer unwell (an hour from 0), the meal
    // half an hour.
    let steps: Vec<usize> = remedies(&lin, john, &needs, &path("Johnson Park"), &[], 600)
        .iter()
        .map(|r| r.steps)
        .collect();
    assert_eq!(steps, [REMEDY_STEPS, 4]);
    let mut unwell = needs;
    unwell.set(Need::Health, 1);
    let walk = &remedies(&lin, john, &unwell, &path("Johnson Park"), &[], 600)[1];
    assert_eq!(walk.steps, 3);
    assert_eq!(
        acts("Lin family's house/Living room")[0],
        "John Lin gets something to eat in the kitchen in Lin family's house."
    );
    assert!(stays_put("John Lin goes for a walk.", "John Lin"));
    assert!(!stays_put(
        "John Lin goes for a walk in Johnson Park.",
        "John Lin"
    ));
    assert!(stays_put(
        "john lin sits down and rests for a while",
        "John Lin"
    ));
    assert!(stays_put(
        "John Lin takes a break to do something fun.",
        "John Lin"
    ));
    assert!(stays_put("John Lin rests for a while.", "John Lin"));
    assert!(!stays_put("Eddy Lin rests for a while.", "John Lin"));
    // A place to eat in the building the agent is in comes first; no park: the walk
    // stays where the agent is.
    let w = bbt();
    let sheldon = &w.agents[0];
    let r = remedies(
        &w,
        sheldon,
        &needs,
        &path("Caltech/Sheldon's office"),
        &[],
        600,
    );
    assert_eq!(
        r[0].activity,
        "Sheldon Cooper gets something to eat in the cafeteria in Caltech."
    );
    assert_eq!(r[1].activity, "Sheldon Cooper goes for a walk.");
    let r = remedies(&w, sheldon, &needs, &path("Comic book store"), &[], 600);
    assert_eq!(
        r[0].activity,
        "Sheldon Cooper gets something to eat in the cafeteria in Caltech."
    );
    // A restaurant's dining room, not its kitchen; a friend's kitchen; none at a home
    // without one (Penny's flat).
    let friends = crate::world::bundled("friends.toml");
    let meal = |world: &World, who: &str, place: &str| {
        let spec = world.agents.iter().find(|a| a.name == who).unwrap();
        remedies(world, spec, &needs, &path(place), &[], 600)[0]
            .activity
            .clone()
    };
    assert_eq!(
        meal(&friends, "Rachel Green", "Monica's apartment/Living room"),
        "Rachel Green gets something to eat in the kitchen in Monica's apartment."
    );
    assert_eq!(
        meal(&w, "Penny", "Apartment 4B/Bedroom"),
        "Penny gets something to eat."
    );
    assert_eq!(
        meal(&friends, "Joey Tribbiani", "Casting office/Waiting room"),
        "Joey Tribbiani gets something to eat in the dining room in Il Forno restaurant."
    );
    // A park without parts: "at" it (Monica walked in Il Forno's kitchen before the
    // Friends world had one).
    let monica = &friends.agents[0];
    let r = remedies(
        &friends,
        monica,
        &needs,
        &path("Il Forno restaurant/Kitchen"),
        &[],
        600,
    );
    assert_eq!(
        r[1].activity,
        "Monica Geller goes for a walk in Washington Square Park."
    );
}

#[test]
fn a_pair_waits_the_cooldown_unless_one_came_to_talk() {
    let w = bbt();
    let mut sheldon = AgentState::from_spec(&w.agents[0], false);
    let mut leonard = AgentState::from_spec(&w.agents[1], false);
    sheldon.activity = "Sheldon Cooper works on his equations.".into();
    leonard.activity = "Leonard Hofstadter aligns the lasers.".into();
    assert_eq!(talk_wait(&sheldon, &leonard, 120, 15), 120);
    sheldon.activity =
        "Sheldon Cooper goes to Leonard's lab in Caltech to talk with Leonard Hofstadter.".into();
    assert_eq!(talk_wait(&sheldon, &leonard, 120, 15), 30);
    assert_eq!(talk_wait(&leonard, &sheldon, 120, 15), 30);
}

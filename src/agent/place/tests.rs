//! Tests of the walk down the location tree.

use super::*;

/// The bundled Lin family world.
pub(super) fn lin() -> World {
    crate::world::bundled("lin-family.toml")
}

#[test]
fn staying_wins_when_nearly_as_likely() {
    assert_eq!(prefer_stay(&[0.5, 0.6], 1, Some(0), STAY_RATIO), 0);
    assert_eq!(prefer_stay(&[0.2, 0.8], 1, Some(0), STAY_RATIO), 1);
    assert_eq!(prefer_stay(&[0.2, 0.8], 1, None, STAY_RATIO), 1);
}

#[test]
fn the_prior_decides_when_the_model_is_flat_and_yields_to_a_clear_model() {
    let w = PlaceWeights::default();
    let sims = [0.1, 0.4];
    assert_eq!(decide(&[0.5, 0.5], Some(&sims), None, &[], &[], w), 1);
    assert_eq!(decide(&[0.5, 0.5], None, None, &[], &[], w), 0);
    // 0.3 of cosine is exp(1.5) = 4.5x in the prior; a model 10^4 : 1 sure still wins
    // at sharpness 0.25 (10x).
    assert_eq!(decide(&[0.9999, 0.0001], Some(&sims), None, &[], &[], w), 0);
    let no_prior = PlaceWeights { prior: 0.0, ..w };
    assert_eq!(
        decide(&[0.6, 0.4], Some(&sims), None, &[], &[], no_prior),
        0
    );
    assert_eq!(decide(&[], Some(&sims), Some(1), &[], &[], w), 1);
}

#[test]
fn a_descent_stops_at_each_level_with_a_choice_and_ends_at_a_leaf() {
    let world = lin();
    let kitchen = crate::world::parse_path("Lin family's house/Kitchen").unwrap();
    let mut d = Descent::new(&world, "John Lin", "cook", &kitchen);
    let top = d.next_choice().expect("the top level has several places");
    assert!(top.parent.is_empty());
    assert_eq!(top.current, Some(0));
    d.take(&top, 0);
    let house = d.next_choice().expect("the house has rooms");
    assert_eq!(house.parent, ["Lin family's house"]);
    assert_eq!(house.options[house.current.unwrap()], "Kitchen");
    let eddys = house
        .options
        .iter()
        .position(|o| *o == "Eddy Lin's bedroom");
    assert_eq!(house.others.iter().position(|&o| o), eddys);
    let bathroom = house.options.iter().position(|o| *o == "Bathroom").unwrap();
    d.take(&house, bathroom);
    assert_eq!(d.next_choice(), None);
    assert!(d.at_leaf());
    assert_eq!(display_path(d.path()), "Lin family's house/Bathroom");
}

#[test]
fn a_rest_stays_where_the_agent_is_and_a_walk_to_the_park_asks() {
    let world = lin();
    let counter = crate::world::parse_path("The Willows Market and Pharmacy/Counter").unwrap();
    let rest = "John Lin sits down and rests for a while.";
    let mut d = Descent::new(&world, "John Lin", rest, &counter);
    assert_eq!(d.next_choice(), None);
    assert!(d.at_leaf());
    assert_eq!(d.path(), counter.as_slice());
    let walk = "John Lin goes for a walk in Johnson Park.";
    let mut d = Descent::new(&world, "John Lin", walk, &counter);
    let top = d.next_choice().expect("the walk asks where");
    let park = top.options.iter().position(|o| *o == "Johnson Park");
    assert_eq!(top.named.iter().position(|&n| n), park);
    // Out of a bathroom a rest is taken in a room to sit in; a talk with someone there
    // is taken there.
    let bathroom = crate::world::parse_path("Lin family's house/Bathroom").unwrap();
    let at = |activity: &str| {
        let mut d = Descent::new(&world, "Eddy Lin", activity, &bathroom);
        assert_eq!(d.next_choice(), None, "{activity}");
        d.path().join("/")
    };
    assert_eq!(
        at("Eddy Lin sits down and rests for a while."),
        "Lin family's house/Living room"
    );
    assert_eq!(
        at("Eddy Lin talks with John Lin."),
        "Lin family's house/Bathroom"
    );
    let mut d = Descent::new(
        &world,
        "Eddy Lin",
        "Eddy Lin talks with Mei Lin.",
        &bathroom,
    );
    assert!(d.next_choice().is_some(), "not an agent of the world");
}

#[test]
fn the_top_level_uses_the_building_stay_ratio() {
    let w = PlaceWeights {
        stay_ratio: 0.6,
        building_stay: 0.3,
        ..PlaceWeights::default()
    };
    let house = vec!["Lin family's house".to_string()];
    // The current option at 0.3 against 0.7: kept between buildings, left between rooms.
    assert_eq!(decide(&[0.3, 0.7], None, Some(0), &[], &[], w.at(&[])), 0);
    assert_eq!(
        decide(&[0.3, 0.7], None, Some(0), &[], &[], w.at(&house)),
        1
    );
}

#[test]
fn a_named_place_outweighs_staying_where_the_agent_is() {
    let w = PlaceWeights::default();
    // The model slightly prefers the current place 0; the activity names place 1.
    assert_eq!(decide(&[0.6, 0.4], None, Some(0), &[], &[], w), 0);
    assert_eq!(
        decide(&[0.6, 0.4], None, Some(0), &[], &[false, true], w),
        1
    );
    // Named and best, it wins even where the stay rule would keep the current place
    // (0.75 against 0.25 x 4 = 1.0: within the stay ratio).
    assert_eq!(
        decide(&[0.75, 0.25], None, Some(0), &[], &[false, true], w),
        1
    );
    let off = PlaceWeights { named: 1.0, ..w };
    assert_eq!(
        decide(&[0.6, 0.4], None, Some(0), &[], &[false, true], off),
        0
    );
}

#[test]
fn another_agents_room_is_weighed_down_but_ones_own_is_not() {
    let world = lin();
    let house = vec!["Lin family's house".to_string()];
    let rooms = options(&world, &house);
    let for_eddy = others_rooms(&world, "Eddy Lin", &house, &rooms);
    let named: Vec<&str> = rooms
        .iter()
        .zip(&for_eddy)
        .filter(|(_, &o)| o)
        .map(|(r, _)| *r)
        .collect();
    assert_eq!(named, ["John Lin's bedroom"]);
    // The top level: "Lin family's house" is not a room of anyone's.
    let top = options(&world, &[]);
    assert!(others_rooms(&world, "Eddy Lin", &[], &top)
        .iter()
        .all(|o| !o));
    // Equal answers between John's and Eddy's bedrooms: Eddy goes to his own.
    let (john, eddy) = (2, 3);
    let mut model = vec![0.0; rooms.len()];
    model[john] = 0.5;
    model[eddy] = 0.5;
    let w = PlaceWeights::default();
    assert_eq!(decide(&model, None, None, &for_eddy, &[], w), eddy);
    let for_john = others_rooms(&world, "John Lin", &house, &rooms);
    assert_eq!(decide(&model, None, None, &for_john, &[], w), john);
    // Named, another's room is not weighed down: Eddy goes to talk with his father in
    // John's bedroom, though the model favours his own and he is there.
    let mut named = vec![false; rooms.len()];
    named[john] = true;
    model[john] = 0.3;
    model[eddy] = 0.7;
    assert_eq!(decide(&model, None, Some(eddy), &for_eddy, &named, w), john);
}

/// The question of a request: the text of its last message.
fn question(r: &crate::llm::Request) -> String {
    match r {
        crate::llm::Request::Choose(c) => match &c.prompt {
            crate::llm::Prompt::Chat(m) => m.last().map(|m| m.content.clone()).unwrap_or_default(),
            _ => String::new(),
        },
        _ => String::new(),
    }
}

#[test]
fn the_top_question_names_the_agents_home_given_or_a_starting_bedrooms() {
    let load = |text: &str, path: &str| {
        World::parse(text, std::path::Path::new(path)).expect("the bundled world parses")
    };
    let lin = load(
        include_str!("../../../worlds/lin-family.toml"),
        "lin-family.toml",
    );
    let q = question(&place_request(
        "",
        PlacePrompt::Numbered,
        &lin,
        "Eddy Lin",
        "read",
        &[],
    ));
    assert!(q.contains("Eddy Lin lives at Lin family's house."), "{q}");
    // Rachel starts in the wedding hall's bridal suite: no home is claimed for her.
    let friends = load(include_str!("../../../worlds/friends.toml"), "friends.toml");
    let q = question(&place_request(
        "",
        PlacePrompt::Numbered,
        &friends,
        "Rachel Green",
        "read",
        &[],
    ));
    assert!(!q.contains("lives at"), "{q}");
    let q = question(&place_request(
        "",
        PlacePrompt::Numbered,
        &friends,
        "Monica Geller",
        "read",
        &[],
    ));
    assert!(
        q.contains("Monica Geller lives at Monica's apartment."),
        "{q}"
    );
    // A world's `home` names it wherever the agent starts.
    let text = include_str!("../../../worlds/friends.toml").replace(
        "location = \"Long Island wedding hall/Bridal suite\"\n",
        "location = \"Long Island wedding hall/Bridal suite\"\nhome = \"Monica's apartment\"\n",
    );
    let q = question(&place_request(
        "",
        PlacePrompt::Numbered,
        &load(&text, "friends.toml"),
        "Rachel Green",
        "read",
        &[],
    ));
    assert!(
        q.contains("Rachel Green lives at Monica's apartment."),
        "{q}"
    );
}

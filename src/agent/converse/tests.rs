//! Unit tests of the conversation prompts.

use super::*;

fn lin() -> (AgentState, AgentState) {
    let world = crate::world::bundled("lin-family.toml");
    let mut john = AgentState::from_spec(&world.agents[0], false);
    let mut eddy = AgentState::from_spec(&world.agents[1], false);
    john.activity = "John Lin cooks dinner".into();
    eddy.activity = "Eddy Lin sets the table".into();
    (john, eddy)
}

#[test]
fn topics_are_the_activities_and_the_memories_of_the_other() {
    let (john, eddy) = lin();
    let memories = [
        "John Lin takes real pleasure in helping people.".to_string(),
        "John Lin has noticed that Eddy keeps humming the same unfinished tune.".to_string(),
        "John Lin saw Eddy Lin: Eddy Lin sets the table".to_string(),
        "John Lin has noticed that Eddy keeps humming the same unfinished tune.".to_string(),
    ];
    let options = topic_options(&john, &eddy, &memories);
    assert_eq!(
        options,
        [
            "what John Lin is doing: John Lin cooks dinner",
            "what Eddy Lin is doing: Eddy Lin sets the table",
            "John Lin has noticed that Eddy keeps humming the same unfinished tune.",
        ],
        "a memory about John alone is no topic (it was said as Eddy's)"
    );
    assert_eq!(topic_options(&john, &eddy, &memories[..1]).len(), 2);
    // The other is named by first name as a word, in any case.
    assert!(names("John Lin thinks eddy's piece is good.", "Eddy Lin"));
    assert!(!names("John Lin met Eddyson.", "Eddy Lin"));
    assert!(!names("anything", " "));
    // Going to talk with the other is no topic, unless nothing else is.
    let mut lonely = john.clone();
    lonely.activity = "John Lin goes to the Kitchen in the house to talk with Eddy Lin.".into();
    let plan = "John Lin changed his plan to go to the kitchen to talk to Eddy".to_string();
    let remedy_options = topic_options(&lonely, &eddy, &[plan.clone(), memories[0].clone()]);
    assert_eq!(
        remedy_options,
        ["what Eddy Lin is doing: Eddy Lin sets the table"]
    );
    let mut both = eddy.clone();
    both.activity = "Eddy Lin goes to talk with John Lin.".into();
    let mut lonely_too = lonely.clone();
    lonely_too.activity = "John Lin wants to chat with Eddy.".into();
    assert_eq!(topic_options(&lonely_too, &both, &[]).len(), 2);
    let q = topic_question(&john, &eddy, &options);
    assert!(
        q.contains("\n1. what John Lin is doing: John Lin cooks dinner\n"),
        "{q}"
    );
    assert!(q.contains("\n3. John Lin has noticed"), "{q}");
    assert!(q.ends_with("Answer with the number."), "{q}");
    // The context's "feeling neutral" is not put in the speaker's mouth.
    assert!(!situation(&john, &eddy).contains("neutral"));
    // Whether to talk weighs closeness; the words are asked without it, the relation kept.
    assert!(situation(&eddy, &john).contains("Eddy Lin is feeling rather close to John Lin."));
    let words = words_situation(&eddy, &john);
    assert!(words.ends_with("John Lin is Eddy Lin's father."), "{words}");
    assert!(!words.contains("close"), "{words}");
}

#[test]
fn a_parent_is_named_as_the_child_calls_them() {
    let (john, eddy) = lin();
    assert_eq!(kin_address(&eddy, "John Lin"), Some("Dad"));
    assert_eq!(
        kin_address(&john, "Eddy Lin"),
        None,
        "a son is called by name"
    );
    assert_eq!(
        kin_address(&eddy, "Mei Lin"),
        None,
        "no relationship in the world"
    );
    let q = format!(
        "{}\nJohn Lin: Hi Eddy.\nWhat does Eddy Lin say next?",
        words_situation(&eddy, &john)
    );
    let asked = as_addressed(&eddy, "John Lin", q.clone());
    assert!(!asked.contains("John Lin"), "{asked}");
    assert!(
        asked.contains("Dad is here too") && asked.contains("\nDad: Hi Eddy."),
        "{asked}"
    );
    assert!(asked.contains("Dad is Eddy Lin's father."), "{asked}");
    assert_eq!(as_addressed(&john, "Eddy Lin", q.clone()), q);
}

#[test]
fn the_words_are_asked_in_a_chat_of_the_lines_so_far() {
    let (john, eddy) = lin();
    let me = Speaker {
        state: &eddy,
        system: "Eddy's context".into(),
        memories: Vec::new(),
    };
    let scene = words_situation(&eddy, &john);
    let opening = "What does Eddy Lin say to John Lin about it?";
    let roles = |m: &[Message]| m.iter().map(|m| m.role.clone()).collect::<Vec<_>>();
    // The first line: the scene and the question.
    let m = words_messages(&me, &john, &scene, opening, &[]);
    assert_eq!(roles(&m), ["system", "user"]);
    assert_eq!(m[0].content, "Eddy's context");
    assert!(m[1]
        .content
        .ends_with("What does Eddy Lin say to Dad about it?"));
    let turn = |name: &str, text: &str| Turn {
        name: name.into(),
        text: text.into(),
    };
    // The other spoke first: their line comes with the scene; later lines alternate.
    let talk = [
        turn("John Lin", "How is the tune coming along?"),
        turn("Eddy Lin", "Slowly, Dad."),
        turn("John Lin", "Play it for me after dinner?"),
    ];
    let m = words_messages(&me, &john, &scene, opening, &talk);
    assert_eq!(roles(&m), ["system", "user", "assistant", "user"]);
    assert!(
        m[1].content.ends_with(
            "\nDad: \"How is the tune coming along?\"\nWhat does Eddy Lin say back? \
             Write only Eddy Lin's words."
        ),
        "{}",
        m[1].content
    );
    assert_eq!(m[2].content, "\"Slowly, Dad.\"");
    assert_eq!(m[3].content, "Dad: \"Play it for me after dinner?\"");
    // The speaker spoke first: the opening question, then their own line.
    let m = words_messages(&me, &john, &scene, opening, &talk[1..]);
    assert_eq!(roles(&m), ["system", "user", "assistant", "user"]);
    assert!(m[1].content.ends_with("about it?"));
    assert_eq!(m[2].content, "\"Slowly, Dad.\"");
}

#[test]
fn enjoyment_moves_closeness_by_one_either_way() {
    assert_eq!(closeness_delta(true), 1);
    assert_eq!(closeness_delta(false), -1);
    assert_eq!(MAX_TURNS, 10, "the paper's turn cap");
}

#[test]
fn a_speaker_who_has_spoken_is_asked_whether_they_have_more_to_say_unless_asked_something() {
    let (john, eddy) = ("John Lin", "Eddy Lin");
    let turn = |name: &str, text: &str| Turn {
        name: name.into(),
        text: text.into(),
    };
    let reply = "Would Eddy Lin reply to John Lin?";
    let more = "Has Eddy Lin anything more to say to John Lin?";
    // Not yet spoken: whether he replies.
    let talk = [turn(john, "Dinner is ready.")];
    assert_eq!(go_on_question(eddy, john, &talk), reply);
    // Spoken, and the last line is no question: whether he has more to say.
    let talk = [
        turn(john, "Dinner is ready."),
        turn(eddy, "Coming, Dad."),
        turn(john, "Good."),
    ];
    assert_eq!(go_on_question(eddy, john, &talk), more);
    // A question calls for an answer (either kind of question mark).
    // A question inside the line counts too ("Do you think we could meet up soon? I think
    // we could do some more work.": the talk ended there when only a last "?" counted).
    for q in [
        "Did you wash your hands?",
        "洗手了吗？ ",
        "Did you wash your hands? The soap is new.",
    ] {
        let talk = [
            turn(john, "Dinner is ready."),
            turn(eddy, "Coming, Dad."),
            turn(john, q),
        ];
        assert_eq!(go_on_question(eddy, john, &talk), reply, "{q}");
    }
}

#[test]
fn a_line_is_not_said_when_empty_refused_repeated_or_out_of_voice() {
    let joey = "Joey Tribbiani";
    let said = ["Hey Joey, the pizza in the fridge is mine."];
    let problem = |text: &str| line_problem(text, &said, joey);
    assert_eq!(problem(""), Some(Ending::NothingLeft));
    assert_eq!(
        problem("I'm sorry, but I can't assist with that."),
        Some(Ending::Refusal)
    );
    assert_eq!(
        problem("Hey Monica, the pizza in the fridge is mine."),
        Some(Ending::RepeatsEarlier)
    );
    assert_eq!(problem("Joey's hungry again."), Some(Ending::OutOfVoice));
    assert_eq!(problem("Sorry, I thought it was leftovers."), None);
    // Each ending has its own words, as fallbacks and reports give them.
    let words: std::collections::BTreeSet<&str> = [
        Ending::Declined,
        Ending::TurnLimit,
        Ending::RepeatsEarlier,
        Ending::OutOfVoice,
        Ending::Refusal,
        Ending::NoWords,
        Ending::NothingLeft,
    ]
    .iter()
    .map(|e| e.as_str())
    .collect();
    assert_eq!(words.len(), 7);
}

/// The speaker's description is in their context but no topic: "John Lin is married to Mei
/// Lin and is the father of Eddy Lin" names Eddy, and was read out as a topic.
#[test]
fn the_speaker_s_description_is_context_not_a_topic() {
    use crate::memory::embedder::HashingEmbedder;
    use crate::memory::stream::StreamConfig;
    let world = crate::world::bundled("lin-family.toml");
    let (john, eddy) = lin();
    let mut embedder = HashingEmbedder::new(32);
    let mut stream = MemoryStream::new(32, StreamConfig::default()).unwrap();
    let now = GameTime::from_minutes(600);
    let seed = "John Lin is married to Mei Lin and is the father of Eddy Lin.";
    let seen = "John Lin thinks Eddy Lin works hard on his composition.";
    for (kind, text) in [
        (MemoryKind::SeedStatement, seed),
        (MemoryKind::Reflection, seen),
    ] {
        stream
            .add_texts(&mut embedder, kind, &[text], &[Default::default()], now)
            .unwrap();
    }
    let date = chrono::NaiveDate::from_ymd_opt(2023, 1, 3).unwrap();
    let (system, topics) = speaker_system(
        &world.agents[0],
        &john,
        &eddy,
        &mut stream,
        &mut embedder,
        now,
        date,
        600,
    );
    assert!(system.contains(seed), "{system}");
    assert_eq!(topics, [seen]);
}

#[test]
fn the_more_inclined_starts_and_nobody_when_neither_wants_to() {
    assert_eq!(starter([0.9, 0.6]), Some(0));
    assert_eq!(starter([0.6, 0.9]), Some(1));
    assert_eq!(starter([0.2, 0.7]), Some(1));
    assert_eq!(starter([0.7, 0.2]), Some(0));
    assert_eq!(starter([0.8, 0.8]), Some(0));
    assert_eq!(starter([0.5, 0.4]), None);
    assert_eq!(starter([f32::NAN, 0.6]), Some(1));
}

//! Conversations between two agents at the same place: both are asked whether they would
//! start one (from who they are, what both are doing, how they feel and how close they are)
//! and the more inclined starts ([`starter`]); the one who starts picks what to bring up
//! (what either is doing, or one of their memories in the context: a `choose` over a
//! numbered list), the talk alternates (each speaker asked for their words in a chat of the
//! lines so far) until one declines (asked whether they reply or have anything more to say),
//! a line repeats an earlier one, steps out of the speaker's voice, is refused twice or comes
//! to nothing, or the turn limit, then each judges whether they enjoyed it (closeness ±1) and
//! how they feel. How it ended is kept ([`Ending`]).

use serde::{Deserialize, Serialize};

use crate::world::Emotion;

use chrono::NaiveDate;

use crate::llm::Message;
use crate::memory::{GameTime, MemoryKind, MemoryStream, TextEmbedder};
use crate::world::AgentSpec;

use super::activity_text::has_phrase;
use super::context::{self, relation_sentence, relationship_sentence};
use super::mind::{missing, Mind};
use super::plan::came_to_talk;
use super::state::AgentState;
use super::utterance::{is_refusal, strip_speaker, whole_sentences};
pub use super::utterance::{out_of_voice, repeats_earlier, REPEAT_SHARE};

/// Most turns of a conversation (the paper's limit, which keeps prompts within budget).
pub const MAX_TURNS: usize = 10;
/// What a fallback that ends the talk says it used instead.
const ENDS_TALK: &str = "end the conversation";
/// Longest utterance, in characters.
pub const UTTERANCE_CHARS: usize = 160;
/// Memories of the other recalled into a speaker's context: by the other's name, and by
/// the other's name and activity (Humanoid Agents asks both what the relationship is and
/// what the speaker knows about the other's activity).
pub const SPEAKER_MEMORIES: usize = 3;

/// One participant: their state, the system prompt (context with memories of the other)
/// and those memories (what they may bring up).
pub struct Speaker<'a> {
    pub state: &'a AgentState,
    pub system: String,
    pub memories: Vec<String>,
}

/// How a conversation ended: the one asked whether to go on ([`go_on_question`]) said no,
/// the turn limit, or the next line had a problem and was not said.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ending {
    Declined,
    TurnLimit,
    /// The next line repeated an earlier one.
    RepeatsEarlier,
    /// The next line spoke for the other or read out the context.
    OutOfVoice,
    /// The next line was a refusal, twice.
    Refusal,
    /// The model gave no words.
    NoWords,
    /// Nothing was left of the line once cut to whole sentences in the speaker's voice.
    NothingLeft,
}

impl Ending {
    /// The words for it (a fallback's reason, `eval converse`'s report).
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Declined => "declined",
            Ending::TurnLimit => "turn limit",
            Ending::RepeatsEarlier => "repeats an earlier line",
            Ending::OutOfVoice => "out of the speaker's voice",
            Ending::Refusal => "a refusal",
            Ending::NoWords => "no words",
            Ending::NothingLeft => "nothing left",
        }
    }
}

/// One turn.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    pub name: String,
    pub text: String,
}

/// A finished conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Conversation {
    /// What the one who started brought up (`None` if the model gave no answer).
    #[serde(default)]
    pub topic: Option<String>,
    pub turns: Vec<Turn>,
    /// Whether each participant (in the order given) enjoyed it.
    pub enjoyed: [bool; 2],
    /// Each participant's emotion afterwards (`None` if frozen or unknown).
    pub emotions: [Option<Emotion>; 2],
    /// How it ended.
    pub ended: Ending,
}

impl Conversation {
    /// How participant `k` took the talk, as a state file says it.
    pub fn reaction(&self, k: usize) -> String {
        if self.enjoyed[k] {
            "enjoyed"
        } else {
            "did not enjoy"
        }
        .to_string()
    }
}

/// How a conversation moves a participant's closeness to the other: +1 if they enjoyed it,
/// −1 if not (Humanoid Agents).
pub fn closeness_delta(enjoyed: bool) -> i32 {
    if enjoyed {
        1
    } else {
        -1
    }
}

/// The transcript, one "Name: text" line per turn.
pub fn transcript(turns: &[Turn]) -> String {
    turns
        .iter()
        .map(|t| format!("{}: {}", t.name, t.text))
        .collect::<Vec<_>>()
        .join("\n")
}

/// A speaker's system prompt and the memories in it that they may bring up: what they
/// remember of the other, recalled by the other's name and by the other's name and
/// activity (each [`SPEAKER_MEMORIES`], without repeats, oldest first). Plans, earlier
/// conversations and the speaker's description stay in the prompt but are not topics (a
/// plan is a timetable, a conversation many lines, and a statement of who the speaker is
/// was said as the other's, BENCHMARKS.md).
#[allow(clippy::too_many_arguments)]
pub fn speaker_system(
    spec: &AgentSpec,
    me: &AgentState,
    other: &AgentState,
    memories: &mut MemoryStream,
    embedder: &mut dyn TextEmbedder,
    now: GameTime,
    date: NaiveDate,
    minutes: u32,
) -> (String, Vec<String>) {
    let about = format!("{} {}", other.name, other.activity);
    let mut mems: Vec<(MemoryKind, String)> = Vec::new();
    for query in [other.name.as_str(), about.as_str()] {
        for m in context::recall_kinds(memories, embedder, query, now, SPEAKER_MEMORIES) {
            if !mems.contains(&m) {
                mems.push(m);
            }
        }
    }
    let texts: Vec<String> = mems.iter().map(|(_, t)| t.clone()).collect();
    let topics = mems
        .into_iter()
        .filter(|(k, _)| {
            !matches!(
                k,
                MemoryKind::Plan | MemoryKind::Dialogue | MemoryKind::SeedStatement
            )
        })
        .map(|(_, t)| t)
        .collect();
    (
        context::system_prompt(spec, me, date, minutes, &texts),
        topics,
    )
}

/// What a speaker sees: what both are doing, how the speaker feels (when not simply
/// neutral: a small model reads "feeling neutral" out) and how close they are.
fn situation(me: &AgentState, other: &AgentState) -> String {
    scene(me, other, &relationship_sentence(me, &other.name))
}

/// What a speaker sees when asked for words: [`situation`] without how close they feel,
/// which a small model says aloud ("I'm feeling a bit close to you"); who the other is to
/// the speaker stays.
fn words_situation(me: &AgentState, other: &AgentState) -> String {
    scene(me, other, &relation_sentence(me, &other.name))
}

/// What both are doing, how the speaker feels, then `relation`.
fn scene(me: &AgentState, other: &AgentState, relation: &str) -> String {
    format!(
        "{} is doing: {}.{} {} is here too, doing: {}. {relation}",
        me.name,
        me.activity,
        feeling_sentence(me),
        other.name,
        other.activity,
    )
}

/// " Eddy Lin is hungry and tired." when the speaker is not simply neutral (a small model
/// reads "feeling neutral" out), else nothing.
fn feeling_sentence(me: &AgentState) -> String {
    if me.emotion == Emotion::Neutral && me.unmet_needs().is_empty() {
        String::new()
    } else {
        format!(" {} is {}.", me.name, me.feeling())
    }
}

/// What a starter may bring up: what either is doing, or one of the starter's memories in
/// the context that names the other (by first name), as in Generative Agents, where a
/// conversation starts from the speaker's memories of the listener. Seeing the other is
/// left out: what the other is doing is already an option. Without repeats.
///
/// A memory about the speaker alone, or their description (left out by
/// [`speaker_system`]), was said as the other's: with every memory as an option John Lin
/// brought up his own "takes real pleasure in helping people" in 13 of 29 Lin talks of
/// Table 2 days, and "You remember your regular customers by name, right?" followed; 11 of
/// those talks, each talked twice, had 15 of 89 lines that got who is who wrong, against 4
/// of 78 with these options (labelled blind; held out, 6 of 66 against 1 of 58:
/// BENCHMARKS.md).
///
/// Nor is going to talk with each other a topic ("Sheldon Cooper goes to Leonard's lab in
/// Caltech to talk with Leonard Hofstadter", a lonely agent's remedy, or the memory of that
/// plan change): brought up, it gave "Hey Leonard, I'm here to talk about something."
/// (a Big Bang Theory day of session 32). If every option is such, they all stay.
fn topic_options(me: &AgentState, other: &AgentState, memories: &[String]) -> Vec<String> {
    let mut v = vec![
        format!("what {} is doing: {}", me.name, me.activity),
        format!("what {} is doing: {}", other.name, other.activity),
    ];
    let seen = format!("{} saw ", me.name);
    for m in memories.iter().map(|m| m.trim()) {
        if names(m, &other.name) && !m.starts_with(&seen) && !v.iter().any(|o| o == m) {
            v.push(m.to_string());
        }
    }
    let about_something: Vec<String> = v
        .iter()
        .filter(|o| !to_talk_with(o, &other.name) && !to_talk_with(o, &me.name))
        .cloned()
        .collect();
    if about_something.is_empty() {
        v
    } else {
        about_something
    }
}

/// Whether `text` names `person` by their first name, as a whole word in any case ("Eddy",
/// "Eddy's"; not "Eddyson": [`has_phrase`]).
fn names(text: &str, person: &str) -> bool {
    person
        .split_whitespace()
        .next()
        .is_some_and(|first| has_phrase(&text.to_lowercase(), &first.to_lowercase()))
}

/// Whether `text` is about going to talk with `other` ("... to talk with Leonard
/// Hofstadter", "talk to Leonard").
fn to_talk_with(text: &str, other: &str) -> bool {
    let t = text.to_lowercase();
    let full = other.to_lowercase();
    let first = full.split_whitespace().next().unwrap_or(&full).to_string();
    ["talk with", "talk to", "chat with", "speak with"]
        .iter()
        .any(|v| t.contains(&format!("{v} {first}")))
}

/// The question of which of the `options` the starter brings up, as a numbered list (the
/// answer is the number, so a long option is not less likely for its length).
fn topic_question(me: &AgentState, other: &AgentState, options: &[String]) -> String {
    let list: Vec<String> = options
        .iter()
        .enumerate()
        .map(|(i, o)| format!("{}. {o}", i + 1))
        .collect();
    format!(
        "{} {m} starts a conversation with {o}. Which of these does {m} bring up?\n{}\nAnswer \
         with the number.",
        situation(me, other),
        list.join("\n"),
        m = me.name,
        o = other.name,
    )
}

/// How `me` addresses `other` when the world makes `other` their parent or grandparent
/// ("father": "Dad"); `None` for anyone else (called by name). English relationship words.
fn kin_address(me: &AgentState, other: &str) -> Option<&'static str> {
    let r = me.relationship(other)?.relationship.trim().to_lowercase();
    let term = match r.as_str() {
        "father" | "dad" => "Dad",
        "mother" | "mom" | "mum" => "Mom",
        "grandfather" | "grandpa" => "Grandpa",
        "grandmother" | "grandma" => "Grandma",
        _ => return None,
    };
    Some(term)
}

/// `text` with `other`'s name put as `me` addresses them ([`kin_address`]): "Dad is here
/// too, doing: ...", "Dad: Hey Eddy, ...", "What does Eddy Lin say to Dad about it?".
fn as_addressed(me: &AgentState, other: &str, text: String) -> String {
    match kin_address(me, other) {
        Some(term) => text.replace(other, term),
        None => text,
    }
}

/// The chat in which `me` is asked for their next words: the scene and the `opening`
/// question (what to say first), then each line said so far as a message of whoever said
/// it, `me`'s as the assistant's and the other's as the user's ("Joey Tribbiani: "..."",
/// with the other named as `me` calls them). When the other spoke first, the scene comes
/// with their line and the question what `me` says back.
///
/// Asked so, the model answers the other's last words as it answers a user: on the talks
/// of a Lin and a Friends day, talked again twice each, 0.907 of the replies took up the
/// line before against 0.778 with the whole talk as one transcript in one question, which
/// the model often echoed (labelled blind, BENCHMARKS.md).
fn words_messages(
    me: &Speaker<'_>,
    other: &AgentState,
    say_base: &str,
    opening: &str,
    turns: &[Turn],
) -> Vec<Message> {
    // A parent is named as the speaker calls them ("Dad"): named "John Lin" throughout,
    // Eddy Lin called his father "John" in 37 of 52 lines; named "Dad", in none of 43
    // (BENCHMARKS.md).
    let addressed = |text: String| Message::user(as_addressed(me.state, &other.name, text));
    let mine = |t: &Turn| t.name == me.state.name;
    // The other's first line, if they spoke first, goes in the first message.
    let (first, rest) = match turns.split_first() {
        Some((t, rest)) if !mine(t) => (
            format!(
                "{say_base}\n{}: \"{}\"\nWhat does {} say back? Write only {}'s words.",
                other.name, t.text, me.state.name, me.state.name
            ),
            rest,
        ),
        _ => (format!("{say_base} {opening}"), turns),
    };
    let mut v = vec![Message::system(&me.system), addressed(first)];
    for t in rest {
        v.push(if mine(t) {
            Message::assistant(format!("\"{}\"", t.text))
        } else {
            addressed(format!("{}: \"{}\"", other.name, t.text))
        });
    }
    v
}

/// The question whether `me` goes on with the talk: "Would X reply to Y?" while X has not
/// spoken yet or Y's last line asks a question (a question mark anywhere in it: one asked
/// mid-line and left unanswered ended a talk of session 37's replays), else "Has X anything
/// more to say to Y?".
/// Asked always whether they would reply, the model said yes to nearly every line and talks
/// ran on until a line echoed an earlier one (24 of 24 talks of the development days; 28 of
/// 35 of the held-out days, 1 declined); asked this way, 14 of 24 and 23 of 35 ended when
/// one declined, with lines as good by blind labels but fewer of them (BENCHMARKS.md).
/// Asked whether they had more to say before they had spoken, every speaker of a Friends
/// day said no to the first line.
pub fn go_on_question(me: &str, other: &str, turns: &[Turn]) -> String {
    let spoke = turns.iter().any(|t| t.name == me);
    let asked = turns.last().is_some_and(|t| t.text.contains(['?', '？']));
    if spoke && !asked {
        format!("Has {me} anything more to say to {other}?")
    } else {
        format!("Would {me} reply to {other}?")
    }
}

/// What keeps `text`, `speaker`'s next line (cut to whole sentences in their voice), from
/// being said after the lines `said`: nothing left of it, a refusal, a repeat of an earlier
/// line (nothing new to say), or words out of the speaker's voice (the model spoke for the
/// other or read out the context). `None`: it may be said.
pub fn line_problem(text: &str, said: &[&str], speaker: &str) -> Option<Ending> {
    if text.is_empty() {
        Some(Ending::NothingLeft)
    } else if is_refusal(text) {
        Some(Ending::Refusal)
    } else if repeats_earlier(text, said) {
        Some(Ending::RepeatsEarlier)
    } else if out_of_voice(text, speaker) {
        Some(Ending::OutOfVoice)
    } else {
        None
    }
}

/// Who starts, from each one's P(yes) to starting: the more inclined of those above one
/// half (the first on a tie); `None` when neither wants to.
pub fn starter(wants: [f32; 2]) -> Option<usize> {
    let [a, b] = wants.map(|w| if w.is_nan() { 0.0 } else { w });
    (a.max(b) > 0.5).then_some(usize::from(b > a))
}

/// Why a meeting made no conversation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoTalk {
    /// Neither wanted to start one.
    NobodyStarts,
    /// One started, and no line was said (each problem a fallback).
    NothingSaid,
}

/// Runs a conversation between `a` and `b` if either wants one; why not, otherwise.
pub async fn converse(
    mind: &Mind<'_>,
    a: &Speaker<'_>,
    b: &Speaker<'_>,
) -> Result<Conversation, NoTalk> {
    let pair = [a, b];
    // 1. Who starts: both are asked together and the more inclined starts (P(yes) above
    // one half, the higher; `a` on a tie). Asked in turn, the first asked started every
    // talk that the 1.5B's yes to it allowed: John Lin all 29 of twelve Lin days.
    let requests = pair
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let other = pair[1 - i].state;
            let q = format!(
                "{} Would {} start a conversation with {} now?",
                situation(s.state, other),
                s.state.name,
                other.name
            );
            (
                "start_conversation".to_string(),
                Mind::yes_no_request(&s.system, &q),
            )
        })
        .collect();
    let mut results = mind.port.run(requests).await.into_iter();
    // One who came to talk with the other ([`came_to_talk`]) wants to, whatever the answer.
    let wants = [0, 1].map(|i| {
        let r = results.next().unwrap_or_else(missing);
        let c = mind.chosen("start_conversation", r, &["yes", "no"], 1);
        let p = c.and_then(|c| c.probs.first().copied()).unwrap_or(0.0);
        let (me, other) = (pair[i].state, pair[1 - i].state);
        if came_to_talk(&me.activity, &me.name, &other.name) {
            1.0
        } else {
            p
        }
    });
    tracing::debug!(a = %a.state.name, b = %b.state.name, ?wants, "P(yes) to starting a talk");
    let first = starter(wants).ok_or(NoTalk::NobodyStarts)?;
    // 2. What the starter wants to talk about, which grounds every turn (a small model left
    // to itself trades greetings: "I'm ready!" / "I'm ready too!").
    let topic = {
        let (me, other) = (pair[first], pair[1 - first].state);
        let options = topic_options(me.state, other, &me.memories);
        let numbers: Vec<String> = (1..=options.len()).map(|i| i.to_string()).collect();
        let numbers: Vec<&str> = numbers.iter().map(String::as_str).collect();
        let q = topic_question(me.state, other, &options);
        mind.ask_choice("topic", &me.system, &q, &numbers, 0)
            .await
            .map(|c| options[c.index].clone())
    };
    let mut turns: Vec<Turn> = Vec::new();
    let mut speaker = first;
    let mut ended = Ending::TurnLimit;
    while turns.len() < MAX_TURNS {
        let me = pair[speaker];
        let other = pair[1 - speaker].state;
        // Whether to go on weighs how close they are; what to say is asked without it (the
        // closeness sentence came out in the words: "I'm feeling rather close to Leonard").
        let mut base = situation(me.state, other);
        let mut say_base = words_situation(me.state, other);
        if let Some(t) = &topic {
            let who = format!(
                "{} wants to talk with {} about this",
                pair[first].state.name,
                pair[1 - first].state.name
            );
            base.push_str(&format!(" {who}: {t}"));
            say_base.push_str(&format!(" {who}: {t}"));
        }
        if !turns.is_empty() {
            let ask = go_on_question(&me.state.name, &other.name, &turns);
            let q = format!(
                "{base}\nConversation so far:\n{}\n{ask}",
                transcript(&turns),
            );
            // (The purpose keeps its first name, "reply", so logs of runs compare.)
            if !mind.ask_yes_no("reply", &me.system, &q).await {
                ended = Ending::Declined;
                break;
            }
        }
        // "What does X say to Y to bring this up?" drew openers about nothing ("I was
        // thinking about something we might talk about."); asked what X says about it,
        // 0.717 of the lines were about something against 0.610 (BENCHMARKS.md).
        let ask = if topic.is_some() {
            "about it"
        } else {
            "to start the conversation"
        };
        let opening = format!(
            "What does {} say to {} {ask}? Write only {}'s words.",
            me.state.name, other.name, me.state.name
        );
        let messages = words_messages(me, other, &say_base, &opening, &turns);
        // The words are asked inside quotation marks (the reply begins with one): refusals
        // ("I'm sorry, but I can't assist with that") went from 9 to 0 in 123 lines
        // (BENCHMARKS.md). One that still comes is the model stepping out of the scene, not
        // the speaker ending the talk: asked once more, newly seeded. A line
        // that repeats an earlier one or leaves the speaker's voice ends the talk (asking
        // again made longer talks of echoes: BENCHMARKS.md).
        let said: Vec<&str> = turns.iter().map(|t| t.text.as_str()).collect();
        let mut text = String::new();
        for attempt in 0..2 {
            let asked = mind.ask_quoted("utterance", messages.clone(), UTTERANCE_CHARS);
            let Some(line) = asked.await else {
                mind.fallback("utterance", Ending::NoWords.as_str(), "", ENDS_TALK);
                ended = Ending::NoWords;
                text.clear();
                break;
            };
            text = whole_sentences(
                &strip_speaker(&line, &[&me.state.name, &other.name]),
                &line,
                UTTERANCE_CHARS,
            );
            let Some(problem) = line_problem(&text, &said, &me.state.name) else {
                break;
            };
            let shown = if text.is_empty() { &line } else { &text };
            if attempt == 0 && problem == Ending::Refusal {
                mind.fallback("utterance", problem.as_str(), shown, "ask once more");
                continue;
            }
            mind.fallback("utterance", problem.as_str(), shown, ENDS_TALK);
            ended = problem;
            text.clear();
            break;
        }
        if text.is_empty() {
            break;
        }
        turns.push(Turn {
            name: me.state.name.clone(),
            text,
        });
        speaker = 1 - speaker;
    }
    if turns.is_empty() {
        return Err(NoTalk::NothingSaid);
    }
    // 2. Judgements, all in one batch.
    let text = transcript(&turns);
    let emotions: Vec<&str> = Emotion::ALL.iter().map(|e| e.as_str()).collect();
    let mut requests = Vec::new();
    for (i, s) in pair.iter().enumerate() {
        let other = &pair[1 - i].state.name;
        let q = format!(
            "Conversation between {} and {}:\n{text}\nDid {} enjoy this conversation?",
            s.state.name, other, s.state.name
        );
        requests.push(("enjoyed".to_string(), Mind::yes_no_request(&s.system, &q)));
        if !s.state.emotion_frozen {
            let q = format!(
                "Conversation between {} and {}:\n{text}\nWhich emotion does {} feel after it?",
                s.state.name, other, s.state.name
            );
            requests.push((
                "conversation_emotion".to_string(),
                Mind::choose_request(&s.system, &q, &emotions),
            ));
        }
    }
    let mut results = mind.port.run(requests).await.into_iter();
    let mut enjoyed = [false; 2];
    let mut feelings = [None, None];
    for (i, s) in pair.iter().enumerate() {
        enjoyed[i] = mind.yes("enjoyed", results.next().unwrap_or_else(missing), true);
        if !s.state.emotion_frozen {
            let r = results.next().unwrap_or_else(missing);
            feelings[i] = mind
                .chosen("conversation_emotion", r, &emotions, 0)
                .map(|c| Emotion::ALL[c.index]);
        }
    }
    Ok(Conversation {
        topic,
        turns,
        enjoyed,
        emotions: feelings,
        ended,
    })
}

#[cfg(test)]
mod tests;

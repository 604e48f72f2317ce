//! Conversations between two agents at the same place: each decides whether to talk (from
//! who they are, what both are doing, how they feel and how close they are), the talk
//! alternates until one declines or the turn limit, then each judges whether they enjoyed
//! it (closeness ±1) and how they feel.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::world::Emotion;

use super::context::relationship_sentence;
use super::mind::{missing, Mind};
use super::state::AgentState;

/// Most turns of a conversation (the paper's limit, which keeps prompts within budget).
pub const MAX_TURNS: usize = 10;
/// Longest utterance, in characters.
pub const UTTERANCE_CHARS: usize = 160;

/// One participant: their state and the system prompt (context with memories of the other).
pub struct Speaker<'a> {
    pub state: &'a AgentState,
    pub system: String,
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
    pub turns: Vec<Turn>,
    /// Whether each participant (in the order given) enjoyed it.
    pub enjoyed: [bool; 2],
    /// Each participant's emotion afterwards (`None` if frozen or unknown).
    pub emotions: [Option<Emotion>; 2],
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

fn situation(me: &AgentState, other: &AgentState) -> String {
    format!(
        "{} is {} and doing: {}. {} is here too, doing: {}. {}",
        me.name,
        me.feeling(),
        me.activity,
        other.name,
        other.activity,
        relationship_sentence(me, &other.name)
    )
}

/// Removes what the model may add around the words: a leading "Name:" label of either
/// participant (full or first name), stage directions (`*smiles*`, `(laughs)`, `[pause]`)
/// and surrounding quotes.
fn strip_speaker(text: &str, names: &[&str]) -> String {
    let mut t = text.trim().to_string();
    for (open, close) in [('*', '*'), ('(', ')'), ('[', ']')] {
        while let Some(i) = t.find(open) {
            let Some(j) = t[i + open.len_utf8()..].find(close) else {
                break;
            };
            let end = i + open.len_utf8() + j + close.len_utf8();
            t.replace_range(i..end, " ");
        }
    }
    let mut t = t.split_whitespace().collect::<Vec<_>>().join(" ");
    for n in names {
        let first = n.split_whitespace().next().unwrap_or(n);
        for label in [*n, first] {
            if let Some(rest) = t.strip_prefix(label) {
                if let Some(rest) = rest.trim_start().strip_prefix(':') {
                    t = rest.trim().to_string();
                }
            }
        }
    }
    t.trim_matches(|c| c == '"' || c == '“' || c == '”')
        .trim()
        .to_string()
}

/// Lowercase, with typographic apostrophes as plain ones.
fn lower(text: &str) -> String {
    text.to_lowercase().replace('\u{2019}', "'")
}

/// The words of lowercased text: letters and digits, apostrophes inside ("i'm", "joey's").
fn words(t: &str) -> Vec<&str> {
    t.split(|c: char| !c.is_alphanumeric() && c != '\'')
        .filter(|w| !w.is_empty())
        .collect()
}

/// Whether an utterance is out of its speaker's voice: it names the speaker by their own
/// first name other than in an introduction ("I'm Joey", "my name is Joey", "it's Joey"),
/// repeats the context's "is feeling distant/close to" or "feeling neutral", or is an
/// assistant's refusal ("I'm sorry, but I can't assist with that").
pub fn out_of_voice(text: &str, speaker: &str) -> bool {
    let t = lower(text);
    let first = speaker
        .split_whitespace()
        .next()
        .unwrap_or(speaker)
        .to_lowercase();
    let words = words(&t);
    let self_named = words.iter().enumerate().any(|(i, w)| {
        let w = w.strip_suffix("'s").unwrap_or(w);
        let before = |k: usize| i.checked_sub(k).map(|j| words[j]);
        let introduction = matches!(
            (before(2), before(1)),
            (_, Some("i'm" | "it's" | "this's"))
                | (Some("name" | "this" | "it"), Some("is"))
                | (Some("i"), Some("am"))
        );
        w == first && !introduction
    });
    // An assistant's refusal, not a person talking.
    let refusal = [
        "assist with",
        "as an ai",
        "language model",
        "information about what",
        "sorry, but i can't",
        "sorry, but i cannot",
    ]
    .iter()
    .any(|p| t.contains(p));
    let closeness = ["distant", "close"]
        .iter()
        .any(|c| t.contains(&format!("feeling {c} to")));
    // The context's "is feeling neutral": nobody calls their own mood neutral aloud.
    let neutral = t.contains("feeling neutral") || t.contains("feel neutral");
    self_named || closeness || neutral || refusal
}

/// Share of an utterance's word triples (or, under three words, character triples) found
/// in one earlier line above which it counts as a repeat of that line.
pub const REPEAT_SHARE: f32 = 0.6;

/// Whether `text` mostly repeats one of the `earlier` lines of its conversation (either
/// speaker's): at least [`REPEAT_SHARE`] of its word triples occur in that line. Small
/// models at a turn's end often say their first line again with a word changed.
pub fn repeats_earlier(text: &str, earlier: &[&str]) -> bool {
    let norm = |t: &str| -> Vec<String> {
        let t = lower(t);
        words(&t).into_iter().map(str::to_string).collect()
    };
    // Word triples, or character triples of a line under three words (a sentence of
    // Chinese is one "word").
    let grams = |t: &str| -> BTreeSet<String> {
        let w = norm(t);
        if w.len() >= 3 {
            w.windows(3).map(|g| g.join(" ")).collect()
        } else {
            let c: Vec<char> = w.join(" ").chars().collect();
            c.windows(3).map(|g| g.iter().collect()).collect()
        }
    };
    let mine = grams(text);
    if mine.is_empty() {
        return earlier.iter().any(|e| norm(e) == norm(text));
    }
    earlier.iter().any(|e| {
        let theirs = grams(e);
        let shared = mine.iter().filter(|g| theirs.contains(*g)).count();
        shared as f32 >= REPEAT_SHARE * mine.len() as f32
    })
}

/// Runs a conversation between `a` and `b` if either wants one.
pub async fn converse(mind: &Mind<'_>, a: &Speaker<'_>, b: &Speaker<'_>) -> Option<Conversation> {
    let pair = [a, b];
    // 1. Who starts (a is asked first).
    let mut starter = None;
    for (i, s) in pair.iter().enumerate() {
        let other = pair[1 - i].state;
        let q = format!(
            "{} Would {} start a conversation with {} now?",
            situation(s.state, other),
            s.state.name,
            other.name
        );
        if mind.ask_yes_no("start_conversation", &s.system, &q).await {
            starter = Some(i);
            break;
        }
    }
    let first = starter?;
    let mut turns: Vec<Turn> = Vec::new();
    let mut speaker = first;
    while turns.len() < MAX_TURNS {
        let me = pair[speaker];
        let other = pair[1 - speaker].state;
        let base = situation(me.state, other);
        let question = if turns.is_empty() {
            format!(
                "{base} What does {} say to {} to start the conversation? Write only {}'s words.",
                me.state.name, other.name, me.state.name
            )
        } else {
            let so_far = transcript(&turns);
            let q = format!(
                "{base}\nConversation so far:\n{so_far}\nWould {} reply to {}?",
                me.state.name, other.name
            );
            if !mind.ask_yes_no("reply", &me.system, &q).await {
                break;
            }
            format!(
                "{base}\nConversation so far:\n{so_far}\nWhat does {} say next? Write only {}'s words.",
                me.state.name, me.state.name
            )
        };
        let Some(line) = mind
            .ask_line("utterance", &me.system, &question, UTTERANCE_CHARS)
            .await
        else {
            mind.fallback("utterance", "no words", "", "end the conversation");
            break;
        };
        let text = strip_speaker(&line, &[&me.state.name, &other.name]);
        if text.is_empty() {
            break;
        }
        let said: Vec<&str> = turns.iter().map(|t| t.text.as_str()).collect();
        if repeats_earlier(&text, &said) {
            // Nothing new to say: the talk has run its course.
            mind.fallback(
                "utterance",
                "repeats an earlier line",
                &text,
                "end the conversation",
            );
            break;
        }
        if out_of_voice(&text, &me.state.name) {
            // The model spoke for the other or read out the context: the talk ends here.
            mind.fallback(
                "utterance",
                "out of the speaker's voice",
                &text,
                "end the conversation",
            );
            break;
        }
        turns.push(Turn {
            name: me.state.name.clone(),
            text,
        });
        speaker = 1 - speaker;
    }
    if turns.is_empty() {
        return None;
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
    Some(Conversation {
        turns,
        enjoyed,
        emotions: feelings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enjoyment_moves_closeness_by_one_either_way() {
        assert_eq!(closeness_delta(true), 1);
        assert_eq!(closeness_delta(false), -1);
        assert_eq!(MAX_TURNS, 10, "the paper's turn cap");
    }

    #[test]
    fn utterances_out_of_the_speakers_voice_are_found() {
        let joey = "Joey Tribbiani";
        assert!(out_of_voice(
            "Sounds good, Joey! Let's grab a coffee.",
            joey
        ));
        assert!(out_of_voice("I'm feeling distant to Monica Geller.", joey));
        assert!(out_of_voice(
            "I'm just feeling neutral, thanks for asking!",
            joey
        ));
        assert!(!out_of_voice("I'm feeling great, thanks for asking!", joey));
        assert!(out_of_voice("Joey's hungry again.", joey));
        assert!(!out_of_voice("Hey Monica, what's for breakfast?", joey));
        assert!(!out_of_voice("Hi, I'm Joey. I live across the hall.", joey));
        assert!(!out_of_voice("My name is Joey, nice to meet you.", joey));
        assert!(!out_of_voice("I feel close to you, Monica.", joey));
        assert!(out_of_voice(
            "I'm sorry, but I can't assist with that.",
            joey
        ));
        assert!(out_of_voice("I'm sorry, but I can't help with that.", joey));
    }

    #[test]
    fn repeated_lines_are_found() {
        // From a Big Bang Theory day (session 24): Sheldon's first line again, one word changed.
        let said = [
            "Hey, how's it going? I was just thinking about waking up and waiting for the \
             bathroom. Do you have anything you need to do?",
            "I'm okay, just wondering if I should take a shower.",
        ];
        assert!(repeats_earlier(
            "Hey, I was just thinking about waking up and waiting for the bathroom. Do you \
             have anything you need to do?",
            &said
        ));
        assert!(repeats_earlier(
            "I'm fine, just wondering if I should take a shower.",
            &said
        ));
        // Agreeing with the other's idea in one's own words is not a repeat.
        let said = ["How about we try going to a restaurant together?"];
        assert!(!repeats_earlier(
            "I know, I know. Let's go to a restaurant together.",
            &said
        ));
        assert!(!repeats_earlier(
            "That's great to hear! How about you?",
            &said
        ));
        assert!(repeats_earlier("Okay!", &["okay"]));
        assert!(!repeats_earlier("Okay!", &[]));
        assert!(repeats_earlier(
            "我们一起去吃饭吧",
            &["好的，我们一起去吃饭吧！"]
        ));
        assert!(!repeats_earlier("今天天气很好", &["我们一起去吃饭吧"]));
    }

    #[test]
    fn speaker_prefix_is_removed() {
        let n = ["John Lin", "Eddy Lin"];
        assert_eq!(strip_speaker("John Lin: Hi Eddy", &n), "Hi Eddy");
        assert_eq!(strip_speaker("Hi Eddy", &n), "Hi Eddy");
        assert_eq!(
            strip_speaker("John: *smiles* Hi Eddy (waves)", &n),
            "Hi Eddy"
        );
        assert_eq!(strip_speaker("\"Morning, son.\"", &n), "Morning, son.");
        assert_eq!(strip_speaker("Eddy Lin: Hi Dad", &n), "Hi Dad");
    }
}

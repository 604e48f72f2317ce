//! Checks on what an agent says: the words without speaker labels or stage directions,
//! whether a line is out of the speaker's voice or repeats an earlier one, and whether it
//! is about something in the situation rather than small talk.

use std::collections::BTreeSet;

/// Removes what the model may add around the words: a list dash, a leading "Name:" label of
/// either participant (full or first name; also "Name says:" and `Name, "...` before a
/// quotation), stage directions (`*smiles*`, `(laughs)`, `[pause]`) and surrounding quotes.
pub fn strip_speaker(text: &str, names: &[&str]) -> String {
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
    if let Some(rest) = t.strip_prefix("- ").or_else(|| t.strip_prefix("• ")) {
        t = rest.to_string();
    }
    for n in names {
        let first = n.split_whitespace().next().unwrap_or(n);
        for label in [*n, first] {
            if let Some(rest) = t.strip_prefix(label) {
                let rest = rest.trim_start();
                let label_end = [":", "says:", "says :", "said:"]
                    .iter()
                    .find_map(|end| rest.strip_prefix(end));
                if let Some(rest) = label_end {
                    t = rest.trim().to_string();
                } else if let Some(rest) = rest.strip_prefix(',') {
                    if rest.trim_start().starts_with(['"', '“']) {
                        t = rest.trim().to_string();
                    }
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
    let refusal = is_refusal(&t);
    let closeness = ["distant", "close"]
        .iter()
        .any(|c| t.contains(&format!("feeling {c} to")));
    // The context's "is feeling neutral": nobody calls their own mood neutral aloud.
    let neutral = t.contains("feeling neutral") || t.contains("feel neutral");
    self_named || closeness || neutral || refusal
}

/// Whether a line is an assistant talking, not the person: a refusal ("I'm sorry, but I
/// can't assist with that") or an offer to write the line ("Sure, I can help you with that.
/// Let's say ...", "John Lin could say something like this", "Sure, John Lin can say: ...").
pub fn is_refusal(text: &str) -> bool {
    let t = lower(text);
    [
        "i can help you with that",
        "could say something like",
        "can say:",
        "could say:",
        "might say:",
        "assist with",
        "as an ai",
        "language model",
        "information about what",
        "sorry, but i can't",
        "sorry, but i cannot",
    ]
    .iter()
    .any(|p| t.contains(p))
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

/// Words of four letters or more that say nothing about a situation: function words and
/// the stock phrases of small talk ("how's it going", "I'm ready", "sounds great").
const SMALL_TALK: &[&str] = &[
    "about",
    "actually",
    "after",
    "again",
    "also",
    "anything",
    "awesome",
    "back",
    "been",
    "before",
    "being",
    "care",
    "come",
    "coming",
    "could",
    "does",
    "doing",
    "done",
    "else",
    "even",
    "ever",
    "every",
    "everything",
    "feel",
    "feeling",
    "fine",
    "from",
    "getting",
    "glad",
    "going",
    "good",
    "great",
    "happy",
    "have",
    "having",
    "hello",
    "here",
    "hope",
    "how's",
    "into",
    "just",
    "keep",
    "know",
    "let's",
    "like",
    "little",
    "look",
    "looking",
    "looks",
    "love",
    "make",
    "many",
    "maybe",
    "more",
    "morning",
    "much",
    "need",
    "nice",
    "nothing",
    "okay",
    "only",
    "over",
    "pretty",
    "ready",
    "really",
    "right",
    "said",
    "same",
    "should",
    "some",
    "something",
    "sorry",
    "sounds",
    "start",
    "started",
    "still",
    "sure",
    "take",
    "talk",
    "talking",
    "tell",
    "than",
    "thank",
    "thanks",
    "that",
    "that's",
    "their",
    "them",
    "then",
    "there",
    "there's",
    "these",
    "they",
    "thing",
    "things",
    "think",
    "this",
    "those",
    "time",
    "today",
    "very",
    "want",
    "well",
    "were",
    "what",
    "what's",
    "when",
    "where",
    "which",
    "while",
    "will",
    "with",
    "wonderful",
    "would",
    "yeah",
    "your",
    "you're",
    "yours",
];

/// Letters of a word compared when matching ("composition" and "compose" share "compo").
pub const STEM_CHARS: usize = 5;

/// The words of `text` that can carry a topic, as comparable keys: Latin-script words of
/// four letters or more that are not small talk or one of `names` (full or first names),
/// cut to their first [`STEM_CHARS`] letters; in other scripts (Chinese, Korean), each pair
/// of adjacent characters of a word.
pub fn topic_words(text: &str, names: &[&str]) -> BTreeSet<String> {
    let t = lower(text);
    let name_words: BTreeSet<String> = names
        .iter()
        .flat_map(|n| {
            lower(n)
                .split_whitespace()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .collect();
    let mut keys = BTreeSet::new();
    for w in words(&t) {
        let w = w.trim_matches('\'');
        let w = w.strip_suffix("'s").unwrap_or(w);
        if name_words.contains(w) {
            continue;
        }
        if w.is_ascii() {
            if w.chars().count() >= 4
                && w.chars().all(|c| c.is_ascii_alphabetic() || c == '\'')
                && !SMALL_TALK.contains(&w)
            {
                keys.insert(w.chars().take(STEM_CHARS).collect());
            }
        } else {
            let chars: Vec<char> = w.chars().collect();
            for pair in chars.windows(2) {
                keys.insert(pair.iter().collect());
            }
        }
    }
    keys
}

/// Whether an utterance is about something in its situation: it shares a [`topic_words`]
/// key with `situation` (the keys of both speakers' activities and descriptions, say).
/// "How's it going?" and "I'm ready!" are not; "How's the composition coming along?" is
/// when the composition is in the situation.
pub fn about_situation(text: &str, situation: &BTreeSet<String>, names: &[&str]) -> bool {
    topic_words(text, names)
        .iter()
        .any(|k| situation.contains(k))
}

/// An utterance the length limit cut ("... but you might want to take a break. It") ended
/// at its last whole sentence: when `text` is within a few characters of `limit` and a
/// sentence ends in it, what follows that end is dropped. A shorter text, or one with no
/// sentence end, is kept as it is. (`raw` is the line as generated, before labels were
/// taken off, whose length tells whether the limit cut it.)
pub fn whole_sentences(text: &str, raw: &str, limit: usize) -> String {
    let t = text.trim();
    if raw.trim().chars().count() + 4 < limit {
        return t.to_string();
    }
    let end = t
        .char_indices()
        .filter(|&(_, c)| matches!(c, '.' | '!' | '?' | '。' | '！' | '？'))
        .map(|(i, c)| i + c.len_utf8())
        .next_back();
    match end {
        Some(e) if e < t.len() => t[..e].to_string(),
        _ => t.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        // From the Lin day of session 27: the model offering to write the line.
        assert!(is_refusal(
            "Sure, I can help you with that. Let's say John Lin is feeling close to Eddy Lin."
        ));
        assert!(is_refusal(
            "Sure, John Lin could say something like this to Eddy Lin to bring up the topic:"
        ));
        assert!(!is_refusal("Sure, I can help you carry that."));
        // From a Lin day: the model writing the line as an assistant.
        assert!(is_refusal(
            "Sure, John Lin can say: \"Hey Eddy, I've been thinking about you lately.\""
        ));
        assert!(!is_refusal("I can say this: the tune is lovely."));
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
        // Dialogue as a list item, a "says:" label, a name before a quotation.
        assert_eq!(
            strip_speaker("- John Lin: \"Eddy, hello\"", &n),
            "Eddy, hello"
        );
        assert_eq!(strip_speaker("John says: Hi Eddy", &n), "Hi Eddy");
        assert_eq!(
            strip_speaker("John Lin, \"Eddy Lin, you're here\"", &n),
            "Eddy Lin, you're here"
        );
        // A name the words begin with stays.
        assert_eq!(strip_speaker("Eddy, hello", &n), "Eddy, hello");
        assert_eq!(
            strip_speaker("John said, \"practise\" and I did", &n),
            "John said, \"practise\" and I did"
        );
    }

    #[test]
    fn small_talk_is_told_from_talk_about_the_situation() {
        let names = ["John Lin", "Eddy Lin"];
        let mut situation = topic_words(
            "John Lin is making dinner in the kitchen. Eddy Lin is a student who is \
             composing music for his class.",
            &names,
        );
        situation.extend(topic_words("Eddy Lin practises the piano", &names));
        let about = |t: &str| about_situation(t, &situation, &names);
        assert!(!about("Hi there, Eddy! How's it going?"));
        assert!(!about("I'm ready to go."));
        assert!(!about("Great! Let's get started."));
        assert!(!about("Thank you. Yes, I am."));
        assert!(about("How's your composition coming along?"));
        assert!(about("Dinner is almost done, son."));
        assert!(about("Can you play me the piano piece?"));
        // A name is not a topic, though it is in the situation.
        assert!(!about("Eddy! Eddy!"));
        // Other scripts by character pairs.
        let zh = topic_words("林约翰在厨房做晚饭", &[]);
        assert!(about_situation("晚饭好了吗？", &zh, &[]));
        assert!(!about_situation("你好！", &zh, &[]));
    }

    #[test]
    fn a_cut_utterance_ends_at_its_last_sentence() {
        let cut = "Well, I can see how you're feeling. I know you're working hard on your \
                   composition, but you might want to take a break from it for a while. It";
        assert_eq!(
            whole_sentences(cut, cut, cut.chars().count()),
            "Well, I can see how you're feeling. I know you're working hard on your \
             composition, but you might want to take a break from it for a while."
        );
        // Under the limit: kept whole, whatever its end.
        assert_eq!(whole_sentences("Sure, and", "Sure, and", 160), "Sure, and");
        // No sentence end: kept.
        assert_eq!(whole_sentences("a b c d", "a b c d", 7), "a b c d");
        // The raw line (with its label) reached the limit: cut.
        assert_eq!(
            whole_sentences("Fine. And", "John Lin: Fine. And", 19),
            "Fine."
        );
        assert_eq!(whole_sentences("你好。我们", "你好。我们", 5), "你好。");
    }
}

//! Cleaning the model's free text into activities and plan lines: the first line of an
//! answer, an activity without run-on times or talk about the plan, and a line the length
//! limit cut ended on a whole phrase; and finding a phrase in a text as whole words.

use crate::llm::constrain;

use super::state::PlanLine;

/// Whether `phrase` occurs in `text` as whole words (a plural "s" allowed after it).
pub fn has_phrase(text: &str, phrase: &str) -> bool {
    if phrase.is_empty() {
        return false;
    }
    text.match_indices(phrase).any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let mut after = text[i + phrase.len()..].chars();
        let next = match after.next() {
            Some('s') => after.next(),
            c => c,
        };
        let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
        !word(before) && !word(next)
    })
}

/// The well-formed lines of a generated plan with their activities cleaned, a line that
/// reached `max_activity_chars` ended where it can ([`end_of_cut_line`]). Line by line, so
/// that a cut line is known by its length before its trailing spaces are trimmed
/// ("... and prepares the " is 60 characters, 59 after).
pub fn plan_lines(text: &str, max_activity_chars: usize) -> Vec<PlanLine> {
    text.split('\n')
        .flat_map(|line| {
            let raw = crate::formats::clock::split_plan_line(line)
                .map_or(0, |(_, a)| a.trim_end_matches('\r').chars().count());
            constrain::parse_plan(line).into_iter().map(move |(m, a)| {
                // At the limit the last word may be cut too; under it a line can still end
                // on "for a" or "by" (the plan's token budget ran out, or the model stopped
                // there), and loses those words.
                // Dangling words are looked for after cleaning, so that a run-on time cut
                // off takes its preposition with it ("... since 01:00 pm").
                let cut = raw >= max_activity_chars;
                let a = clean_activity(&if cut { end_of_cut_line(&a) } else { a });
                let a = if ends_unfinished(&a) {
                    without_dangling_words(&a)
                } else {
                    a
                };
                PlanLine::new(m, a)
            })
        })
        .filter(|l| !l.activity.is_empty())
        .collect()
}

/// First line of `text`, trimmed, with surrounding quotes removed and whitespace collapsed.
pub fn clean_line(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let collapsed = first.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_matches(|c: char| c == '"' || c == '\'' || c.is_whitespace())
        .to_string()
}

/// An activity as the plan keeps it: cut before a `;` or a time-like `hh:mm` that a small
/// model runs on with (`"Lunch; 13:00 am: Lunch"` → `"Lunch"`), trailing punctuation and
/// spaces removed. Empty if nothing usable is left (the caller falls back).
pub fn clean_activity(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut end = text.find(';').unwrap_or(text.len());
    for i in 0..bytes.len().saturating_sub(2) {
        if bytes[i].is_ascii_digit() && bytes[i + 1] == b':' && bytes[i + 2].is_ascii_digit() {
            let start = if i > 0 && bytes[i - 1].is_ascii_digit() {
                i - 1
            } else {
                i
            };
            end = end.min(start);
            break;
        }
    }
    let mut out = text[..end].to_string();
    // Markdown emphasis and a second sentence are the model talking about the plan ("Cook
    // dinner. Keep the focus on finishing", "Hang out. **Rewritten Plan:**").
    if let Some(i) = out.find("**") {
        out.truncate(i);
    }
    if let Some(i) = second_sentence(&out) {
        out.truncate(i);
    }
    // A duration or a number in parentheses ("(15 minutes)", "(2"), examples ("(e.g.
    // pasta)": the 1.5B's "Serve the dinner (e.g." in a Lin day), a parenthesis left open
    // and an explanation after " - " are the model talking about the plan, not the activity.
    if let Some(i) = out.find('(') {
        let inner = out[i..].to_ascii_lowercase();
        let after = inner[1..].trim_start();
        let number = after.starts_with(|c: char| c.is_ascii_digit());
        let example = ["e.g", "eg.", "i.e", "such as", "for example", "like "]
            .iter()
            .any(|w| after.starts_with(w));
        let open = !inner.contains(')');
        if number
            || example
            || open
            || inner.contains("minute")
            || inner.contains("hour")
            || inner.contains("min)")
        {
            out.truncate(i);
        }
    }
    if let Some(i) = out.find(" - ") {
        out.truncate(i);
    }
    // A trailing duration: "... at the counter for 15", "... for 15 minutes", "... for
    // another 15 minutes" (Penny waited tables so for six steps of a Big Bang Theory day).
    if let Some(i) = out.rfind(" for ") {
        let mut rest = &out[i + 5..];
        if let Some(q) = DURATION_QUALIFIERS
            .iter()
            .find(|q| rest.starts_with(&format!("{q} ")))
        {
            rest = &rest[q.len()..];
        }
        let words: Vec<&str> = rest.split_whitespace().collect();
        let number = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit());
        let unit = |w: &str| w.starts_with("min") || w.starts_with("hour");
        let duration = match words.as_slice() {
            [n] => number(n),
            [n, u] => number(n) && unit(u),
            _ => false,
        };
        if duration {
            out.truncate(i);
        }
    }
    out.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '-' | '('))
        .trim()
        .to_string()
}

/// Words before the number of a trailing duration ("for another 15 minutes").
const DURATION_QUALIFIERS: &[&str] = &[
    "yet another",
    "another",
    "a further",
    "the next",
    "about",
    "around",
    "roughly",
    "nearly",
    "almost",
    "over",
];

/// Words that do not end an activity: a line cut at the length limit after one of them
/// ("... opening the delivery box and") loses it.
const DANGLING: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "by", "for", "with",
    "from", "into", "his", "her", "their", "my", "its", "while", "as", "some", "if", "that",
    "it's", "is", "are", "was", "were", "be", "who", "which", "than", "about", "what", "how",
    "will", "can", "could", "would", "should", "he", "she", "they", "we", "since", "until", "till",
    "because",
];

/// Whether an activity ends on a word that cannot end a phrase ("... and prepares the", "...
/// to see if it's") or inside a parenthesis ("Serve the dinner (e.g."): a line the length
/// limit cut and nothing ended.
pub fn ends_unfinished(activity: &str) -> bool {
    let t = activity
        .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | ';' | '-'));
    dangles(t) || t.matches('(').count() > t.matches(')').count()
}

/// Verbs that need an object after "to": "... from the counter to grab" is unfinished,
/// though "decides what to buy" is not ([`NAMES_THE_OBJECT`]).
const NEEDS_OBJECT: &[&str] = &[
    "grab", "get", "buy", "fetch", "bring", "take", "put", "pick", "make", "prepare", "find",
];

/// Words before "to" that make the object known ("what to make", "something to grab").
const NAMES_THE_OBJECT: &[&str] = &[
    "what",
    "where",
    "how",
    "which",
    "something",
    "anything",
    "nothing",
];

/// Verbs that "in" or "on" can end as a particle: "settles in", "carries on", "checks in".
const PARTICLE_VERBS: &[&str] = &[
    "settle", "check", "move", "log", "sleep", "give", "drop", "tune", "join", "walk", "come",
    "step", "pop", "stay", "carry", "hold", "go", "keep", "sign", "fill", "hand", "turn", "chime",
    "sink", "snuggle", "curl", "head", "look", "listen", "try", "put",
];

/// Whether `word` is a form of one of [`PARTICLE_VERBS`] ("settles", "carried", "dropping"):
/// the word with a regular ending taken off is one of them.
fn particle_verb(word: &str) -> bool {
    let mut bases = vec![word.to_string()];
    for (ending, base_end) in [
        ("ies", "y"),
        ("ied", "y"),
        ("es", ""),
        ("s", ""),
        ("ed", ""),
        ("ed", "e"),
        ("ing", ""),
        ("ing", "e"),
    ] {
        if let Some(stem) = word.strip_suffix(ending) {
            bases.push(format!("{stem}{base_end}"));
            // "dropping", "popped": a doubled last consonant.
            let mut chars = stem.chars().rev();
            if let (Some(a), Some(b)) = (chars.next(), chars.next()) {
                if a == b && base_end.is_empty() {
                    bases.push(stem[..stem.len() - a.len_utf8()].to_string());
                }
            }
        }
    }
    bases.iter().any(|b| PARTICLE_VERBS.contains(&b.as_str()))
}

/// Whether `t` (its end punctuation trimmed) has more than one word and ends on one that
/// cannot end a phrase; "for a while" ends one, "while" alone does not; nor does "to grab"
/// unless the object was named before it; "in" and "on" end one as a particle ("settles in",
/// "puts it on").
fn dangles(t: &str) -> bool {
    let lower = t.to_lowercase();
    let words: Vec<&str> = lower.split(' ').rev().take(3).collect();
    let last = words.first().copied().unwrap_or("");
    let a_while = last == "while" && lower.ends_with(" a while");
    let no_object = NEEDS_OBJECT.contains(&last)
        && words.get(1) == Some(&"to")
        && !words.get(2).is_some_and(|w| NAMES_THE_OBJECT.contains(w));
    let particle = matches!(last, "in" | "on")
        && words
            .get(1)
            .is_some_and(|w| particle_verb(w) || matches!(*w, "it" | "them" | "him" | "me" | "us"));
    let ever_since = last == "since" && words.get(1) == Some(&"ever");
    t.contains(' ')
        && !a_while
        && !particle
        && !ever_since
        && (DANGLING.contains(&last) || no_object)
}

/// `text` without the words at its end that cannot end a phrase, and the punctuation
/// around them (`"Penny rests for a while by"` → `"Penny rests for a while"`); a line of
/// one word is kept.
pub fn without_dangling_words(text: &str) -> String {
    let mut out = text.to_string();
    loop {
        let trimmed = out.trim_end_matches(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ':' | ';' | '-' | '—' | '(' | '"' | '\'')
        });
        let last = trimmed.rsplit(' ').next().unwrap_or("");
        if dangles(trimmed) {
            out = trimmed[..trimmed.len() - last.len()].to_string();
        } else {
            return trimmed.to_string();
        }
    }
}

/// A line that reached the length limit, ended where it can: the last word (perhaps cut)
/// dropped, then an unclosed parenthesis or quotation, then dangling words and punctuation
/// (`"Cook the main course (e.g., chicken, qu"` → `"Cook the main course"`), then the last
/// clause after a comma or "and", which the limit left unfinished, where three words stay
/// (`"checks the fridge and prepares the"` → `"checks the fridge"`). A line of one word is
/// kept as it is.
pub fn end_of_cut_line(text: &str) -> String {
    let Some(space) = text.trim_end().rfind(' ') else {
        return text.to_string();
    };
    let mut out = text[..space].to_string();
    for open in ['(', '"', '“', '\''] {
        let close = match open {
            '(' => ')',
            '“' => '”',
            c => c,
        };
        let (opens, closes) = if open == close {
            (out.matches(open).count(), 0)
        } else {
            (out.matches(open).count(), out.matches(close).count())
        };
        let unclosed = if open == close {
            opens % 2 == 1
        } else {
            opens > closes
        };
        // An apostrophe inside a word ("Monica's") is not a quotation.
        let quote_start = out
            .rfind(open)
            .filter(|&i| open != '\'' || i == 0 || out[..i].ends_with(' '));
        if let (true, Some(i)) = (unclosed, quote_start) {
            out.truncate(i);
        }
    }
    out = without_dangling_words(&out);
    if let Some(i) = [", ", " and "]
        .iter()
        .filter_map(|sep| out.rfind(sep))
        .max()
    {
        if out[..i].split_whitespace().count() >= 3 {
            out.truncate(i);
        }
    }
    if out.is_empty() {
        text.to_string()
    } else {
        out
    }
}

/// Where a second sentence starts in `text` (the byte after the first one's period): a
/// period, a space and a capital letter, the period not ending a short capitalised word
/// ("Dr. Smith", "Mrs. Lin").
fn second_sentence(text: &str) -> Option<usize> {
    for (i, _) in text.match_indices(". ") {
        let next = text[i + 2..].chars().next();
        if !next.is_some_and(char::is_uppercase) {
            continue;
        }
        let word = text[..i]
            .rsplit(|c: char| !c.is_alphabetic())
            .next()
            .unwrap_or("");
        // "e.g. Pasta": a word after a period is an abbreviation too.
        let dotted = text[..i - word.len()].ends_with('.');
        let abbreviation =
            dotted || word.chars().count() <= 3 && word.starts_with(char::is_uppercase);
        if !abbreviation {
            return Some(i + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_cut_at_the_limit_end_on_a_whole_word() {
        let cases = [
            (
                "Begin the unpacking process by opening the delivery box and",
                "Begin the unpacking process by opening the delivery box",
            ),
            (
                "Rachel Green wakes up in the bridal suite, ready to greet, '",
                "Rachel Green wakes up in the bridal suite",
            ),
            (
                "Cook the ingredients for the main course (e.g., chicken, qu",
                "Cook the ingredients for the main course",
            ),
            (
                "Joey Tribbiani looks at Monica's refrigerator and opens th",
                "Joey Tribbiani looks at Monica's refrigerator",
            ),
            // From a Lin family day: the limit fell on a space after a whole word.
            (
                "John Lin checks the fridge for ingredients and prepares the",
                "John Lin checks the fridge for ingredients",
            ),
            (
                "Play the third section of the composition to see if it's in",
                "Play the third section of the composition to see",
            ),
            ("Go out, and buy some", "Go out, and buy"),
            ("Supercalifragilistic", "Supercalifragilistic"),
            (
                "Say \"hello there\" to the neighbours and the",
                "Say \"hello there\" to the neighbours",
            ),
        ];
        for (line, kept) in cases {
            assert_eq!(end_of_cut_line(line), kept, "{line:?}");
        }
    }

    #[test]
    fn a_plan_line_cut_on_a_space_is_known_as_cut() {
        let text = "07:00 am: John Lin checks the fridge for ingredients and prepares the \n\
                    07:15 am: John Lin measures out eggs and milk\n";
        let lines: Vec<String> = plan_lines(text, 60)
            .into_iter()
            .map(|l| l.activity)
            .collect();
        assert_eq!(
            lines,
            [
                "John Lin checks the fridge for ingredients",
                "John Lin measures out eggs and milk"
            ]
        );
        // Under the limit a line keeps its last word, but not words that cannot end it.
        let whole = plan_lines("07:00 am: Eat bread and\n", 60);
        assert_eq!(whole[0].activity, "Eat bread");
        let lines = plan_lines(
            "06:00 pm: Penny rests for a while by\n\
             06:15 pm: Leonard Hofstadter leaves his apartment and heads to the\n\
             06:30 pm: Penny grabs\n\
             06:45 pm: John Lin takes a break from the counter to grab\n\
             07:00 pm: Monica decides what to make\n",
            60,
        );
        let got: Vec<&str> = lines.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            got,
            [
                "Penny rests for a while",
                "Leonard Hofstadter leaves his apartment and heads",
                "Penny grabs",
                "John Lin takes a break from the counter",
                "Monica decides what to make"
            ]
        );
        // A run-on time cut off takes its preposition with it (Penny of a Big Bang Theory
        // day at 8a4664b: "... since" at 3 pm); "ever since" ends a phrase.
        let lines = plan_lines(
            "03:00 pm: Penny waits tables since 01:00 pm\n\
             03:15 pm: Penny serves tables until 05:00 pm\n\
             03:30 pm: Penny has worked there ever since\n",
            80,
        );
        let got: Vec<&str> = lines.iter().map(|l| l.activity.as_str()).collect();
        assert_eq!(
            got,
            [
                "Penny waits tables",
                "Penny serves tables",
                "Penny has worked there ever since"
            ]
        );
    }

    #[test]
    fn activities_are_cut_before_run_on_times() {
        // (the model's line, what the plan keeps)
        let cases = [
            ("Lunch; 13:00 am: Lunch; 14:00", "Lunch"),
            ("11:45 am: 11:45", ""),
            ("Go to class at 09:00", "Go to class at"),
            ("Read a book.", "Read a book."),
            (
                "Wake up and take a shower (15 minutes)",
                "Wake up and take a shower",
            ),
            (
                "Wake up and get dressed (15 minutes) - This includes getting",
                "Wake up and get dressed",
            ),
            ("Call Mei (his wife)", "Call Mei (his wife)"),
            (
                "Serve customers at the counter for 15",
                "Serve customers at the counter",
            ),
            ("Wait for 2 friends", "Wait for 2 friends"),
            ("Read for 30 minutes", "Read"),
            (
                "Penny waits tables at The Cheesecake Factory for another 15 minutes.",
                "Penny waits tables at The Cheesecake Factory",
            ),
            (
                "Sheldon Cooper continues his calculations in his office for another 15",
                "Sheldon Cooper continues his calculations in his office",
            ),
            ("Talk for yet another 10 minutes", "Talk"),
            ("Shop for the next party", "Shop for the next party"),
            ("Wait for another customer", "Wait for another customer"),
            ("Café au lait, then 3 emails", "Café au lait, then 3 emails"),
            (
                "Cook through the dinner service. Keep the focus on finishing",
                "Cook through the dinner service.",
            ),
            (
                "Hang out at Central Perk. **Rewritten Plan:**",
                "Hang out at Central Perk.",
            ),
            ("**Rewritten Plan:**", ""),
            ("Joey checks his email. (15", "Joey checks his email."),
            ("Serve the dinner (e.g. Pasta, salad)", "Serve the dinner"),
            ("Serve the dinner (e.g.", "Serve the dinner"),
            ("Set the table (plates and", "Set the table"),
            (
                "Set the table (plates and forks)",
                "Set the table (plates and forks)",
            ),
            ("Cook pasta (2 pans)", "Cook pasta"),
            ("Visit Dr. Smith. Then go home", "Visit Dr. Smith."),
            (
                "Buy milk. and eggs at the market",
                "Buy milk. and eggs at the market",
            ),
        ];
        for (line, kept) in cases {
            assert_eq!(clean_activity(line), kept, "{line:?}");
        }
    }

    #[test]
    fn particle_verbs_are_known_in_their_forms() {
        for w in [
            "settle", "settles", "settled", "settling", "carries", "carried", "dropping", "popped",
            "checks", "goes", "filled",
        ] {
            assert!(particle_verb(w), "{w}");
        }
        for w in ["cooks", "plates", "reading", "the"] {
            assert!(!particle_verb(w), "{w}");
        }
    }

    #[test]
    fn clean_line_takes_the_first_non_empty_line() {
        assert_eq!(clean_line("\n  \"Hi  there\"  \nmore"), "Hi there");
        assert_eq!(clean_line(""), "");
    }
}

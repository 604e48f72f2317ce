//! [`ConstraintSpec`]: a constraint described as data, so that it can travel with a request
//! to a server: built into its machine here or by `serve-llm`, or written as a llama.cpp
//! grammar ([`gbnf`](super::gbnf)) for servers that take one.

use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use super::super::request::TokenConstraint;
use super::{emoji, line, plan, CharMachine, Constrained, Letters, PlanTimes, TokenTable};

/// Largest sizes a spec may ask for (a spec from a client is checked against them).
const MAX_CHARS: usize = 4096;
const MAX_EMOJI: usize = 64;
const MAX_LINES: usize = 96;

/// One of the machines of [`constrain`](super), with its parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ConstraintSpec {
    /// One line of at most `max_chars` characters among `letters` ([`line()`]).
    Line {
        max_chars: usize,
        #[serde(default, skip_serializing_if = "Letters::is_any")]
        letters: Letters,
    },
    /// Exactly `count` emoji ([`emoji`]).
    Emoji { count: usize },
    /// Plan lines `"hh:mm am: activity"`, activities among `letters` ([`plan`]).
    Plan {
        times: PlanTimes,
        max_activity_chars: usize,
        #[serde(default, skip_serializing_if = "Letters::is_any")]
        letters: Letters,
    },
}

impl ConstraintSpec {
    /// One line of at most `max_chars` characters, any letters.
    pub fn line(max_chars: usize) -> Self {
        Self::Line {
            max_chars,
            letters: Letters::Any,
        }
    }

    /// Plan lines at `times` with activities of at most `max_activity_chars`, any letters.
    pub fn plan(times: PlanTimes, max_activity_chars: usize) -> Self {
        Self::Plan {
            times,
            max_activity_chars,
            letters: Letters::Any,
        }
    }

    /// The same spec with its free text taking only `letters` (emoji are not text).
    pub fn in_letters(mut self, only: Letters) -> Self {
        if let Self::Line { letters, .. } | Self::Plan { letters, .. } = &mut self {
            *letters = only;
        }
        self
    }

    /// The engine's token mask for this spec over `table`.
    pub fn constraint(&self, table: &Arc<TokenTable>) -> Arc<Mutex<dyn TokenConstraint>> {
        match self {
            Self::Line { max_chars, letters } => {
                Constrained::shared(table.clone(), line(*max_chars).with_letters(*letters))
            }
            Self::Emoji { count } => Constrained::shared(table.clone(), emoji(*count)),
            Self::Plan {
                times,
                max_activity_chars,
                letters,
            } => Constrained::shared(
                table.clone(),
                plan(times.clone(), *max_activity_chars).with_letters(*letters),
            ),
        }
    }

    /// The longest prefix of `text` the machine accepts, character by character (all of it
    /// when the text was written under this constraint).
    pub fn accepted_prefix<'a>(&self, text: &'a str) -> &'a str {
        &text[..self.walk(text).0]
    }

    /// Whether `text` is a complete output under this constraint.
    pub fn is_complete(&self, text: &str) -> bool {
        let (accepted, can_end) = self.walk(text);
        accepted == text.len() && can_end
    }

    /// The machine fed `text`: the bytes it accepts, and whether it may end there.
    fn walk(&self, text: &str) -> (usize, bool) {
        match self {
            Self::Line { max_chars, letters } => {
                walk(line(*max_chars).with_letters(*letters), text)
            }
            Self::Emoji { count } => walk(emoji(*count), text),
            Self::Plan {
                times,
                max_activity_chars,
                letters,
            } => walk(
                plan(times.clone(), *max_activity_chars).with_letters(*letters),
                text,
            ),
        }
    }

    /// Checks the sizes of a spec that came from outside (a server's client).
    pub fn validate(&self) -> Result<(), String> {
        let check = |name: &str, n: usize, max: usize| {
            if n > max {
                Err(format!("{name} = {n}: must be at most {max}"))
            } else {
                Ok(())
            }
        };
        match self {
            Self::Line { max_chars, .. } => check("max_chars", *max_chars, MAX_CHARS),
            Self::Emoji { count } => check("count", *count, MAX_EMOJI),
            Self::Plan {
                times,
                max_activity_chars,
                ..
            } => {
                check("max_activity_chars", *max_activity_chars, MAX_CHARS)?;
                match times {
                    PlanTimes::Fixed(t) => check("times", t.len(), MAX_LINES),
                    PlanTimes::Increasing {
                        min_lines,
                        max_lines,
                        ..
                    } => {
                        check("max_lines", *max_lines, MAX_LINES)?;
                        if min_lines > max_lines {
                            return Err(format!(
                                "min_lines = {min_lines}: more than max_lines = {max_lines}"
                            ));
                        }
                        Ok(())
                    }
                }
            }
        }
    }
}

/// `m` fed `text` until it refuses a character: the bytes accepted, and whether it may end
/// after them.
fn walk<M: CharMachine>(mut m: M, text: &str) -> (usize, bool) {
    for (i, c) in text.char_indices() {
        match m.feed(c) {
            Some(next) => m = next,
            None => return (i, m.can_end()),
        }
    }
    (text.len(), m.can_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day() -> ConstraintSpec {
        ConstraintSpec::plan(
            PlanTimes::Increasing {
                after: Some(360),
                last: 1320,
                min_lines: 2,
                max_lines: 4,
            },
            20,
        )
    }

    #[test]
    fn specs_travel_as_json() {
        for spec in [
            ConstraintSpec::line(80),
            ConstraintSpec::Emoji { count: 2 },
            day(),
            ConstraintSpec::plan(PlanTimes::Fixed(vec![420, 480]), 40),
        ] {
            let json = serde_json::to_string(&spec).unwrap();
            assert_eq!(serde_json::from_str::<ConstraintSpec>(&json).unwrap(), spec);
        }
        let v: ConstraintSpec =
            serde_json::from_str(r#"{"kind": "line", "max_chars": 12}"#).unwrap();
        assert_eq!(v, ConstraintSpec::line(12));
        assert!(serde_json::from_str::<ConstraintSpec>(r#"{"kind": "regex"}"#).is_err());
    }

    #[test]
    fn accepted_prefixes_stop_where_the_machine_does() {
        let l = ConstraintSpec::line(5);
        assert_eq!(l.accepted_prefix("hello world"), "hello");
        assert_eq!(l.accepted_prefix(" hi"), "");
        assert_eq!(l.accepted_prefix("hi\nthere"), "hi\n");
        assert!(l.is_complete("hi"));
        assert!(!l.is_complete(""));
        let e = ConstraintSpec::Emoji { count: 2 };
        assert_eq!(e.accepted_prefix("😀🎉!"), "😀🎉");
        assert_eq!(e.accepted_prefix("ok 😀"), "");
        assert!(e.is_complete("😀\u{FE0F}🎉"));
        assert!(!e.is_complete("😀"));
        // Times must increase: the third line goes back to 08:00 am.
        let text = "07:00 am: wake up\n09:00 am: work\n08:00 am: nap\n";
        assert_eq!(
            day().accepted_prefix(text),
            "07:00 am: wake up\n09:00 am: work\n08:00 "
        );
        assert!(day().is_complete("07:00 am: wake up\n09:00 am: work\n"));
        assert!(!day().is_complete("07:00 am: wake up\n"));
    }

    #[test]
    fn outside_sizes_are_refused() {
        assert!(ConstraintSpec::line(5000).validate().is_err());
        assert!(ConstraintSpec::Emoji { count: 1000 }.validate().is_err());
        // What in-process takes (an empty plan, no emoji) a server takes too.
        assert!(ConstraintSpec::Emoji { count: 0 }.validate().is_ok());
        let bad = ConstraintSpec::plan(
            PlanTimes::Increasing {
                after: None,
                last: 100,
                min_lines: 5,
                max_lines: 2,
            },
            10,
        );
        assert!(bad.validate().unwrap_err().contains("min_lines"));
        assert!(day().validate().is_ok());
    }

    #[test]
    fn text_in_an_alphabet_refuses_chinese_japanese_and_korean() {
        let l = ConstraintSpec::line(40).in_letters(Letters::Alphabet);
        assert_eq!(l.accepted_prefix("at the柜台 now"), "at the");
        assert_eq!(l.accepted_prefix("wait！"), "wait");
        assert_eq!(l.accepted_prefix("café, naïve — ok"), "café, naïve — ok");
        let any = ConstraintSpec::line(40);
        assert_eq!(any.accepted_prefix("at the柜台"), "at the柜台");
        let p = day().in_letters(Letters::Alphabet);
        assert_eq!(
            p.accepted_prefix("07:00 am: wake up\n08:00 am: 吃饭\n"),
            "07:00 am: wake up\n08:00 am: "
        );
        let json = serde_json::to_string(&p).unwrap();
        assert!(json.contains(r#""letters":"alphabet""#), "{json}");
        assert_eq!(serde_json::from_str::<ConstraintSpec>(&json).unwrap(), p);
        assert!(!serde_json::to_string(&day()).unwrap().contains("letters"));
        let e = ConstraintSpec::Emoji { count: 1 }.in_letters(Letters::Alphabet);
        assert_eq!(e, ConstraintSpec::Emoji { count: 1 });
    }
}

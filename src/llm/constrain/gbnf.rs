//! A [`ConstraintSpec`] as a llama.cpp grammar (GBNF, the `grammar` field of llama.cpp's
//! server and llama-cpp-python's), for servers that cannot run our machines.
//!
//! Every string the grammar allows, the machine allows too (an activity's first letter
//! comes from the common scripts only, a subset of the machine's). The client still cuts
//! what a server returns to the machine's
//! [`accepted_prefix`](ConstraintSpec::accepted_prefix), so a server whose grammar support
//! differs gives a shorter answer, never a malformed one.

use std::fmt::Write;

use super::time::{format_time, quarters_between};
use super::{ConstraintSpec, Letters, PlanTimes};
use crate::formats::emoji::{EMOJI, VS16};
use crate::formats::script::EAST_ASIAN;

/// Code points a free text may not contain (`is_text_char`): controls, the line and
/// paragraph separators, and U+FFFD.
const NOT_TEXT: &[(u32, u32)] = &[
    (0x00, 0x1F),
    (0x7F, 0x9F),
    (0x2028, 0x2029),
    (0xFFFD, 0xFFFD),
];

/// Code points a free text may not start with (`is_text_start`): [`NOT_TEXT`] and Unicode
/// whitespace.
const NOT_TEXT_START: &[(u32, u32)] = &[
    (0x00, 0x20),
    (0x7F, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFFFD, 0xFFFD),
];

/// Letters an activity may start with: blocks of alphabetic characters in the common
/// scripts (Latin, Greek, Cyrillic, Hebrew, Arabic, kana, CJK ideographs, Hangul). A subset
/// of what the machine takes (any alphabetic character), so the grammar stays small.
const LETTERS: &[(u32, u32)] = &[
    (0x41, 0x5A),
    (0x61, 0x7A),
    (0xC0, 0xD6),
    (0xD8, 0xF6),
    (0xF8, 0x2AF),
    (0x388, 0x38A),
    (0x38C, 0x38C),
    (0x38E, 0x3A1),
    (0x3A3, 0x3F5),
    (0x400, 0x481),
    (0x48A, 0x52F),
    (0x5D0, 0x5EA),
    (0x620, 0x64A),
    (0x3041, 0x3096),
    (0x30A1, 0x30FA),
    (0x4E00, 0x9FFF),
    (0xAC00, 0xD7A3),
];

/// Most repetitions one `{0,n}` may ask for: llama.cpp refuses 2,000 or more. A longer text
/// is cut there (still a text the machine accepts).
const MAX_REPEAT: usize = 1998;

/// A character class over `ranges` (`negated`: every other character).
fn class(ranges: &[(u32, u32)], negated: bool) -> String {
    let mut s = String::from(if negated { "[^" } else { "[" });
    for &(lo, hi) in ranges {
        push_code(&mut s, lo);
        if hi != lo {
            s.push('-');
            push_code(&mut s, hi);
        }
    }
    s.push(']');
    s
}

fn push_code(s: &mut String, c: u32) {
    let _ = match c {
        0..=0xFF => write!(s, "\\x{c:02X}"),
        0x100..=0xFFFF => write!(s, "\\u{c:04X}"),
        _ => write!(s, "\\U{c:08X}"),
    };
}

/// `ranges` and, for text in an alphabet, the Chinese, Japanese and Korean blocks: the code
/// points a text among `letters` may not use.
fn excluded(ranges: &[(u32, u32)], letters: Letters) -> Vec<(u32, u32)> {
    let mut out = ranges.to_vec();
    if !letters.is_any() {
        out.extend_from_slice(EAST_ASIAN);
    }
    out
}

/// [`LETTERS`] that text among `letters` may use.
fn first_letters(letters: Letters) -> Vec<(u32, u32)> {
    LETTERS
        .iter()
        .copied()
        .filter(|&(lo, _)| letters.allows(char::from_u32(lo).unwrap_or(' ')))
        .collect()
}

/// Rules for a free text of `1..=max` characters named `name` (first character from
/// `first`, the others any text character among `letters`).
fn text_rules(out: &mut String, name: &str, first: &str, max: usize, letters: Letters) {
    let _ = writeln!(out, "{name}-first ::= {first}");
    let _ = writeln!(
        out,
        "{name}-char ::= {}",
        class(&excluded(NOT_TEXT, letters), true)
    );
    match max {
        0 | 1 => {
            let _ = writeln!(out, "{name} ::= {name}-first");
        }
        _ => {
            let more = (max - 1).min(MAX_REPEAT);
            let _ = writeln!(out, "{name} ::= {name}-first {name}-char{{0,{more}}}");
        }
    }
}

impl ConstraintSpec {
    /// This constraint as a GBNF grammar whose start rule is `root`.
    pub fn gbnf(&self) -> String {
        let mut g = String::new();
        match self {
            Self::Line { max_chars, letters } => {
                g.push_str("root ::= text \"\\n\"?\n");
                let first = class(&excluded(NOT_TEXT_START, *letters), true);
                text_rules(&mut g, "text", &first, *max_chars, *letters);
            }
            Self::Emoji { count } => {
                let _ = writeln!(g, "root ::= {}", sequence(vec!["emoji".into(); *count]));
                let _ = writeln!(
                    g,
                    "emoji ::= {} \"{}\"?",
                    class(EMOJI, false),
                    class_literal(VS16)
                );
            }
            Self::Plan {
                times,
                max_activity_chars,
                letters,
            } => {
                match times {
                    PlanTimes::Fixed(t) => {
                        let lines: Vec<String> = t
                            .iter()
                            .map(|&m| format!("\"{}: \" act \"\\n\"", format_time(m / 15 * 15)))
                            .collect();
                        let _ = writeln!(g, "root ::= {}", sequence(lines));
                    }
                    PlanTimes::Increasing {
                        after,
                        last,
                        min_lines,
                        max_lines,
                    } => increasing(&mut g, *after, *last, *min_lines, *max_lines),
                }
                let first = class(&first_letters(*letters), false);
                text_rules(&mut g, "act", &first, *max_activity_chars, *letters);
            }
        }
        g
    }
}

/// Rules for plan lines at strictly increasing quarter hours in `(after, last]`, between
/// `min_lines` and `max_lines` of them, exactly as the machine takes them: `rK-Q` is the
/// rest of the plan after `K` lines when the next time is at quarter `Q` or later, `gK-Q` a
/// line at quarter `Q` or later, `lK-Q` the line at quarter `Q`. A chain over the quarters
/// rather than an alternative per pair keeps the grammar linear in lines × quarters.
fn increasing(g: &mut String, after: Option<u32>, last: u32, min_lines: usize, max_lines: usize) {
    let quarters = quarters_between(after, last);
    if quarters == 0 {
        g.push_str("root ::= \"\"\n");
        return;
    }
    let first = quarters.trailing_zeros() as usize;
    let end = (u128::BITS - quarters.leading_zeros()) as usize; // one past the last quarter
    let _ = writeln!(g, "root ::= r0-{first}");
    for k in 0..=max_lines {
        for q in (first + k).min(end)..=end {
            // The rest after k lines, the next time at quarter q or later.
            let rest = if k == max_lines || q == end {
                "\"\"".to_string()
            } else if k >= min_lines {
                format!("\"\\n\"? | g{k}-{q}")
            } else {
                format!("g{k}-{q}")
            };
            let _ = writeln!(g, "r{k}-{q} ::= {rest}");
            if k == max_lines || q == end {
                continue;
            }
            let later = if q + 1 < end {
                format!(" | g{k}-{}", q + 1)
            } else {
                String::new()
            };
            let _ = writeln!(g, "g{k}-{q} ::= l{k}-{q}{later}");
            let _ = writeln!(
                g,
                "l{k}-{q} ::= \"{}: \" act \"\\n\" r{}-{}",
                format_time(q as u32 * 15),
                k + 1,
                q + 1
            );
        }
    }
}

/// Items one after the other; `""` for none (an empty alternative does not parse).
fn sequence(items: Vec<String>) -> String {
    if items.is_empty() {
        "\"\"".into()
    } else {
        items.join(" ")
    }
}

/// `c` escaped for a GBNF string literal.
fn class_literal(c: char) -> String {
    let mut s = String::new();
    push_code(&mut s, c as u32);
    s
}

#[cfg(test)]
mod tests {
    use super::super::{is_text_char, is_text_start};
    use super::*;
    use crate::formats::script::is_east_asian;

    fn in_ranges(ranges: &[(u32, u32)], c: u32) -> bool {
        ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&c))
    }

    /// The classes written into grammars say exactly what the machines' predicates say
    /// (letters: a subset of the alphabetic characters).
    #[test]
    fn classes_match_the_machines() {
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let u = c as u32;
            assert_eq!(!in_ranges(NOT_TEXT, u), is_text_char(c), "{u:#X}");
            assert_eq!(!in_ranges(NOT_TEXT_START, u), is_text_start(c), "{u:#X}");
            if in_ranges(LETTERS, u) {
                assert!(c.is_alphabetic(), "{u:#X} is not alphabetic");
            }
        }
    }

    /// In an alphabet the classes leave out exactly what the machines leave out.
    #[test]
    fn alphabet_classes_match_the_machines() {
        let a = Letters::Alphabet;
        let (text, start) = (excluded(NOT_TEXT, a), excluded(NOT_TEXT_START, a));
        let first = first_letters(a);
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let u = c as u32;
            assert_eq!(
                !in_ranges(&text, u),
                is_text_char(c) && a.allows(c),
                "{u:#X}"
            );
            assert_eq!(
                !in_ranges(&start, u),
                is_text_start(c) && a.allows(c),
                "{u:#X}"
            );
            if in_ranges(&first, u) {
                assert!(c.is_alphabetic() && !is_east_asian(c), "{u:#X}");
            }
        }
        assert!(in_ranges(&first, 'a' as u32) && in_ranges(&first, 'ж' as u32));
        let g = ConstraintSpec::line(10).in_letters(a).gbnf();
        assert!(g.contains("\\u2E80-\\u9FFF"), "{g}");
        assert!(!ConstraintSpec::line(10).gbnf().contains("\\u2E80"));
    }

    #[test]
    fn grammars_name_their_pieces() {
        let line = ConstraintSpec::line(80).gbnf();
        assert!(line.starts_with("root ::= text \"\\n\"?\n"), "{line}");
        assert!(
            line.contains("text ::= text-first text-char{0,79}"),
            "{line}"
        );
        assert!(line.contains("text-char ::= [^\\x00-\\x1F\\x7F-\\x9F\\u2028-\\u2029\\uFFFD]"));
        let long = ConstraintSpec::line(4096).gbnf();
        assert!(long.contains("text-char{0,1998}"), "{long}");
        assert!(ConstraintSpec::Emoji { count: 0 }
            .gbnf()
            .starts_with("root ::= \"\"\n"));
        let none = ConstraintSpec::plan(PlanTimes::Fixed(Vec::new()), 5);
        assert!(none.gbnf().starts_with("root ::= \"\"\n"));
        let one = ConstraintSpec::line(1).gbnf();
        assert!(one.contains("text ::= text-first\n"), "{one}");
        let e = ConstraintSpec::Emoji { count: 2 }.gbnf();
        assert!(e.starts_with("root ::= emoji emoji\n"), "{e}");
        assert!(e.contains("\\U0001F5FA-\\U0001F64F"), "{e}");
        assert!(e.contains("\"\\uFE0F\"?"), "{e}");
        let fixed = ConstraintSpec::plan(PlanTimes::Fixed(vec![420, 487]), 30).gbnf();
        assert!(
            fixed.starts_with("root ::= \"07:00 am: \" act \"\\n\" \"08:00 am: \" act \"\\n\"\n"),
            "{fixed}"
        );
        let day = ConstraintSpec::plan(
            PlanTimes::Increasing {
                after: Some(360),
                last: 420,
                min_lines: 1,
                max_lines: 3,
            },
            30,
        )
        .gbnf();
        // Quarters 25..=28 (06:15 to 07:00 am), one to three lines.
        for rule in [
            "root ::= r0-25\n",
            "r0-25 ::= g0-25\n",
            "g0-25 ::= l0-25 | g0-26\n",
            "l0-25 ::= \"06:15 am: \" act \"\\n\" r1-26\n",
            "g0-28 ::= l0-28\n",
            "r1-26 ::= \"\\n\"? | g1-26\n",
            "r1-29 ::= \"\"\n",
            "r3-28 ::= \"\"\n",
        ] {
            assert!(day.contains(rule), "{rule:?} not in\n{day}");
        }
        assert!(!day.contains("l3-"), "{day}");
    }
}

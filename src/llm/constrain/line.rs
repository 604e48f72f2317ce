//! [`LineMachine`]: one line of free text.

use super::{extend_text, newline, CharMachine, Letters, TextRun};
use crate::formats::script::all_east_asian;

/// One line of `1..=max_chars` characters (the first not a space, no control characters),
/// ended by `'\n'` (must end after it), or by a stop token once a character was written.
/// At `max_chars` only `'\n'` (or a stop token) may follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LineMachine {
    max_chars: usize,
    letters: Letters,
    chars: usize,
    done: bool,
}

/// A machine for one line of at most `max_chars` characters (at least 1).
pub fn line(max_chars: usize) -> LineMachine {
    LineMachine {
        max_chars: max_chars.max(1),
        letters: Letters::Any,
        chars: 0,
        done: false,
    }
}

impl LineMachine {
    /// The same machine taking only `letters`.
    pub fn with_letters(self, letters: Letters) -> Self {
        Self { letters, ..self }
    }

    /// Characters written so far (not counting the `'\n'`).
    pub fn chars(&self) -> usize {
        self.chars
    }
}

impl CharMachine for LineMachine {
    fn feed(&self, c: char) -> Option<Self> {
        if self.done {
            return None;
        }
        if c == '\n' {
            return (self.chars > 0).then_some(Self {
                done: true,
                ..*self
            });
        }
        let chars = extend_text(
            self.chars,
            self.max_chars,
            c.encode_utf8(&mut [0; 4]),
            self.letters,
        )?;
        Some(Self { chars, ..*self })
    }

    fn can_end(&self) -> bool {
        self.done || self.chars > 0
    }

    fn must_end(&self) -> bool {
        self.done
    }

    fn accepts(&self, s: &str) -> bool {
        if self.done {
            return s.is_empty();
        }
        let (text, rest) = s.split_at(newline(s));
        match extend_text(self.chars, self.max_chars, text, self.letters) {
            Some(chars) => rest.is_empty() || (rest == "\n" && chars > 0),
            None => false,
        }
    }

    fn text_run(&self) -> Option<TextRun> {
        (!self.done).then_some(TextRun {
            chars: self.chars,
            max_chars: self.max_chars,
            letters: self.letters,
        })
    }

    fn accepts_any(&self, lo: char, hi: char) -> bool {
        // Every range a partial multi-byte character spans holds printable, non-space
        // characters; ASCII is never partial.
        !self.done
            && self.chars < self.max_chars
            && !lo.is_ascii()
            && (self.letters.is_any() || !all_east_asian(lo, hi))
    }
}

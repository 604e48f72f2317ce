//! Constrained decoding: token masks from character-level machines.
//!
//! A [`CharMachine`] accepts text one character at a time; [`Constrained`] adapts it to the
//! engine's [`TokenConstraint`](super::request::TokenConstraint) over a [`TokenTable`] (each
//! vocabulary token's bytes, decoded once), assembling UTF-8 across token boundaries. The
//! machines here: [`emoji`] (exactly `n` emoji), [`plan`] (day-plan lines
//! `"hh:mm am: activity"`, fixed or model-chosen increasing times) and [`line()`] (one line of
//! text); [`parse_plan`] checks text the same way. The formats themselves (clock, plan
//! line, emoji set) live in [`crate::formats`]. A
//! [`ConstraintSpec`] names a machine as data, for a request that goes to a server (built
//! there by `serve-llm`, or sent as a llama.cpp grammar).

mod adapter;
mod emoji;
mod gbnf;
mod line;
mod plan;
mod spec;
mod table;
mod time;
mod utf8;

#[cfg(test)]
mod tests;

pub use adapter::Constrained;
pub use emoji::{emoji, EmojiMachine};
pub use line::{line, LineMachine};
pub use plan::{parse_plan, plan, PlanMachine, PlanTimes};
pub use spec::ConstraintSpec;
pub use table::TokenTable;

pub use crate::formats::script::Letters;

/// A character-level acceptor. Cheap to clone (small state).
///
/// Contract: a state that [`must_end`](Self::must_end) should also [`can_end`](Self::can_end);
/// [`Constrained`] then allows only stop tokens (or the rest of a character already begun).
pub trait CharMachine: Clone + Send + 'static {
    /// The state after `c`; `None` when `c` is not allowed here.
    fn feed(&self, c: char) -> Option<Self>;

    /// Whether the output may end here (stop/EOS tokens allowed).
    fn can_end(&self) -> bool;

    /// Whether nothing may follow (generation completes).
    fn must_end(&self) -> bool;

    /// Whether every character of `s` is allowed in turn. A fast path for the token mask
    /// (which checks every token each step); override it to avoid building intermediate
    /// states. Must agree with [`feed`](Self::feed).
    fn accepts(&self, s: &str) -> bool {
        let mut chars = s.chars();
        let Some(first) = chars.next() else {
            return true;
        };
        let Some(mut state) = self.feed(first) else {
            return false;
        };
        for c in chars {
            match state.feed(c) {
                Some(next) => state = next,
                None => return false,
            }
        }
        true
    }

    /// Whether some character in `lo..=hi` is allowed here: a token ending inside a
    /// multi-byte character is allowed only if the character can still be completed. The
    /// default scans the range (up to ~200k characters); machines should override it.
    fn accepts_any(&self, lo: char, hi: char) -> bool {
        (lo..=hi).any(|c| self.feed(c).is_some())
    }

    /// The free-text run this state is in, if any: then any string without `'\n'` is
    /// accepted exactly when it follows [`TextRun`]'s rules, which lets the mask decide most
    /// tokens from counts precomputed in the [`TokenTable`]. `None` (the default) always
    /// feeds characters.
    fn text_run(&self) -> Option<TextRun> {
        None
    }

    /// Text that must come next whatever the model prefers (e.g. the fixed time that starts
    /// a plan line), so the engine can feed it without sampling it token by token. `None`
    /// (the default) when the next character is not determined.
    fn forced(&self) -> Option<String> {
        None
    }
}

/// A run of free text: `chars` characters written of at most `max_chars`; every character
/// printable (no control characters) and among `letters`, the first not a space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TextRun {
    /// Characters of the run written so far.
    pub chars: usize,
    /// The most characters the run may have.
    pub max_chars: usize,
    /// The characters the run may use beyond the text rules.
    pub letters: Letters,
}

/// Characters allowed in free text: anything printable (any script, digits, punctuation,
/// spaces), not control characters, line/paragraph separators or U+FFFD.
pub(crate) fn is_text_char(c: char) -> bool {
    !c.is_control() && !matches!(c, '\u{2028}' | '\u{2029}' | '\u{FFFD}')
}

/// Whether `c` may be the first character of a free text: a text character, not whitespace.
pub(crate) fn is_text_start(c: char) -> bool {
    is_text_char(c) && !c.is_whitespace()
}

/// The byte offset of the first `'\n'` in `s`, or its length.
pub(crate) fn newline(s: &str) -> usize {
    s.bytes().position(|b| b == b'\n').unwrap_or(s.len())
}

/// The length in characters of a free text of `chars` characters (at most `max`) after
/// `more` (which holds no `'\n'`), or `None` if `more` breaks the rules: the first character
/// of the text not a space, all characters text characters among `letters`.
pub(crate) fn extend_text(
    mut chars: usize,
    max: usize,
    more: &str,
    letters: Letters,
) -> Option<usize> {
    let bytes = more.as_bytes();
    if bytes.is_ascii() {
        // Fast path: ASCII whitespace other than ' ' is control; ASCII is in every script.
        let fits = chars + bytes.len() <= max;
        let starts_ok = chars > 0 || bytes.first() != Some(&b' ');
        let printable = bytes.iter().all(|&b| b >= 0x20 && b != 0x7F);
        return (fits && starts_ok && printable).then_some(chars + bytes.len());
    }
    for c in more.chars() {
        let ok = if chars == 0 {
            is_text_start(c)
        } else {
            is_text_char(c)
        };
        if !ok || !letters.allows(c) || chars >= max {
            return None;
        }
        chars += 1;
    }
    Some(chars)
}

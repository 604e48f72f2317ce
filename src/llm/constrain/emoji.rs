//! [`EmojiMachine`]: exactly `n` emoji and nothing else.

use super::CharMachine;
use crate::formats::emoji::{any_emoji_in, is_emoji, VS16};

/// Exactly `n` emoji (each an emoji code point, optionally followed by U+FE0F; no text, no
/// spaces); must end after the `n`-th (a U+FE0F in the same token is still taken).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EmojiMachine {
    n: usize,
    count: usize,
    /// The last character was an emoji (a U+FE0F may follow).
    after_emoji: bool,
}

/// A machine for exactly `n` emoji.
pub fn emoji(n: usize) -> EmojiMachine {
    EmojiMachine {
        n,
        count: 0,
        after_emoji: false,
    }
}

impl EmojiMachine {
    /// Emoji written so far.
    pub fn count(&self) -> usize {
        self.count
    }
}

impl CharMachine for EmojiMachine {
    fn feed(&self, c: char) -> Option<Self> {
        if c == VS16 && self.after_emoji {
            return Some(Self {
                after_emoji: false,
                ..*self
            });
        }
        (self.count < self.n && is_emoji(c)).then_some(Self {
            count: self.count + 1,
            after_emoji: true,
            n: self.n,
        })
    }

    fn can_end(&self) -> bool {
        self.count >= self.n
    }

    fn must_end(&self) -> bool {
        self.count >= self.n
    }

    fn accepts_any(&self, lo: char, hi: char) -> bool {
        let (lo, hi) = (lo as u32, hi as u32);
        (self.after_emoji && (lo..=hi).contains(&(VS16 as u32)))
            || (self.count < self.n && any_emoji_in(lo, hi))
    }
}

//! [`EmojiMachine`]: exactly `n` emoji and nothing else.

use super::CharMachine;

/// Pictographic emoji code points, as sorted inclusive ranges: Unicode `Emoji=Yes` less the
/// keycap bases `#*0-9`, `©`, `®`, regional indicators, skin-tone modifiers, and the arrows,
/// punctuation, letter-like and geometric symbols that render as text (`‼ ™ ℹ ↔ ▶ Ⓜ ▪ 〰`).
pub(crate) const EMOJI: &[(u32, u32)] = &[
    (0x231A, 0x231B),
    (0x2328, 0x2328),
    (0x23E9, 0x23F3),
    (0x25FD, 0x25FE),
    (0x2600, 0x2604),
    (0x260E, 0x260E),
    (0x2611, 0x2611),
    (0x2614, 0x2615),
    (0x2618, 0x2618),
    (0x261D, 0x261D),
    (0x2620, 0x2620),
    (0x2622, 0x2623),
    (0x2626, 0x2626),
    (0x262A, 0x262A),
    (0x262E, 0x262F),
    (0x2638, 0x263A),
    (0x2640, 0x2640),
    (0x2642, 0x2642),
    (0x2648, 0x2653),
    (0x265F, 0x2660),
    (0x2663, 0x2663),
    (0x2665, 0x2666),
    (0x2668, 0x2668),
    (0x267B, 0x267B),
    (0x267E, 0x267F),
    (0x2692, 0x2697),
    (0x2699, 0x2699),
    (0x269B, 0x269C),
    (0x26A0, 0x26A1),
    (0x26A7, 0x26A7),
    (0x26AA, 0x26AB),
    (0x26B0, 0x26B1),
    (0x26BD, 0x26BE),
    (0x26C4, 0x26C5),
    (0x26C8, 0x26C8),
    (0x26CE, 0x26CF),
    (0x26D1, 0x26D1),
    (0x26D3, 0x26D4),
    (0x26E9, 0x26EA),
    (0x26F0, 0x26F5),
    (0x26F7, 0x26FA),
    (0x26FD, 0x26FD),
    (0x2702, 0x2702),
    (0x2705, 0x2705),
    (0x2708, 0x270D),
    (0x270F, 0x270F),
    (0x2712, 0x2712),
    (0x2714, 0x2714),
    (0x2716, 0x2716),
    (0x271D, 0x271D),
    (0x2721, 0x2721),
    (0x2728, 0x2728),
    (0x2733, 0x2734),
    (0x2744, 0x2744),
    (0x2747, 0x2747),
    (0x274C, 0x274C),
    (0x274E, 0x274E),
    (0x2753, 0x2755),
    (0x2757, 0x2757),
    (0x2763, 0x2764),
    (0x2795, 0x2797),
    (0x27B0, 0x27B0),
    (0x27BF, 0x27BF),
    (0x2B1B, 0x2B1C),
    (0x2B50, 0x2B50),
    (0x2B55, 0x2B55),
    (0x1F004, 0x1F004),
    (0x1F0CF, 0x1F0CF),
    (0x1F18E, 0x1F18E),
    (0x1F191, 0x1F19A),
    (0x1F201, 0x1F202),
    (0x1F21A, 0x1F21A),
    (0x1F22F, 0x1F22F),
    (0x1F232, 0x1F23A),
    (0x1F250, 0x1F251),
    (0x1F300, 0x1F321),
    (0x1F324, 0x1F393),
    (0x1F396, 0x1F397),
    (0x1F399, 0x1F39B),
    (0x1F39E, 0x1F3F0),
    (0x1F3F3, 0x1F3F5),
    (0x1F3F7, 0x1F3FA),
    (0x1F400, 0x1F4FD),
    (0x1F4FF, 0x1F53D),
    (0x1F549, 0x1F54E),
    (0x1F550, 0x1F567),
    (0x1F56F, 0x1F570),
    (0x1F573, 0x1F57A),
    (0x1F587, 0x1F587),
    (0x1F58A, 0x1F58D),
    (0x1F590, 0x1F590),
    (0x1F595, 0x1F596),
    (0x1F5A4, 0x1F5A5),
    (0x1F5A8, 0x1F5A8),
    (0x1F5B1, 0x1F5B2),
    (0x1F5BC, 0x1F5BC),
    (0x1F5C2, 0x1F5C4),
    (0x1F5D1, 0x1F5D3),
    (0x1F5DC, 0x1F5DE),
    (0x1F5E1, 0x1F5E1),
    (0x1F5E3, 0x1F5E3),
    (0x1F5E8, 0x1F5E8),
    (0x1F5EF, 0x1F5EF),
    (0x1F5F3, 0x1F5F3),
    (0x1F5FA, 0x1F64F),
    (0x1F680, 0x1F6C5),
    (0x1F6CB, 0x1F6D2),
    (0x1F6D5, 0x1F6D7),
    (0x1F6DC, 0x1F6E5),
    (0x1F6E9, 0x1F6E9),
    (0x1F6EB, 0x1F6EC),
    (0x1F6F0, 0x1F6F0),
    (0x1F6F3, 0x1F6FC),
    (0x1F7E0, 0x1F7EB),
    (0x1F7F0, 0x1F7F0),
    (0x1F90C, 0x1F93A),
    (0x1F93C, 0x1F945),
    (0x1F947, 0x1F9FF),
    (0x1FA70, 0x1FA7C),
    (0x1FA80, 0x1FA89),
    (0x1FA8F, 0x1FAC6),
    (0x1FACE, 0x1FADC),
    (0x1FADF, 0x1FAE9),
    (0x1FAF0, 0x1FAF8),
];

/// The emoji presentation selector, allowed right after an emoji.
pub(crate) const VS16: char = '\u{FE0F}';

/// Whether some emoji lies in `lo..=hi`.
fn any_emoji_in(lo: u32, hi: u32) -> bool {
    let i = EMOJI.partition_point(|&(_, end)| end < lo);
    EMOJI.get(i).is_some_and(|&(start, _)| start <= hi)
}

/// Whether `c` is an emoji code point (pictographs, emoticons, symbols with emoji
/// presentation; not text such as digits, `#` or `©`, nor modifiers and selectors).
pub fn is_emoji(c: char) -> bool {
    any_emoji_in(c as u32, c as u32)
}

/// Whether `s` is nothing but emoji, each optionally followed by U+FE0F (no text, no spaces):
/// exactly `n` of them when `n` is given, else at least one.
pub fn is_emoji_text(s: &str, n: Option<usize>) -> bool {
    let mut m = emoji(n.unwrap_or(usize::MAX));
    for c in s.chars() {
        match m.feed(c) {
            Some(next) => m = next,
            None => return false,
        }
    }
    match n {
        Some(n) => m.count == n,
        None => m.count > 0,
    }
}

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

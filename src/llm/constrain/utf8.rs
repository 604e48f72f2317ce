//! Incremental UTF-8 decoding across token boundaries: byte-level tokens may end (or start)
//! inside a character.

/// The bytes of a character not yet complete (at most three of four).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Partial {
    buf: [u8; 4],
    len: u8,
    need: u8,
}

/// What one more byte makes of a [`Partial`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A character is complete.
    Char(char),
    /// More bytes are needed.
    More,
    /// The bytes are not valid UTF-8 (overlong, surrogate, out of range, misplaced).
    Invalid,
}

impl Partial {
    /// Whether no character is in progress.
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds a byte. After [`Step::Invalid`] the partial is unchanged.
    pub(crate) fn push(&mut self, b: u8) -> Step {
        if self.len == 0 {
            let need = match b {
                0x00..=0x7F => return Step::Char(b as char),
                0xC2..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF4 => 4,
                _ => return Step::Invalid,
            };
            *self = Self {
                buf: [b, 0, 0, 0],
                len: 1,
                need,
            };
            return Step::More;
        }
        let lead = self.buf[0];
        let (lo, hi) = match (self.len, lead) {
            (1, 0xE0) => (0xA0, 0xBF),
            (1, 0xED) => (0x80, 0x9F),
            (1, 0xF0) => (0x90, 0xBF),
            (1, 0xF4) => (0x80, 0x8F),
            _ => (0x80, 0xBF),
        };
        if !(lo..=hi).contains(&b) {
            return Step::Invalid;
        }
        self.buf[self.len as usize] = b;
        self.len += 1;
        if self.len < self.need {
            return Step::More;
        }
        let cp = self.bits();
        *self = Self::default();
        char::from_u32(cp).map_or(Step::Invalid, Step::Char)
    }

    /// The code point bits of the bytes so far.
    fn bits(&self) -> u32 {
        let mut cp = u32::from(self.buf[0] & (0x7F >> self.need));
        for &b in &self.buf[1..self.len as usize] {
            cp = (cp << 6) | u32::from(b & 0x3F);
        }
        cp
    }

    /// The characters the pending bytes can still become, as an inclusive range (`None` when
    /// nothing is pending).
    pub(crate) fn range(&self) -> Option<(char, char)> {
        if self.len == 0 {
            return None;
        }
        let rest = 6 * u32::from(self.need - self.len);
        let lo = self.bits() << rest;
        let hi = lo | ((1 << rest) - 1);
        let min = match self.need {
            2 => 0x80,
            3 => 0x800,
            _ => 0x1_0000,
        };
        let lo = lo.max(min);
        let mut hi = hi.min(0x10_FFFF);
        if (0xD800..=0xDFFF).contains(&hi) {
            hi = 0xD7FF;
        }
        Some((char::from_u32(lo)?, char::from_u32(hi)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> (Vec<char>, Partial, bool) {
        let mut p = Partial::default();
        let mut out = Vec::new();
        for &b in bytes {
            match p.push(b) {
                Step::Char(c) => out.push(c),
                Step::More => {}
                Step::Invalid => return (out, p, false),
            }
        }
        (out, p, true)
    }

    #[test]
    fn decodes_like_std_and_rejects_invalid() {
        let s = "aé€😀\u{10FFFF}\u{FE0F}";
        let (chars, p, ok) = decode(s.as_bytes());
        assert!(ok && p.is_empty());
        assert_eq!(chars, s.chars().collect::<Vec<_>>());
        for bad in [
            &[0x80][..],
            &[0xC0, 0x80],
            &[0xE0, 0x80, 0x80],
            &[0xED, 0xA0, 0x80],
            &[0xF4, 0x90, 0x80, 0x80],
            &[0xF5],
            &[0xC3, 0x41],
        ] {
            assert!(!decode(bad).2, "{bad:x?}");
        }
    }

    #[test]
    fn ranges_of_prefixes() {
        let (_, p, _) = decode(&[0xF0, 0x9F]);
        assert_eq!(p.range(), Some(('\u{1F000}', '\u{1FFFF}')));
        let (_, p, _) = decode(&[0xE0]);
        assert_eq!(p.range(), Some(('\u{800}', '\u{FFF}')));
        let (_, p, _) = decode(&[0xED]);
        assert_eq!(p.range(), Some(('\u{D000}', '\u{D7FF}')));
        let (_, p, _) = decode(&[0xF4]);
        assert_eq!(p.range(), Some(('\u{100000}', '\u{10FFFF}')));
        let (_, p, _) = decode(&[0xC3]);
        assert_eq!(p.range(), Some(('\u{C0}', '\u{FF}')));
        assert_eq!(Partial::default().range(), None);
    }
}

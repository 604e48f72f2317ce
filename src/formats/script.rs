//! Writing systems: which script a letter is in, a world's main script, and the letters a
//! free text may use ([`Letters`]: in a world written in an alphabet, no Chinese, Japanese
//! or Korean characters).

use serde::{Deserialize, Serialize};

/// The script a letter belongs to, for the letters that matter to the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Script {
    Latin,
    Han,
    Hangul,
    Kana,
    Cyrillic,
    Other,
}

impl Script {
    /// Whether this is one of the scripts of Chinese, Japanese or Korean.
    pub fn is_east_asian(self) -> bool {
        matches!(self, Script::Han | Script::Hangul | Script::Kana)
    }
}

/// The script of `c`; `None` for a character that is not a letter.
pub fn script_of(c: char) -> Option<Script> {
    if !c.is_alphabetic() {
        return None;
    }
    Some(match c as u32 {
        0x41..=0x24F | 0x1E00..=0x1EFF => Script::Latin,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF => Script::Han,
        0xAC00..=0xD7AF | 0x1100..=0x11FF | 0x3130..=0x318F => Script::Hangul,
        0x3040..=0x30FF => Script::Kana,
        0x400..=0x4FF => Script::Cyrillic,
        _ => Script::Other,
    })
}

/// The most common script of the letters of `texts` (Latin when there are none).
pub fn main_script<'a>(texts: impl Iterator<Item = &'a str>) -> Script {
    let mut counts = std::collections::BTreeMap::new();
    for c in texts.flat_map(str::chars).filter_map(script_of) {
        *counts.entry(c).or_insert(0usize) += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(_, n)| n)
        .map_or(Script::Latin, |(s, _)| s)
}

/// The blocks of characters that belong to Chinese, Japanese or Korean writing: Hangul jamo,
/// the CJK radicals, symbols and punctuation (the ideographic space and full stop), kana,
/// the ideographs and their extensions, Hangul syllables, the CJK compatibility forms and
/// the full- and half-width forms ("！", "，").
pub const EAST_ASIAN: &[(u32, u32)] = &[
    (0x1100, 0x11FF),
    (0x2E80, 0x9FFF),
    (0xA960, 0xA97F),
    (0xAC00, 0xD7FF),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFFEF),
    (0x20000, 0x3FFFF),
];

/// Whether `c` is a character of Chinese, Japanese or Korean writing ([`EAST_ASIAN`]).
pub fn is_east_asian(c: char) -> bool {
    let u = c as u32;
    EAST_ASIAN.iter().any(|&(lo, hi)| (lo..=hi).contains(&u))
}

/// Whether every character of `lo..=hi` is [`is_east_asian`].
pub fn all_east_asian(lo: char, hi: char) -> bool {
    let (lo, hi) = (lo as u32, hi as u32);
    EAST_ASIAN.iter().any(|&(a, b)| a <= lo && hi <= b)
}

/// The characters a generated free text (a plan's activity, an utterance) may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Letters {
    /// Any printable character.
    #[default]
    Any,
    /// No Chinese, Japanese or Korean character ([`is_east_asian`]): for a world written
    /// in an alphabet, where a model trained mostly on Chinese otherwise slips in words
    /// like "柜台" or a full-width "！".
    Alphabet,
}

impl Letters {
    /// The letters for a world whose main script is `script`.
    pub fn for_script(script: Script) -> Self {
        if script.is_east_asian() {
            Letters::Any
        } else {
            Letters::Alphabet
        }
    }

    /// Whether `c` may appear (on top of the text rules of the machines).
    pub fn allows(self, c: char) -> bool {
        self == Letters::Any || !is_east_asian(c)
    }

    /// Whether every character of `text` may appear.
    pub fn allows_all(self, text: &str) -> bool {
        text.chars().all(|c| self.allows(c))
    }

    /// Whether the default, which needs no mention in a request.
    pub fn is_any(&self) -> bool {
        *self == Letters::Any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_and_east_asian_characters() {
        assert_eq!(script_of('a'), Some(Script::Latin));
        assert_eq!(script_of('柜'), Some(Script::Han));
        assert_eq!(script_of('한'), Some(Script::Hangul));
        assert_eq!(script_of('か'), Some(Script::Kana));
        assert_eq!(script_of('!'), None);
        for c in ['柜', '한', 'か', '！', '，', '。', '\u{3000}', 'ｶ'] {
            assert!(is_east_asian(c), "{c}");
            assert!(!Letters::Alphabet.allows(c), "{c}");
            assert!(Letters::Any.allows(c), "{c}");
        }
        for c in ['a', 'é', 'ß', 'ж', '—', '’', '😀', '!'] {
            assert!(!is_east_asian(c), "{c}");
            assert!(Letters::Alphabet.allows(c), "{c}");
        }
        assert!(all_east_asian('\u{4E00}', '\u{4FFF}'));
        assert!(!all_east_asian('\u{2000}', '\u{2FFF}'));
        assert_eq!(main_script(["早上好 hi", "吃饭"].into_iter()), Script::Han);
        assert_eq!(
            Letters::for_script(main_script(["wake up"].into_iter())),
            Letters::Alphabet
        );
        assert_eq!(Letters::for_script(Script::Hangul), Letters::Any);
    }
}

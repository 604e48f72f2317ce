//! Each vocabulary token's bytes and kind, decoded once and shared by constraints.

use std::collections::HashMap;
use std::sync::Arc;

use super::super::tokenizer::Tokenizer;
use super::{is_text_char, is_text_start, TextRun};
use crate::formats::script::is_east_asian;

/// How the mask treats one token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// Never allowed under a constraint (special/control tokens, empty tokens).
    Never,
    /// Ends generation: allowed where the machine may end.
    Stop,
    /// Complete, valid UTF-8 text: `text[start..start + len]`, whose first character is
    /// `first_chars[first]`.
    Text { start: u32, len: u32, first: u32 },
    /// Raw bytes that are not complete UTF-8 on their own: `bytes[start..start + len]`.
    Bytes { start: u32, len: u32 },
}

/// Per-token bytes and flags of a vocabulary, shared by constraints.
#[derive(Debug)]
pub struct TokenTable {
    entries: Vec<Entry>,
    text: String,
    /// The distinct first characters of text tokens (the mask checks each once per step).
    first_chars: Vec<char>,
    /// Per token: what a free-text run needs to know of a text token ([`TextInfo`]).
    info: Vec<TextInfo>,
    bytes: Vec<u8>,
    stop_ids: Vec<u32>,
    /// Text tokens by their text (the lowest id for a text), for tokenizing forced text.
    by_text: HashMap<String, u32>,
    /// Longest text token, in bytes.
    longest: usize,
}

impl TokenTable {
    /// The table of a tokenizer's vocabulary: its stop ids end generation; its other special
    /// tokens are never allowed, except those that stand for plain whitespace (Gemma's runs of
    /// newlines, spaces and tabs).
    pub fn new(tok: &Tokenizer) -> Arc<TokenTable> {
        let n = tok.vocab_size() as u32;
        Self::from_parts(
            (0..n).map(|id| (tok.token_bytes(id), tok.is_special(id))),
            tok.stop_ids(),
        )
    }

    /// A table from each token's bytes and whether it is special, in id order, and the ids
    /// that end generation.
    pub fn from_parts(
        tokens: impl IntoIterator<Item = (Vec<u8>, bool)>,
        stop_ids: &[u32],
    ) -> Arc<TokenTable> {
        let mut table = TokenTable {
            entries: Vec::new(),
            text: String::new(),
            first_chars: Vec::new(),
            info: Vec::new(),
            bytes: Vec::new(),
            stop_ids: stop_ids.to_vec(),
            by_text: HashMap::new(),
            longest: 0,
        };
        let mut first_index: HashMap<char, u32> = HashMap::new();
        for (id, (bytes, special)) in tokens.into_iter().enumerate() {
            let entry = if stop_ids.contains(&(id as u32)) {
                Entry::Stop
            } else if bytes.is_empty() || (special && !bytes.iter().all(u8::is_ascii_whitespace)) {
                Entry::Never
            } else {
                match std::str::from_utf8(&bytes) {
                    Ok(s) => {
                        let start = table.text.len() as u32;
                        table.text.push_str(s);
                        table.by_text.entry(s.to_string()).or_insert(id as u32);
                        table.longest = table.longest.max(s.len());
                        let c = s.chars().next().unwrap_or_default();
                        let first = *first_index.entry(c).or_insert_with(|| {
                            table.first_chars.push(c);
                            table.first_chars.len() as u32 - 1
                        });
                        Entry::Text {
                            start,
                            len: s.len() as u32,
                            first,
                        }
                    }
                    Err(_) => {
                        let start = table.bytes.len() as u32;
                        table.bytes.extend_from_slice(&bytes);
                        Entry::Bytes {
                            start,
                            len: bytes.len() as u32,
                        }
                    }
                }
            };
            let info = match entry {
                Entry::Text { start, len, .. } => TextInfo::of(table.text(start, len)),
                _ => TextInfo::default(),
            };
            table.entries.push(entry);
            table.info.push(info);
        }
        Arc::new(table)
    }

    /// Token ids spelling `text`, longest match first (not necessarily the tokenizer's own
    /// split, but the same text); `None` if some part has no text token.
    pub fn tokenize_greedy(&self, text: &str) -> Option<Vec<u32>> {
        let mut out = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let mut end = rest.len().min(self.longest);
            loop {
                if end == 0 {
                    return None;
                }
                if rest.is_char_boundary(end) {
                    if let Some(&id) = self.by_text.get(&rest[..end]) {
                        out.push(id);
                        rest = &rest[end..];
                        break;
                    }
                }
                end -= 1;
            }
        }
        Some(out)
    }

    /// Number of tokens.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the vocabulary is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The ids that end generation.
    pub fn stop_ids(&self) -> &[u32] {
        &self.stop_ids
    }

    /// The bytes token `id` contributes to the output (`None` for stop, special and unknown
    /// tokens).
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        match self.entry(id) {
            Entry::Text { start, len, .. } => Some(&self.text.as_bytes()[span(start, len)]),
            Entry::Bytes { start, len } => Some(&self.bytes[span(start, len)]),
            Entry::Never | Entry::Stop => None,
        }
    }

    /// How the mask treats token `id` (unknown ids are never allowed).
    pub(crate) fn entry(&self, id: u32) -> Entry {
        self.entries
            .get(id as usize)
            .copied()
            .unwrap_or(Entry::Never)
    }

    /// Every entry, in id order.
    pub(crate) fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// What a free-text run needs to know of token `id` (by position in [`entries`](Self::entries)).
    pub(crate) fn info(&self) -> &[TextInfo] {
        &self.info
    }

    /// The distinct first characters of text tokens, indexed by [`Entry::Text`]'s `first`.
    pub(crate) fn first_chars(&self) -> &[char] {
        &self.first_chars
    }

    /// The text of a [`Entry::Text`] token.
    pub(crate) fn text(&self, start: u32, len: u32) -> &str {
        &self.text[span(start, len)]
    }
}

/// A text token as a free-text run sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TextInfo {
    /// Characters in the token.
    pub chars: u32,
    /// The token holds a `'\n'` (the machine must see it).
    pub newline: bool,
    /// Every character is a text character.
    pub printable: bool,
    /// The first character may start a text (not a space).
    pub starts: bool,
    /// Some character is Chinese, Japanese or Korean ([`is_east_asian`]).
    pub east_asian: bool,
}

impl TextInfo {
    fn of(s: &str) -> Self {
        Self {
            chars: s.chars().count() as u32,
            newline: s.contains('\n'),
            printable: s.chars().all(is_text_char),
            starts: s.chars().next().is_some_and(is_text_start),
            east_asian: s.chars().any(is_east_asian),
        }
    }

    /// Whether a run at `run` accepts this token (which has no `'\n'`).
    pub(crate) fn fits(&self, run: TextRun) -> bool {
        self.printable
            && (run.chars > 0 || self.starts)
            && (run.letters.is_any() || !self.east_asian)
            && run.chars + self.chars as usize <= run.max_chars
    }
}

fn span(start: u32, len: u32) -> std::ops::Range<usize> {
    start as usize..(start + len) as usize
}

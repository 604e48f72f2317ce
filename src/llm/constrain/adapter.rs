//! [`Constrained`]: a [`CharMachine`] as the engine's [`TokenConstraint`].

use std::sync::{Arc, Mutex};

use super::super::request::TokenConstraint;
use super::table::{Entry, TokenTable};
use super::utf8::{Partial, Step};
use super::CharMachine;

/// Where the output stands: the machine's state, the bytes of a character not yet complete,
/// and whether a stop token was already taken.
#[derive(Clone, Debug)]
struct Cursor<M> {
    machine: M,
    partial: Partial,
    ended: bool,
}

impl<M: CharMachine> Cursor<M> {
    fn new(machine: M) -> Self {
        Self {
            machine,
            partial: Partial::default(),
            ended: false,
        }
    }

    /// Whether the output is complete: nothing but stop tokens may follow.
    fn done(&self) -> bool {
        self.ended || (self.partial.is_empty() && self.machine.must_end())
    }

    /// Whether a stop token may come now.
    fn may_stop(&self) -> bool {
        !self.ended && self.partial.is_empty() && self.machine.can_end()
    }

    /// The cursor after token `id`, or `None` if the token is not allowed here.
    fn advance(&self, table: &TokenTable, id: u32) -> Option<Self> {
        match table.entry(id) {
            Entry::Never => None,
            Entry::Stop => self.may_stop().then(|| Self {
                ended: true,
                ..self.clone()
            }),
            Entry::Text { .. } | Entry::Bytes { .. } if self.done() => None,
            Entry::Text { .. } | Entry::Bytes { .. } => {
                self.feed_bytes(table.token_bytes(id).unwrap_or_default())
            }
        }
    }

    /// The cursor after `bytes`; a character left incomplete must still be completable.
    fn feed_bytes(&self, bytes: &[u8]) -> Option<Self> {
        let mut machine = self.machine.clone();
        let mut partial = self.partial;
        for &b in bytes {
            match partial.push(b) {
                Step::Char(c) => machine = machine.feed(c)?,
                Step::More => {}
                Step::Invalid => return None,
            }
        }
        if let Some((lo, hi)) = partial.range() {
            if !machine.accepts_any(lo, hi) {
                return None;
            }
        }
        Some(Self {
            machine,
            partial,
            ended: false,
        })
    }
}

/// Adapts a [`CharMachine`] to the engine's [`TokenConstraint`] over a [`TokenTable`]
/// (UTF-8 assembly across tokens; incremental: remembers the state after the tokens already
/// generated, and starts over when given a sequence that does not extend them).
///
/// Special tokens are never allowed; stop tokens only where the machine
/// [`can_end`](CharMachine::can_end). A generated token the machine rejects (possible only
/// when the caller bypasses the mask) leaves no token allowed.
pub struct Constrained<M: CharMachine> {
    table: Arc<TokenTable>,
    start: M,
    seen: Vec<u32>,
    /// `None` once a generated token was not allowed.
    cursor: Option<Cursor<M>>,
}

impl<M: CharMachine> Constrained<M> {
    /// A constraint running `machine` from its current state.
    pub fn new(table: Arc<TokenTable>, machine: M) -> Self {
        Self {
            table,
            cursor: Some(Cursor::new(machine.clone())),
            start: machine,
            seen: Vec::new(),
        }
    }

    /// [`new`](Self::new), ready for `GenerateRequest::constraint`.
    pub fn shared(table: Arc<TokenTable>, machine: M) -> Arc<Mutex<dyn TokenConstraint>> {
        Arc::new(Mutex::new(Self::new(table, machine)))
    }

    /// The machine's state after `generated` (`None` if some token was not allowed or a
    /// character is left incomplete).
    pub fn state_after(&mut self, generated: &[u32]) -> Option<&M> {
        self.sync(generated);
        self.cursor
            .as_ref()
            .filter(|c| c.partial.is_empty())
            .map(|c| &c.machine)
    }

    /// Brings the cursor to the end of `generated`, feeding only the new tokens when
    /// `generated` extends the tokens seen so far.
    fn sync(&mut self, generated: &[u32]) {
        if !generated.starts_with(&self.seen) {
            self.seen.clear();
            self.cursor = Some(Cursor::new(self.start.clone()));
        }
        for &id in &generated[self.seen.len()..] {
            self.cursor = self.cursor.take().and_then(|c| c.advance(&self.table, id));
            self.seen.push(id);
        }
    }
}

impl<M: CharMachine> TokenConstraint for Constrained<M> {
    fn mask(&mut self, generated: &[u32], logits: &mut [f32]) {
        self.sync(generated);
        let Some(cur) = &self.cursor else {
            logits.fill(f32::NEG_INFINITY);
            return;
        };
        let table = &*self.table;
        let n = logits.len().min(table.len());
        let (head, tail) = logits.split_at_mut(n);
        tail.fill(f32::NEG_INFINITY);
        let may_stop = cur.may_stop() || (!cur.ended && cur.done());
        let done = cur.done();
        let whole = cur.partial.is_empty();
        // Whether each distinct first character is allowed: 0 unknown, 1 yes, 2 no.
        let mut first_ok = vec![0u8; table.first_chars().len()];
        let run = cur.machine.text_run().filter(|_| whole);
        let info = table.info();
        for (id, (logit, entry)) in head.iter_mut().zip(table.entries()).enumerate() {
            let allowed = match *entry {
                Entry::Never => false,
                Entry::Stop => may_stop,
                _ if done => false,
                Entry::Text { start, len, first } => match run {
                    // Inside a free-text run, a token without '\n' by its precomputed counts.
                    Some(run) if !info[id].newline => info[id].fits(run),
                    _ => {
                        whole && {
                            let known = &mut first_ok[first as usize];
                            if *known == 0 {
                                let c = table.first_chars()[first as usize];
                                let ok = cur.machine.accepts(c.encode_utf8(&mut [0; 4]));
                                *known = if ok { 1 } else { 2 };
                            }
                            *known == 1 && cur.machine.accepts(table.text(start, len))
                        }
                    }
                },
                Entry::Bytes { .. } => cur.advance(table, id as u32).is_some(),
            };
            if !allowed {
                *logit = f32::NEG_INFINITY;
            }
        }
    }

    fn is_complete(&mut self, generated: &[u32]) -> bool {
        self.sync(generated);
        self.cursor.as_ref().is_some_and(Cursor::done)
    }

    fn forced(&mut self, generated: &[u32]) -> Vec<u32> {
        self.sync(generated);
        let Some(cur) = &self.cursor else {
            return Vec::new();
        };
        if !cur.partial.is_empty() || cur.done() {
            return Vec::new();
        }
        let Some(text) = cur.machine.forced().filter(|t| !t.is_empty()) else {
            return Vec::new();
        };
        // Only text the machine accepts, spelled with tokens the mask would allow.
        if !cur.machine.accepts(&text) {
            return Vec::new();
        }
        let Some(ids) = self.table.tokenize_greedy(&text) else {
            return Vec::new();
        };
        let mut c = cur.clone();
        for &id in &ids {
            match c.advance(&self.table, id) {
                Some(next) => c = next,
                None => return Vec::new(),
            }
        }
        ids
    }
}

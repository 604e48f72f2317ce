//! Finding shared prompt prefixes: within one batch (requests whose prompts start alike) and
//! across calls (a bounded cache of recent prefixes' KV).

use super::kv::SharedPrefix;

/// Requests whose prompts share their first `len` tokens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixGroup {
    pub members: Vec<usize>,
    pub len: usize,
}

/// Groups requests whose prompts share at least `min_len` leading tokens. Every member keeps
/// at least one token of its own after the shared part. Requests without a prompt (`None`)
/// are skipped. Groups come in order of their first member.
pub fn group_shared_prefixes(prompts: &[Option<Vec<u32>>], min_len: usize) -> Vec<PrefixGroup> {
    let mut order: Vec<usize> = (0..prompts.len())
        .filter(|&i| prompts[i].is_some())
        .collect();
    let get = |i: usize| prompts[i].as_deref().unwrap_or_default();
    order.sort_by(|&a, &b| get(a).cmp(get(b)).then(a.cmp(&b)));
    let mut groups = Vec::new();
    let mut i = 0;
    while i < order.len() {
        let mut j = i + 1;
        let mut len = usize::MAX;
        while j < order.len() {
            let l = common_prefix(get(order[j - 1]), get(order[j]));
            let capped = l
                .min(get(order[j]).len().saturating_sub(1))
                .min(get(order[i]).len().saturating_sub(1));
            if capped < min_len.max(1) {
                break;
            }
            len = len.min(capped);
            j += 1;
        }
        if j - i >= 2 {
            let mut members: Vec<usize> = order[i..j].to_vec();
            members.sort_unstable();
            groups.push(PrefixGroup { members, len });
        }
        i = j;
    }
    groups.sort_by_key(|g| g.members[0]);
    groups
}

/// Length of the common prefix of two token sequences.
pub fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Recently computed prefixes, least recently used evicted past a budget of bytes.
///
/// The budget counts the bytes of every KV segment the entries keep alive, once each, whole:
/// an entry that uses the first positions of a longer segment pins all of it.
pub struct PrefixCache {
    entries: Vec<(Vec<u32>, SharedPrefix)>,
    max_bytes: usize,
}

impl PrefixCache {
    /// A cache keeping at most `max_bytes` of keys and values alive (0 disables it).
    pub fn new(max_bytes: usize) -> Self {
        Self {
            entries: Vec::new(),
            max_bytes,
        }
    }

    /// The longest cached prefix of `tokens` of at least `min_len` tokens, and its length.
    pub fn lookup(&mut self, tokens: &[u32], min_len: usize) -> (SharedPrefix, usize) {
        let best = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, (t, _))| (i, common_prefix(t, tokens)))
            .max_by_key(|&(i, l)| (l, i));
        match best {
            Some((i, l)) if l >= min_len.max(1) => {
                let entry = self.entries.remove(i);
                let prefix = entry.1.truncated(l);
                self.entries.push(entry);
                (prefix, l)
            }
            _ => (SharedPrefix::default(), 0),
        }
    }

    /// Remembers the KV of `tokens`, then evicts the least recently used entries until the
    /// segments kept alive fit the budget.
    pub fn insert(&mut self, tokens: &[u32], prefix: SharedPrefix) {
        if self.max_bytes == 0 || prefix.size_bytes() > self.max_bytes {
            return;
        }
        self.entries
            .retain(|(t, _)| common_prefix(t, tokens) < t.len());
        self.entries.push((tokens.to_vec(), prefix));
        while self.bytes() > self.max_bytes {
            self.entries.remove(0);
        }
    }

    /// Bytes of keys and values the cache keeps alive (each shared segment counted once).
    pub fn bytes(&self) -> usize {
        SharedPrefix::distinct_bytes(self.entries.iter().map(|(_, p)| p))
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::kv::{KvSegment, SeqCache, SlotPool};
    use std::sync::Arc;

    /// A prefix of `n` pool positions (8 bytes each) continuing `from`.
    fn prefix(pool: &Arc<SlotPool>, from: SharedPrefix, n: usize) -> SharedPrefix {
        let mut c = SeqCache::continuing(from, KvSegment::in_pool(pool.clone(), 2, n));
        c.push_slots(&pool.alloc(n));
        c.share()
    }

    #[test]
    fn budget_counts_pinned_segments_once_and_whole() {
        let pool = Arc::new(SlotPool::new(8));
        let mut cache = PrefixCache::new(8 * 60);
        let a_tokens: Vec<u32> = (0..40).collect();
        cache.insert(&a_tokens, prefix(&pool, SharedPrefix::default(), 40));
        assert_eq!(cache.bytes(), 8 * 40);
        // B shares A's first 16 positions: A's segment is counted once.
        let (head, hit) = cache.lookup(
            &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 99],
            16,
        );
        assert_eq!(hit, 16);
        let b = prefix(&pool, head, 10);
        let b_tokens: Vec<u32> = (0..16).chain(100..110).collect();
        cache.insert(&b_tokens, b);
        assert_eq!((cache.len(), cache.bytes()), (2, 8 * 50));
        // C (15 positions) goes over 60: A's entry is evicted, but B still pins all 40 of
        // A's positions, so B goes too.
        cache.insert(&[7; 15], prefix(&pool, SharedPrefix::default(), 15));
        assert_eq!((cache.len(), cache.bytes()), (1, 8 * 15));
        assert_eq!(pool.in_use(), 15);
        // An entry alone over the budget is not kept.
        cache.insert(&[8; 61], prefix(&pool, SharedPrefix::default(), 61));
        assert_eq!(cache.len(), 1);
    }

    #[test]
    fn groups_requests_with_long_common_prefixes() {
        let a: Vec<u32> = (0..40).collect();
        let mut b = a.clone();
        b.push(99);
        let mut c: Vec<u32> = (0..30).collect();
        c.push(7);
        let d: Vec<u32> = (100..140).collect();
        let prompts = vec![Some(a), Some(b), None, Some(c), Some(d)];
        let g = group_shared_prefixes(&prompts, 16);
        assert_eq!(
            g,
            vec![PrefixGroup {
                members: vec![0, 1, 3],
                len: 30
            }]
        );
        // Identical prompts keep one token each of their own.
        let same = vec![Some(vec![1; 20]), Some(vec![1; 20])];
        assert_eq!(group_shared_prefixes(&same, 16)[0].len, 19);
    }
}

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

/// Recently computed prefixes, least recently used evicted past a token budget.
pub struct PrefixCache {
    entries: Vec<(Vec<u32>, SharedPrefix)>,
    max_tokens: usize,
}

impl PrefixCache {
    /// A cache holding at most `max_tokens` positions in all.
    pub fn new(max_tokens: usize) -> Self {
        Self {
            entries: Vec::new(),
            max_tokens,
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

    /// Remembers the KV of `tokens`.
    pub fn insert(&mut self, tokens: &[u32], prefix: SharedPrefix) {
        if self.max_tokens == 0 || tokens.len() > self.max_tokens {
            return;
        }
        self.entries
            .retain(|(t, _)| common_prefix(t, tokens) < t.len());
        self.entries.push((tokens.to_vec(), prefix));
        while self.entries.iter().map(|(t, _)| t.len()).sum::<usize>() > self.max_tokens {
            self.entries.remove(0);
        }
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

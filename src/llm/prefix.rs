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

/// A node of the shared-prefix tree of a batch: every request under it (its own `members` and
/// those of its descendants) starts with the same `len` tokens, those of request `lead`.
/// A child's prefix continues its parent's, so the tokens between the two lengths are
/// computed once for the whole child instead of once per request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixNode {
    pub len: usize,
    pub parent: Option<usize>,
    /// Requests that continue from this node's prefix directly.
    pub members: Vec<usize>,
    pub children: Vec<usize>,
    /// A request under this node, whose first `len` tokens are the prefix.
    pub lead: usize,
}

/// The tree of shared prefixes of a batch: a root for each set of requests sharing at least
/// `min_len` leading tokens, and below it a child wherever some of them share a longer prefix
/// and splitting it off saves at least `min_len` computed tokens. Every request keeps at least
/// one token of its own. Parents come before their children; requests without a prompt
/// (`None`) or in no root are left out.
pub fn prefix_tree(prompts: &[Option<Vec<u32>>], min_len: usize) -> Vec<PrefixNode> {
    let min_len = min_len.max(1);
    let mut order: Vec<usize> = (0..prompts.len())
        .filter(|&i| prompts[i].is_some())
        .collect();
    let get = |i: usize| prompts[i].as_deref().unwrap_or_default();
    order.sort_by(|&a, &b| get(a).cmp(get(b)).then(a.cmp(&b)));
    // lcp[j]: what order[j - 1] and order[j] share, leaving each a token of its own.
    let mut lcp = vec![0; order.len()];
    for j in 1..order.len() {
        let (a, b) = (get(order[j - 1]), get(order[j]));
        lcp[j] = common_prefix(a, b)
            .min(a.len().saturating_sub(1))
            .min(b.len().saturating_sub(1));
    }
    let mut nodes = Vec::new();
    let mut loose = Vec::new();
    let all = Span {
        order: &order,
        lcp: &lcp,
        lo: 0,
        hi: order.len(),
    };
    split(all, 0, None, min_len, &mut nodes, &mut loose);
    nodes
}

/// A range of the sorted requests.
#[derive(Clone, Copy)]
struct Span<'a> {
    order: &'a [usize],
    lcp: &'a [usize],
    lo: usize,
    hi: usize,
}

/// Finds the runs of `span` whose neighbours share more than `cut` tokens and makes each a
/// node under `parent` (or, when that would save too little, looks for longer runs inside);
/// requests in no run go to `direct`.
fn split(
    span: Span<'_>,
    cut: usize,
    parent: Option<usize>,
    min_len: usize,
    nodes: &mut Vec<PrefixNode>,
    direct: &mut Vec<usize>,
) {
    let base = parent.map_or(0, |p| nodes[p].len);
    let mut i = span.lo;
    while i < span.hi {
        let mut j = i + 1;
        while j < span.hi && span.lcp[j] > cut && span.lcp[j] >= min_len {
            j += 1;
        }
        if j - i < 2 {
            direct.push(span.order[i]);
            i = j;
            continue;
        }
        let len = span.lcp[i + 1..j].iter().copied().min().unwrap_or(0);
        let run = Span {
            lo: i,
            hi: j,
            ..span
        };
        let saves = (j - i - 1) * (len - base);
        if parent.is_none() || saves >= min_len {
            let id = nodes.len();
            nodes.push(PrefixNode {
                len,
                parent,
                members: Vec::new(),
                children: Vec::new(),
                lead: span.order[i],
            });
            if let Some(p) = parent {
                nodes[p].children.push(id);
            }
            let mut own = Vec::new();
            split(run, len, Some(id), min_len, nodes, &mut own);
            own.sort_unstable();
            nodes[id].members = own;
        } else {
            split(run, len, parent, min_len, nodes, direct);
        }
        i = j;
    }
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
    fn a_longer_prefix_shared_by_some_members_becomes_a_child() {
        // Eight requests share 40 tokens; six of them share 30 more (a question each after).
        let head: Vec<u32> = (0..40).collect();
        let mid: Vec<u32> = (40..70).collect();
        let mut prompts = Vec::new();
        for q in 0..6u32 {
            prompts.push(Some([&head[..], &mid[..], &[1000 + q, 7]].concat()));
        }
        prompts.push(Some([&head[..], &[2000, 1, 2]].concat()));
        prompts.push(None);
        prompts.push(Some([&head[..], &[3000, 1, 2]].concat()));
        let tree = prefix_tree(&prompts, 16);
        assert_eq!(tree.len(), 2);
        assert_eq!((tree[0].len, tree[0].parent), (40, None));
        assert_eq!(tree[0].members, vec![6, 8]);
        assert_eq!(tree[0].children, vec![1]);
        assert_eq!((tree[1].len, tree[1].parent), (70, Some(0)));
        assert_eq!(tree[1].members, (0..6).collect::<Vec<_>>());
        let lead = prompts[tree[1].lead].as_ref().unwrap();
        assert_eq!(&lead[..70], &[&head[..], &mid[..]].concat()[..]);
    }

    #[test]
    fn a_child_that_saves_too_little_is_not_split_off() {
        // Two of three requests share 5 more tokens: (2 - 1) * 5 < 16 saved, so one flat group.
        let head: Vec<u32> = (0..40).collect();
        let prompts = vec![
            Some([&head[..], &[50, 51, 52, 53, 54, 1]].concat()),
            Some([&head[..], &[50, 51, 52, 53, 54, 2]].concat()),
            Some([&head[..], &[60, 1]].concat()),
        ];
        let tree = prefix_tree(&prompts, 16);
        assert_eq!(tree.len(), 1);
        assert_eq!((tree[0].len, tree[0].members.clone()), (40, vec![0, 1, 2]));
        // Requests sharing less than the minimum are in no node.
        let apart = vec![Some(vec![1; 10]), Some(vec![2; 10])];
        assert!(prefix_tree(&apart, 16).is_empty());
    }

    #[test]
    fn tree_members_cover_each_grouped_request_once() {
        let prompts: Vec<Option<Vec<u32>>> = (0..30u32)
            .map(|i| Some((0..20).chain([i % 3; 20]).chain([i % 5, i]).collect()))
            .collect();
        let tree = prefix_tree(&prompts, 16);
        let mut seen: Vec<usize> = tree.iter().flat_map(|n| n.members.clone()).collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..30).collect::<Vec<_>>());
        for (i, n) in tree.iter().enumerate() {
            if let Some(p) = n.parent {
                assert!(p < i && tree[p].len < n.len && tree[p].children.contains(&i));
            }
        }
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

//! Per-sequence KV caches made of segments, so sequences can share a prefix.
//!
//! A sequence's cache is a chain: shared, frozen segments (each used up to some length)
//! followed by one segment it owns and appends to. `choose` options and requests with a
//! common prompt prefix point at the same frozen segments: the prefix is computed once.
//! Appending never copies what is already cached (capacity grows geometrically).
//!
//! Keys and values live either in host memory (the CPU kernels) or in a device-side pool of
//! slots (the tensor backend): then a segment holds the slot of each of its positions, and
//! the slots return to the pool when the last sequence using the segment drops it.

use std::sync::{Arc, Mutex};

/// Hands out slots of a device-side KV pool (one slot holds one position's keys and values
/// in every layer) and takes them back when segments drop.
#[derive(Debug)]
pub struct SlotPool {
    state: Mutex<SlotState>,
    bytes_per_slot: usize,
}

#[derive(Debug, Default)]
struct SlotState {
    free: Vec<u32>,
    next: u32,
}

impl SlotPool {
    /// An empty pool whose slots each hold `bytes_per_slot` bytes on the device.
    pub fn new(bytes_per_slot: usize) -> Self {
        Self {
            state: Mutex::new(SlotState::default()),
            bytes_per_slot,
        }
    }

    /// Takes `n` slots (reusing freed ones first).
    pub fn alloc(&self, n: usize) -> Vec<u32> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            match st.free.pop() {
                Some(s) => out.push(s),
                None => {
                    out.push(st.next);
                    st.next += 1;
                }
            }
        }
        out
    }

    fn release(&self, slots: &[u32]) {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.free.extend_from_slice(slots);
    }

    /// Slots ever handed out at once (the size the device pool must have).
    pub fn high_water(&self) -> usize {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).next as usize
    }

    /// Slots currently in use.
    pub fn in_use(&self) -> usize {
        let st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.next as usize - st.free.len()
    }
}

/// Where a segment's keys and values are.
#[derive(Debug)]
enum Store {
    /// Host memory: per layer, `len × kv_dim` keys and values.
    Host { k: Vec<Vec<f32>>, v: Vec<Vec<f32>> },
    /// A device pool: the slot of each position (the same slot in every layer).
    Slots {
        slots: Vec<u32>,
        pool: Arc<SlotPool>,
    },
}

/// Keys and values of a run of consecutive positions, for every layer.
#[derive(Debug)]
pub struct KvSegment {
    kv_dim: usize,
    len: usize,
    store: Store,
}

impl Drop for KvSegment {
    fn drop(&mut self) {
        if let Store::Slots { slots, pool } = &self.store {
            pool.release(slots);
        }
    }
}

impl KvSegment {
    /// An empty host segment with room for `capacity` positions.
    pub fn new(n_layers: usize, kv_dim: usize, capacity: usize) -> Self {
        Self {
            kv_dim,
            len: 0,
            store: Store::Host {
                k: (0..n_layers)
                    .map(|_| Vec::with_capacity(capacity * kv_dim))
                    .collect(),
                v: (0..n_layers)
                    .map(|_| Vec::with_capacity(capacity * kv_dim))
                    .collect(),
            },
        }
    }

    /// An empty segment whose positions take slots of a device pool.
    pub fn in_pool(pool: Arc<SlotPool>, kv_dim: usize, capacity: usize) -> Self {
        Self {
            kv_dim,
            len: 0,
            store: Store::Slots {
                slots: Vec::with_capacity(capacity),
                pool,
            },
        }
    }

    /// An empty segment stored the same way as this one.
    fn empty_like(&self, capacity: usize) -> Self {
        match &self.store {
            Store::Host { k, .. } => Self::new(k.len(), self.kv_dim, capacity),
            Store::Slots { pool, .. } => Self::in_pool(pool.clone(), self.kv_dim, capacity),
        }
    }

    /// Positions held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no position is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held by keys and values (host or device).
    pub fn size_bytes(&self) -> usize {
        match &self.store {
            Store::Host { k, v } => k.iter().chain(v).map(|x| x.capacity() * 4).sum(),
            Store::Slots { slots, pool } => slots.len() * pool.bytes_per_slot,
        }
    }

    /// Appends keys and values of `n` positions for one layer of a host segment. Layer 0
    /// advances `len`. A pool segment takes slots instead ([`KvSegment::push_slots`]).
    pub fn push(&mut self, layer: usize, k: &[f32], v: &[f32]) {
        if let Store::Host { k: ks, v: vs } = &mut self.store {
            ks[layer].extend_from_slice(k);
            vs[layer].extend_from_slice(v);
            if layer == 0 {
                self.len += k.len() / self.kv_dim;
            }
        }
    }

    /// Appends positions held in the given pool slots.
    pub fn push_slots(&mut self, new: &[u32]) {
        if let Store::Slots { slots, .. } = &mut self.store {
            slots.extend_from_slice(new);
            self.len += new.len();
        }
    }

    /// Host keys and values of `layer`, positions `a..b` (empty for a pool segment).
    fn host_range(&self, layer: usize, a: usize, b: usize) -> (&[f32], &[f32]) {
        match &self.store {
            Store::Host { k, v } => {
                let d = self.kv_dim;
                (&k[layer][a * d..b * d], &v[layer][a * d..b * d])
            }
            Store::Slots { .. } => (&[], &[]),
        }
    }

    /// Pool slots of positions `..n` (empty for a host segment).
    fn slots(&self, n: usize) -> &[u32] {
        match &self.store {
            Store::Slots { slots, .. } => &slots[..n.min(slots.len())],
            Store::Host { .. } => &[],
        }
    }
}

/// The cache of one sequence: shared prefix segments then its own segment.
#[derive(Debug)]
pub struct SeqCache {
    prefix: Vec<(Arc<KvSegment>, usize)>,
    prefix_len: usize,
    own: KvSegment,
}

impl SeqCache {
    /// An empty cache expecting about `capacity` positions.
    pub fn new(n_layers: usize, kv_dim: usize, capacity: usize) -> Self {
        Self {
            prefix: Vec::new(),
            prefix_len: 0,
            own: KvSegment::new(n_layers, kv_dim, capacity),
        }
    }

    /// A cache continuing after a shared prefix (see [`SeqCache::share`]).
    pub fn with_prefix(
        prefix: SharedPrefix,
        n_layers: usize,
        kv_dim: usize,
        capacity: usize,
    ) -> Self {
        Self::continuing(prefix, KvSegment::new(n_layers, kv_dim, capacity))
    }

    /// A cache made of a shared prefix (possibly empty) and an empty segment of its own.
    pub fn continuing(prefix: SharedPrefix, own: KvSegment) -> Self {
        let prefix_len = prefix.len();
        Self {
            prefix: prefix.0,
            prefix_len,
            own,
        }
    }

    /// Appends positions held in the given pool slots (tensor backend).
    pub fn push_slots(&mut self, slots: &[u32]) {
        self.own.push_slots(slots);
    }

    /// The pool slot of every cached position, in order (tensor backend).
    pub fn slots(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.len());
        for (seg, used) in &self.prefix {
            out.extend_from_slice(seg.slots(*used));
        }
        out.extend_from_slice(self.own.slots(self.own.len()));
        out
    }

    /// Total positions (prefix + own).
    pub fn len(&self) -> usize {
        self.prefix_len + self.own.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes owned by this sequence alone (shared segments not counted).
    pub fn own_bytes(&self) -> usize {
        self.own.size_bytes()
    }

    /// Appends one layer's keys and values for the new positions.
    pub fn push(&mut self, layer: usize, k: &[f32], v: &[f32]) {
        self.own.push(layer, k, v);
    }

    /// Freezes what is cached so far and returns it as a prefix others can continue from.
    /// This sequence keeps appending after it.
    pub fn share(&mut self) -> SharedPrefix {
        if !self.own.is_empty() {
            let fresh = self.own.empty_like(16);
            let own = std::mem::replace(&mut self.own, fresh);
            let len = own.len();
            self.prefix.push((Arc::new(own), len));
            self.prefix_len += len;
        }
        SharedPrefix(self.prefix.clone())
    }

    /// Calls `f(keys, values, count)` for each contiguous run of cached positions in
    /// `start..end` of one layer, in order: `keys`/`values` start at the run's first position
    /// and hold `count` rows of `kv_dim` floats.
    #[inline]
    pub fn for_each_run(
        &self,
        layer: usize,
        start: usize,
        end: usize,
        mut f: impl FnMut(&[f32], &[f32], usize),
    ) {
        let mut base = 0;
        let segs = self
            .prefix
            .iter()
            .map(|(s, used)| (&**s, *used))
            .chain(std::iter::once((&self.own, self.own.len())));
        for (seg, used) in segs {
            let seg_end = base + used;
            let lo = start.max(base);
            let hi = end.min(seg_end);
            if lo < hi {
                let (k, v) = seg.host_range(layer, lo - base, hi - base);
                f(k, v, hi - lo);
            }
            base = seg_end;
        }
    }
}

/// A frozen cached prefix: the first `len()` positions of some sequence.
#[derive(Clone, Debug, Default)]
pub struct SharedPrefix(Vec<(Arc<KvSegment>, usize)>);

impl SharedPrefix {
    /// Positions covered.
    pub fn len(&self) -> usize {
        self.0.iter().map(|(_, n)| n).sum()
    }

    /// Whether it covers nothing.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of the segments this prefix keeps alive, whole.
    pub fn size_bytes(&self) -> usize {
        Self::distinct_bytes(std::iter::once(self))
    }

    /// Bytes of the segments some prefixes keep alive, each segment counted once.
    pub fn distinct_bytes<'a>(prefixes: impl IntoIterator<Item = &'a SharedPrefix>) -> usize {
        let mut seen = std::collections::HashSet::new();
        prefixes
            .into_iter()
            .flat_map(|p| &p.0)
            .filter(|(seg, _)| seen.insert(Arc::as_ptr(seg)))
            .map(|(seg, _)| seg.size_bytes())
            .sum()
    }

    /// The first `n` positions of this prefix (`n <= len()`).
    pub fn truncated(&self, n: usize) -> SharedPrefix {
        let mut out = Vec::new();
        let mut left = n;
        for (seg, used) in &self.0 {
            if left == 0 {
                break;
            }
            let take = (*used).min(left);
            out.push((seg.clone(), take));
            left -= take;
        }
        SharedPrefix(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_prefix_is_visible_to_children_in_order() {
        let mut a = SeqCache::new(1, 2, 4);
        a.push(0, &[0., 0., 1., 1.], &[0., 0., 1., 1.]);
        let p = a.share();
        a.push(0, &[9., 9.], &[9., 9.]);
        let mut b = SeqCache::with_prefix(p.clone(), 1, 2, 4);
        b.push(0, &[2., 2.], &[2., 2.]);
        let mut seen = vec![];
        b.for_each_run(0, 0, b.len(), |k, _, n| {
            seen.extend(k.chunks(2).take(n).map(|r| r[0]))
        });
        assert_eq!(seen, vec![0., 1., 2.]);
        let mut seen_a = vec![];
        a.for_each_run(0, 1, a.len(), |k, _, n| {
            seen_a.extend(k.chunks(2).take(n).map(|r| r[0]))
        });
        assert_eq!(seen_a, vec![1., 9.]);
        assert_eq!(p.truncated(1).len(), 1);
    }

    #[test]
    fn pool_slots_follow_prefixes_and_return_when_dropped() {
        let pool = Arc::new(SlotPool::new(8));
        let mut a = SeqCache::continuing(
            SharedPrefix::default(),
            KvSegment::in_pool(pool.clone(), 2, 4),
        );
        a.push_slots(&pool.alloc(3));
        let p = a.share();
        let mut b = SeqCache::continuing(p.truncated(2), KvSegment::in_pool(pool.clone(), 2, 4));
        b.push_slots(&pool.alloc(1));
        assert_eq!(a.slots(), vec![0, 1, 2]);
        assert_eq!(b.slots(), vec![0, 1, 3]);
        assert_eq!(b.own_bytes(), 8);
        assert_eq!(pool.in_use(), 4);
        drop(b);
        assert_eq!(pool.in_use(), 3);
        drop(a);
        drop(p);
        assert_eq!(pool.in_use(), 0);
        assert_eq!(pool.alloc(2).len(), 2);
        assert_eq!(pool.high_water(), 4);
    }
}

//! Per-sequence KV caches made of segments, so sequences can share a prefix.
//!
//! A sequence's cache is a chain: shared, frozen segments (each used up to some length)
//! followed by one segment it owns and appends to. `choose` options and requests with a
//! common prompt prefix point at the same frozen segments: the prefix is computed once.
//! Appending never copies what is already cached (capacity grows geometrically).

use std::sync::Arc;

/// Keys and values of a run of consecutive positions, for every layer.
#[derive(Debug)]
pub struct KvSegment {
    kv_dim: usize,
    len: usize,
    /// Per layer, `len × kv_dim` keys.
    k: Vec<Vec<f32>>,
    /// Per layer, `len × kv_dim` values.
    v: Vec<Vec<f32>>,
}

impl KvSegment {
    /// An empty segment with room for `capacity` positions.
    pub fn new(n_layers: usize, kv_dim: usize, capacity: usize) -> Self {
        Self {
            kv_dim,
            len: 0,
            k: (0..n_layers)
                .map(|_| Vec::with_capacity(capacity * kv_dim))
                .collect(),
            v: (0..n_layers)
                .map(|_| Vec::with_capacity(capacity * kv_dim))
                .collect(),
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

    /// Bytes held by keys and values.
    pub fn size_bytes(&self) -> usize {
        self.k.iter().chain(&self.v).map(|x| x.capacity() * 4).sum()
    }

    /// Appends keys and values of `n` positions for one layer. Layer 0 advances `len`.
    pub fn push(&mut self, layer: usize, k: &[f32], v: &[f32]) {
        self.k[layer].extend_from_slice(k);
        self.v[layer].extend_from_slice(v);
        if layer == 0 {
            self.len += k.len() / self.kv_dim;
        }
    }

    /// Keys of position `i` (relative to the segment) in `layer`.
    #[inline]
    pub fn key(&self, layer: usize, i: usize) -> &[f32] {
        &self.k[layer][i * self.kv_dim..(i + 1) * self.kv_dim]
    }

    /// Values of position `i` (relative to the segment) in `layer`.
    #[inline]
    pub fn value(&self, layer: usize, i: usize) -> &[f32] {
        &self.v[layer][i * self.kv_dim..(i + 1) * self.kv_dim]
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
        let prefix_len = prefix.len();
        Self {
            prefix: prefix.0,
            prefix_len,
            own: KvSegment::new(n_layers, kv_dim, capacity),
        }
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
            let n_layers = self.own.k.len();
            let kv_dim = self.own.kv_dim;
            let own = std::mem::replace(&mut self.own, KvSegment::new(n_layers, kv_dim, 16));
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
                let d = seg.kv_dim;
                let (a, b) = ((lo - base) * d, (hi - base) * d);
                f(&seg.k[layer][a..b], &seg.v[layer][a..b], hi - lo);
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
}

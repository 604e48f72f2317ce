//! A per-agent vector index over unit vectors: exact search over a contiguous matrix below a
//! size threshold, an HNSW graph (hnsw_rs) above it whose candidates are rescored exactly.
//!
//! Similarity is the dot product of unit vectors (cosine). Vectors are validated and
//! normalised on the way in.
//!
//! The HNSW graph is built lazily, by the first search once the index has reached the
//! threshold (or by [`VectorIndex::prepare`]), and then grows with every insertion. It is
//! never persisted: a reloaded index rebuilds it from the stored vectors, inserting them one
//! by one in their original order. hnsw_rs draws node layers from a fixed seed, so the graph
//! depends only on the vectors and their order, not on when it was built: searches return
//! the same results after a reload, and a resumed run stays identical to an uninterrupted
//! one. (hnsw_rs's own dump/reload is faster but restarts its layer generator, so later
//! insertions would differ; see the memory module's report.)

use std::collections::HashMap;
use std::fmt;
use std::io::{Read, Write};
use std::sync::OnceLock;

use hnsw_rs::prelude::{Distance, Hnsw};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::error::{MemoryError, Result};
use super::vector::{dot, normalized};

/// Tuning of a [`VectorIndex`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IndexConfig {
    /// Below this many vectors search is exact; from this size on it goes through HNSW.
    /// (Measured on 2 CPU cores, 384 dimensions: exact search is as fast as HNSW up to about
    /// 10k vectors, and HNSW costs a build of ~1–2k insertions per second.)
    pub exact_threshold: usize,
    /// HNSW: neighbours kept per node and layer (M).
    pub max_connections: usize,
    /// HNSW: candidate list size while inserting.
    pub ef_construction: usize,
    /// HNSW: candidate list size while searching (raised to the number of results asked).
    pub ef_search: usize,
    /// Exact search splits the rows over threads (rayon) from this many rows on.
    pub parallel_rows: usize,
}

impl Default for IndexConfig {
    fn default() -> Self {
        Self {
            exact_threshold: 10_000,
            max_connections: 16,
            ef_construction: 100,
            ef_search: 64,
            parallel_rows: 32_768,
        }
    }
}

/// One search result.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hit {
    pub id: u64,
    /// Cosine similarity to the query, -1..=1.
    pub similarity: f32,
}

/// hnsw_rs distance over unit vectors: `1 - dot`, clamped to be non-negative (hnsw_rs
/// asserts distances are ≥ 0, and rounding can make `dot` slightly exceed 1) and never NaN.
#[derive(Clone, Copy, Debug, Default)]
struct DotDistance;

impl Distance<f32> for DotDistance {
    fn eval(&self, a: &[f32], b: &[f32]) -> f32 {
        // Graph navigation only (candidates are rescored with `dot`): the AVX2 kernel.
        let d = 1.0 - crate::llm::kernels::dot_f32(a, b);
        if d.is_nan() {
            2.0
        } else {
            d.max(0.0)
        }
    }
}

type Graph = Hnsw<'static, f32, DotDistance>;

/// Most layers hnsw_rs supports.
const MAX_LAYERS: usize = 16;

/// A vector index for one agent's memories; see the module docs.
pub struct VectorIndex {
    dim: usize,
    config: IndexConfig,
    ids: Vec<u64>,
    slot_of: HashMap<u64, usize>,
    /// Row-major, `ids.len() × dim`, every row of unit length.
    data: Vec<f32>,
    /// Built on first need; see the module docs.
    graph: OnceLock<Graph>,
}

impl fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("VectorIndex")
            .field("dim", &self.dim)
            .field("len", &self.ids.len())
            .field("hnsw", &self.uses_hnsw())
            .field("graph_built", &self.graph.get().is_some())
            .field("config", &self.config)
            .finish()
    }
}

const MAGIC: &[u8; 8] = b"HMVIDX01";

impl VectorIndex {
    /// An empty index of `dim`-dimensional vectors.
    pub fn new(dim: usize, config: IndexConfig) -> Result<Self> {
        if dim == 0 {
            return Err(MemoryError::ZeroDimension);
        }
        Ok(Self {
            dim,
            config,
            ids: Vec::new(),
            slot_of: HashMap::new(),
            data: Vec::new(),
            graph: OnceLock::new(),
        })
    }

    /// Dimension of every vector.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of vectors.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether the index holds no vectors.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The settings.
    pub fn config(&self) -> &IndexConfig {
        &self.config
    }

    /// Changes the HNSW search breadth (takes effect on the next search).
    pub fn set_ef_search(&mut self, ef: usize) {
        self.config.ef_search = ef;
    }

    /// Whether searches go through the HNSW graph (the index reached the threshold).
    pub fn uses_hnsw(&self) -> bool {
        !self.ids.is_empty() && self.ids.len() >= self.config.exact_threshold
    }

    /// Whether the HNSW graph has been built yet.
    pub fn graph_built(&self) -> bool {
        self.graph.get().is_some()
    }

    /// Builds the HNSW graph now if searches will need it (e.g. for every agent in
    /// parallel after loading a checkpoint), instead of on the first search.
    pub fn prepare(&self) {
        if self.uses_hnsw() {
            self.graph();
        }
    }

    fn graph(&self) -> &Graph {
        self.graph.get_or_init(|| self.build_graph())
    }

    /// Whether `id` is in the index.
    pub fn contains(&self, id: u64) -> bool {
        self.slot_of.contains_key(&id)
    }

    /// The stored (unit) vector of `id`.
    pub fn vector(&self, id: u64) -> Option<&[f32]> {
        self.slot_of.get(&id).map(|&s| self.row(s))
    }

    /// Ids in insertion order.
    pub fn ids(&self) -> &[u64] {
        &self.ids
    }

    fn row(&self, slot: usize) -> &[f32] {
        &self.data[slot * self.dim..(slot + 1) * self.dim]
    }

    /// Adds `vector` (validated and normalised) under `id`; returns the stored unit vector.
    pub fn add(&mut self, id: u64, vector: &[f32]) -> Result<&[f32]> {
        if self.slot_of.contains_key(&id) {
            return Err(MemoryError::DuplicateId(id));
        }
        let unit = normalized(vector, self.dim)?;
        self.add_unit(id, &unit)
    }

    /// Adds a vector already validated and normalised by [`normalized`] (stored as is).
    pub(crate) fn add_unit(&mut self, id: u64, unit: &[f32]) -> Result<&[f32]> {
        if unit.len() != self.dim {
            return Err(MemoryError::DimensionMismatch {
                expected: self.dim,
                got: unit.len(),
            });
        }
        if self.slot_of.contains_key(&id) {
            return Err(MemoryError::DuplicateId(id));
        }
        let slot = self.ids.len();
        self.ids.push(id);
        self.slot_of.insert(id, slot);
        self.data.extend_from_slice(unit);
        if let Some(g) = self.graph.get() {
            g.insert_slice((self.row(slot), slot));
        }
        Ok(self.row(slot))
    }

    /// The HNSW graph of every stored vector, inserted in slot order (deterministic).
    fn build_graph(&self) -> Graph {
        let graph = Graph::new(
            self.config.max_connections.clamp(2, 255),
            self.ids.len().max(1024),
            MAX_LAYERS,
            self.config.ef_construction.max(1),
            DotDistance,
        );
        for slot in 0..self.ids.len() {
            graph.insert_slice((self.row(slot), slot));
        }
        graph
    }

    /// The `n` most similar vectors to `query` (validated and normalised), best first; ties
    /// broken by insertion order. Uses the HNSW graph when built, rescoring its candidates
    /// exactly; falls back to exact search if the graph returns too few.
    pub fn search(&self, query: &[f32], n: usize) -> Result<Vec<Hit>> {
        let q = normalized(query, self.dim)?;
        Ok(self.search_unit(&q, n))
    }

    /// Exact search (every vector scored), best first.
    pub fn search_exact(&self, query: &[f32], n: usize) -> Result<Vec<Hit>> {
        let q = normalized(query, self.dim)?;
        Ok(self.exact_unit(&q, n))
    }

    /// [`search`](Self::search) for a query already of unit length and the right dimension.
    pub(crate) fn search_unit(&self, q: &[f32], n: usize) -> Vec<Hit> {
        let want = n.min(self.len());
        if want == 0 {
            return Vec::new();
        }
        if !self.uses_hnsw() || want == self.len() {
            return self.exact_unit(q, n);
        }
        let graph = self.graph();
        let ef = self.config.ef_search.max(want);
        let found = graph.search(q, want, ef);
        let mut scored: Vec<(usize, f32)> = found
            .iter()
            .map(|nb| nb.d_id)
            .filter(|&s| s < self.len())
            .map(|s| (s, dot(self.row(s), q)))
            .collect();
        scored.sort_unstable_by(|a, b| cmp_scored(*a, *b));
        scored.dedup_by_key(|x| x.0);
        if scored.len() < want {
            return self.exact_unit(q, n);
        }
        scored.truncate(want);
        self.hits(scored)
    }

    fn exact_unit(&self, q: &[f32], n: usize) -> Vec<Hit> {
        let rows = self.len();
        let want = n.min(rows);
        if want == 0 {
            return Vec::new();
        }
        let mut scores = Vec::with_capacity(rows);
        if rows >= self.config.parallel_rows {
            self.data
                .par_chunks_exact(self.dim)
                .map(|row| dot(row, q))
                .collect_into_vec(&mut scores);
        } else {
            scores.extend(self.data.chunks_exact(self.dim).map(|row| dot(row, q)));
        }
        let mut scored: Vec<(usize, f32)> = scores.into_iter().enumerate().collect();
        if want < rows {
            scored.select_nth_unstable_by(want - 1, |a, b| cmp_scored(*a, *b));
            scored.truncate(want);
        }
        scored.sort_unstable_by(|a, b| cmp_scored(*a, *b));
        self.hits(scored)
    }

    fn hits(&self, scored: Vec<(usize, f32)>) -> Vec<Hit> {
        scored
            .into_iter()
            .map(|(s, similarity)| Hit {
                id: self.ids[s],
                similarity,
            })
            .collect()
    }

    /// Writes the ids and vectors (not the graph) in a little-endian binary format.
    pub fn write_to(&self, w: &mut dyn Write) -> Result<()> {
        w.write_all(MAGIC)?;
        let config = serde_json::to_vec(&self.config)?;
        w.write_all(&(config.len() as u64).to_le_bytes())?;
        w.write_all(&config)?;
        w.write_all(&(self.dim as u64).to_le_bytes())?;
        w.write_all(&(self.ids.len() as u64).to_le_bytes())?;
        let mut buf = Vec::with_capacity(self.ids.len() * 8);
        for id in &self.ids {
            buf.extend_from_slice(&id.to_le_bytes());
        }
        w.write_all(&buf)?;
        buf.clear();
        buf.reserve(self.data.len() * 4);
        for x in &self.data {
            buf.extend_from_slice(&x.to_le_bytes());
        }
        w.write_all(&buf)?;
        Ok(())
    }

    /// Reads what [`write_to`](Self::write_to) wrote. The vectors are taken as stored (not
    /// renormalised); the HNSW graph is rebuilt when first needed.
    pub fn read_from(r: &mut dyn Read) -> Result<Self> {
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(MemoryError::Format("not a vector index file".into()));
        }
        let config_len = read_len(r, 1 << 20, "config")?;
        let config: IndexConfig = serde_json::from_slice(&read_bytes(r, config_len)?)?;
        let dim = read_len(r, 1 << 20, "dimension")?;
        let count = read_len(r, 1 << 32, "count")?;
        let mut index = Self::new(dim, config)?;
        let ids = read_bytes(r, count * 8)?;
        let total = count
            .checked_mul(dim)
            .and_then(|n| n.checked_mul(4))
            .ok_or_else(|| MemoryError::Format("vector data too large".into()))?;
        let data = read_bytes(r, total)?;
        index.ids = ids
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect();
        index.data = data
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        if index.data.iter().any(|x| !x.is_finite()) {
            return Err(MemoryError::NonFiniteEmbedding);
        }
        for (slot, &id) in index.ids.iter().enumerate() {
            if index.slot_of.insert(id, slot).is_some() {
                return Err(MemoryError::DuplicateId(id));
            }
        }
        Ok(index)
    }
}

/// Best first: higher similarity, then lower slot.
fn cmp_scored(a: (usize, f32), b: (usize, f32)) -> std::cmp::Ordering {
    b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))
}

fn read_len(r: &mut dyn Read, max: u64, what: &str) -> Result<usize> {
    let mut b = [0u8; 8];
    r.read_exact(&mut b)?;
    let v = u64::from_le_bytes(b);
    if v > max {
        return Err(MemoryError::Format(format!("{what} {v} out of range")));
    }
    usize::try_from(v).map_err(|_| MemoryError::Format(format!("{what} {v} out of range")))
}

/// Reads exactly `len` bytes, growing the buffer as data arrives (a corrupt length fails
/// at the end of the input instead of allocating it up front).
pub(crate) fn read_bytes(r: &mut dyn Read, len: usize) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    r.take(len as u64).read_to_end(&mut buf)?;
    if buf.len() != len {
        return Err(MemoryError::Format(format!(
            "truncated: expected {len} bytes, found {}",
            buf.len()
        )));
    }
    Ok(buf)
}

#[allow(dead_code)]
fn assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<VectorIndex>();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic pseudo-random unit-ish vectors clustered around a few centres.
    fn vectors(n: usize, dim: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let centres: Vec<Vec<f32>> = (0..8).map(|_| (0..dim).map(|_| next()).collect()).collect();
        (0..n)
            .map(|i| {
                let c = &centres[i % centres.len()];
                c.iter().map(|x| x + 0.6 * next()).collect()
            })
            .collect()
    }

    #[test]
    fn exact_search_ranks_by_cosine() {
        let mut idx = VectorIndex::new(2, IndexConfig::default()).unwrap();
        idx.add(10, &[1.0, 0.0]).unwrap();
        idx.add(11, &[0.0, 2.0]).unwrap();
        idx.add(12, &[1.0, 1.0]).unwrap();
        let hits = idx.search(&[1.0, 0.1], 2).unwrap();
        assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![10, 12]);
        assert!((idx.vector(11).unwrap()[1] - 1.0).abs() < 1e-7);
        assert!(idx.search(&[1.0, 0.0], 0).unwrap().is_empty());
        assert_eq!(idx.search(&[1.0, 0.0], 99).unwrap().len(), 3);
        assert!(matches!(
            idx.add(10, &[1.0, 0.0]),
            Err(MemoryError::DuplicateId(10))
        ));
        assert!(idx.search(&[0.0, 0.0], 1).is_err());
        assert!(idx.add(13, &[1.0]).is_err());
        assert_eq!(idx.len(), 3);
    }

    #[test]
    fn ties_break_by_insertion_order() {
        let mut idx = VectorIndex::new(2, IndexConfig::default()).unwrap();
        for id in [5, 3, 9] {
            idx.add(id, &[0.0, 1.0]).unwrap();
        }
        let hits = idx.search(&[0.0, 1.0], 3).unwrap();
        assert_eq!(hits.iter().map(|h| h.id).collect::<Vec<_>>(), vec![5, 3, 9]);
    }

    #[test]
    fn hnsw_agrees_with_exact_and_survives_reload() {
        let dim = 32;
        let config = IndexConfig {
            exact_threshold: 100,
            max_connections: 24,
            ef_construction: 200,
            ..IndexConfig::default()
        };
        let mut idx = VectorIndex::new(dim, config).unwrap();
        let vs = vectors(600, dim, 7);
        for (i, v) in vs.iter().enumerate() {
            idx.add(1000 + i as u64, v).unwrap();
            assert_eq!(idx.uses_hnsw(), i + 1 >= 100);
            if i == 300 {
                // Built lazily at a search, then grown by insertion.
                assert!(!idx.graph_built());
                idx.search(v, 3).unwrap();
                assert!(idx.graph_built());
            }
        }
        let queries = vectors(40, dim, 99);
        let mut found = 0;
        for q in &queries {
            let exact = idx.search_exact(q, 10).unwrap();
            let approx = idx.search(q, 10).unwrap();
            found += approx
                .iter()
                .filter(|h| exact.iter().any(|e| e.id == h.id))
                .count();
        }
        let recall = found as f64 / (queries.len() * 10) as f64;
        assert!(recall >= 0.95, "recall {recall}");

        let mut bytes = Vec::new();
        idx.write_to(&mut bytes).unwrap();
        let back = VectorIndex::read_from(&mut bytes.as_slice()).unwrap();
        assert!(back.uses_hnsw() && !back.graph_built());
        assert_eq!(back.ids(), idx.ids());
        for q in &queries {
            assert_eq!(back.search(q, 10).unwrap(), idx.search(q, 10).unwrap());
        }
        // Truncated or foreign input is an error, not a panic.
        assert!(VectorIndex::read_from(&mut &bytes[..bytes.len() - 3]).is_err());
        assert!(VectorIndex::read_from(&mut &b"garbage!garbage!"[..]).is_err());
    }
}

//! One agent's memory stream: nodes in creation order, their vector index, scored retrieval,
//! the importance count that triggers reflection, and save/load.

use std::io::{Read, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::embedder::{embed_checked, TextEmbedder};
use super::error::{MemoryError, Result};
use super::index::{read_bytes, IndexConfig, VectorIndex};
use super::node::{GameTime, Importance, MemoryKind, MemoryNode, NewMemory};
use super::retrieve::{score_candidates, Candidate, RetrievalConfig, ScoredMemory};
use super::vector::normalized;

/// Settings of a memory stream.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StreamConfig {
    pub index: IndexConfig,
    pub retrieval: RetrievalConfig,
    /// Summed importance of new (non-reflection) memories that triggers a reflection; 0
    /// disables reflection.
    pub reflection_threshold: u32,
}

impl Default for StreamConfig {
    fn default() -> Self {
        Self {
            index: IndexConfig::default(),
            retrieval: RetrievalConfig::default(),
            reflection_threshold: 150,
        }
    }
}

/// One agent's memories. Ids are `0, 1, 2, ...` in order of creation.
#[derive(Debug)]
pub struct MemoryStream {
    config: StreamConfig,
    nodes: Vec<MemoryNode>,
    index: VectorIndex,
    importance_since_reflection: u32,
    last_reflection: Option<GameTime>,
}

/// What a saved stream holds besides the vectors (which follow in the index's format).
#[derive(Serialize, Deserialize)]
struct StoredStream {
    version: u32,
    config: StreamConfig,
    importance_since_reflection: u32,
    last_reflection: Option<GameTime>,
    nodes: Vec<StoredNode>,
}

/// A node without its embedding.
#[derive(Serialize, Deserialize)]
struct StoredNode {
    id: u64,
    kind: MemoryKind,
    text: String,
    created: GameTime,
    last_accessed: GameTime,
    importance: Importance,
    #[serde(default)]
    evidence: Vec<u64>,
}

const MAGIC: &[u8; 8] = b"HMSTRM01";
const VERSION: u32 = 1;

impl MemoryStream {
    /// An empty stream for `dim`-dimensional embeddings.
    pub fn new(dim: usize, config: StreamConfig) -> Result<Self> {
        let index = VectorIndex::new(dim, config.index.clone())?;
        Ok(Self {
            config,
            nodes: Vec::new(),
            index,
            importance_since_reflection: 0,
            last_reflection: None,
        })
    }

    /// The settings.
    pub fn config(&self) -> &StreamConfig {
        &self.config
    }

    /// Changes the retrieval settings (weights, k, candidates, decay).
    pub fn set_retrieval(&mut self, retrieval: RetrievalConfig) {
        self.config.retrieval = retrieval;
    }

    /// Changes the reflection threshold.
    pub fn set_reflection_threshold(&mut self, threshold: u32) {
        self.config.reflection_threshold = threshold;
    }

    /// Embedding dimension.
    pub fn dim(&self) -> usize {
        self.index.dim()
    }

    /// Number of memories.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the stream is empty.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Every memory, oldest first.
    pub fn nodes(&self) -> &[MemoryNode] {
        &self.nodes
    }

    /// The memory with `id`.
    pub fn get(&self, id: u64) -> Option<&MemoryNode> {
        usize::try_from(id).ok().and_then(|i| self.nodes.get(i))
    }

    /// The latest `n` memories, oldest first.
    pub fn latest(&self, n: usize) -> &[MemoryNode] {
        &self.nodes[self.nodes.len().saturating_sub(n)..]
    }

    /// The vector index (for inspection and benchmarks).
    pub fn index(&self) -> &VectorIndex {
        &self.index
    }

    /// Adds a memory and returns its id. Its embedding is validated and normalised; its
    /// evidence must name existing memories. A non-reflection memory adds its importance
    /// to the reflection count.
    pub fn add(&mut self, memory: NewMemory) -> Result<u64> {
        let mut ids = self.add_batch(vec![memory])?;
        Ok(ids.remove(0))
    }

    /// Adds several memories (all or none: every one is checked before any is stored) and
    /// returns their ids. Evidence may cite memories earlier in the same batch.
    pub fn add_batch(&mut self, memories: Vec<NewMemory>) -> Result<Vec<u64>> {
        let first = self.nodes.len() as u64;
        let mut units = Vec::with_capacity(memories.len());
        for (i, m) in memories.iter().enumerate() {
            units.push(normalized(&m.embedding, self.dim())?);
            let limit = first + i as u64;
            if let Some(&bad) = m.evidence.iter().find(|&&e| e >= limit) {
                return Err(MemoryError::UnknownId(bad));
            }
        }
        let mut ids = Vec::with_capacity(memories.len());
        for (m, unit) in memories.into_iter().zip(units) {
            let id = self.nodes.len() as u64;
            self.index.add_unit(id, &unit)?;
            if m.kind != MemoryKind::Reflection {
                self.importance_since_reflection = self
                    .importance_since_reflection
                    .saturating_add(u32::from(m.importance.get()));
            }
            let mut evidence = m.evidence;
            dedup_keep_order(&mut evidence);
            self.nodes.push(MemoryNode {
                id,
                kind: m.kind,
                text: m.text,
                created: m.created,
                last_accessed: m.created,
                importance: m.importance,
                embedding: unit,
                evidence,
            });
            ids.push(id);
        }
        Ok(ids)
    }

    /// Embeds `texts` with `embedder` and adds them as memories of `kind` created at `now`
    /// with the given importances (one per text).
    pub fn add_texts(
        &mut self,
        embedder: &mut dyn TextEmbedder,
        kind: MemoryKind,
        texts: &[&str],
        importances: &[Importance],
        now: GameTime,
    ) -> Result<Vec<u64>> {
        let vectors = embed_checked(embedder, texts)?;
        let memories = texts
            .iter()
            .zip(vectors)
            .enumerate()
            .map(|(i, (t, v))| {
                let imp = importances.get(i).copied().unwrap_or_default();
                NewMemory::new(kind, *t, now, imp, v)
            })
            .collect();
        self.add_batch(memories)
    }

    /// Scores memories for `query` at `now` and returns the best `k`, best first, without
    /// touching them. While the index is exact every memory is a candidate (as in the
    /// paper); once it uses HNSW, the candidates are the `k × candidate_factor` most similar
    /// memories plus as many of the newest ones, so recency or importance can still win
    /// over relevance in a large stream.
    pub fn score(&self, query: &[f32], now: GameTime, k: usize) -> Result<Vec<ScoredMemory>> {
        let q = normalized(query, self.dim())?;
        if k == 0 || self.nodes.is_empty() {
            return Ok(Vec::new());
        }
        let hnsw = self.index.uses_hnsw();
        let n = if hnsw {
            self.config.retrieval.candidates_for(k)
        } else {
            self.nodes.len()
        };
        let mut hits = self.index.search_unit(&q, n);
        if hnsw {
            let seen: std::collections::HashSet<u64> = hits.iter().map(|h| h.id).collect();
            for node in self.nodes.iter().rev().take(n) {
                if seen.contains(&node.id) {
                    continue;
                }
                if let Some(v) = self.index.vector(node.id) {
                    hits.push(super::index::Hit {
                        id: node.id,
                        similarity: super::vector::dot(&q, v),
                    });
                }
            }
        }
        let candidates: Vec<Candidate> = hits
            .iter()
            .filter_map(|h| {
                let node = self.get(h.id)?;
                Some(Candidate {
                    id: h.id,
                    last_accessed: node.last_accessed,
                    importance: node.importance,
                    relevance: h.similarity,
                })
            })
            .collect();
        let mut scored = score_candidates(&candidates, now, &self.config.retrieval);
        scored.truncate(k);
        Ok(scored)
    }

    /// [`score`](Self::score) with the configured `k`, then sets the returned memories'
    /// `last_accessed` to `now` (never moving it backwards).
    pub fn retrieve(&mut self, query: &[f32], now: GameTime) -> Result<Vec<ScoredMemory>> {
        self.retrieve_k(query, now, self.config.retrieval.k)
    }

    /// [`retrieve`](Self::retrieve) with an explicit `k`.
    pub fn retrieve_k(
        &mut self,
        query: &[f32],
        now: GameTime,
        k: usize,
    ) -> Result<Vec<ScoredMemory>> {
        let scored = self.score(query, now, k)?;
        self.touch(scored.iter().map(|s| s.id), now);
        Ok(scored)
    }

    /// Embeds `query` and retrieves the best `k` memories for it.
    pub fn retrieve_text(
        &mut self,
        embedder: &mut dyn TextEmbedder,
        query: &str,
        now: GameTime,
        k: usize,
    ) -> Result<Vec<ScoredMemory>> {
        let v = embed_checked(embedder, &[query])?;
        self.retrieve_k(&v[0], now, k)
    }

    /// Sets `last_accessed = now` on the given memories (unknown ids are ignored).
    pub fn touch(&mut self, ids: impl IntoIterator<Item = u64>, now: GameTime) {
        for id in ids {
            if let Some(node) = usize::try_from(id).ok().and_then(|i| self.nodes.get_mut(i)) {
                node.last_accessed = node.last_accessed.max(now);
            }
        }
    }

    /// Summed importance of non-reflection memories added since the last reflection.
    pub fn importance_since_reflection(&self) -> u32 {
        self.importance_since_reflection
    }

    /// When the last reflection happened, if ever.
    pub fn last_reflection(&self) -> Option<GameTime> {
        self.last_reflection
    }

    /// Whether the importance count reached the reflection threshold.
    pub fn should_reflect(&self) -> bool {
        let t = self.config.reflection_threshold;
        t > 0 && self.importance_since_reflection >= t
    }

    /// Records a reflection at `now` and resets the importance count.
    pub fn mark_reflected(&mut self, now: GameTime) {
        self.importance_since_reflection = 0;
        self.last_reflection = Some(now);
    }

    /// Writes the stream: a header, its metadata as JSON, then the vectors in binary
    /// (bit-exact, so a reloaded stream retrieves exactly the same).
    pub fn write_to(&self, w: &mut dyn Write) -> Result<()> {
        let stored = StoredStream {
            version: VERSION,
            config: self.config.clone(),
            importance_since_reflection: self.importance_since_reflection,
            last_reflection: self.last_reflection,
            nodes: self
                .nodes
                .iter()
                .map(|n| StoredNode {
                    id: n.id,
                    kind: n.kind,
                    text: n.text.clone(),
                    created: n.created,
                    last_accessed: n.last_accessed,
                    importance: n.importance,
                    evidence: n.evidence.clone(),
                })
                .collect(),
        };
        let meta = serde_json::to_vec(&stored)?;
        w.write_all(MAGIC)?;
        w.write_all(&(meta.len() as u64).to_le_bytes())?;
        w.write_all(&meta)?;
        self.index.write_to(w)
    }

    /// Reads what [`write_to`](Self::write_to) wrote (the HNSW graph, if any, is rebuilt
    /// from the stored vectors; nothing is re-embedded).
    pub fn read_from(r: &mut dyn Read) -> Result<Self> {
        let header = read_bytes(r, 16)?;
        if &header[..8] != MAGIC {
            return Err(MemoryError::Format("not a memory stream file".into()));
        }
        let len = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes"));
        let len = usize::try_from(len)
            .map_err(|_| MemoryError::Format("metadata length out of range".into()))?;
        let stored: StoredStream = serde_json::from_slice(&read_bytes(r, len)?)?;
        if stored.version != VERSION {
            return Err(MemoryError::Format(format!(
                "unsupported version {}",
                stored.version
            )));
        }
        let index = VectorIndex::read_from(r)?;
        if index.len() != stored.nodes.len() {
            return Err(MemoryError::Format(format!(
                "{} nodes but {} vectors",
                stored.nodes.len(),
                index.len()
            )));
        }
        let mut nodes = Vec::with_capacity(stored.nodes.len());
        for (i, n) in stored.nodes.into_iter().enumerate() {
            if n.id != i as u64 {
                return Err(MemoryError::Format(format!(
                    "node {i} has id {}, expected {i}",
                    n.id
                )));
            }
            if let Some(&bad) = n.evidence.iter().find(|&&e| e >= n.id) {
                return Err(MemoryError::UnknownId(bad));
            }
            let embedding = index
                .vector(n.id)
                .ok_or(MemoryError::UnknownId(n.id))?
                .to_vec();
            nodes.push(MemoryNode {
                id: n.id,
                kind: n.kind,
                text: n.text,
                created: n.created,
                last_accessed: n.last_accessed,
                importance: n.importance,
                embedding,
                evidence: n.evidence,
            });
        }
        let mut config = stored.config;
        config.index = index.config().clone();
        Ok(Self {
            config,
            nodes,
            index,
            importance_since_reflection: stored.importance_since_reflection,
            last_reflection: stored.last_reflection,
        })
    }

    /// Saves to `path` (written to a temporary file beside it, then renamed into place).
    pub fn save(&self, path: &Path) -> Result<()> {
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = std::path::PathBuf::from(tmp);
        {
            let file = std::fs::File::create(&tmp)?;
            let mut w = std::io::BufWriter::new(file);
            self.write_to(&mut w)?;
            w.flush()?;
            w.get_ref().sync_all()?;
        }
        std::fs::rename(&tmp, path)?;
        Ok(())
    }

    /// Loads a stream saved with [`save`](Self::save).
    pub fn load(path: &Path) -> Result<Self> {
        let file = std::fs::File::open(path)?;
        Self::read_from(&mut std::io::BufReader::new(file))
    }
}

fn dedup_keep_order(v: &mut Vec<u64>) {
    let mut seen = std::collections::HashSet::new();
    v.retain(|x| seen.insert(*x));
}

#[cfg(test)]
mod tests;

//! Agents' memory: the memory stream (nodes with importance and embeddings), a vector index
//! per agent (exact search, HNSW above a size threshold), scored retrieval, the prompts and
//! parsers of importance rating and reflection, and fitting memories into a prompt budget.
//!
//! Embeddings come in from the caller as `Vec<f32>` (any length-consistent vectors; they are
//! normalised here) or through the [`TextEmbedder`] trait in the convenience functions.
//! Model calls are split into request builders and response parsers; the one path that
//! sends them is the agents' (`crate::agent::reflect`, the tick's importance ratings), so
//! every agent's calls share batches.
//!
//! Layout: [`node`] the data, [`vector`] kernels, [`index`] the vector index, [`retrieve`]
//! the scoring formula, [`stream`] one agent's stream, [`importance`] and [`reflect`](mod@reflect) the
//! prompts and parsers, [`budget`] prompt trimming, [`embedder`] the embedding trait and a
//! hashing stand-in for tests.

pub mod budget;
pub mod embedder;
pub mod error;
pub mod importance;
pub mod index;
pub mod node;
pub mod reflect;
pub mod retrieve;
pub mod stream;
pub mod synthetic;
pub mod vector;

pub use budget::fit_to_budget;
pub use embedder::{HashingEmbedder, TextEmbedder};
pub use error::MemoryError;
pub use importance::{importance_requests, parse_importance};
pub use index::{Hit, IndexConfig, VectorIndex};
pub use node::{GameTime, Importance, MemoryKind, MemoryNode, NewMemory};
pub use reflect::{Insight, ReflectionConfig};
pub use retrieve::{RetrievalConfig, ScoredMemory, Weights};
pub use stream::{MemoryStream, StreamConfig};

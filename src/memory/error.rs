//! The memory layer's error type.

use crate::llm::LlmError;

/// Everything that can go wrong storing, indexing, retrieving or persisting memories.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// An embedding has the wrong number of dimensions for this stream or index.
    #[error("embedding has {got} dimensions, expected {expected}")]
    DimensionMismatch { expected: usize, got: usize },
    /// An embedding contains NaN or an infinity.
    #[error("embedding contains a non-finite value")]
    NonFiniteEmbedding,
    /// An embedding is (numerically) the zero vector and has no direction.
    #[error("embedding has zero length and cannot be normalised")]
    ZeroEmbedding,
    /// A vector index or stream was asked for zero dimensions.
    #[error("embedding dimension must be at least 1")]
    ZeroDimension,
    /// An id was added twice to an index.
    #[error("id {0} is already in the index")]
    DuplicateId(u64),
    /// An id that is not in the stream.
    #[error("no memory with id {0}")]
    UnknownId(u64),
    /// The text embedder failed.
    #[error("embedder: {0}")]
    Embedder(String),
    /// The embedder returned a different number of vectors than texts.
    #[error("embedder returned {got} vectors for {expected} texts")]
    EmbedderCount { expected: usize, got: usize },
    /// The language model failed on a request.
    #[error("language model: {0}")]
    Llm(#[from] LlmError),
    /// The language model answered with the other kind of response.
    #[error("unexpected response from the language model: expected {expected}")]
    UnexpectedResponse { expected: &'static str },
    /// Nothing fits the prompt budget, not even the prompt without memories.
    #[error("prompt needs {needed} tokens without any memories, budget is {budget}")]
    OverBudget { needed: usize, budget: usize },
    /// Reading or writing a saved stream or index failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// A saved stream or index is malformed.
    #[error("malformed memory file: {0}")]
    Format(String),
    /// The metadata of a saved stream is not valid JSON for its schema.
    #[error("memory file metadata: {0}")]
    Json(#[from] serde_json::Error),
}

/// Shorthand for results of the memory layer.
pub type Result<T> = std::result::Result<T, MemoryError>;

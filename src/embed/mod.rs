//! Sentence embeddings: a BERT-style sentence-transformer (all-MiniLM-L6-v2 by default, 384
//! dimensions) run in-process with candle on the CPU, batched with padding and an attention
//! mask, mean-pooled and L2-normalised, with a bounded text → vector cache.
//!
//! ```no_run
//! use humanoid::embed::{cosine, Embedder};
//! let mut e = Embedder::load_default(true)?;
//! let v = e.embed(&["John is eating breakfast", "John has a meal in the morning"])?;
//! assert!(cosine(&v[0], &v[1]) > 0.5);
//! # Ok::<(), humanoid::embed::EmbedError>(())
//! ```

mod cache;
mod embedder;
mod error;

pub use embedder::{
    Embedder, CONFIG_FILE, DEFAULT_CACHE_CAPACITY, DEFAULT_MAX_BATCH, SENTENCE_CONFIG_FILE,
    TOKENIZER_FILE, WEIGHTS_FILE,
};
pub use error::{EmbedError, Result};

/// Cosine similarity of two vectors (the dot product for unit vectors such as
/// [`Embedder::embed`]'s). Returns 0.0 when the lengths differ or either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (f64::from(x), f64::from(y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    (dot / (na.sqrt() * nb.sqrt())) as f32
}

//! How the memory layer gets embeddings: the [`TextEmbedder`] trait (implemented by the real
//! sentence embedder elsewhere) and [`HashingEmbedder`], a deterministic bag-of-words stand-in
//! for tests.

use super::error::{MemoryError, Result};

/// Turns texts into embeddings of a fixed dimension.
///
/// The memory layer never embeds on its own inside the core types: callers pass vectors in.
/// This trait is for the convenience functions (reflection, text queries) that need to embed
/// questions and insights.
pub trait TextEmbedder {
    /// One embedding per text, in order. Vectors need not be normalised.
    fn embed(&mut self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, String>;
    /// The length of every embedding.
    fn dim(&self) -> usize;
}

/// Embeds `texts` and checks that the embedder returned one vector per text.
pub fn embed_checked(embedder: &mut dyn TextEmbedder, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
    if texts.is_empty() {
        return Ok(Vec::new());
    }
    let out = embedder.embed(texts).map_err(MemoryError::Embedder)?;
    if out.len() != texts.len() {
        return Err(MemoryError::EmbedderCount {
            expected: texts.len(),
            got: out.len(),
        });
    }
    Ok(out)
}

/// **A test stand-in, not a semantic embedder.** Hashes each lower-cased word (and each pair
/// of adjacent words) of a text to one of `dim` signed buckets (FNV-1a, stable across
/// platforms and Rust versions) and L2-normalises the counts. Texts that share words are
/// similar; paraphrases with different words are not. Use it where a test needs
/// deterministic, text-dependent vectors without loading a model.
#[derive(Clone, Debug)]
pub struct HashingEmbedder {
    dim: usize,
}

impl HashingEmbedder {
    /// A hashing embedder with `dim` dimensions (at least 1).
    pub fn new(dim: usize) -> Self {
        Self { dim: dim.max(1) }
    }

    /// The embedding of one text (unit length; a fixed bucket for texts without words).
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; self.dim];
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        let mut add = |key: &[u8], weight: f32| {
            let h = fnv1a(key);
            let bucket = (h % self.dim as u64) as usize;
            let sign = if (h >> 63) & 1 == 1 { -1.0 } else { 1.0 };
            v[bucket] += sign * weight;
        };
        if words.is_empty() {
            add(b"<empty>", 1.0);
        }
        for w in &words {
            add(w.as_bytes(), 1.0);
        }
        for pair in words.windows(2) {
            let key = format!("{} {}", pair[0], pair[1]);
            add(key.as_bytes(), 0.5);
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            v.iter_mut().for_each(|x| *x /= norm);
        } else {
            // Every word cancelled out: fall back to a fixed direction.
            v[0] = 1.0;
        }
        v
    }
}

impl TextEmbedder for HashingEmbedder {
    fn embed(&mut self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, String> {
        Ok(texts.iter().map(|t| self.embed_one(t)).collect())
    }

    fn dim(&self) -> usize {
        self.dim
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// The real sentence embedder (MiniLM by default).
impl TextEmbedder for crate::embed::Embedder {
    fn embed(&mut self, texts: &[&str]) -> std::result::Result<Vec<Vec<f32>>, String> {
        crate::embed::Embedder::embed(self, texts).map_err(|e| e.to_string())
    }

    fn dim(&self) -> usize {
        crate::embed::Embedder::dim(self)
    }
}

#[cfg(test)]
mod tests {
    use super::super::vector::dot;
    use super::*;

    #[test]
    fn hashing_embedder_is_deterministic_and_normalised() {
        let mut e = HashingEmbedder::new(384);
        let v = e
            .embed(&["John is eating breakfast", "", "John is eating breakfast"])
            .unwrap();
        assert_eq!(v[0], v[2]);
        for x in &v {
            assert_eq!(x.len(), 384);
            assert!((dot(x, x) - 1.0).abs() < 1e-5);
        }
        let a = e.embed_one("John is eating breakfast in the kitchen");
        let b = e.embed_one("John eats breakfast in the kitchen");
        let c = e.embed_one("The stock market fell today");
        assert!(dot(&a, &b) > dot(&a, &c));
    }

    struct Short;
    impl TextEmbedder for Short {
        fn embed(&mut self, _: &[&str]) -> std::result::Result<Vec<Vec<f32>>, String> {
            Ok(vec![vec![1.0]])
        }
        fn dim(&self) -> usize {
            1
        }
    }

    #[test]
    fn embed_checked_catches_wrong_count() {
        assert!(matches!(
            embed_checked(&mut Short, &["a", "b"]),
            Err(MemoryError::EmbedderCount {
                expected: 2,
                got: 1
            })
        ));
    }
}

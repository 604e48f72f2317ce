//! A bounded text → vector cache with two generations (an O(1) approximation of LRU).

use std::collections::HashMap;

/// Holds at most `capacity` vectors: new entries go to the hot generation; when it holds half
/// the capacity it becomes the cold one (dropping the previous cold one). A hit in the cold
/// generation moves the entry back to the hot one, so any text used within the last
/// `capacity / 2` insertions is kept.
#[derive(Debug)]
pub(crate) struct TextCache {
    hot: HashMap<String, Vec<f32>>,
    cold: HashMap<String, Vec<f32>>,
    capacity: usize,
}

impl TextCache {
    /// An empty cache holding at most `capacity` entries (0 keeps nothing).
    pub(crate) fn new(capacity: usize) -> TextCache {
        TextCache {
            hot: HashMap::new(),
            cold: HashMap::new(),
            capacity,
        }
    }

    /// Maximum number of entries.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Number of entries held.
    pub(crate) fn len(&self) -> usize {
        self.hot.len() + self.cold.len()
    }

    /// Drops every entry and sets a new capacity.
    pub(crate) fn reset(&mut self, capacity: usize) {
        self.hot = HashMap::new();
        self.cold = HashMap::new();
        self.capacity = capacity;
    }

    /// The vector cached for `text`, if any (refreshing its age).
    pub(crate) fn get(&mut self, text: &str) -> Option<Vec<f32>> {
        if let Some(v) = self.hot.get(text) {
            return Some(v.clone());
        }
        let (key, v) = self.cold.remove_entry(text)?;
        let out = v.clone();
        self.put(key, v);
        Some(out)
    }

    /// Caches `vector` for `text`.
    pub(crate) fn insert(&mut self, text: String, vector: Vec<f32>) {
        if self.capacity > 0 {
            self.put(text, vector);
        }
    }

    fn put(&mut self, text: String, vector: Vec<f32>) {
        let half = self.capacity.div_ceil(2);
        if self.hot.len() >= half {
            self.cold = std::mem::take(&mut self.hot);
        }
        self.hot.insert(text, vector);
    }
}

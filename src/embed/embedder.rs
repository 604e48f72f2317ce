//! [`Embedder`]: a BERT-style sentence-transformer (safetensors + config.json + tokenizer.json)
//! run with candle on the CPU, mean-pooled over the real tokens and L2-normalised.

use std::path::{Path, PathBuf};

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use tokenizers::utils::padding::{pad_encodings, PaddingParams, PaddingStrategy};
use tokenizers::utils::truncation::{TruncationDirection, TruncationParams, TruncationStrategy};
use tokenizers::{Encoding, Tokenizer};

use super::cache::TextCache;
use super::error::{EmbedError, Result};
use crate::model_store::{self, ModelSpec};

/// Weights file of a model folder.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// BERT configuration file of a model folder.
pub const CONFIG_FILE: &str = "config.json";
/// Tokenizer file of a model folder.
pub const TOKENIZER_FILE: &str = "tokenizer.json";
/// Optional sentence-transformers settings file (its `max_seq_length` is honoured).
pub const SENTENCE_CONFIG_FILE: &str = "sentence_bert_config.json";

/// Default largest number of texts per forward pass.
pub const DEFAULT_MAX_BATCH: usize = 32;
/// Default bound on the number of cached text → vector entries (about 150 MB of 384-dim
/// vectors when full).
pub const DEFAULT_CACHE_CAPACITY: usize = 100_000;

/// A sentence-embedding model: text in, unit-length vector of [`Embedder::dim`] floats out.
///
/// Texts are tokenised with the folder's `tokenizer.json` (its fixed padding replaced by
/// padding to the longest text of each batch) and truncated to [`Embedder::max_tokens`]
/// tokens: the model's `max_position_embeddings` (512 for MiniLM), or a smaller
/// `max_seq_length` from `sentence_bert_config.json` when the folder has one. Longer texts are
/// embedded from their first `max_tokens` tokens; that is not an error.
///
/// [`Embedder::embed`] caches vectors by text, so embedding the same text twice costs one
/// forward pass; [`Embedder::embed_uncached`] always runs the model (for benchmarks).
pub struct Embedder {
    model: BertModel,
    tokenizer: Tokenizer,
    padding: PaddingParams,
    dir: PathBuf,
    dim: usize,
    max_tokens: usize,
    max_batch: usize,
    cache: TextCache,
    cache_enabled: bool,
    cache_hits: u64,
    cache_misses: u64,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("dir", &self.dir)
            .field("dim", &self.dim)
            .field("max_tokens", &self.max_tokens)
            .field("max_batch", &self.max_batch)
            .field("cache_len", &self.cache.len())
            .field("cache_enabled", &self.cache_enabled)
            .finish_non_exhaustive()
    }
}

/// The subset of `sentence_bert_config.json` we use.
#[derive(serde::Deserialize)]
struct SentenceConfig {
    max_seq_length: Option<usize>,
}

impl Embedder {
    /// Loads the model in `dir` (`model.safetensors`, `config.json`, `tokenizer.json`) on the
    /// CPU. Errors name the missing or invalid file.
    pub fn load(dir: &Path) -> Result<Embedder> {
        let weights_path = dir.join(WEIGHTS_FILE);
        let config_path = dir.join(CONFIG_FILE);
        let tokenizer_path = dir.join(TOKENIZER_FILE);
        for path in [&config_path, &tokenizer_path, &weights_path] {
            if !path.is_file() {
                return Err(EmbedError::MissingFile { path: path.clone() });
            }
        }

        let config_text = read_to_string(&config_path)?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|source| EmbedError::Config {
                path: config_path.clone(),
                source,
            })?;
        let mut max_tokens = config.max_position_embeddings;
        let sentence_path = dir.join(SENTENCE_CONFIG_FILE);
        if sentence_path.is_file() {
            let text = read_to_string(&sentence_path)?;
            let sc: SentenceConfig =
                serde_json::from_str(&text).map_err(|source| EmbedError::Config {
                    path: sentence_path.clone(),
                    source,
                })?;
            if let Some(n) = sc.max_seq_length {
                max_tokens = max_tokens.min(n);
            }
        }
        if max_tokens < 2 || config.hidden_size == 0 {
            return Err(EmbedError::Unsupported {
                path: config_path,
                message: format!(
                    "hidden_size {} and max positions {max_tokens}: need hidden_size > 0 and at \
                     least 2 positions",
                    config.hidden_size
                ),
            });
        }

        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|source| EmbedError::Tokenizer {
                path: tokenizer_path.clone(),
                source,
            })?;
        // The shipped MiniLM tokenizer pads and truncates to a fixed 128 tokens: pad each
        // batch to its longest text instead, and truncate at the model's positions.
        let padding = PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..tokenizer.get_padding().cloned().unwrap_or_default()
        };
        tokenizer.with_padding(Some(padding.clone()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                direction: TruncationDirection::Right,
                max_length: max_tokens,
                strategy: TruncationStrategy::LongestFirst,
                stride: 0,
            }))
            .map_err(|source| EmbedError::Tokenizer {
                path: tokenizer_path.clone(),
                source,
            })?;

        let bytes = std::fs::read(&weights_path).map_err(|source| EmbedError::Io {
            path: weights_path.clone(),
            source,
        })?;
        let weights_err = |source| EmbedError::Weights {
            path: weights_path.clone(),
            source,
        };
        let vb = VarBuilder::from_buffered_safetensors(bytes, DTYPE, &Device::Cpu)
            .map_err(weights_err)?;
        let model = BertModel::load(vb, &config).map_err(weights_err)?;

        Ok(Embedder {
            model,
            tokenizer,
            padding,
            dir: dir.to_path_buf(),
            dim: config.hidden_size,
            max_tokens,
            max_batch: DEFAULT_MAX_BATCH,
            cache: TextCache::new(DEFAULT_CACHE_CAPACITY),
            cache_enabled: true,
            cache_hits: 0,
            cache_misses: 0,
        })
    }

    /// Resolves `spec` through the model store (a manifest name, fetched when missing and
    /// `allow_fetch` is set; or a local path to the folder or to a file in it) and loads it.
    pub fn load_spec(spec: &ModelSpec, models_dir: &Path, allow_fetch: bool) -> Result<Embedder> {
        let resolved = model_store::resolve(spec, models_dir, allow_fetch)?;
        let dir = if resolved.path.is_dir() {
            resolved.path
        } else {
            resolved
                .path
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        Embedder::load(&dir)
    }

    /// Loads the default embedding model (all-MiniLM-L6-v2) from the models folder.
    pub fn load_default(allow_fetch: bool) -> Result<Embedder> {
        Embedder::load_spec(
            &model_store::default_embed_model(),
            &model_store::models_dir(),
            allow_fetch,
        )
    }

    /// Embeds `texts`, returning one unit-length vector per text, in input order (an empty
    /// slice gives an empty vector). Texts already cached (or repeated within `texts`) are
    /// embedded once; the rest run in batches of up to [`Embedder::max_batch`] texts of
    /// similar length.
    pub fn embed(&mut self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        if !self.cache_enabled {
            return self.embed_uncached(texts);
        }
        let mut out = vec![Vec::new(); texts.len()];
        // Texts to embed (unique), and for each output slot waiting on one, its index there.
        let mut todo: Vec<&str> = Vec::new();
        let mut todo_index = std::collections::HashMap::new();
        let mut waiting: Vec<(usize, usize)> = Vec::new();
        for (i, &text) in texts.iter().enumerate() {
            if let Some(v) = self.cache.get(text) {
                self.cache_hits += 1;
                out[i] = v;
            } else if let Some(&j) = todo_index.get(text) {
                self.cache_hits += 1;
                waiting.push((i, j));
            } else {
                todo_index.insert(text, todo.len());
                waiting.push((i, todo.len()));
                todo.push(text);
            }
        }
        let vectors = self.embed_uncached(&todo)?;
        self.cache_misses += todo.len() as u64;
        for (i, j) in waiting {
            out[i].clone_from(&vectors[j]);
        }
        for (text, v) in todo.into_iter().zip(vectors) {
            self.cache.insert(text.to_owned(), v);
        }
        Ok(out)
    }

    /// Embeds one text (through the cache, like [`Embedder::embed`]).
    pub fn embed_one(&mut self, text: &str) -> Result<Vec<f32>> {
        Ok(self.embed(&[text])?.pop().unwrap_or_default())
    }

    /// Embeds `texts` without reading or filling the cache: every text runs through the model,
    /// in batches of up to [`Embedder::max_batch`] texts sorted by token count. Results are in
    /// input order.
    pub fn embed_uncached(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let mut encodings = texts
            .iter()
            .map(|&text| {
                self.tokenizer
                    .encode_fast(text, true)
                    .map_err(|source| EmbedError::Tokenize {
                        text: text.chars().take(80).collect(),
                        source,
                    })
            })
            .collect::<Result<Vec<Encoding>>>()?;
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| encodings[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(self.max_batch) {
            let mut batch: Vec<Encoding> = chunk
                .iter()
                .map(|&i| std::mem::take(&mut encodings[i]))
                .collect();
            pad_encodings(&mut batch, &self.padding).map_err(|source| EmbedError::Tokenize {
                text: texts[chunk[0]].chars().take(80).collect(),
                source,
            })?;
            for (&i, v) in chunk.iter().zip(self.forward(&batch)?) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    /// One forward pass over a padded batch: mean of the last hidden states over the tokens
    /// whose attention mask is 1, then L2-normalised. A text of zero tokens (possible only with
    /// a tokenizer that adds no special tokens) gives the zero vector.
    fn forward(&self, batch: &[Encoding]) -> Result<Vec<Vec<f32>>> {
        let rows = batch.len();
        let len = batch.first().map_or(0, Encoding::len);
        if len == 0 {
            return Ok(vec![vec![0.0; self.dim]; rows]);
        }
        let flat = |f: fn(&Encoding) -> &[u32]| -> Vec<u32> {
            batch.iter().flat_map(|e| f(e).iter().copied()).collect()
        };
        let device = &self.model.device;
        let ids = Tensor::from_vec(flat(Encoding::get_ids), (rows, len), device)?;
        let type_ids = Tensor::from_vec(flat(Encoding::get_type_ids), (rows, len), device)?;
        let mask = Tensor::from_vec(flat(Encoding::get_attention_mask), (rows, len), device)?;
        let hidden = self.model.forward(&ids, &type_ids, Some(&mask))?; // (rows, len, dim)
        let mask = mask.to_dtype(DType::F32)?.unsqueeze(2)?; // (rows, len, 1)
        let summed = hidden.broadcast_mul(&mask)?.sum(1)?; // (rows, dim)
        let counts = mask.sum(1)?.clamp(1.0f32, f32::MAX)?; // (rows, 1)
        let mean = summed.broadcast_div(&counts)?;
        let norms = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        Ok(mean.broadcast_div(&norms)?.to_vec2::<f32>()?)
    }

    /// Number of tokens `text` is embedded from (special tokens included, after truncation to
    /// [`Embedder::max_tokens`]).
    pub fn token_count(&self, text: &str) -> Result<usize> {
        self.tokenizer
            .encode_fast(text, true)
            .map(|e| e.len())
            .map_err(|source| EmbedError::Tokenize {
                text: text.chars().take(80).collect(),
                source,
            })
    }

    /// Length of the vectors (the model's hidden size: 384 for MiniLM).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Longest input in tokens (special tokens included); longer texts are truncated.
    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// The model folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Largest number of texts per forward pass.
    pub fn max_batch(&self) -> usize {
        self.max_batch
    }

    /// Sets the largest number of texts per forward pass (at least 1).
    pub fn set_max_batch(&mut self, max_batch: usize) {
        self.max_batch = max_batch.max(1);
    }

    /// Turns the cache on or off for [`Embedder::embed`] (on by default). Turning it off
    /// keeps its entries; [`Embedder::clear_cache`] drops them.
    pub fn set_cache_enabled(&mut self, enabled: bool) {
        self.cache_enabled = enabled;
    }

    /// Whether [`Embedder::embed`] uses the cache.
    pub fn cache_enabled(&self) -> bool {
        self.cache_enabled
    }

    /// Drops every cached vector and sets the cache bound (entries; 0 caches nothing). The
    /// counters are kept.
    pub fn set_cache_capacity(&mut self, capacity: usize) {
        self.cache.reset(capacity);
    }

    /// Largest number of cached vectors.
    pub fn cache_capacity(&self) -> usize {
        self.cache.capacity()
    }

    /// Drops every cached vector (the counters are kept).
    pub fn clear_cache(&mut self) {
        let capacity = self.cache.capacity();
        self.cache.reset(capacity);
    }

    /// Number of cached vectors.
    pub fn cache_len(&self) -> usize {
        self.cache.len()
    }

    /// Texts [`Embedder::embed`] answered without a forward pass (from the cache, or repeated
    /// within one call).
    pub fn cache_hits(&self) -> u64 {
        self.cache_hits
    }

    /// Texts [`Embedder::embed`] ran through the model while the cache was on.
    pub fn cache_misses(&self) -> u64 {
        self.cache_misses
    }
}

fn read_to_string(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| EmbedError::Io {
        path: path.to_path_buf(),
        source,
    })
}

//! Tokenizers built from GGUF metadata (`tokenizer.ggml.*`) or from a `tokenizer.json`, giving
//! the same ids as llama.cpp:
//!
//! - `gpt2` (byte-level BPE, e.g. SmolLM2, Llama 3, Qwen2): the vocabulary and merges as stored,
//!   the pre-tokenizer regex chosen by `tokenizer.ggml.pre`, a byte-level decoder.
//! - `llama` (SentencePiece, e.g. Gemma 3, Llama 2): a BPE with byte fallback whose merges are
//!   derived from the scores (every split of a token into two vocabulary tokens is a merge,
//!   ranked by the merged token's score), spaces escaped as `▁`, a prefix space only when
//!   `tokenizer.ggml.add_space_prefix` asks for it.
//!
//! Control tokens (token type 3) are special tokens, parsed from text only when asked;
//! user-defined tokens (type 4) are always parsed, as llama.cpp does.

use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

use candle_core::quantized::gguf_file::Value;
use tokenizers::models::bpe::Vocab;
use tokenizers::AddedToken;

use super::error::{LlmError, Result};
use super::gguf::GgufFile;

mod build;

use build::{build_gpt2, build_spm, byte_level_byte, byte_tokens, spm_merges};

const TYPE_NORMAL: i64 = 1;
const TYPE_UNKNOWN: i64 = 2;
const TYPE_CONTROL: i64 = 3;
const TYPE_USER_DEFINED: i64 = 4;
const TYPE_BYTE: i64 = 6;

/// Token texts that end generation when present as special tokens (as llama.cpp's EOG set).
const STOP_NAMES: &[&str] = &[
    "<|im_end|>",
    "<end_of_turn>",
    "<|eot_id|>",
    "<|eom_id|>",
    "<|end|>",
    "<|endoftext|>",
    "<|end_of_text|>",
    "<EOT>",
];

/// BOS and EOS texts tried, in order, for a `tokenizer.json` without `tokenizer_config.json`.
const BOS_NAMES: &[&str] = &["<|begin_of_text|>", "<bos>", "<s>", "<|startoftext|>"];
const EOS_NAMES: &[&str] = &["<|end_of_text|>", "<eos>", "</s>", "<|endoftext|>"];

fn tok_err(msg: impl std::fmt::Display) -> LlmError {
    LlmError::Tokenizer(msg.to_string())
}

/// How a token's text maps to the bytes it stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pieces {
    /// GPT-2 byte-to-unicode mapping.
    ByteLevel,
    /// `▁` for space, `<0xHH>` byte tokens.
    SentencePiece,
    /// The text itself.
    Raw,
}

/// The tokenizer part of a GGUF file's metadata (see [`Tokenizer::from_metadata`]).
#[derive(Clone, Debug, Default)]
pub struct TokenizerMetadata {
    /// `tokenizer.ggml.model`: `gpt2` or `llama`.
    pub model: String,
    /// `tokenizer.ggml.pre`: the pre-tokenizer name (gpt2 models).
    pub pre: Option<String>,
    /// `tokenizer.ggml.tokens`.
    pub tokens: Vec<String>,
    /// `tokenizer.ggml.token_type` (1 normal, 2 unknown, 3 control, 4 user-defined, 6 byte).
    pub token_types: Option<Vec<i64>>,
    /// `tokenizer.ggml.scores` (needed for `llama`).
    pub scores: Option<Vec<f32>>,
    /// `tokenizer.ggml.merges` (needed for `gpt2`).
    pub merges: Option<Vec<String>>,
    /// `tokenizer.ggml.bos_token_id`.
    pub bos_id: Option<u32>,
    /// `tokenizer.ggml.eos_token_id`.
    pub eos_id: Option<u32>,
    /// `tokenizer.ggml.eot_token_id` and `tokenizer.ggml.eom_token_id`.
    pub extra_stop_ids: Vec<u32>,
    /// `tokenizer.ggml.unknown_token_id`.
    pub unk_id: Option<u32>,
    /// `tokenizer.ggml.add_bos_token`.
    pub add_bos: Option<bool>,
    /// `tokenizer.ggml.add_space_prefix`.
    pub add_space_prefix: Option<bool>,
}

impl TokenizerMetadata {
    /// Reads the tokenizer keys of a GGUF file; missing required keys are errors naming them.
    pub fn from_gguf(g: &GgufFile) -> Result<Self> {
        let id = |key: &str| -> Result<Option<u32>> {
            Ok(g.opt(key, GgufFile::get_u64)?.map(|v| v as u32))
        };
        let flag = |key: &str| -> Result<Option<bool>> {
            g.opt(key, |g, k| match g.get(k)? {
                Value::Bool(b) => Ok(*b),
                _ => Err(LlmError::MissingKey {
                    path: g.path().to_path_buf(),
                    key: k.to_string(),
                }),
            })
        };
        let model = g.get_str("tokenizer.ggml.model")?.to_string();
        let (merges, scores) = match model.as_str() {
            "gpt2" => (Some(g.get_str_array("tokenizer.ggml.merges")?), None),
            "llama" => (None, Some(g.get_f32_array("tokenizer.ggml.scores")?)),
            _ => (None, None),
        };
        let extra_stop_ids = ["tokenizer.ggml.eot_token_id", "tokenizer.ggml.eom_token_id"]
            .iter()
            .filter_map(|k| id(k).transpose())
            .collect::<Result<Vec<u32>>>()?;
        Ok(Self {
            pre: g.opt("tokenizer.ggml.pre", |g, k| {
                g.get_str(k).map(str::to_string)
            })?,
            tokens: g.get_str_array("tokenizer.ggml.tokens")?,
            token_types: g.opt("tokenizer.ggml.token_type", GgufFile::get_i64_array)?,
            scores,
            merges,
            bos_id: id("tokenizer.ggml.bos_token_id")?,
            eos_id: id("tokenizer.ggml.eos_token_id")?,
            extra_stop_ids,
            unk_id: id("tokenizer.ggml.unknown_token_id")?,
            add_bos: flag("tokenizer.ggml.add_bos_token")?,
            add_space_prefix: flag("tokenizer.ggml.add_space_prefix")?,
            model,
        })
    }
}

/// A text tokenizer with the model's special ids (BOS, EOS, stop tokens).
#[derive(Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// A copy that treats special-token text as plain text, made on first use.
    literal: OnceLock<tokenizers::Tokenizer>,
    tokens: Vec<String>,
    /// Tokens whose bytes are their text verbatim (control, user-defined, added tokens).
    verbatim: Vec<bool>,
    /// Byte-fallback tokens: the byte they stand for.
    byte_token: HashMap<u32, u8>,
    pieces: Pieces,
    bos: Option<u32>,
    eos: Option<u32>,
    add_bos: bool,
    stop_ids: Vec<u32>,
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.tokens.len())
            .field("pieces", &self.pieces)
            .field("bos", &self.bos)
            .field("eos", &self.eos)
            .field("add_bos", &self.add_bos)
            .field("stop_ids", &self.stop_ids)
            .finish()
    }
}

impl Tokenizer {
    /// Builds the tokenizer described by a GGUF file's metadata.
    pub fn from_gguf(g: &GgufFile) -> Result<Self> {
        Self::from_metadata(TokenizerMetadata::from_gguf(g)?)
    }

    /// Builds a tokenizer from GGUF-style metadata values.
    pub fn from_metadata(md: TokenizerMetadata) -> Result<Self> {
        let n = md.tokens.len();
        if n == 0 {
            return Err(tok_err("`tokenizer.ggml.tokens` is empty"));
        }
        let types = match md.token_types {
            Some(t) if t.len() == n => t,
            Some(t) => {
                return Err(tok_err(format!(
                    "`tokenizer.ggml.token_type` has {} entries for {n} tokens",
                    t.len()
                )))
            }
            None => vec![TYPE_NORMAL; n],
        };
        for (key, id) in [
            ("bos", md.bos_id),
            ("eos", md.eos_id),
            ("unknown", md.unk_id),
        ] {
            if let Some(id) = id.filter(|&id| id as usize >= n) {
                return Err(tok_err(format!(
                    "`tokenizer.ggml.{key}_token_id` = {id} is outside the {n}-token vocabulary"
                )));
            }
        }
        let vocab: Vocab = md
            .tokens
            .iter()
            .enumerate()
            .map(|(i, t)| (t.clone(), i as u32))
            .collect();
        if vocab.len() != n {
            return Err(tok_err("`tokenizer.ggml.tokens` has duplicate entries"));
        }
        let unk = md.unk_id.map(|id| md.tokens[id as usize].clone());
        let missing = |key: &str| {
            let m = &md.model;
            tok_err(format!(
                "GGUF metadata key `tokenizer.ggml.{key}` is missing ({m} tokenizer)"
            ))
        };
        let (mut inner, pieces, default_add_bos) = match md.model.as_str() {
            "gpt2" => {
                let merges = md.merges.as_ref().ok_or_else(|| missing("merges"))?;
                let t = build_gpt2(vocab, merges, md.pre.as_deref())?;
                (t, Pieces::ByteLevel, false)
            }
            "llama" => {
                let scores = md.scores.as_ref().ok_or_else(|| missing("scores"))?;
                if scores.len() != n {
                    return Err(tok_err(format!(
                        "`tokenizer.ggml.scores` has {} entries for {n} tokens",
                        scores.len()
                    )));
                }
                let merges = spm_merges(&vocab, &types, scores, &md.tokens);
                let t = build_spm(vocab, merges, unk, md.add_space_prefix.unwrap_or(true))?;
                (t, Pieces::SentencePiece, true)
            }
            other => {
                return Err(tok_err(format!(
                    "unsupported `tokenizer.ggml.model` = `{other}` (supported: gpt2, llama)"
                )))
            }
        };
        let added = md
            .tokens
            .iter()
            .zip(&types)
            .filter_map(|(t, &ty)| match ty {
                TYPE_CONTROL | TYPE_UNKNOWN => Some(AddedToken::from(t.clone(), true)),
                TYPE_USER_DEFINED => Some(AddedToken::from(t.clone(), false)),
                _ => None,
            });
        let added: Vec<AddedToken> = added.map(|a| a.normalized(false)).collect();
        inner.add_tokens(added).map_err(tok_err)?;
        let verbatim = types
            .iter()
            .map(|&t| matches!(t, TYPE_CONTROL | TYPE_UNKNOWN | TYPE_USER_DEFINED))
            .collect();
        let byte_token = match pieces {
            Pieces::SentencePiece => byte_tokens(&md.tokens, |i| types[i] == TYPE_BYTE),
            _ => HashMap::new(),
        };
        let tok = Self {
            inner,
            literal: OnceLock::new(),
            tokens: md.tokens,
            verbatim,
            byte_token,
            pieces,
            bos: md.bos_id,
            eos: md.eos_id,
            add_bos: md.add_bos.unwrap_or(default_add_bos),
            stop_ids: md.extra_stop_ids,
        };
        Ok(tok.with_stop_ids())
    }

    /// Loads a Hugging Face `tokenizer.json`; BOS/EOS and `add_bos_token` come from a
    /// `tokenizer_config.json` beside it when present, else from well-known token names.
    pub fn from_file(path: &Path) -> Result<Self> {
        let read = |p: &Path| {
            std::fs::read_to_string(p).map_err(|source| LlmError::Io {
                path: p.to_path_buf(),
                source,
            })
        };
        let text = read(path)?;
        let bad = |e: &dyn std::fmt::Display| tok_err(format!("{}: {e}", path.display()));
        let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| bad(&e))?;
        let mut inner: tokenizers::Tokenizer = text.parse().map_err(|e| bad(&e))?;
        inner.with_padding(None);
        inner.with_truncation(None).map_err(|e| bad(&e))?;
        let vocab = inner.get_vocab(true);
        let n = vocab.values().max().map_or(0, |&m| m as usize + 1);
        let mut tokens = vec![String::new(); n];
        for (t, &id) in &vocab {
            tokens[id as usize] = t.clone();
        }
        let mut verbatim = vec![false; n];
        for &id in inner.get_added_tokens_decoder().keys() {
            if let Some(v) = verbatim.get_mut(id as usize) {
                *v = true;
            }
        }
        let decoder = json["decoder"].to_string();
        let pieces = if decoder.contains("\"ByteLevel\"") {
            Pieces::ByteLevel
        } else if decoder.contains("\"ByteFallback\"") || decoder.contains('▁') {
            Pieces::SentencePiece
        } else {
            Pieces::Raw
        };
        let byte_token = match pieces {
            Pieces::SentencePiece => byte_tokens(&tokens, |i| !verbatim[i]),
            _ => HashMap::new(),
        };
        let config_path = path.with_file_name("tokenizer_config.json");
        let config: serde_json::Value = if config_path.is_file() {
            serde_json::from_str(&read(&config_path)?).map_err(|e| bad(&e))?
        } else {
            serde_json::Value::Null
        };
        let named = |key: &str, fallbacks: &[&str]| -> Option<u32> {
            let v = &config[key];
            let name = v.as_str().or_else(|| v["content"].as_str());
            match name {
                Some(name) => inner.token_to_id(name),
                None => fallbacks.iter().find_map(|f| inner.token_to_id(f)),
            }
        };
        let bos = named("bos_token", BOS_NAMES);
        let eos = named("eos_token", EOS_NAMES);
        let post = json["post_processor"].to_string();
        let bos_text = bos.and_then(|b| tokens.get(b as usize)).cloned();
        let add_bos = config["add_bos_token"].as_bool().unwrap_or_else(|| {
            bos_text.is_some_and(|b| post.contains(&serde_json::Value::from(b).to_string()))
        });
        let tok = Self {
            inner,
            literal: OnceLock::new(),
            tokens,
            verbatim,
            byte_token,
            pieces,
            bos,
            eos,
            add_bos,
            stop_ids: Vec::new(),
        };
        Ok(tok.with_stop_ids())
    }

    /// Sets the stop ids: EOS, then those already listed (EOT/EOM), then special tokens named
    /// in [`STOP_NAMES`].
    fn with_stop_ids(mut self) -> Self {
        let extra = std::mem::take(&mut self.stop_ids);
        let named: Vec<u32> = STOP_NAMES
            .iter()
            .filter_map(|name| self.id_of(name))
            .filter(|&id| self.verbatim.get(id as usize) == Some(&true))
            .collect();
        for id in self.eos.into_iter().chain(extra).chain(named) {
            if (id as usize) < self.tokens.len() && !self.stop_ids.contains(&id) {
                self.stop_ids.push(id);
            }
        }
        self
    }

    /// Token ids of `text`, without BOS. With `parse_special`, special-token text (e.g.
    /// `<|im_start|>`) becomes the special token; without, it is tokenized as plain text
    /// (user-defined tokens such as Gemma's whitespace runs are matched either way, as in
    /// llama.cpp). The first call with `parse_special = false` clones the tokenizer once.
    pub fn encode(&self, text: &str, parse_special: bool) -> Result<Vec<u32>> {
        let tok = if parse_special {
            &self.inner
        } else {
            self.literal.get_or_init(|| {
                let mut t = self.inner.clone();
                t.set_encode_special_tokens(true);
                t
            })
        };
        let enc = tok.encode_fast(text, false).map_err(tok_err)?;
        Ok(enc.get_ids().to_vec())
    }

    /// Like [`encode`](Self::encode), with BOS in front when the model adds one
    /// ([`add_bos`](Self::add_bos)) and the text does not already start with it.
    pub fn encode_prompt(&self, text: &str, parse_special: bool) -> Result<Vec<u32>> {
        let mut ids = self.encode(text, parse_special)?;
        if let Some(bos) = self.bos.filter(|_| self.add_bos) {
            if ids.first() != Some(&bos) {
                ids.insert(0, bos);
            }
        }
        Ok(ids)
    }

    /// The text of `ids` (special tokens included as their text); invalid UTF-8 is replaced.
    pub fn decode(&self, ids: &[u32]) -> Result<String> {
        if let Some(bad) = ids.iter().find(|&&id| id as usize >= self.tokens.len()) {
            return Err(tok_err(format!(
                "token id {bad} is outside the {}-token vocabulary",
                self.tokens.len()
            )));
        }
        self.inner.decode(ids, false).map_err(tok_err)
    }

    /// The raw bytes token `id` stands for (empty for an unknown id): the byte of a byte
    /// fallback token, the unmapped bytes of a byte-level token, special tokens' text.
    /// Concatenating these gives the decoded text, so streams can cut at UTF-8 boundaries.
    pub fn token_bytes(&self, id: u32) -> Vec<u8> {
        let Some(text) = self.tokens.get(id as usize) else {
            return Vec::new();
        };
        if self.verbatim[id as usize] {
            return text.as_bytes().to_vec();
        }
        match self.pieces {
            Pieces::ByteLevel => {
                let mut out = Vec::with_capacity(text.len());
                for c in text.chars() {
                    match byte_level_byte(c) {
                        Some(b) => out.push(b),
                        None => out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
                    }
                }
                out
            }
            Pieces::SentencePiece => match self.byte_token.get(&id) {
                Some(&b) => vec![b],
                None => text.replace('▁', " ").into_bytes(),
            },
            Pieces::Raw => text.as_bytes().to_vec(),
        }
    }

    /// Whether token `id` is a special token whose bytes are its text verbatim (control,
    /// unknown, user-defined or added tokens; false for unknown ids).
    pub fn is_special(&self, id: u32) -> bool {
        self.verbatim.get(id as usize).copied().unwrap_or(false)
    }

    /// Number of token ids.
    pub fn vocab_size(&self) -> usize {
        self.tokens.len()
    }

    /// Beginning-of-sequence token.
    pub fn bos_id(&self) -> Option<u32> {
        self.bos
    }

    /// End-of-sequence token.
    pub fn eos_id(&self) -> Option<u32> {
        self.eos
    }

    /// Whether prompts start with BOS (`tokenizer.ggml.add_bos_token`; default: gpt2 no,
    /// llama yes).
    pub fn add_bos(&self) -> bool {
        self.add_bos && self.bos.is_some()
    }

    /// Tokens that end generation: EOS, EOT/EOM, and end-of-turn tokens such as `<|im_end|>`.
    pub fn stop_ids(&self) -> &[u32] {
        &self.stop_ids
    }

    /// The token that ends an assistant turn (`<|im_end|>`, `<end_of_turn>`, `<|eot_id|>`,
    /// `<|end|>`), else EOS: what `choose` scores after an option of a chat prompt.
    pub fn end_of_turn_id(&self) -> Option<u32> {
        ["<|im_end|>", "<end_of_turn>", "<|eot_id|>", "<|end|>"]
            .iter()
            .find_map(|t| self.id_of(t))
            .or(self.eos)
    }

    /// The ids `choose` scores for `option`: its tokens, then `terminator` (the end of turn
    /// after a chat prompt). An option with no tokens is an error.
    pub fn option_ids(&self, option: &str, terminator: Option<u32>) -> Result<Vec<u32>> {
        let mut ids = self.encode(option, false)?;
        if ids.is_empty() {
            return Err(LlmError::InvalidRequest(format!(
                "option {option:?} has no tokens"
            )));
        }
        ids.extend(terminator);
        Ok(ids)
    }

    /// The id of a token given its exact vocabulary text (e.g. `"<|im_end|>"`).
    pub fn id_of(&self, token: &str) -> Option<u32> {
        self.inner.token_to_id(token)
    }

    /// The vocabulary text of a token (byte-level or `▁`-escaped, as stored).
    pub fn token_str(&self, id: u32) -> Option<&str> {
        self.tokens.get(id as usize).map(String::as_str)
    }

    /// The underlying Hugging Face tokenizer.
    pub fn inner(&self) -> &tokenizers::Tokenizer {
        &self.inner
    }
}

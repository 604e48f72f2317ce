//! Building the Hugging Face tokenizers behind [`Tokenizer`](super::Tokenizer): byte-level
//! BPE (`gpt2`) and SentencePiece-style BPE (`llama`) from GGUF metadata, and the maps from
//! token text back to bytes.

use std::collections::HashMap;

use tokenizers::decoders::byte_fallback::ByteFallback;
use tokenizers::decoders::byte_level::ByteLevel;
use tokenizers::decoders::fuse::Fuse;
use tokenizers::decoders::sequence::Sequence as DecoderSequence;
use tokenizers::decoders::strip::Strip;
use tokenizers::decoders::DecoderWrapper;
use tokenizers::models::bpe::{Vocab, BPE};
use tokenizers::normalizers::{Prepend, Replace, Sequence as NormalizerSequence};
use tokenizers::pre_tokenizers::digits::Digits;
use tokenizers::pre_tokenizers::sequence::Sequence as PreSequence;
use tokenizers::pre_tokenizers::split::{Split, SplitPattern};
use tokenizers::pre_tokenizers::PreTokenizerWrapper;
use tokenizers::{NormalizerWrapper, SplitDelimiterBehavior};

use super::{tok_err, Result, TYPE_NORMAL};

/// llama.cpp's pre-tokenizer regex for Llama 3 (`llama-bpe`).
const LLAMA3_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";
/// llama.cpp's pre-tokenizer regex for Qwen2.
const QWEN2_REGEX: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

/// Byte-fallback tokens (`<0xHH>`) among the tokens selected by `keep`.
pub(super) fn byte_tokens(tokens: &[String], keep: impl Fn(usize) -> bool) -> HashMap<u32, u8> {
    let parse = |t: &str| {
        let hex = t.strip_prefix("<0x")?.strip_suffix('>')?;
        (hex.len() == 2).then(|| u8::from_str_radix(hex, 16).ok())?
    };
    tokens
        .iter()
        .enumerate()
        .filter(|&(i, _)| keep(i))
        .filter_map(|(i, t)| Some((i as u32, parse(t)?)))
        .collect()
}

/// The byte a GPT-2 byte-level character stands for (the inverse of `bytes_to_unicode`).
pub(super) fn byte_level_byte(c: char) -> Option<u8> {
    match c as u32 {
        b @ (33..=126 | 161..=172 | 174..=255) => Some(b as u8),
        // The other bytes (0..=32, 127..=160, 173) are mapped, in order, to 256, 257, ...
        k @ 256..=288 => Some((k - 256) as u8),
        k @ 289..=322 => Some((k - 289 + 127) as u8),
        323 => Some(173),
        _ => None,
    }
}

/// A byte-level BPE with the pre-tokenizer llama.cpp uses for `pre`.
pub(super) fn build_gpt2(
    vocab: Vocab,
    merges: &[String],
    pre: Option<&str>,
) -> Result<tokenizers::Tokenizer> {
    let merges = merges
        .iter()
        .map(|m| {
            m.split_once(' ')
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .ok_or_else(|| tok_err(format!("malformed merge `{m}` (expected `a b`)")))
        })
        .collect::<Result<Vec<_>>>()?;
    let split = |re: &str| -> Result<PreTokenizerWrapper> {
        let s = Split::new(
            SplitPattern::Regex(re.into()),
            SplitDelimiterBehavior::Isolated,
            false,
        );
        Ok(s.map_err(tok_err)?.into())
    };
    let byte_level = |regex: bool| PreTokenizerWrapper::from(ByteLevel::new(false, true, regex));
    let (pre_tok, ignore_merges) = match pre.unwrap_or("default") {
        "smollm" | "starcoder" | "refact" | "command-r" | "codeshell" | "exaone" | "minerva" => {
            (vec![Digits::new(true).into(), byte_level(true)], false)
        }
        "llama-bpe" | "llama3" | "falcon3" | "pixtral" | "dbrx" | "smaug-bpe" => {
            (vec![split(LLAMA3_REGEX)?, byte_level(false)], true)
        }
        "qwen2" | "deepseek-r1-qwen" | "megrez" => {
            (vec![split(QWEN2_REGEX)?, byte_level(false)], false)
        }
        "gpt-2" | "gpt2" | "default" => (vec![byte_level(true)], false),
        other => {
            tracing::warn!("unknown tokenizer.ggml.pre `{other}`: using the GPT-2 pre-tokenizer");
            (vec![byte_level(true)], false)
        }
    };
    let bpe = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .ignore_merges(ignore_merges)
        .build()
        .map_err(tok_err)?;
    let mut t = tokenizers::Tokenizer::new(bpe);
    t.with_pre_tokenizer(Some(PreSequence::new(pre_tok)));
    t.with_decoder(Some(ByteLevel::default()));
    Ok(t)
}

/// Merges of a SentencePiece vocabulary: every split of a normal token into two normal tokens,
/// best score first (llama.cpp merges the adjacent pair whose union scores highest).
pub(super) fn spm_merges(
    vocab: &Vocab,
    types: &[i64],
    scores: &[f32],
    tokens: &[String],
) -> Vec<(String, String)> {
    let normal = |t: &str| {
        vocab
            .get(t)
            .is_some_and(|&id| types[id as usize] == TYPE_NORMAL)
    };
    let mut found: Vec<(f32, u32, usize)> = Vec::new();
    for (text, &id) in vocab {
        if types[id as usize] != TYPE_NORMAL {
            continue;
        }
        for (split, _) in text.char_indices().skip(1) {
            if normal(&text[..split]) && normal(&text[split..]) {
                found.push((scores[id as usize], id, split));
            }
        }
    }
    found.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)).then(a.2.cmp(&b.2)));
    found
        .into_iter()
        .map(|(_, id, split)| {
            let t = &tokens[id as usize];
            (t[..split].to_string(), t[split..].to_string())
        })
        .collect()
}

/// A SentencePiece-style BPE: spaces escaped as `▁`, byte fallback, decoder that reverses it.
pub(super) fn build_spm(
    vocab: Vocab,
    merges: Vec<(String, String)>,
    unk: Option<String>,
    add_space_prefix: bool,
) -> Result<tokenizers::Tokenizer> {
    let mut builder = BPE::builder()
        .vocab_and_merges(vocab, merges)
        .byte_fallback(true)
        .fuse_unk(true);
    if let Some(unk) = unk {
        builder = builder.unk_token(unk);
    }
    let bpe = builder.build().map_err(tok_err)?;
    let mut t = tokenizers::Tokenizer::new(bpe);
    let replace: NormalizerWrapper = Replace::new(" ", "▁").map_err(tok_err)?.into();
    let normalizer = if add_space_prefix {
        NormalizerSequence::new(vec![Prepend::new("▁".into()).into(), replace]).into()
    } else {
        replace
    };
    t.with_normalizer(Some(normalizer)).map_err(tok_err)?;
    let mut decoders: Vec<DecoderWrapper> = vec![
        Replace::new("▁", " ").map_err(tok_err)?.into(),
        ByteFallback::new().into(),
        Fuse::new().into(),
    ];
    if add_space_prefix {
        decoders.push(Strip::new(' ', 1, 0).into());
    }
    t.with_decoder(Some(DecoderSequence::new(decoders)));
    Ok(t)
}

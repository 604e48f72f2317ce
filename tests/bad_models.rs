//! Corrupt copies of the real SmolLM2 GGUF: truncations at structural offsets, a wrong magic
//! and version, header counts, metadata key and string lengths, array counts and type tags set
//! to absurd values, a wrong architecture, tokenizer keys missing, tensor directory entries
//! broken. Each load must fail with an error naming the file (or, for a harmless change, load
//! and answer a request), never panic, hang or allocate gigabytes.
//!
//! The loads run in a child process (this test re-run alone) so that its peak RSS is theirs
//! alone, each load in its own thread under `catch_unwind`. `tests/engine.rs`
//! (`bad_model_files_are_clear_errors`) checks a few plain truncations and a foreign
//! architecture; this covers the file's structure.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use humanoid::llm::{Engine, EngineOptions, GenerateRequest, Message, Prompt};

use crate::util;

/// Set in the child process that does the loads.
const CHILD: &str = "HUMANOID_BAD_MODELS_CHILD";
/// The most a load may raise the peak RSS.
const MAX_GROWTH: u64 = 1536 << 20;
/// The longest a load (and, if it loads, one short request) may take.
const MAX_SECONDS: u64 = 180;

/// One metadata entry of the file: where its parts are.
#[derive(Debug)]
struct Kv {
    key: String,
    /// Offset of the u64 key length.
    at: u64,
    /// Offset of the u32 value type.
    type_at: u64,
    /// Offset of the value (a string's u64 length; an array's u32 element type).
    value_at: u64,
    /// An array's element type and count.
    array: Option<(u32, u64)>,
}

/// One tensor directory entry.
#[derive(Debug)]
struct Ti {
    name: String,
    /// Offset of the u64 name length.
    at: u64,
    ndims_at: u64,
    dims: Vec<u64>,
    dtype_at: u64,
    offset_at: u64,
}

/// Where everything is in the GGUF file.
#[derive(Debug)]
struct Layout {
    len: u64,
    kvs: Vec<Kv>,
    tensors: Vec<Ti>,
    /// End of the tensor directory (before the alignment padding).
    info_end: u64,
    /// Start of the tensor data (aligned).
    data_start: u64,
}

impl Layout {
    fn kv(&self, key: &str) -> &Kv {
        self.kvs
            .iter()
            .find(|k| k.key == key)
            .unwrap_or_else(|| panic!("the model has no metadata key {key}"))
    }
    fn tensor(&self, name: &str) -> &Ti {
        self.tensors
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("the model has no tensor {name}"))
    }
}

/// Walks the header, metadata and tensor directory of a GGUF v3 file (an independent reader:
/// only what this test needs).
fn layout(path: &Path) -> Layout {
    let len = std::fs::metadata(path).unwrap().len();
    let mut head = Vec::new();
    File::open(path)
        .unwrap()
        .take(8 << 20)
        .read_to_end(&mut head)
        .unwrap();
    let mut pos = 0usize;
    let u32_at = |p: &mut usize| {
        let v = u32::from_le_bytes(head[*p..*p + 4].try_into().unwrap());
        *p += 4;
        v
    };
    let u64_at = |p: &mut usize| {
        let v = u64::from_le_bytes(head[*p..*p + 8].try_into().unwrap());
        *p += 8;
        v
    };
    let string = |p: &mut usize| {
        let n = u64_at(p) as usize;
        let s = String::from_utf8_lossy(&head[*p..*p + n]).into_owned();
        *p += n;
        s
    };
    assert_eq!(&head[..4], b"GGUF");
    pos += 4;
    assert_eq!(u32_at(&mut pos), 3, "a GGUF v3 file");
    let n_tensors = u64_at(&mut pos);
    let n_kv = u64_at(&mut pos);
    fn skip_value(t: u32, p: &mut usize, head: &[u8]) {
        let size = match t {
            0 | 1 | 7 => 1,
            2 | 3 => 2,
            4..=6 => 4,
            10..=12 => 8,
            8 => 8 + u64::from_le_bytes(head[*p..*p + 8].try_into().unwrap()) as usize,
            9 => {
                let et = u32::from_le_bytes(head[*p..*p + 4].try_into().unwrap());
                let n = u64::from_le_bytes(head[*p + 4..*p + 12].try_into().unwrap());
                *p += 12;
                for _ in 0..n {
                    skip_value(et, p, head);
                }
                0
            }
            _ => panic!("value type {t}"),
        };
        *p += size;
    }
    let mut kvs = Vec::new();
    let mut alignment = 32;
    for _ in 0..n_kv {
        let at = pos as u64;
        let key = string(&mut pos);
        let type_at = pos as u64;
        let t = u32_at(&mut pos);
        let value_at = pos as u64;
        let array = (t == 9).then(|| {
            let mut p = pos;
            (u32_at(&mut p), u64_at(&mut p))
        });
        if key == "general.alignment" {
            alignment = u32::from_le_bytes(head[pos..pos + 4].try_into().unwrap()) as u64;
        }
        skip_value(t, &mut pos, &head);
        kvs.push(Kv {
            key,
            at,
            type_at,
            value_at,
            array,
        });
    }
    let mut tensors = Vec::new();
    for _ in 0..n_tensors {
        let at = pos as u64;
        let name = string(&mut pos);
        let ndims_at = pos as u64;
        let nd = u32_at(&mut pos);
        let dims = (0..nd).map(|_| u64_at(&mut pos)).collect();
        let dtype_at = pos as u64;
        u32_at(&mut pos);
        let offset_at = pos as u64;
        u64_at(&mut pos);
        tensors.push(Ti {
            name,
            at,
            ndims_at,
            dims,
            dtype_at,
            offset_at,
        });
    }
    let info_end = pos as u64;
    Layout {
        len,
        kvs,
        tensors,
        info_end,
        data_start: info_end.div_ceil(alignment) * alignment,
    }
}

/// How a variant is made from the original file.
enum Edit {
    /// The first `n` bytes.
    Cut(u64),
    /// These bytes written over the original at these offsets.
    Patch(Vec<(u64, Vec<u8>)>),
}

/// What loading a variant may give.
#[derive(Clone, Copy, PartialEq)]
enum Expect {
    /// An error whose text contains each of these words (and the file name).
    Err(&'static [&'static str]),
    /// An error naming the file, or a model that loads and answers.
    Either,
    /// A harmless change: the model loads and answers.
    Loads,
}

struct Variant {
    name: String,
    edit: Edit,
    expect: Expect,
}

fn le32(v: u32) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

fn le64(v: u64) -> Vec<u8> {
    v.to_le_bytes().to_vec()
}

/// Every variant of the file at `l`.
fn variants(l: &Layout) -> Vec<Variant> {
    use Expect::{Either, Err as E, Loads};
    let mut v = Vec::new();
    let mut cut = |name: &str, n: u64, expect: Expect| {
        v.push(Variant {
            name: format!("cut-{name}-{n}"),
            edit: Edit::Cut(n),
            expect,
        })
    };
    let tokens = l.kv("tokenizer.ggml.tokens");
    let merges = l.kv("tokenizer.ggml.merges");
    let types = l.kv("tokenizer.ggml.token_type");
    let name = l.kv("general.name");
    let template = l.kv("tokenizer.chat_template");
    let first_t = &l.tensors[0];
    let mid_t = &l.tensors[l.tensors.len() / 2];
    for (what, n) in [
        ("empty", 0),
        ("in-magic", 3),
        ("after-magic", 4),
        ("after-version", 8),
        ("in-tensor-count", 12),
        ("in-kv-count", 20),
        ("after-header", 24),
        ("in-first-key-length", 28),
        ("in-first-key", l.kvs[0].at + 8 + 5),
        ("in-first-type", l.kvs[0].type_at + 2),
        ("in-a-string-length", name.value_at + 3),
        ("in-a-string", name.value_at + 8 + 4),
        ("in-array-header", tokens.value_at + 6),
        ("in-token-list", tokens.value_at + 12 + 100_000),
        ("in-token-types", types.value_at + 12 + 1001),
        ("in-merges", merges.value_at + 12 + 300_000),
        ("in-chat-template", template.value_at + 8 + 100),
        ("at-tensor-directory", l.tensors[0].at),
        ("in-first-tensor-name", first_t.at + 10),
        ("in-tensor-dims", mid_t.ndims_at + 6),
        ("in-tensor-offset", mid_t.offset_at + 4),
        ("just-before-data", l.data_start - 1),
        ("at-data", l.data_start),
        ("in-first-tensor", l.data_start + 1000),
        ("in-last-tensor", l.len - 1000),
        ("last-byte-missing", l.len - 1),
    ] {
        cut(what, n, E(&[]));
    }
    if l.info_end < l.data_start {
        cut("before-padding", l.info_end, E(&[]));
    }
    let mut patch = |name: &str, edits: Vec<(u64, Vec<u8>)>, expect: Expect| {
        v.push(Variant {
            name: name.to_string(),
            edit: Edit::Patch(edits),
            expect,
        })
    };
    const HUGE: u64 = 0xFFFF_FFFF_FFFF;
    // Header.
    patch("magic-ggml", vec![(0, b"GGML".to_vec())], E(&["magic"]));
    patch("magic-zero", vec![(0, vec![0; 4])], E(&["magic"]));
    patch("magic-swapped", vec![(0, b"FUGG".to_vec())], E(&["magic"]));
    patch("version-1", vec![(4, le32(1))], E(&["version"]));
    patch("version-4", vec![(4, le32(4))], E(&["version"]));
    patch("version-max", vec![(4, le32(u32::MAX))], E(&["version"]));
    patch("tensor-count-huge", vec![(8, le64(HUGE))], E(&["tensors"]));
    patch(
        "tensor-count-max",
        vec![(8, le64(u64::MAX))],
        E(&["tensors"]),
    );
    patch("tensor-count-zero", vec![(8, le64(0))], Either);
    patch(
        "tensor-count-plus-one",
        vec![(8, le64(l.tensors.len() as u64 + 1))],
        E(&[]),
    );
    patch(
        "tensor-count-minus-one",
        vec![(8, le64(l.tensors.len() as u64 - 1))],
        Either,
    );
    patch("kv-count-huge", vec![(16, le64(HUGE))], E(&["metadata"]));
    patch("kv-count-zero", vec![(16, le64(0))], E(&[]));
    patch(
        "kv-count-plus-one",
        vec![(16, le64(l.kvs.len() as u64 + 1))],
        E(&[]),
    );
    // Metadata: key lengths, type tags, string lengths, array headers.
    let arch = l.kv("general.architecture");
    patch("key-length-huge", vec![(arch.at, le64(HUGE))], E(&["key"]));
    patch("key-length-zero", vec![(arch.at, le64(0))], E(&[]));
    patch("key-length-plus-one", vec![(arch.at, le64(21))], E(&[]));
    patch(
        "key-length-of-a-later-key-huge",
        vec![(template.at, le64(HUGE))],
        E(&["key"]),
    );
    patch(
        "type-tag-unknown",
        vec![(arch.type_at, le32(13))],
        E(&["type"]),
    );
    patch(
        "type-tag-max",
        vec![(arch.type_at, le32(u32::MAX))],
        E(&["type"]),
    );
    patch(
        "type-tag-array-for-a-string",
        vec![(arch.type_at, le32(9))],
        E(&[]),
    );
    patch(
        "type-tag-u32-for-a-string",
        vec![(arch.type_at, le32(4))],
        E(&[]),
    );
    let blocks = l.kv("llama.block_count");
    patch(
        "type-tag-string-for-a-u32",
        vec![(blocks.type_at, le32(8))],
        E(&[]),
    );
    patch(
        "type-tag-u64-for-a-u32",
        vec![(blocks.type_at, le32(10))],
        E(&[]),
    );
    patch(
        "string-length-huge",
        vec![(arch.value_at, le64(HUGE))],
        E(&["string"]),
    );
    patch(
        "string-length-max",
        vec![(arch.value_at, le64(u64::MAX))],
        E(&["string"]),
    );
    patch("string-length-zero", vec![(arch.value_at, le64(0))], E(&[]));
    patch(
        "template-length-huge",
        vec![(template.value_at, le64(HUGE))],
        E(&["string"]),
    );
    patch(
        "template-length-short",
        vec![(template.value_at, le64(10))],
        E(&[]),
    );
    patch(
        "token-count-huge",
        vec![(tokens.value_at + 4, le64(HUGE))],
        E(&["array"]),
    );
    patch(
        "token-count-max",
        vec![(tokens.value_at + 4, le64(u64::MAX))],
        E(&["array"]),
    );
    patch(
        "token-count-zero",
        vec![(tokens.value_at + 4, le64(0))],
        E(&[]),
    );
    patch(
        "token-count-minus-one",
        vec![(tokens.value_at + 4, le64(tokens.array.unwrap().1 - 1))],
        E(&[]),
    );
    patch(
        "first-token-length-huge",
        vec![(tokens.value_at + 12, le64(HUGE))],
        E(&["string"]),
    );
    patch(
        "token-element-type-nested-array",
        vec![(tokens.value_at, le32(9))],
        E(&[]),
    );
    patch(
        "token-element-type-unknown",
        vec![(tokens.value_at, le32(77))],
        E(&["type"]),
    );
    patch(
        "token-element-type-u8",
        vec![(tokens.value_at, le32(0))],
        E(&[]),
    );
    patch(
        "token-type-count-huge",
        vec![(types.value_at + 4, le64(HUGE))],
        E(&["array"]),
    );
    patch(
        "merge-count-huge",
        vec![(merges.value_at + 4, le64(HUGE))],
        E(&["array"]),
    );
    // Same-length rewrites of keys and values.
    patch(
        "architecture-qwen2",
        vec![(arch.value_at + 8, b"qwen2".to_vec())],
        E(&["qwen2"]),
    );
    patch(
        "architecture-gemma",
        vec![(arch.value_at + 8, b"gemma".to_vec())],
        E(&["gemma"]),
    );
    let rename = |kv: &Kv, to: &str| {
        assert_eq!(kv.key.len(), to.len(), "{to}");
        vec![(kv.at + 8, to.as_bytes().to_vec())]
    };
    patch(
        "tokens-missing",
        rename(tokens, "tokenizer.ggml.tokenz"),
        E(&["tokenizer.ggml.tokens"]),
    );
    patch(
        "merges-missing",
        rename(merges, "tokenizer.ggml.mergez"),
        E(&["tokenizer.ggml.merges"]),
    );
    let model = l.kv("tokenizer.ggml.model");
    patch(
        "tokenizer-model-missing",
        rename(model, "tokenizer.ggml.modex"),
        E(&["tokenizer.ggml.model"]),
    );
    patch(
        "tokenizer-model-unknown",
        vec![(model.value_at + 8, b"bpe?".to_vec())],
        E(&["bpe?"]),
    );
    patch(
        "token-types-missing",
        rename(types, "tokenizer.ggml.token_typx"),
        Loads,
    );
    patch(
        "chat-template-missing",
        rename(template, "tokenizer.chat_templatx"),
        Loads,
    );
    patch(
        "architecture-missing",
        rename(arch, "general.architecturx"),
        E(&["general.architecture"]),
    );
    let eos = l.kv("tokenizer.ggml.eos_token_id");
    patch(
        "eos-id-outside-vocabulary",
        vec![(eos.value_at, le32(49152))],
        E(&["eos_token_id"]),
    );
    let bos = l.kv("tokenizer.ggml.bos_token_id");
    patch(
        "bos-id-max",
        vec![(bos.value_at, le32(u32::MAX))],
        E(&["bos_token_id"]),
    );
    // Hyper-parameters.
    let u32_kv = |key: &str, v: u32| vec![(l.kv(key).value_at, le32(v))];
    patch(
        "block-count-max",
        u32_kv("llama.block_count", u32::MAX),
        E(&["block_count"]),
    );
    patch(
        "block-count-plus-one",
        u32_kv("llama.block_count", 31),
        E(&["blk.30"]),
    );
    patch(
        "block-count-zero",
        u32_kv("llama.block_count", 0),
        E(&["block_count"]),
    );
    patch(
        "embedding-length-zero",
        u32_kv("llama.embedding_length", 0),
        E(&[]),
    );
    patch(
        "embedding-length-huge",
        u32_kv("llama.embedding_length", 0xFFFF_FFE0),
        E(&[]),
    );
    patch(
        "embedding-length-odd",
        u32_kv("llama.embedding_length", 577),
        E(&[]),
    );
    patch(
        "ffn-length-huge",
        u32_kv("llama.feed_forward_length", 0xFFFF_FFE0),
        E(&[]),
    );
    patch(
        "ffn-length-zero",
        u32_kv("llama.feed_forward_length", 0),
        E(&[]),
    );
    patch(
        "heads-zero",
        u32_kv("llama.attention.head_count", 0),
        E(&["heads"]),
    );
    patch(
        "heads-huge",
        u32_kv("llama.attention.head_count", u32::MAX),
        E(&[]),
    );
    patch(
        "heads-576",
        u32_kv("llama.attention.head_count", 576),
        E(&[]),
    );
    patch(
        "kv-heads-zero",
        u32_kv("llama.attention.head_count_kv", 0),
        E(&[]),
    );
    patch(
        "kv-heads-two",
        u32_kv("llama.attention.head_count_kv", 2),
        E(&[]),
    );
    patch("context-zero", u32_kv("llama.context_length", 0), Either);
    patch(
        "context-max",
        u32_kv("llama.context_length", u32::MAX),
        Loads,
    );
    let eps = l.kv("llama.attention.layer_norm_rms_epsilon");
    patch(
        "epsilon-nan",
        vec![(eps.value_at, f32::NAN.to_le_bytes().to_vec())],
        Either,
    );
    let rope = l.kv("llama.rope.freq_base");
    patch(
        "rope-base-zero",
        vec![(rope.value_at, 0f32.to_le_bytes().to_vec())],
        Either,
    );
    // A key renamed to general.alignment (same length), with a bad and a good value.
    assert_eq!("llama.block_count".len(), "general.alignment".len());
    patch(
        "alignment-zero",
        vec![
            (blocks.at + 8, b"general.alignment".to_vec()),
            (blocks.value_at, le32(0)),
        ],
        E(&["alignment"]),
    );
    patch(
        "alignment-three",
        vec![
            (blocks.at + 8, b"general.alignment".to_vec()),
            (blocks.value_at, le32(3)),
        ],
        E(&["alignment"]),
    );
    patch(
        "alignment-huge",
        vec![
            (blocks.at + 8, b"general.alignment".to_vec()),
            (blocks.value_at, le32(1 << 31)),
        ],
        E(&[]),
    );
    // Tensor directory.
    let embd = l.tensor("token_embd.weight");
    let norm = l.tensor("blk.0.attn_norm.weight");
    let last = l.tensors.last().unwrap();
    patch(
        "tensor-name-length-huge",
        vec![(embd.at, le64(HUGE))],
        E(&["name"]),
    );
    patch("tensor-name-length-zero", vec![(norm.at, le64(0))], E(&[]));
    patch(
        "tensor-dims-five",
        vec![(embd.ndims_at, le32(5))],
        E(&["dimensions"]),
    );
    patch(
        "tensor-dims-max",
        vec![(embd.ndims_at, le32(u32::MAX))],
        E(&["dimensions"]),
    );
    patch("tensor-dims-zero", vec![(norm.ndims_at, le32(0))], E(&[]));
    patch(
        "tensor-dim-zero",
        vec![(embd.ndims_at + 4, le64(0))],
        E(&[]),
    );
    patch(
        "tensor-dim-huge",
        vec![(embd.ndims_at + 12, le64(HUGE))],
        E(&[]),
    );
    patch(
        "tensor-dim-max",
        vec![
            (embd.ndims_at + 4, le64(u64::MAX)),
            (embd.ndims_at + 12, le64(u64::MAX)),
        ],
        E(&[]),
    );
    patch(
        "tensor-dim-plus-one",
        vec![(embd.ndims_at + 12, le64(embd.dims[1] + 1))],
        E(&["token_embd.weight"]),
    );
    patch(
        "tensor-dim-not-a-block-multiple",
        vec![(embd.ndims_at + 4, le64(embd.dims[0] - 1))],
        E(&["token_embd.weight"]),
    );
    patch(
        "tensor-type-unknown",
        vec![(embd.dtype_at, le32(99))],
        E(&[]),
    );
    patch(
        "tensor-type-max",
        vec![(embd.dtype_at, le32(u32::MAX))],
        E(&[]),
    );
    patch(
        "tensor-type-f32-for-q8",
        vec![(embd.dtype_at, le32(0))],
        E(&["token_embd.weight"]),
    );
    patch(
        "tensor-offset-huge",
        vec![(last.offset_at, le64(HUGE))],
        E(&[]),
    );
    patch(
        "tensor-offset-max",
        vec![(last.offset_at, le64(u64::MAX - 8))],
        E(&[]),
    );
    patch(
        "tensor-offset-past-end",
        vec![(last.offset_at, le64(l.len - l.data_start))],
        E(&[]),
    );
    patch(
        "tensor-offset-overlapping",
        vec![(norm.offset_at, le64(0))],
        Either,
    );
    // Tensor data: NaN scales are caught; other garbage weights still load.
    assert_eq!(embd.offset_at, l.tensors[0].offset_at);
    patch(
        "tensor-data-nan-scales",
        vec![(l.data_start + 4096, vec![0xFF; 4096])],
        E(&["token_embd.weight"]),
    );
    patch(
        "tensor-data-flipped-quants",
        // Q8_0 blocks of token_embd (34 bytes: an f16 scale, 32 quants): quants only.
        (0..64)
            .map(|b| (l.data_start + b * 34 + 2, vec![0x5a; 32]))
            .collect(),
        Loads,
    );
    v
}

/// Peak and current RSS of this process in bytes.
fn rss() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .map_or(0, |kb| kb * 1024)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// Resets the peak RSS to the current RSS (Linux 4.0+); false if not allowed.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// What one load gave.
enum Outcome {
    Loaded(String),
    Failed(String),
    Panicked(String),
    Hung,
}

/// Loads `path` in a thread under `catch_unwind`; a model that loads answers one short
/// request (which may fail, but not panic).
fn load(path: &Path) -> Outcome {
    let (tx, rx) = mpsc::channel();
    let p = path.to_path_buf();
    std::thread::spawn(move || {
        let r = catch_unwind(AssertUnwindSafe(|| {
            match Engine::load(&p, EngineOptions::default()) {
                Err(e) => Err(e.to_string()),
                Ok(mut engine) => {
                    let req = GenerateRequest::new(Prompt::Chat(vec![Message::user("Hi")]), 2);
                    Ok(match engine.generate(req) {
                        Ok(g) => format!("generated {:?}", g.text),
                        Err(e) => format!("request failed: {e}"),
                    })
                }
            }
        }));
        let outcome = match r {
            Ok(Ok(s)) => Outcome::Loaded(s),
            Ok(Err(e)) => Outcome::Failed(e),
            Err(p) => Outcome::Panicked(
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default(),
            ),
        };
        let _ = tx.send(outcome);
    });
    rx.recv_timeout(Duration::from_secs(MAX_SECONDS))
        .unwrap_or(Outcome::Hung)
}

/// Writes the first `n` bytes of `src` to `dst`.
fn write_prefix(src: &Path, dst: &Path, n: u64) {
    let mut out = File::create(dst).unwrap();
    std::io::copy(&mut File::open(src).unwrap().take(n), &mut out).unwrap();
    assert_eq!(out.metadata().unwrap().len(), n);
}

/// Writes `edits` over `path`, returning what they replaced.
fn patch(path: &Path, edits: &[(u64, Vec<u8>)]) -> Vec<(u64, Vec<u8>)> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .unwrap();
    edits
        .iter()
        .map(|(at, bytes)| {
            let mut old = vec![0; bytes.len()];
            f.read_exact_at(&mut old, *at).unwrap();
            f.write_all_at(bytes, *at).unwrap();
            (*at, old)
        })
        .collect()
}

/// Runs every variant and returns a line per failure, printing a line per variant.
fn run_variants(original: &Path) -> Vec<String> {
    let l = layout(original);
    assert!(
        l.data_start >= l.info_end && l.data_start < l.len,
        "data at {}, directory ends at {}",
        l.data_start,
        l.info_end
    );
    let dir = tempfile::tempdir().unwrap();
    let mut work = dir.path().join("work.gguf");
    std::fs::copy(original, &work).unwrap();
    let resets = reset_peak();
    let (baseline, _) = rss();
    let mut failures = Vec::new();
    for v in variants(&l) {
        let path: PathBuf = dir.path().join(format!("{}.gguf", v.name));
        let restore = match &v.edit {
            Edit::Cut(n) => {
                write_prefix(original, &path, *n);
                None
            }
            Edit::Patch(edits) => {
                std::fs::rename(&work, &path).unwrap();
                work = path.clone();
                Some(patch(&path, edits))
            }
        };
        print!("{:<40} ", v.name);
        std::io::stdout().flush().ok();
        if resets {
            reset_peak();
        }
        let (_, before) = rss();
        let started = Instant::now();
        let outcome = load(&path);
        let secs = started.elapsed().as_secs_f64();
        let (peak, _) = rss();
        let growth = peak.saturating_sub(if resets { before } else { baseline });
        let shown = path.display().to_string();
        let mut fail = |why: String| failures.push(format!("{}: {why}", v.name));
        match (&outcome, v.expect) {
            (Outcome::Panicked(msg), _) => fail(format!("panicked: {msg}")),
            (Outcome::Hung, _) => fail(format!("no answer within {MAX_SECONDS} s")),
            (Outcome::Loaded(what), Expect::Err(_)) => {
                fail(format!("loaded ({what}) but should fail"))
            }
            (Outcome::Loaded(what), Expect::Loads) if !what.starts_with("generated") => {
                fail(format!("loaded but does not answer: {what}"))
            }
            (Outcome::Failed(e), Expect::Loads) => fail(format!("should load: {e}")),
            (Outcome::Failed(e), expect) => {
                if !e.contains(&shown) {
                    fail(format!("the error does not name the file {shown}: {e}"));
                }
                if e.contains('\n') {
                    fail(format!("the error spans lines: {e}"));
                }
                if let Expect::Err(words) = expect {
                    for w in words {
                        if !e.contains(w) {
                            fail(format!("the error does not say {w:?}: {e}"));
                        }
                    }
                }
            }
            _ => {}
        }
        if growth > MAX_GROWTH {
            failures.push(format!(
                "{}: peak RSS grew by {} MiB (limit {} MiB)",
                v.name,
                growth >> 20,
                MAX_GROWTH >> 20
            ));
        }
        let result = match &outcome {
            Outcome::Loaded(s) => format!("loaded: {s}"),
            Outcome::Failed(e) => format!("error: {}", e.replace(&shown, "FILE")),
            Outcome::Panicked(m) => format!("PANIC: {m}"),
            Outcome::Hung => "HUNG".to_string(),
        };
        println!("{secs:6.2}s {:5} MiB  {result}", growth >> 20);
        match restore {
            Some(old) => {
                patch(&path, &old);
            }
            None => std::fs::remove_file(&path).unwrap(),
        }
        if matches!(outcome, Outcome::Hung) {
            break; // the thread still holds the file
        }
    }
    // The restored copy is the original again.
    assert_eq!(
        std::fs::metadata(&work).unwrap().len(),
        l.len,
        "the working copy was restored"
    );
    println!("baseline peak RSS {} MiB", baseline >> 20);
    failures
}

#[test]
fn corrupt_copies_of_smollm2_fail_cleanly() {
    let original = util::smollm2();
    if std::env::var_os(CHILD).is_some() {
        let failures = run_variants(&original);
        assert!(
            failures.is_empty(),
            "{} variants misbehaved:\n{}",
            failures.len(),
            failures.join("\n")
        );
        return;
    }
    // Re-run this test alone in a fresh process, so that the peak RSS is its own.
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "bad_models::corrupt_copies_of_smollm2_fail_cleanly",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, "1")
        // Candle appends a backtrace to its errors then: they must not leak into ours.
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the test binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success() && stdout.contains("1 passed"),
        "the loads failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
}

/// The reader above finds what the variants target (so each edits what its name says).
#[test]
fn the_layout_reader_finds_the_structure() {
    let l = layout(&util::smollm2());
    assert_eq!(l.kvs[0].key, "general.architecture");
    assert_eq!(l.kvs[0].at, 24);
    assert_eq!(l.kv("tokenizer.ggml.tokens").array, Some((8, 49152)));
    assert_eq!(l.tensors.len(), 272);
    assert_eq!(l.tensor("token_embd.weight").dims, [576, 49152]);
    assert_eq!(l.data_start % 32, 0);
    let mut b = [0u8; 8];
    let f = File::open(util::smollm2()).unwrap();
    f.read_exact_at(&mut b[..5], l.kv("general.architecture").value_at + 8)
        .unwrap();
    assert_eq!(&b[..5], b"llama");
    // The tensor directory's offsets are relative to the aligned data start.
    let mut f = f;
    f.seek(SeekFrom::Start(l.tensor("output_norm.weight").offset_at))
        .unwrap();
    let mut off = [0u8; 8];
    f.read_exact(&mut off).unwrap();
    assert!(l.data_start + u64::from_le_bytes(off) + 576 * 4 <= l.len);
}

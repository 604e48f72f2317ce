//! `humanoid bench memory`: sentence-embedding throughput, and retrieval latency and
//! recall@10 of the HNSW index against exact search at several memory counts.
//!
//! The memories are real embeddings of varied synthetic memory sentences. Embedding 100k
//! sentences takes minutes on a small CPU, so the vectors are cached on disk between runs
//! (`--cache`), keyed by the embedding model's folder and the sentence seed.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use humanoid::embed::Embedder;
use humanoid::memory::index::{IndexConfig, VectorIndex};
use humanoid::memory::synthetic::memory_sentences;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

#[derive(Args, Debug)]
pub struct BenchMemoryArgs {
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Memory counts to measure retrieval at.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000")]
    pub sizes: Vec<usize>,
    /// Queries per size.
    #[arg(long, default_value_t = 100)]
    pub queries: usize,
    /// Where embedded memories are cached between runs.
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// HNSW search breadths to measure (one result row per size and value).
    #[arg(long, value_delimiter = ',', default_value = "16,64")]
    pub ef_search: Vec<usize>,
    /// A BERT-style sentence-transformer folder (default: the default embedding model).
    #[arg(long)]
    pub embed_model: Option<String>,
}

const SEED: u64 = 2024;
const QUERY_SEED: u64 = 77;

pub fn run(a: BenchMemoryArgs) -> Result<()> {
    let mut embedder = match &a.embed_model {
        Some(spec) => Embedder::load_spec(
            &humanoid::model_store::ModelSpec::parse(spec)?,
            &humanoid::model_store::models_dir(),
            true,
        ),
        None => Embedder::load_default(true),
    }
    .context("loading the embedding model")?;
    let dim = embedder.dim();
    let bar_style =
        ProgressStyle::with_template("{msg:<28} [{bar:30}] {pos}/{len} {elapsed} eta {eta}")?;
    let new_bar = |n: usize, msg: &str| {
        let b = if a.json {
            ProgressBar::hidden()
        } else {
            ProgressBar::new(n as u64)
        };
        b.set_style(bar_style.clone());
        b.set_message(msg.to_string());
        b
    };

    // Embedding throughput, model run every time (no cache).
    let sample = memory_sentences(SEED ^ 0x5eed, 256);
    let refs: Vec<&str> = sample.iter().map(String::as_str).collect();
    let mut per_s = serde_json::Map::new();
    for batch in [1usize, 32] {
        embedder.set_max_batch(batch);
        let n = if batch == 1 { 64 } else { refs.len() };
        let t = Instant::now();
        if batch == 1 {
            for r in &refs[..n] {
                embedder.embed_uncached(&[r])?;
            }
        } else {
            embedder.embed_uncached(&refs[..n])?;
        }
        per_s.insert(
            batch.to_string(),
            json!(round(n as f64 / t.elapsed().as_secs_f64())),
        );
    }
    embedder.set_max_batch(32);

    // Memory vectors, from the cache where possible.
    let largest = a.sizes.iter().copied().max().unwrap_or(0);
    let cache = a.cache.clone().unwrap_or_else(|| default_cache(&embedder));
    let mut vectors = read_cache(&cache, dim).unwrap_or_default();
    if vectors.len() < largest * dim {
        let have = vectors.len() / dim;
        let texts = memory_sentences(SEED, largest);
        let bar = new_bar(largest - have, "embedding memories");
        for chunk in texts[have..].chunks(256) {
            let refs: Vec<&str> = chunk.iter().map(String::as_str).collect();
            for v in embedder.embed_uncached(&refs)? {
                vectors.extend(v);
            }
            bar.inc(chunk.len() as u64);
        }
        bar.finish_and_clear();
        write_cache(&cache, dim, &vectors)
            .with_context(|| format!("writing {}", cache.display()))?;
    }
    let query_texts = memory_sentences(QUERY_SEED, a.queries.max(1));
    let query_refs: Vec<&str> = query_texts.iter().map(String::as_str).collect();
    let queries = embedder.embed_uncached(&query_refs)?;

    let mut rows = Vec::new();
    for &n in &a.sizes {
        let config = IndexConfig {
            exact_threshold: 0,
            ..IndexConfig::default()
        };
        let mut index = VectorIndex::new(dim, config)?;
        let bar = new_bar(n, &format!("indexing {n} memories"));
        let t = Instant::now();
        for i in 0..n {
            index.add(i as u64, &vectors[i * dim..(i + 1) * dim])?;
        }
        index.prepare();
        let build_s = t.elapsed().as_secs_f64();
        bar.finish_and_clear();
        for &ef in &a.ef_search {
            index.set_ef_search(ef.max(1));
            let (mut hnsw_s, mut exact_s, mut hits) = (0f64, 0f64, 0usize);
            for q in &queries {
                let t = Instant::now();
                let exact = index.search_exact(q, 10)?;
                exact_s += t.elapsed().as_secs_f64();
                let t = Instant::now();
                let approx = index.search(q, 10)?;
                hnsw_s += t.elapsed().as_secs_f64();
                hits += approx
                    .iter()
                    .filter(|h| exact.iter().any(|e| e.id == h.id))
                    .count();
            }
            let nq = queries.len() as f64;
            rows.push(json!({
                "memories": n,
                "ef_search": ef,
                "hnsw_ms": round(1e3 * hnsw_s / nq),
                "exact_ms": round(1e3 * exact_s / nq),
                "speedup": round(exact_s / hnsw_s),
                "recall_at_10": round(hits as f64 / (10.0 * nq)),
                "hnsw_build_s": round(build_s),
            }));
        }
    }
    let out = json!({
        "embedding_model": embedder.dir(),
        "threads": rayon::current_num_threads(),
        "embed_per_s": per_s,
        "retrieval": rows,
    });
    if a.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}

fn default_cache(e: &Embedder) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let tag: String = e
        .dir()
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    base.join("humanoid")
        .join(format!("bench-memory-{tag}-{SEED}.f32"))
}

/// Cache format: u64 dim, u64 count, then count × dim little-endian f32.
fn read_cache(path: &PathBuf, dim: usize) -> Result<Vec<f32>> {
    let mut f = std::fs::File::open(path)?;
    let mut head = [0u8; 16];
    f.read_exact(&mut head)?;
    let d = u64::from_le_bytes(head[..8].try_into()?) as usize;
    let n = u64::from_le_bytes(head[8..].try_into()?) as usize;
    if d != dim {
        bail!(
            "{}: cached vectors have {d} dimensions, not {dim}",
            path.display()
        );
    }
    let mut bytes = Vec::new();
    f.read_to_end(&mut bytes)?;
    if bytes.len() != n * d * 4 {
        bail!("{}: truncated cache", path.display());
    }
    Ok(bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

fn write_cache(path: &PathBuf, dim: usize, v: &[f32]) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension("partial");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
    f.write_all(&(dim as u64).to_le_bytes())?;
    f.write_all(&((v.len() / dim) as u64).to_le_bytes())?;
    for x in v {
        f.write_all(&x.to_le_bytes())?;
    }
    f.flush()?;
    drop(f);
    std::fs::rename(&tmp, path)?;
    Ok(())
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

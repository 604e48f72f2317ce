//! `humanoid bench llm`: engine throughput on one model, measured in this process.
//!
//! Prefill: a ~500-token prompt, one generated token. Decode: 64 generated tokens per
//! sequence at batch 1, 4 and 16 with prompts of different lengths; decode speed counts only
//! the steps where every sequence decodes (no prefill mixed in). `choose`: 16 two-option
//! questions in one batch, and one alone against the prefill of the same prompt.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use humanoid::llm::{
    ChooseRequest, Engine, Event, GenerateRequest, Message, Prompt, Request, TokenConstraint,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use super::ModelArgs;

#[derive(Args, Debug)]
pub struct BenchLlmArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Tokens generated per sequence in the decode runs.
    #[arg(long, default_value_t = 64)]
    pub decode_tokens: usize,
    /// Repetitions of each measurement (the best is kept; the JSON lists each decode run).
    #[arg(long, default_value_t = 3)]
    pub repeat: usize,
}

/// Keeps generation going for the full length: end-of-sequence tokens are masked out.
struct NoStop(Vec<u32>);

impl TokenConstraint for NoStop {
    fn mask(&mut self, _: &[u32], logits: &mut [f32]) {
        for &t in &self.0 {
            if let Some(l) = logits.get_mut(t as usize) {
                *l = f32::NEG_INFINITY;
            }
        }
    }
    fn is_complete(&mut self, _: &[u32]) -> bool {
        false
    }
}

const PASSAGE: &str = "John Lin is a pharmacy shopkeeper at the Willows Market and Pharmacy who loves to help people. He is always looking for ways to make the process of getting medication easier for his customers. John Lin is living with his wife, Mei Lin, who is a college professor, and son, Eddy Lin, who is a student studying music theory. John Lin loves his family very much. John Lin has known the old couple next-door, Sam Moore and Jennifer Moore, for a few years. John Lin thinks Sam Moore is a kind and nice man. John Lin knows his neighbor, Yuriko Yamamoto, well. John Lin knows of his neighbors, Tamara Taylor and Carmen Ortiz, but has not met them before. John Lin and Tom Moreno are colleagues at The Willows Market and Pharmacy. ";

/// A prompt of about `n` tokens, varied by `salt` so no two share a long prefix.
fn prompt_of(engine: &Engine, n: usize, salt: usize) -> Result<Vec<u32>> {
    let mut text = format!("Note {salt}: ");
    let mut ids = Vec::new();
    while ids.len() < n {
        text.push_str(PASSAGE);
        ids = engine.tokenizer().encode_prompt(&text, false)?;
    }
    ids.truncate(n);
    Ok(ids)
}

struct Timing {
    total: Duration,
    decode_time: Duration,
    decode_tokens: usize,
    prefill_time: Duration,
    prefill_tokens: usize,
}

fn timed_run(engine: &mut Engine, reqs: Vec<Request>) -> Result<Timing> {
    engine.clear_prefix_cache();
    let mut t = Timing {
        total: Duration::ZERO,
        decode_time: Duration::ZERO,
        decode_tokens: 0,
        prefill_time: Duration::ZERO,
        prefill_tokens: 0,
    };
    let start = Instant::now();
    let results = engine.run(reqs, |e| {
        if let Event::Step {
            seqs,
            tokens,
            elapsed,
        } = e
        {
            if tokens == seqs {
                t.decode_time += elapsed;
                t.decode_tokens += tokens;
            } else {
                t.prefill_time += elapsed;
                t.prefill_tokens += tokens;
            }
        }
    });
    t.total = start.elapsed();
    for r in results {
        r.context("benchmark request failed")?;
    }
    Ok(t)
}

pub fn run(a: BenchLlmArgs) -> Result<()> {
    let t0 = Instant::now();
    let (resolved, mut engine) = a.model.load()?;
    let load_s = t0.elapsed().as_secs_f64();
    let (rss_loaded, _) = super::memory_usage();
    let repeat = a.repeat.max(1);
    let stops = engine.tokenizer().stop_ids().to_vec();
    let steps = 1 + 3 + 2;
    let bar = if a.json {
        ProgressBar::hidden()
    } else {
        ProgressBar::new((steps * repeat) as u64)
    };
    bar.set_style(ProgressStyle::with_template(
        "{msg:<24} [{bar:30}] {pos}/{len} {elapsed}",
    )?);

    // Prefill: ~500 tokens, one token out.
    bar.set_message("prefill 500 tokens");
    let mut prefill = 0f64;
    for r in 0..repeat {
        let ids = prompt_of(&engine, 500, r)?;
        let t = timed_run(&mut engine, vec![gen(ids, 1, &stops)])?;
        prefill = prefill.max(t.prefill_tokens as f64 / t.prefill_time.as_secs_f64());
        bar.inc(1);
    }

    // Decode at batch 1, 4, 16 with prompts of different lengths.
    let mut decode = serde_json::Map::new();
    let mut decode_runs = serde_json::Map::new();
    for &batch in &[1usize, 4, 16] {
        bar.set_message(format!("decode batch {batch}"));
        let mut best = 0f64;
        let mut runs = Vec::with_capacity(repeat);
        for r in 0..repeat {
            let reqs = (0..batch)
                .map(|i| {
                    Ok(gen(
                        prompt_of(&engine, 40 + 23 * i, 100 * r + i)?,
                        a.decode_tokens,
                        &stops,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            let t = timed_run(&mut engine, reqs)?;
            let rate = t.decode_tokens as f64 / t.decode_time.as_secs_f64();
            best = best.max(rate);
            runs.push(round(rate));
            bar.inc(1);
        }
        decode.insert(batch.to_string(), json!(round(best)));
        decode_runs.insert(batch.to_string(), json!(runs));
    }

    // choose: 16 two-option questions in one batch; and one alone vs. its prefill.
    bar.set_message("choose");
    let mut choose_s = 0f64;
    let mut ratio = f64::INFINITY;
    for r in 0..repeat {
        let reqs: Vec<Request> = (0..16)
            .map(|i| {
                let q = format!(
                    "Question {}: Is John Lin at the pharmacy at {} o'clock? Answer yes or no.",
                    1000 * r + i,
                    7 + i % 10
                );
                Request::Choose(ChooseRequest::new(
                    Prompt::Chat(vec![Message::system(PASSAGE), Message::user(q)]),
                    ["yes", "no"],
                ))
            })
            .collect();
        let t = timed_run(&mut engine, reqs)?;
        choose_s = choose_s.max(16.0 / t.total.as_secs_f64());
        bar.inc(1);
        let ids = prompt_of(&engine, 300, 7777 + r)?;
        let alone_prefill = timed_run(&mut engine, vec![gen(ids.clone(), 1, &stops)])?.total;
        let alone_choose = timed_run(
            &mut engine,
            vec![Request::Choose(ChooseRequest::new(
                Prompt::Tokens(ids),
                ["yes", "no"],
            ))],
        )?
        .total;
        ratio = ratio.min(alone_choose.as_secs_f64() / alone_prefill.as_secs_f64());
        bar.inc(1);
    }
    bar.finish_and_clear();
    let (_, peak) = super::memory_usage();
    let cfg = engine.config();
    let out = json!({
        "model": resolved.name,
        "file": resolved.path,
        "architecture": cfg.arch_name,
        "device": engine.model().device_name(),
        "threads": rayon::current_num_threads(),
        "weights_mib": round(engine.model().weight_bytes() as f64 / 1048576.0),
        "load_s": round(load_s),
        "rss_after_load_mib": round(rss_loaded as f64 / 1048576.0),
        "peak_rss_mib": round(peak as f64 / 1048576.0),
        "prefill_tok_s": round(prefill),
        "decode_tok_s": decode,
        "decode_tok_s_runs": decode_runs,
        "choose_calls_s": round(choose_s),
        "choose_vs_prefill_time": round(ratio),
    });
    if a.json {
        println!("{out}");
    } else {
        println!("{}", serde_json::to_string_pretty(&out)?);
    }
    Ok(())
}

fn gen(ids: Vec<u32>, n: usize, stops: &[u32]) -> Request {
    let mut g = GenerateRequest::new(Prompt::Tokens(ids), n);
    g.constraint = Some(Arc::new(Mutex::new(NoStop(stops.to_vec()))));
    Request::Generate(g)
}

fn round(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

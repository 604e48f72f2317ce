//! The transformer forward pass of every architecture in [`super::config::Arch`], over a
//! ragged batch.
//!
//! Unlike candle's stock quantized models (one KV cache and one position for the whole
//! batch), every sequence brings its own [`SeqCache`] and any number of new tokens: all rows
//! of all sequences go through each matmul together (one weight pass for the batch), and
//! attention runs per sequence over its own cache. No padding, so nothing to mask, and a
//! sequence's logits are bit-identical whatever shares its batch.

use rayon::prelude::*;

use super::config::Config;
use super::error::{LlmError, Result};
use super::gguf::GgufFile;
use super::kernel_weights::{load_weight, make_weight, weight_from_raw};
use super::kernels::{self, SendPtr, Weight};
use super::kv::SeqCache;
use super::weights::{load_f32, read_layer, read_layer_as, rope_factors, RawMatrix};

/// How weights are held in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WeightFormat {
    /// In the file's own quantization where a kernel multiplies it (Q4_K and Q6_K on our
    /// kernels, every GGML type on the tensor path); other matrices requantized to Q8_0.
    /// The default.
    #[default]
    Quantized,
    /// Every matrix requantized to Q8_0 at load (our kernels; the tensor path treats it as
    /// [`WeightFormat::Quantized`]).
    Q8,
    /// Dequantized to F32 (slow and large; exact reference for tests).
    F32,
}

impl WeightFormat {
    /// Parses `quantized`, `q8` or `f32`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "quantized" => Some(Self::Quantized),
            "q8" => Some(Self::Q8),
            "f32" => Some(Self::F32),
            _ => None,
        }
    }

    /// The name [`WeightFormat::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Quantized => "quantized",
            Self::Q8 => "q8",
            Self::F32 => "f32",
        }
    }
}

struct Layer {
    attn_norm: Vec<f32>,
    /// Q, K and V projections stacked: `[q_dim + 2·kv_dim, hidden]`.
    wqkv: Weight,
    /// Biases of the stacked Q, K and V projections (qwen2).
    qkv_bias: Option<Vec<f32>>,
    q_norm: Option<Vec<f32>>,
    k_norm: Option<Vec<f32>>,
    wo: Weight,
    post_attn_norm: Option<Vec<f32>>,
    ffn_norm: Vec<f32>,
    /// Gate and up projections stacked: `[2·ffn, hidden]`.
    w_gate_up: Weight,
    w_down: Weight,
    post_ffn_norm: Option<Vec<f32>>,
}

/// Which logits a sequence wants from a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogitsFor {
    /// None (a prefix being cached).
    None,
    /// The last new token's.
    Last,
    /// Every new token's (scoring `choose` options).
    All,
}

/// One sequence's part of a batched step.
pub struct SeqInput<'a> {
    pub cache: &'a mut SeqCache,
    pub tokens: &'a [u32],
    pub logits: LogitsFor,
}

impl SeqInput<'_> {
    /// Fails if the new tokens would pass `max_positions` or name ids outside `vocab`.
    pub(super) fn check(&self, max_positions: usize, vocab: usize) -> Result<()> {
        let end = self.cache.len() + self.tokens.len();
        if end > max_positions {
            return Err(LlmError::OverBudget {
                tokens: end,
                budget: max_positions,
            });
        }
        if let Some(&bad) = self.tokens.iter().find(|&&t| t as usize >= vocab) {
            return Err(LlmError::InvalidRequest(format!(
                "token id {bad} is outside the vocabulary of {vocab}"
            )));
        }
        Ok(())
    }
}

/// A loaded model: configuration, weights and RoPE tables.
pub struct Model {
    cfg: Config,
    embed: Weight,
    layers: Vec<Layer>,
    out_norm: Vec<f32>,
    lm_head: Option<Weight>,
    rope_global: Rope,
    rope_local: Option<Rope>,
}

/// RoPE cosine and sine tables.
pub(super) struct Rope {
    half: usize,
    /// `max_pos × half` cosines and sines.
    pub(super) cos: Vec<f32>,
    pub(super) sin: Vec<f32>,
}

impl Rope {
    /// Tables for positions `0..max_pos`: dimension pair i turns by `p·scale·base^(−2i/d) /
    /// factors[i]` (`scale` from linear RoPE scaling, `factors` Llama 3's `rope_freqs`).
    pub(super) fn new(
        head_dim: usize,
        base: f32,
        max_pos: usize,
        scale: f32,
        factors: Option<&[f32]>,
    ) -> Self {
        let half = head_dim / 2;
        let mut cos = Vec::with_capacity(max_pos * half);
        let mut sin = Vec::with_capacity(max_pos * half);
        let freqs: Vec<f64> = (0..half)
            .map(|i| {
                let f = 1.0 / (base as f64).powf(2.0 * i as f64 / head_dim as f64);
                f * scale as f64 / factors.map_or(1.0, |fs| fs[i] as f64)
            })
            .collect();
        for p in 0..max_pos {
            for &freq in &freqs {
                let a = p as f64 * freq;
                cos.push(a.cos() as f32);
                sin.push(a.sin() as f32);
            }
        }
        Self { half, cos, sin }
    }

    /// Rotates each head of `x` (heads × head_dim) for position `pos`.
    fn apply(&self, x: &mut [f32], head_dim: usize, pos: usize, neox: bool) {
        let c = &self.cos[pos * self.half..(pos + 1) * self.half];
        let s = &self.sin[pos * self.half..(pos + 1) * self.half];
        for head in x.chunks_exact_mut(head_dim) {
            for i in 0..self.half {
                let (a, b) = if neox {
                    (i, i + self.half)
                } else {
                    (2 * i, 2 * i + 1)
                };
                let (x0, x1) = (head[a], head[b]);
                head[a] = x0 * c[i] - x1 * s[i];
                head[b] = x0 * s[i] + x1 * c[i];
            }
        }
    }
}

impl Model {
    /// Loads a GGUF model, converting weights to `format`. `max_positions` bounds the RoPE
    /// tables (the context budget).
    pub fn load(g: &mut GgufFile, format: WeightFormat, max_positions: usize) -> Result<Self> {
        let cfg = Config::from_gguf(g)?;
        let max_pos = max_positions.min(cfg.context_length).max(1);
        let h = cfg.hidden;
        let mut layers = Vec::with_capacity(cfg.n_layers);
        for l in 0..cfg.n_layers {
            if format == WeightFormat::Quantized {
                let w = read_layer_as::<RawMatrix>(g, &cfg, l)?;
                let bad = |name: &str, reason: String| LlmError::BadTensor {
                    path: g.path().to_path_buf(),
                    name: format!("blk.{l}.{name}"),
                    reason,
                };
                let conv = |m: RawMatrix, name: &str| weight_from_raw(m).map_err(|e| bad(name, e));
                layers.push(Layer {
                    attn_norm: w.attn_norm,
                    wqkv: Weight::stack(vec![
                        conv(w.q, "attn_q")?,
                        conv(w.k, "attn_k")?,
                        conv(w.v, "attn_v")?,
                    ]),
                    qkv_bias: w.qkv_bias,
                    q_norm: w.q_norm,
                    k_norm: w.k_norm,
                    wo: conv(w.wo, "attn_output")?,
                    post_attn_norm: w.post_attn_norm,
                    ffn_norm: w.ffn_norm,
                    w_gate_up: Weight::stack(vec![
                        conv(w.gate, "ffn_gate")?,
                        conv(w.up, "ffn_up")?,
                    ]),
                    w_down: conv(w.down, "ffn_down")?,
                    post_ffn_norm: w.post_ffn_norm,
                });
                continue;
            }
            let w = read_layer(g, &cfg, l)?;
            let qkv = [w.q, w.k, w.v].concat();
            let gate_up = [w.gate, w.up].concat();
            layers.push(Layer {
                attn_norm: w.attn_norm,
                wqkv: make_weight(&qkv, cfg.q_dim() + 2 * cfg.kv_dim(), h, format),
                qkv_bias: w.qkv_bias,
                q_norm: w.q_norm,
                k_norm: w.k_norm,
                wo: make_weight(&w.wo, h, cfg.q_dim(), format),
                post_attn_norm: w.post_attn_norm,
                ffn_norm: w.ffn_norm,
                w_gate_up: make_weight(&gate_up, 2 * cfg.ffn, h, format),
                w_down: make_weight(&w.down, h, cfg.ffn, format),
                post_ffn_norm: w.post_ffn_norm,
            });
        }
        let out_norm = load_f32(g, "output_norm.weight", h)?;
        let lm_head = if g.has_tensor("output.weight") {
            Some(load_weight(g, "output.weight", cfg.vocab, h, format)?)
        } else {
            None
        };
        let factors = rope_factors(g, &cfg)?;
        let rope = |base| {
            Rope::new(
                cfg.head_dim,
                base,
                max_pos,
                cfg.rope_freq_scale,
                factors.as_deref(),
            )
        };
        let rope_global = rope(cfg.rope_base);
        let rope_local = cfg.sliding_window.map(|_| rope(cfg.rope_base_local));
        // Held like the other matrices (F32 in F32 mode, the exact reference), tied to the head
        // or not.
        let embed = load_weight(g, "token_embd.weight", cfg.vocab, h, format)?;
        Ok(Self {
            cfg,
            embed,
            layers,
            out_norm,
            lm_head,
            rope_global,
            rope_local,
        })
    }

    /// The model's hyper-parameters.
    pub fn config(&self) -> &Config {
        &self.cfg
    }

    /// Largest position the RoPE tables cover.
    pub fn max_positions(&self) -> usize {
        self.rope_global.cos.len() / self.rope_global.half.max(1)
    }

    /// Bytes of weights held in memory.
    pub fn weight_bytes(&self) -> usize {
        let layers: usize = self
            .layers
            .iter()
            .map(|l| {
                l.wqkv.size_bytes()
                    + l.wo.size_bytes()
                    + l.w_gate_up.size_bytes()
                    + l.w_down.size_bytes()
            })
            .sum();
        layers + self.embed.size_bytes() + self.lm_head.as_ref().map_or(0, |w| w.size_bytes())
    }

    /// A fresh, empty cache for one sequence.
    pub fn new_cache(&self, capacity: usize) -> SeqCache {
        SeqCache::new(self.cfg.n_layers, self.cfg.kv_dim(), capacity)
    }

    /// Runs one step for a ragged batch of sequences, appending to their caches. Returns, per
    /// sequence, the requested logits rows concatenated (`rows × vocab`).
    pub fn forward(&self, seqs: &mut [SeqInput<'_>]) -> Result<Vec<Vec<f32>>> {
        let cfg = &self.cfg;
        let (h, hd) = (cfg.hidden, cfg.head_dim);
        let (q_dim, kv_dim) = (cfg.q_dim(), cfg.kv_dim());
        let mut starts = Vec::with_capacity(seqs.len());
        let mut total = 0;
        for s in seqs.iter() {
            s.check(self.max_positions(), cfg.vocab)?;
            starts.push(total);
            total += s.tokens.len();
        }
        if total == 0 {
            return Ok(seqs.iter().map(|_| Vec::new()).collect());
        }
        // Embeddings.
        let mut x = vec![0f32; total * h];
        let all_tokens: Vec<u32> = seqs.iter().flat_map(|s| s.tokens.iter().copied()).collect();
        for (row, &t) in x.chunks_exact_mut(h).zip(&all_tokens) {
            self.embed.row_f32(t as usize, row);
            if cfg.scale_embeddings {
                let sc = (h as f32).sqrt();
                row.iter_mut().for_each(|v| *v *= sc);
            }
        }
        let positions: Vec<usize> = seqs
            .iter()
            .flat_map(|s| {
                let p0 = s.cache.len();
                p0..p0 + s.tokens.len()
            })
            .collect();

        let qkv_w = q_dim + 2 * kv_dim;
        let mut hbuf = vec![0f32; total * h];
        let mut qkv = vec![0f32; total * qkv_w];
        let mut att = vec![0f32; total * q_dim];
        let mut o = vec![0f32; total * h];
        let mut gu = vec![0f32; total * 2 * cfg.ffn];
        let mut act = vec![0f32; total * cfg.ffn];
        for (li, layer) in self.layers.iter().enumerate() {
            hbuf.copy_from_slice(&x);
            kernels::rms_norm(&mut hbuf, &layer.attn_norm, cfg.eps);
            layer.wqkv.matmul(&hbuf, &mut qkv);
            if let Some(b) = &layer.qkv_bias {
                qkv.chunks_exact_mut(qkv_w)
                    .for_each(|row| row.iter_mut().zip(b).for_each(|(v, b)| *v += b));
            }
            let rope = match (cfg.window_of(li), &self.rope_local) {
                (Some(_), Some(local)) => local,
                _ => &self.rope_global,
            };
            let mut q = vec![0f32; total * q_dim];
            let mut k = vec![0f32; total * kv_dim];
            let mut v = vec![0f32; total * kv_dim];
            for r in 0..total {
                let row = &qkv[r * qkv_w..(r + 1) * qkv_w];
                let qr = &mut q[r * q_dim..(r + 1) * q_dim];
                qr.copy_from_slice(&row[..q_dim]);
                let kr = &mut k[r * kv_dim..(r + 1) * kv_dim];
                kr.copy_from_slice(&row[q_dim..q_dim + kv_dim]);
                v[r * kv_dim..(r + 1) * kv_dim].copy_from_slice(&row[q_dim + kv_dim..]);
                if let (Some(qn), Some(kn)) = (&layer.q_norm, &layer.k_norm) {
                    kernels::rms_norm(qr, qn, cfg.eps);
                    kernels::rms_norm(kr, kn, cfg.eps);
                }
                rope.apply(qr, hd, positions[r], cfg.rope_neox);
                rope.apply(kr, hd, positions[r], cfg.rope_neox);
            }
            for (si, s) in seqs.iter_mut().enumerate() {
                let (a, n) = (starts[si], s.tokens.len());
                s.cache.push(
                    li,
                    &k[a * kv_dim..(a + n) * kv_dim],
                    &v[a * kv_dim..(a + n) * kv_dim],
                );
            }
            self.attention(li, seqs, &starts, &positions, &q, &mut att);
            layer.wo.matmul(&att, &mut o);
            if let Some(n) = &layer.post_attn_norm {
                kernels::rms_norm(&mut o, n, cfg.eps);
            }
            x.iter_mut().zip(&o).for_each(|(a, b)| *a += b);

            hbuf.copy_from_slice(&x);
            kernels::rms_norm(&mut hbuf, &layer.ffn_norm, cfg.eps);
            layer.w_gate_up.matmul(&hbuf, &mut gu);
            let f = cfg.ffn;
            for (r, out) in act.chunks_exact_mut(f).enumerate() {
                let row = &gu[r * 2 * f..(r + 1) * 2 * f];
                out.copy_from_slice(&row[..f]);
                if cfg.gelu {
                    kernels::gelu_mul(out, &row[f..]);
                } else {
                    kernels::silu_mul(out, &row[f..]);
                }
            }
            layer.w_down.matmul(&act, &mut o);
            if let Some(n) = &layer.post_ffn_norm {
                kernels::rms_norm(&mut o, n, cfg.eps);
            }
            x.iter_mut().zip(&o).for_each(|(a, b)| *a += b);
        }

        // Logits only for the rows asked for.
        let mut want: Vec<usize> = Vec::new();
        let mut counts = Vec::with_capacity(seqs.len());
        for (si, s) in seqs.iter().enumerate() {
            let (a, n) = (starts[si], s.tokens.len());
            let rows: Vec<usize> = match s.logits {
                LogitsFor::None => vec![],
                LogitsFor::Last => vec![a + n - 1],
                LogitsFor::All => (a..a + n).collect(),
            };
            counts.push(rows.len());
            want.extend(rows);
        }
        let mut hs = vec![0f32; want.len() * h];
        for (dst, &r) in hs.chunks_exact_mut(h).zip(&want) {
            dst.copy_from_slice(&x[r * h..(r + 1) * h]);
        }
        kernels::rms_norm(&mut hs, &self.out_norm, cfg.eps);
        let head = self.lm_head.as_ref().unwrap_or(&self.embed);
        let mut logits = vec![0f32; want.len() * cfg.vocab];
        head.matmul(&hs, &mut logits);
        if let Some(cap) = cfg.final_softcap {
            logits.iter_mut().for_each(|v| *v = cap * (*v / cap).tanh());
        }
        let mut out = Vec::with_capacity(seqs.len());
        let mut off = 0;
        for c in counts {
            out.push(logits[off * cfg.vocab..(off + c) * cfg.vocab].to_vec());
            off += c;
        }
        Ok(out)
    }

    /// Causal (and, for local layers, windowed) attention of every new row over its own
    /// sequence's cache. Parallel over (sequence, kv head).
    fn attention(
        &self,
        layer: usize,
        seqs: &[SeqInput<'_>],
        starts: &[usize],
        positions: &[usize],
        q: &[f32],
        att: &mut [f32],
    ) {
        let cfg = &self.cfg;
        let (hd, q_dim) = (cfg.head_dim, cfg.q_dim());
        let group = cfg.n_heads / cfg.n_kv_heads;
        let window = cfg.window_of(layer);
        let out = SendPtr(att.as_mut_ptr());
        let jobs: Vec<(usize, usize)> = (0..seqs.len())
            .flat_map(|s| (0..cfg.n_kv_heads).map(move |g| (s, g)))
            .collect();
        let kv_dim = cfg.kv_dim();
        let run = |&(si, g): &(usize, usize)| {
            let s = &seqs[si];
            // Scores of the group's query heads, head-major: [group][positions].
            let mut scores: Vec<f32> = Vec::new();
            let mut acc = vec![0f32; group * hd];
            for r in starts[si]..starts[si] + s.tokens.len() {
                let pos = positions[r];
                let lo = window.map_or(0, |w| (pos + 1).saturating_sub(w));
                let npos = pos + 1 - lo;
                scores.clear();
                scores.resize(group * npos, 0.0);
                let qrow = &q[r * q_dim..(r + 1) * q_dim];
                let mut off = 0;
                s.cache.for_each_run(layer, lo, pos + 1, |keys, _, count| {
                    for j in 0..group {
                        let hq = g * group + j;
                        let out = &mut scores[j * npos + off..j * npos + off + count];
                        kernels::strided_dots(
                            &qrow[hq * hd..(hq + 1) * hd],
                            &keys[g * hd..],
                            kv_dim,
                            out,
                        );
                    }
                    off += count;
                });
                for j in 0..group {
                    let sc = &mut scores[j * npos..(j + 1) * npos];
                    sc.iter_mut().for_each(|v| *v *= cfg.attn_scale);
                    if let Some(cap) = cfg.attn_softcap {
                        sc.iter_mut().for_each(|v| *v = cap * (*v / cap).tanh());
                    }
                    kernels::softmax(sc);
                }
                acc.iter_mut().for_each(|a| *a = 0.0);
                let mut off = 0;
                s.cache
                    .for_each_run(layer, lo, pos + 1, |_, values, count| {
                        for j in 0..group {
                            let p = &scores[j * npos + off..j * npos + off + count];
                            kernels::strided_weighted_sum(
                                p,
                                &values[g * hd..],
                                kv_dim,
                                &mut acc[j * hd..(j + 1) * hd],
                            );
                        }
                        off += count;
                    });
                // SAFETY: each job writes only its own rows' heads g*group..(g+1)*group,
                // which are contiguous.
                unsafe {
                    let dst = out.get().add(r * q_dim + g * group * hd);
                    std::ptr::copy_nonoverlapping(acc.as_ptr(), dst, group * hd);
                }
            }
        };
        let work: usize = seqs
            .iter()
            .map(|s| s.tokens.len() * (s.cache.len() + 1))
            .sum();
        if work * cfg.n_heads * hd < 200_000 {
            jobs.iter().for_each(run);
        } else {
            jobs.par_iter().for_each(run);
        }
    }
}

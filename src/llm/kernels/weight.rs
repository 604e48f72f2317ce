//! A weight matrix as our kernels hold it (Q8_0, F32, the file's K-quants, or parts of
//! those stacked) and its batched matmul.

use rayon::prelude::*;

use super::kquant::{self, KQuant};
use super::{dequantize_row, dot_f32, dot_q8_x1, dot_q8_x4, par_over_rows, quantize_row};
use super::{BlockQ8, SendPtr, QK};

/// A weight matrix `[rows, cols]` (out features × in features), quantized or plain.
pub enum Weight {
    Q8 {
        rows: usize,
        cols: usize,
        blocks: Vec<BlockQ8>,
    },
    F32 {
        rows: usize,
        cols: usize,
        data: Vec<f32>,
    },
    /// Raw GGML blocks of a K-quant type, whole rows (`cols % 256 == 0`).
    K {
        kind: KQuant,
        rows: usize,
        cols: usize,
        bytes: Vec<u8>,
    },
    /// K-quant blocks repacked into panels of 16 rows for the AMX tiles or AVX-512 VNNI
    /// (`kquant_amx`); built only where [`super::has_kquant_panels`] holds.
    Tiles {
        kind: KQuant,
        rows: usize,
        cols: usize,
        bytes: Vec<u8>,
    },
    /// Q8_0 blocks repacked into panels of 16 rows for the AVX-512 VNNI kernel (`q8_panels`);
    /// built only where the CPU has AVX-512 VNNI.
    Q8Panels {
        rows: usize,
        cols: usize,
        bytes: Vec<u8>,
    },
    /// Matrices of the same width stacked by rows, in formats that differ (e.g. a Q4_K query
    /// projection above a Q6_K value projection).
    Stacked { cols: usize, parts: Vec<Weight> },
}

impl Weight {
    /// Builds a Q8_0 weight from f32 data in row-major `[rows, cols]`; `cols % 32 == 0`.
    pub fn q8_from_f32(data: &[f32], rows: usize, cols: usize) -> Self {
        let nb = cols / QK;
        let mut blocks = vec![BlockQ8::default(); rows * nb];
        blocks
            .par_chunks_mut(nb)
            .zip(data.par_chunks(cols))
            .for_each(|(b, r)| quantize_row(r, b));
        Weight::q8(rows, cols, blocks)
    }

    /// A Q8_0 weight from its row-major blocks: in panels where the AVX-512 kernel multiplies
    /// it (AVX-512 VNNI), else as blocks.
    pub fn q8(rows: usize, cols: usize, blocks: Vec<BlockQ8>) -> Self {
        #[cfg(target_arch = "x86_64")]
        if super::has_avx512() {
            let bytes = super::q8_panels::repack(&blocks, rows, cols / QK);
            return Weight::Q8Panels { rows, cols, bytes };
        }
        Weight::Q8 { rows, cols, blocks }
    }

    /// Stacks matrices of one width by rows: one matrix where all share a format, else
    /// [`Weight::Stacked`] of the runs of neighbours that do (one multiply each).
    pub fn stack(parts: Vec<Weight>) -> Weight {
        let cols = parts[0].cols();
        let mut runs: Vec<Vec<Weight>> = Vec::new();
        for p in parts {
            match runs.last_mut() {
                Some(run) if run[0].joins(&p) => run.push(p),
                _ => runs.push(vec![p]),
            }
        }
        if runs.len() == 1 {
            return Self::join(runs.remove(0));
        }
        Weight::Stacked {
            cols,
            parts: runs.into_iter().map(Self::join).collect(),
        }
    }

    /// Whether `self` and `other` concatenate by rows into one matrix of their format
    /// (panels only where neither has padding rows).
    fn joins(&self, other: &Weight) -> bool {
        match (self, other) {
            (Weight::Q8 { .. }, Weight::Q8 { .. }) | (Weight::F32 { .. }, Weight::F32 { .. }) => {
                true
            }
            (Weight::K { kind: a, .. }, Weight::K { kind: b, .. }) => a == b,
            (
                Weight::Tiles {
                    kind: a, rows: ra, ..
                },
                Weight::Tiles {
                    kind: b, rows: rb, ..
                },
            ) => a == b && ra % 16 == 0 && rb % 16 == 0,
            (Weight::Q8Panels { rows: ra, .. }, Weight::Q8Panels { rows: rb, .. }) => {
                ra % 16 == 0 && rb % 16 == 0
            }
            _ => false,
        }
    }

    /// `parts` as one matrix where they share a format, else [`Weight::Stacked`].
    fn join(mut parts: Vec<Weight>) -> Weight {
        let cols = parts[0].cols();
        if parts.len() == 1 {
            return parts.remove(0);
        }
        debug_assert!(parts.iter().all(|p| p.cols() == cols));
        let rows = parts.iter().map(Weight::rows).sum();
        let all = |f: fn(&Weight) -> bool| parts.iter().all(f);
        if all(|p| matches!(p, Weight::Q8 { .. })) {
            let blocks = parts
                .into_iter()
                .flat_map(|p| match p {
                    Weight::Q8 { blocks, .. } => blocks,
                    _ => unreachable!(),
                })
                .collect();
            return Weight::Q8 { rows, cols, blocks };
        }
        if all(|p| matches!(p, Weight::F32 { .. })) {
            let data = parts
                .into_iter()
                .flat_map(|p| match p {
                    Weight::F32 { data, .. } => data,
                    _ => unreachable!(),
                })
                .collect();
            return Weight::F32 { rows, cols, data };
        }
        let first_kind = match &parts[0] {
            Weight::K { kind, .. } => Some(*kind),
            _ => None,
        };
        if first_kind.is_some()
            && parts
                .iter()
                .all(|p| matches!(p, Weight::K { kind, .. } if Some(*kind) == first_kind))
        {
            let bytes = parts
                .into_iter()
                .flat_map(|p| match p {
                    Weight::K { bytes, .. } => bytes,
                    _ => unreachable!(),
                })
                .collect();
            return Weight::K {
                kind: first_kind.unwrap_or(KQuant::Q4K),
                rows,
                cols,
                bytes,
            };
        }
        // Panels concatenate where no part has padding rows.
        let tiles_of = |p: &Weight| match p {
            Weight::Tiles { kind, rows, .. } if rows % 16 == 0 => Some(Some(*kind)),
            Weight::Q8Panels { rows, .. } if rows % 16 == 0 => Some(None),
            _ => None,
        };
        let kind = tiles_of(&parts[0]);
        if kind.is_some() && parts.iter().all(|p| tiles_of(p) == kind) {
            let bytes = parts
                .into_iter()
                .flat_map(|p| match p {
                    Weight::Tiles { bytes, .. } | Weight::Q8Panels { bytes, .. } => bytes,
                    _ => unreachable!(),
                })
                .collect();
            return match kind.flatten() {
                Some(kind) => Weight::Tiles {
                    kind,
                    rows,
                    cols,
                    bytes,
                },
                None => Weight::Q8Panels { rows, cols, bytes },
            };
        }
        Weight::Stacked { cols, parts }
    }

    /// Output features.
    pub fn rows(&self) -> usize {
        match self {
            Weight::Q8 { rows, .. }
            | Weight::F32 { rows, .. }
            | Weight::K { rows, .. }
            | Weight::Tiles { rows, .. }
            | Weight::Q8Panels { rows, .. } => *rows,
            Weight::Stacked { parts, .. } => parts.iter().map(Weight::rows).sum(),
        }
    }

    /// Input features.
    pub fn cols(&self) -> usize {
        match self {
            Weight::Q8 { cols, .. }
            | Weight::F32 { cols, .. }
            | Weight::K { cols, .. }
            | Weight::Tiles { cols, .. }
            | Weight::Q8Panels { cols, .. }
            | Weight::Stacked { cols, .. } => *cols,
        }
    }

    /// Bytes held.
    pub fn size_bytes(&self) -> usize {
        match self {
            Weight::Q8 { blocks, .. } => std::mem::size_of_val(blocks.as_slice()),
            Weight::F32 { data, .. } => data.len() * 4,
            Weight::K { bytes, .. }
            | Weight::Tiles { bytes, .. }
            | Weight::Q8Panels { bytes, .. } => bytes.len(),
            Weight::Stacked { parts, .. } => parts.iter().map(Weight::size_bytes).sum(),
        }
    }

    /// Row `r` as f32 (embedding lookup).
    pub fn row_f32(&self, r: usize, out: &mut [f32]) {
        match self {
            Weight::Q8 { cols, blocks, .. } => {
                let nb = cols / QK;
                dequantize_row(&blocks[r * nb..(r + 1) * nb], out)
            }
            Weight::F32 { cols, data, .. } => out.copy_from_slice(&data[r * cols..(r + 1) * cols]),
            Weight::K {
                kind, cols, bytes, ..
            } => {
                let rb = cols / kquant::QK_K * kind.block_bytes();
                kquant::dequantize_row(*kind, &bytes[r * rb..(r + 1) * rb], out)
            }
            #[cfg(target_arch = "x86_64")]
            Weight::Tiles {
                kind, cols, bytes, ..
            } => super::kquant_amx::dequantize_row(*kind, bytes, *cols, r, out),
            #[cfg(target_arch = "x86_64")]
            Weight::Q8Panels { cols, bytes, .. } => {
                super::q8_panels::dequantize_row(bytes, *cols, r, out)
            }
            #[cfg(not(target_arch = "x86_64"))]
            Weight::Tiles { .. } | Weight::Q8Panels { .. } => {
                unreachable!("AMX tiles exist only on x86_64")
            }
            Weight::Stacked { parts, .. } => {
                let mut r = r;
                for p in parts {
                    if r < p.rows() {
                        return p.row_f32(r, out);
                    }
                    r -= p.rows();
                }
            }
        }
    }

    /// `y[t, n] = Σ_k x[t, k] · W[n, k]` for `t` in `0..x.len()/cols`. `y` is overwritten.
    pub fn matmul(&self, x: &[f32], y: &mut [f32]) {
        let (n_out, k) = (self.rows(), self.cols());
        let t = x.len() / k;
        debug_assert_eq!(y.len(), t * n_out);
        match self {
            Weight::Stacked { parts, .. } => {
                let mut off = 0;
                for p in parts {
                    let n = p.rows();
                    let mut part = vec![0f32; t * n];
                    p.matmul(x, &mut part);
                    for (dst, src) in y.chunks_exact_mut(n_out).zip(part.chunks_exact(n)) {
                        dst[off..off + n].copy_from_slice(src);
                    }
                    off += n;
                }
            }
            Weight::K { kind, bytes, .. } => {
                let kind = *kind;
                let nb = k / kquant::QK_K;
                let xq = kquant::quantize_rows_q8k(x, k);
                let yp = SendPtr(y.as_mut_ptr());
                let rb = nb * kind.block_bytes();
                // Tiles of 8, then 4, then single activation rows against each weight row:
                // every row's result is the same bits whatever its tile.
                fn tile<const R: usize>(
                    kind: KQuant,
                    (bytes, rb, nb): (&[u8], usize, usize),
                    xs: &[kquant::BlockQ8K],
                    (r, n0, n1, n_out): (usize, usize, usize, usize),
                    yp: SendPtr,
                ) {
                    for n in n0..n1 {
                        let s = kquant::dot_rows::<R>(kind, &bytes[n * rb..(n + 1) * rb], xs, nb);
                        for (i, v) in s.iter().enumerate() {
                            // SAFETY: each task writes only columns n0..n1 of y.
                            unsafe { *yp.get().add((r + i) * n_out + n) = *v };
                        }
                    }
                }
                par_over_rows(n_out, t, rb, |n0, n1| {
                    let w = (bytes.as_slice(), rb, nb);
                    let mut r = 0;
                    while r + 8 <= t {
                        tile::<8>(kind, w, &xq[r * nb..(r + 8) * nb], (r, n0, n1, n_out), yp);
                        r += 8;
                    }
                    if r + 4 <= t {
                        tile::<4>(kind, w, &xq[r * nb..(r + 4) * nb], (r, n0, n1, n_out), yp);
                        r += 4;
                    }
                    while r < t {
                        tile::<1>(kind, w, &xq[r * nb..(r + 1) * nb], (r, n0, n1, n_out), yp);
                        r += 1;
                    }
                });
            }
            #[cfg(target_arch = "x86_64")]
            Weight::Tiles { kind, bytes, .. } => {
                use super::kquant_amx::{self as amx, PANEL};
                let kind = *kind;
                let nb = k / kquant::QK_K;
                let xq = kquant::quantize_rows_q8k(x, k);
                let sums = amx::row_sums(kind, &xq);
                let rows = amx::Rows {
                    x: &xq,
                    sums: &sums,
                    t,
                };
                let yp = SendPtr(y.as_mut_ptr());
                let panel_bytes = nb * amx::panel_block_bytes(kind);
                par_over_rows(n_out.div_ceil(PANEL), t, panel_bytes, |p0, p1| {
                    // SAFETY: the panels exist only where `has_kquant_panels` holds; each task writes
                    // only its panels' columns of y.
                    unsafe {
                        amx::matmul_panels(kind, bytes, nb, &rows, (yp.get(), n_out), (p0, p1))
                    }
                });
            }
            #[cfg(target_arch = "x86_64")]
            Weight::Q8Panels { bytes, .. } => {
                use super::q8_panels::{self, PANEL_BLOCK};
                let nb = k / QK;
                let xq = quantize_rows_q8(x, k);
                let off = q8_panels::offsets(&xq);
                let yp = SendPtr(y.as_mut_ptr());
                par_over_rows(n_out.div_ceil(16), t, nb * PANEL_BLOCK, |p0, p1| {
                    // SAFETY: the panels exist only where `has_avx512` holds; each task
                    // writes only its panels' columns of y.
                    unsafe {
                        q8_panels::matmul_panels(
                            bytes,
                            nb,
                            (&xq, &off, t),
                            (yp.get(), n_out),
                            (p0, p1),
                        )
                    }
                });
            }
            #[cfg(not(target_arch = "x86_64"))]
            Weight::Tiles { .. } | Weight::Q8Panels { .. } => {
                unreachable!("panels exist only on x86_64")
            }
            Weight::Q8 { blocks, .. } => {
                let nb = k / QK;
                let xq = quantize_rows_q8(x, k);
                let yp = SendPtr(y.as_mut_ptr());
                let row_bytes = nb * std::mem::size_of::<BlockQ8>();
                par_over_rows(n_out, t, row_bytes, |n0, n1| {
                    // Tiles of 4 activation rows stay in L1 while the chunk's weight rows
                    // (sized to fit L2) stream past them.
                    let mut r = 0;
                    while r + 4 <= t {
                        let xs = &xq[r * nb..(r + 4) * nb];
                        for n in n0..n1 {
                            let s = dot_q8_x4(&blocks[n * nb..(n + 1) * nb], xs, nb);
                            for (i, v) in s.iter().enumerate() {
                                // SAFETY: each task writes only columns n0..n1 of y.
                                unsafe { *yp.get().add((r + i) * n_out + n) = *v };
                            }
                        }
                        r += 4;
                    }
                    while r < t {
                        let xs = &xq[r * nb..(r + 1) * nb];
                        for n in n0..n1 {
                            let s = dot_q8_x1(&blocks[n * nb..(n + 1) * nb], xs);
                            // SAFETY: as above.
                            unsafe { *yp.get().add(r * n_out + n) = s };
                        }
                        r += 1;
                    }
                });
            }
            Weight::F32 { data, .. } => {
                let yp = SendPtr(y.as_mut_ptr());
                par_over_rows(n_out, t, k * 4, |n0, n1| {
                    for n in n0..n1 {
                        let w = &data[n * k..(n + 1) * k];
                        for r in 0..t {
                            let s = dot_f32(w, &x[r * k..(r + 1) * k]);
                            // SAFETY: each task writes only columns n0..n1 of y.
                            unsafe { *yp.get().add(r * n_out + n) = s };
                        }
                    }
                });
            }
        }
    }
}

/// The rows of `x` (`cols` wide) quantized to Q8_0 blocks, row-major.
fn quantize_rows_q8(x: &[f32], cols: usize) -> Vec<BlockQ8> {
    let nb = cols / QK;
    let mut xq = vec![BlockQ8::default(); x.len() / cols * nb];
    xq.par_chunks_mut(nb)
        .zip(x.par_chunks(cols))
        .for_each(|(b, r)| quantize_row(r, b));
    xq
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(n: usize, seed: u32) -> Vec<f32> {
        (0..n)
            .map(|i| {
                ((i as u32).wrapping_mul(2654435761).wrapping_add(seed) % 2000) as f32 / 1e3 - 1.0
            })
            .collect()
    }

    /// Neighbours of one format join into one matrix; a Stacked weight multiplies each run once
    /// and gives the parts' own results, in order.
    #[test]
    fn stacking_joins_runs_of_one_format_and_keeps_each_parts_results() {
        let (k, rows) = (64, [32, 16, 8, 24]);
        let data: Vec<Vec<f32>> = rows.iter().map(|&r| values(r * k, r as u32)).collect();
        let make = |i: usize| match i {
            0 | 1 => Weight::q8_from_f32(&data[i], rows[i], k),
            _ => Weight::F32 {
                rows: rows[i],
                cols: k,
                data: data[i].clone(),
            },
        };
        let stacked = Weight::stack((0..4).map(make).collect());
        match &stacked {
            Weight::Stacked { parts, .. } => {
                assert_eq!(parts.len(), 2);
                // Q8_0 blocks, or panels where AVX-512 VNNI multiplies them.
                assert!(matches!(
                    parts[0],
                    Weight::Q8 { .. } | Weight::Q8Panels { .. }
                ));
                assert_eq!(parts[0].rows(), 48);
                assert!(matches!(parts[1], Weight::F32 { rows: 32, .. }));
            }
            _ => panic!("two formats must stay two parts"),
        }
        let t = 3;
        let x = values(t * k, 7);
        let n: usize = rows.iter().sum();
        let mut y = vec![0f32; t * n];
        stacked.matmul(&x, &mut y);
        let mut off = 0;
        for (i, &r) in rows.iter().enumerate() {
            let mut part = vec![0f32; t * r];
            make(i).matmul(&x, &mut part);
            for row in 0..t {
                assert_eq!(
                    &y[row * n + off..row * n + off + r],
                    &part[row * r..(row + 1) * r]
                );
            }
            off += r;
        }
    }
}

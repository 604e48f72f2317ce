//! Q8_0 matmul on AVX-512 VNNI over weights repacked into panels of 16 rows (where
//! [`super::has_avx512`] holds), the same code for every batch size of a matrix so that a
//! row's result does not depend on its batch.
//!
//! A panel's block of 32 values is [`PANEL_BLOCK`] bytes, as large as the file's Q8_0 blocks
//! of its 16 rows: 512 bytes of values, byte `64·kk + 4·n + e` holding value `4·kk + e` of row
//! `n` as `q + 128` (unsigned, for `vpdpbusd`), then the rows' 16 f32 scales. One `vpdpbusd`
//! then takes 4 values of one activation row against 4 values of each of the 16 weight rows
//! (one step of the AMX tiles' layout, so a tile kernel could share it). The weights' offset
//! comes off in integers (`dot − 128·Σx`, exact), and each row takes one f32 step per block:
//! `acc += f32(dot) · (d_w · d_x)`.

use rayon::prelude::*;
use std::arch::x86_64::*;

use super::{BlockQ8, QK};

/// Weight rows per panel.
pub const PANEL: usize = 16;

/// Bytes of one panel's block of 32 values: 16 rows × 32 values, then 16 f32 scales.
pub const PANEL_BLOCK: usize = PANEL * QK + PANEL * 4;

/// Offset of the scales in a panel block.
const D_AT: usize = PANEL * QK;

/// Blocks ahead of the one being multiplied whose bytes are asked for early (about 4.5 KB).
const AHEAD: usize = 8;

/// Activation rows whose accumulators stay in registers together.
const ROW_TILE: usize = 8;

/// Repacks `rows × nb` Q8_0 blocks (row-major) into panels of 16 rows.
pub fn repack(blocks: &[BlockQ8], rows: usize, nb: usize) -> Vec<u8> {
    let panels = rows.div_ceil(PANEL);
    let mut out = vec![0u8; panels * nb * PANEL_BLOCK];
    // Panels in parallel: the 1.5B's embedding table alone is 262 MB.
    out.par_chunks_exact_mut(nb * PANEL_BLOCK)
        .enumerate()
        .for_each(|(p, panel)| {
            for (i, blk) in panel.chunks_exact_mut(PANEL_BLOCK).enumerate() {
                for n in 0..PANEL {
                    let r = p * PANEL + n;
                    let (d, qs) = if r < rows {
                        let b = &blocks[r * nb + i];
                        (b.d, b.qs)
                    } else {
                        (0.0, [0i8; QK])
                    };
                    for (k, q) in qs.iter().enumerate() {
                        blk[64 * (k / 4) + 4 * n + k % 4] = (*q as i16 + 128) as u8;
                    }
                    blk[D_AT + 4 * n..D_AT + 4 * n + 4].copy_from_slice(&d.to_le_bytes());
                }
            }
        });
    out
}

/// Row `r` of a panel matrix of `cols` columns as f32.
pub fn dequantize_row(w: &[u8], cols: usize, r: usize, out: &mut [f32]) {
    let nb = cols / QK;
    let (p, n) = (r / PANEL, r % PANEL);
    for (i, o) in out.chunks_exact_mut(QK).enumerate().take(nb) {
        let blk = &w[(p * nb + i) * PANEL_BLOCK..][..PANEL_BLOCK];
        let d = f32::from_le_bytes(blk[D_AT + 4 * n..D_AT + 4 * n + 4].try_into().unwrap());
        for (k, v) in o.iter_mut().enumerate() {
            let q = blk[64 * (k / 4) + 4 * n + k % 4] as i32 - 128;
            *v = d * q as f32;
        }
    }
}

/// Each activation block's sum of values, times 128 (the weights' offset), row-major.
pub fn offsets(x: &[BlockQ8]) -> Vec<i32> {
    x.iter()
        .map(|b| 128 * b.qs.iter().map(|&q| q as i32).sum::<i32>())
        .collect()
}

/// `y[r, 16·p + n]` for panels `p0..p1` and every row `r < t`.
///
/// # Safety
/// The CPU must have AVX-512 F, BW and VNNI; `w` holds the panels of `nb` blocks a row, `x`
/// the `t·nb` activation blocks with their [`offsets`] in `off`, and `y` points at a
/// `t × n_out` matrix of which this call writes only its panels' columns.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn matmul_panels(
    w: &[u8],
    nb: usize,
    (x, off, t): (&[BlockQ8], &[i32], usize),
    (y, n_out): (*mut f32, usize),
    (p0, p1): (usize, usize),
) {
    for p in p0..p1 {
        let panel = w.as_ptr().add(p * nb * PANEL_BLOCK);
        let cols = (n_out - p * PANEL).min(PANEL);
        let out = (y.add(p * PANEL), n_out, cols);
        let mut r0 = 0;
        while r0 + ROW_TILE <= t {
            rows::<ROW_TILE>(panel, nb, (x, off, r0), out);
            r0 += ROW_TILE;
        }
        while r0 + 2 <= t {
            rows::<2>(panel, nb, (x, off, r0), out);
            r0 += 2;
        }
        if r0 < t {
            rows::<1>(panel, nb, (x, off, r0), out);
        }
    }
}

/// `R` activation rows from `r0` against one panel, their results written at `y`.
#[inline(always)]
unsafe fn rows<const R: usize>(
    panel: *const u8,
    nb: usize,
    (x, off, r0): (&[BlockQ8], &[i32], usize),
    (y, n_out, cols): (*mut f32, usize, usize),
) {
    let mut acc = [_mm512_setzero_ps(); R];
    for i in 0..nb {
        let b = panel.add(i * PANEL_BLOCK);
        if r0 == 0 {
            // The panel's first row tile streams it from memory; the others find it cached.
            super::prefetch(b.wrapping_add(AHEAD * PANEL_BLOCK), PANEL_BLOCK);
        }
        let mut wv = [_mm512_setzero_si512(); 8];
        for (kk, v) in wv.iter_mut().enumerate() {
            *v = _mm512_loadu_si512(b.add(64 * kk) as *const _);
        }
        let d = _mm512_loadu_ps(b.add(D_AT) as *const f32);
        for (r, a) in acc.iter_mut().enumerate() {
            let at = (r0 + r) * nb + i;
            let xb = x.get_unchecked(at);
            let xq = xb.qs.as_ptr() as *const i32;
            // Two chains of integer sums (exact, so their order does not matter).
            let (mut c0, mut c1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for kk in (0..8).step_by(2) {
                c0 =
                    _mm512_dpbusd_epi32(c0, wv[kk], _mm512_set1_epi32(xq.add(kk).read_unaligned()));
                c1 = _mm512_dpbusd_epi32(
                    c1,
                    wv[kk + 1],
                    _mm512_set1_epi32(xq.add(kk + 1).read_unaligned()),
                );
            }
            let dot = _mm512_sub_epi32(
                _mm512_add_epi32(c0, c1),
                _mm512_set1_epi32(*off.get_unchecked(at)),
            );
            let scale = _mm512_mul_ps(d, _mm512_set1_ps(xb.d));
            *a = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), scale, *a);
        }
    }
    let mask: __mmask16 = if cols == 16 { !0 } else { (1u16 << cols) - 1 };
    for (r, a) in acc.iter().enumerate() {
        _mm512_mask_storeu_ps(y.add((r0 + r) * n_out), mask, *a);
    }
}

#[cfg(test)]
mod tests {
    use super::super::kquant::tests::{check_panels, lcg};
    use super::super::{quantize_row, Weight};
    use super::*;

    #[test]
    fn q8_panels_agree_with_the_avx2_kernels_and_do_not_depend_on_the_batch() {
        if !super::super::has_avx512() {
            eprintln!("no AVX-512 VNNI here: skipped");
            return;
        }
        // 37 rows: a padded last panel; 7 blocks: an odd last block.
        let (rows, cols) = (37, 7 * QK);
        let nb = cols / QK;
        let data = lcg(7, rows * cols);
        let mut blocks = vec![BlockQ8::default(); rows * nb];
        for (b, r) in blocks.chunks_mut(nb).zip(data.chunks(cols)) {
            quantize_row(r, b);
        }
        let panels = Weight::Q8Panels {
            rows,
            cols,
            bytes: repack(&blocks, rows, nb),
        };
        let plain = Weight::Q8 { rows, cols, blocks };
        check_panels(
            "Q8_0",
            (&panels, &plain),
            1e-4,
            &[1, 2, 3, 4, 8, 9, 16, 17, 33],
        );
    }
}

//! The panels' byte layout (see the parent module): repacking the file's blocks, reading a
//! row back, and the activation sums the kernel uses.

use rayon::prelude::*;

use super::super::kquant::{KQuant, QK_K};
use super::{panel_block_bytes, PANEL};

pub(super) const Q4_D: usize = 2048;
pub(super) const Q4_DMIN: usize = 2080;
pub(super) const Q4_SC: usize = 2112;
pub(super) const Q4_M: usize = 2240;
pub(super) const Q6_QH: usize = 2048;
pub(super) const Q6_SC: usize = 3072;
pub(super) const Q6_D: usize = 3328;

fn f16_at(b: &[u8], at: usize) -> f32 {
    half::f16::from_le_bytes([b[at], b[at + 1]]).to_f32()
}

/// The file's blocks of `kind` (`rows × cols/256`, row-major) as panels.
pub fn repack(kind: KQuant, file: &[u8], rows: usize, cols: usize) -> Vec<u8> {
    let (nb, fb, pb) = (
        cols / QK_K,
        kind.file_block_bytes(),
        panel_block_bytes(kind),
    );
    let panels = rows.div_ceil(PANEL);
    let mut out = vec![0u8; panels * nb * pb];
    // Panels in parallel: loading the 1.5B repacks about 1 GB.
    out.par_chunks_mut(nb * pb)
        .enumerate()
        .for_each(|(p, panel)| {
            for (i, o) in panel.chunks_exact_mut(pb).enumerate() {
                for n in 0..PANEL.min(rows - p * PANEL) {
                    let b = &file[((p * PANEL + n) * nb + i) * fb..][..fb];
                    match kind {
                        KQuant::Q4K => {
                            let (sc, m) = super::super::kquant::q4k_scales_mins(&b[4..16]);
                            o[Q4_D + 2 * n..][..2].copy_from_slice(&b[..2]);
                            o[Q4_DMIN + 2 * n..][..2].copy_from_slice(&b[2..4]);
                            for g in 0..8 {
                                o[Q4_SC + 16 * g + n] = sc[g];
                                o[Q4_M + 32 * (g / 2) + 2 * n + g % 2] = m[g];
                            }
                            for j in 0..4 {
                                for v in 0..32 {
                                    o[512 * j + 64 * (v / 4) + 4 * n + v % 4] = b[16 + 32 * j + v];
                                }
                            }
                        }
                        KQuant::Q6K => {
                            o[Q6_D + 2 * n..][..2].copy_from_slice(&b[208..210]);
                            for g in 0..16 {
                                o[Q6_SC + 16 * g + n] = b[192 + g];
                            }
                            let (ql, qh) = (&b[..128], &b[128..192]);
                            for v in 0..QK_K {
                                let (h, k, l) = (v / 128, v % 128 / 32, v % 32);
                                let low = ql[64 * h + 32 * (k % 2) + l] >> (4 * (k / 2)) & 15;
                                let high = qh[32 * h + l] >> (2 * k) & 3;
                                let (g, u) = (v / 16, v % 16);
                                let at = 64 * (u / 4) + 4 * n + u % 4;
                                o[256 * (g / 2) + at] |= low << (4 * (g % 2));
                                o[Q6_QH + 256 * (g / 4) + at] |= high << (2 * (g % 4));
                            }
                        }
                    }
                }
            }
        });
    out
}

/// Row `r` of a repacked matrix as f32.
pub fn dequantize_row(kind: KQuant, bytes: &[u8], cols: usize, r: usize, out: &mut [f32]) {
    let (nb, pb) = (cols / QK_K, panel_block_bytes(kind));
    let (p, n) = (r / PANEL, r % PANEL);
    for (i, o) in out.chunks_exact_mut(QK_K).enumerate().take(nb) {
        let b = &bytes[(p * nb + i) * pb..][..pb];
        match kind {
            KQuant::Q4K => {
                let (d, dmin) = (f16_at(b, Q4_D + 2 * n), f16_at(b, Q4_DMIN + 2 * n));
                for g in 0..8 {
                    let sc = b[Q4_SC + 16 * g + n] as f32;
                    let m = b[Q4_M + 32 * (g / 2) + 2 * n + g % 2] as f32;
                    for l in 0..32 {
                        let byte = b[512 * (g / 2) + 64 * (l / 4) + 4 * n + l % 4];
                        let q = if g % 2 == 0 { byte & 15 } else { byte >> 4 };
                        o[32 * g + l] = d * sc * q as f32 - dmin * m;
                    }
                }
            }
            KQuant::Q6K => {
                let d = f16_at(b, Q6_D + 2 * n);
                for g in 0..16 {
                    let sc = b[Q6_SC + 16 * g + n] as i8 as f32;
                    for u in 0..16 {
                        let at = 64 * (u / 4) + 4 * n + u % 4;
                        let low = b[256 * (g / 2) + at] >> (4 * (g % 2)) & 15;
                        let high = b[Q6_QH + 256 * (g / 4) + at] >> (2 * (g % 4)) & 3;
                        let q = (low | high << 4) as i32 - 32;
                        o[16 * g + u] = d * sc * q as f32;
                    }
                }
            }
        }
    }
}

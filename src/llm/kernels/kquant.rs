//! The file's own K-quant weights (GGML's Q4_K and Q6_K, 256 values a block) multiplied
//! without converting them: activations are quantized to [`BlockQ8K`] (256 signed 8-bit
//! values, one f32 scale and the sums of each 16 values). Each block's integer dot is exact;
//! the AVX2 kernels then sum blocks in 8 lanes, so they differ from the scalar kernel in the
//! last bits, while their one-row and four-row versions agree bit for bit.
//!
//! At load each block is repacked ([`repack`]) so that the kernels find its scales decoded
//! and ready to broadcast (about a tenth more bytes than the file's blocks):
//! - Q4_K, 160 bytes: `d: f32, dmin: f32, scales: [u16; 8], mins: [u8; 8], qs: [u8; 128]`;
//! - Q6_K, 228 bytes: `ql: [u8; 128], qh: [u8; 64], scales: [i16; 16], d: f32`.
//!
//! Block layouts as GGML stores them (little-endian):
//! - Q4_K, 144 bytes: `d: f16, dmin: f16, scales: [u8; 12], qs: [u8; 128]`. Eight
//!   sub-blocks of 32 with 6-bit scales and mins packed in `scales`; value = d·sc·q − dmin·m,
//!   q the 4-bit value. Bytes `qs[32j..32j+32]` hold sub-block 2j in their low nibbles and
//!   2j+1 in their high nibbles.
//! - Q6_K, 210 bytes: `ql: [u8; 128], qh: [u8; 64], scales: [i8; 16], d: f16`. Sixteen groups
//!   of 16 with signed 8-bit scales; value = d·sc·(q − 32), q the 6-bit value from 4 low bits
//!   in `ql` and 2 high bits in `qh`.

/// Values per K-quant block.
pub const QK_K: usize = 256;

/// A K-quant weight type we multiply natively.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KQuant {
    Q4K,
    Q6K,
}

impl KQuant {
    /// Bytes of one block of 256 values as the file stores it.
    pub const fn file_block_bytes(self) -> usize {
        match self {
            KQuant::Q4K => 144,
            KQuant::Q6K => 210,
        }
    }

    /// Bytes of 16 rows' blocks of 256 values in the AMX tiles' panels (`kquant_amx`).
    pub const fn panel_block_bytes(self) -> usize {
        match self {
            KQuant::Q4K => 2048 + 32 + 32 + 128 + 128,
            KQuant::Q6K => 2048 + 1024 + 256 + 32,
        }
    }

    /// Bytes of a `rows × cols` matrix as the kernels hold it: in blocks (after [`repack`]),
    /// or in panels of 16 rows where the AMX tiles multiply it.
    pub fn matrix_bytes(self, rows: usize, cols: usize) -> usize {
        let nb = cols / QK_K;
        if super::has_kquant_panels() {
            rows.div_ceil(16) * nb * self.panel_block_bytes()
        } else {
            rows * nb * self.block_bytes()
        }
    }

    /// Bytes of one block of 256 values as the kernels hold it (after [`repack`]).
    pub const fn block_bytes(self) -> usize {
        match self {
            KQuant::Q4K => 160,
            KQuant::Q6K => 228,
        }
    }
}

/// The file's blocks of `kind` (whole blocks) in the kernels' layout.
pub fn repack(kind: KQuant, file: &[u8]) -> Vec<u8> {
    let fb = kind.file_block_bytes();
    let mut out = Vec::with_capacity(file.len() / fb * kind.block_bytes());
    for b in file.chunks_exact(fb) {
        match kind {
            KQuant::Q4K => {
                let (sc, m) = q4k_scales_mins(&b[4..16]);
                out.extend_from_slice(&f16_at(b, 0).to_le_bytes());
                out.extend_from_slice(&f16_at(b, 2).to_le_bytes());
                sc.iter()
                    .for_each(|&v| out.extend_from_slice(&u16::from(v).to_le_bytes()));
                out.extend_from_slice(&m);
                out.extend_from_slice(&b[16..144]);
            }
            KQuant::Q6K => {
                out.extend_from_slice(&b[..192]);
                b[192..208]
                    .iter()
                    .for_each(|&v| out.extend_from_slice(&i16::from(v as i8).to_le_bytes()));
                out.extend_from_slice(&f16_at(b, 208).to_le_bytes());
            }
        }
    }
    out
}

/// Scale `j` of a repacked Q4_K block.
#[inline(always)]
fn q4k_scale(b: &[u8], j: usize) -> i32 {
    u16::from_le_bytes([b[8 + 2 * j], b[9 + 2 * j]]) as i32
}

/// Scale `g` of a repacked Q6_K block.
#[inline(always)]
fn q6k_scale(b: &[u8], g: usize) -> i32 {
    i16::from_le_bytes([b[192 + 2 * g], b[193 + 2 * g]]) as i32
}

/// The f32 at byte `at` of a repacked block.
#[inline(always)]
pub(super) fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// 256 activations as signed 8-bit values with one scale, and the sum of each 16.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct BlockQ8K {
    pub d: f32,
    pub qs: [i8; QK_K],
    pub bsums: [i16; QK_K / 16],
}

impl Default for BlockQ8K {
    fn default() -> Self {
        Self {
            d: 0.0,
            qs: [0; QK_K],
            bsums: [0; QK_K / 16],
        }
    }
}

/// Quantizes `x` (length a multiple of 256) into `out`: symmetric, q in -127..=127, rounded
/// half away from zero.
pub fn quantize_row_q8k(x: &[f32], out: &mut [BlockQ8K]) {
    debug_assert_eq!(x.len(), out.len() * QK_K);
    #[cfg(target_arch = "x86_64")]
    if super::has_avx512() {
        // SAFETY: the CPU has AVX-512.
        return unsafe { super::kquant_avx512::quantize_row_q8k(x, out) };
    }
    quantize_row_q8k_scalar(x, out)
}

/// Rows of `cols` values (a multiple of 256) quantized, row r's blocks at `r · cols/256`.
pub fn quantize_rows_q8k(x: &[f32], cols: usize) -> Vec<BlockQ8K> {
    use rayon::prelude::*;
    let nb = cols / QK_K;
    let mut xq = vec![BlockQ8K::default(); x.len() / cols * nb];
    xq.par_chunks_mut(nb)
        .zip(x.par_chunks(cols))
        .for_each(|(b, r)| quantize_row_q8k(r, b));
    xq
}

/// [`quantize_row_q8k`] one value at a time.
pub fn quantize_row_q8k_scalar(x: &[f32], out: &mut [BlockQ8K]) {
    for (blk, xs) in out.iter_mut().zip(x.chunks_exact(QK_K)) {
        let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let id = if d > 0.0 { 1.0 / d } else { 0.0 };
        blk.d = d;
        for (q, v) in blk.qs.iter_mut().zip(xs) {
            *q = (v * id).round().clamp(-127.0, 127.0) as i8;
        }
        for (s, qs) in blk.bsums.iter_mut().zip(blk.qs.chunks_exact(16)) {
            *s = qs.iter().map(|&q| q as i16).sum();
        }
    }
}

#[inline(always)]
fn f16_at(b: &[u8], at: usize) -> f32 {
    half::f16::from_le_bytes([b[at], b[at + 1]]).to_f32()
}

/// The eight 6-bit scales and eight 6-bit mins of a Q4_K block from its 12 packed bytes.
#[inline(always)]
pub(super) fn q4k_scales_mins(s: &[u8]) -> ([u8; 8], [u8; 8]) {
    let mut sc = [0u8; 8];
    let mut m = [0u8; 8];
    for j in 0..4 {
        sc[j] = s[j] & 63;
        m[j] = s[j + 4] & 63;
    }
    for j in 4..8 {
        sc[j] = (s[j + 4] & 0x0F) | ((s[j - 4] >> 6) << 4);
        m[j] = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
    (sc, m)
}

/// Σ over groups of `scale · bsum`: the part of a block's dot that its offsets contribute.
#[inline(always)]
fn q4k_min_sum(m: &[u8], x: &BlockQ8K) -> i32 {
    (0..8)
        .map(|j| m[j] as i32 * (x.bsums[2 * j] as i32 + x.bsums[2 * j + 1] as i32))
        .sum()
}

#[inline(always)]
fn q6k_bias_sum(b: &[u8], x: &BlockQ8K) -> i32 {
    (0..16).map(|g| q6k_scale(b, g) * x.bsums[g] as i32).sum()
}

/// The integer dot of one Q4_K block with activations (scales applied, mins not).
fn q4k_block_isum(b: &[u8], x: &BlockQ8K) -> i32 {
    let qs = &b[32..160];
    let mut sumi = 0i32;
    for j in 0..4 {
        let (mut lo, mut hi) = (0i32, 0i32);
        for l in 0..32 {
            let q = qs[32 * j + l];
            lo += (q & 15) as i32 * x.qs[64 * j + l] as i32;
            hi += (q >> 4) as i32 * x.qs[64 * j + 32 + l] as i32;
        }
        sumi += q4k_scale(b, 2 * j) * lo + q4k_scale(b, 2 * j + 1) * hi;
    }
    sumi
}

/// The integer dot of one Q6_K block's 6-bit values (before the −32 offset) with activations,
/// scales applied.
fn q6k_block_isum(b: &[u8], x: &BlockQ8K) -> i32 {
    let (ql, qh) = (&b[..128], &b[128..192]);
    let mut sumi = 0i32;
    for h in 0..2 {
        let mut g = [0i32; 8];
        for l in 0..32 {
            let (l0, l1, hh) = (ql[64 * h + l], ql[64 * h + 32 + l], qh[32 * h + l]);
            let q = [
                (l0 & 15) | ((hh & 3) << 4),
                (l1 & 15) | (((hh >> 2) & 3) << 4),
                (l0 >> 4) | (((hh >> 4) & 3) << 4),
                (l1 >> 4) | (((hh >> 6) & 3) << 4),
            ];
            let is = l / 16;
            for (k, &qk) in q.iter().enumerate() {
                g[2 * k + is] += qk as i32 * x.qs[128 * h + 32 * k + l] as i32;
            }
        }
        for (k, gk) in g.iter().enumerate() {
            sumi += q6k_scale(b, 8 * h + k) * gk;
        }
    }
    sumi
}

/// One Q4_K block's contribution from its integer sums, shared by every kernel so they give
/// the same bits.
#[inline(always)]
fn q4k_value(d: f32, dmin: f32, xd: f32, sumi: i32, summ: i32) -> f32 {
    d * xd * sumi as f32 - dmin * xd * summ as f32
}

/// One Q6_K block's contribution from its integer sum (offset included).
#[inline(always)]
fn q6k_value(d: f32, xd: f32, sumi: i32) -> f32 {
    d * xd * sumi as f32
}

/// Decodes one row of raw blocks of `kind` into f32 (an embedding lookup).
pub fn dequantize_row(kind: KQuant, bytes: &[u8], out: &mut [f32]) {
    let bb = kind.block_bytes();
    for (b, o) in bytes.chunks_exact(bb).zip(out.chunks_exact_mut(QK_K)) {
        match kind {
            KQuant::Q4K => {
                let (d, dmin) = (f32_at(b, 0), f32_at(b, 4));
                let m = &b[24..32];
                for j in 0..4 {
                    let (d1, m1) = (d * q4k_scale(b, 2 * j) as f32, dmin * m[2 * j] as f32);
                    let (d2, m2) = (
                        d * q4k_scale(b, 2 * j + 1) as f32,
                        dmin * m[2 * j + 1] as f32,
                    );
                    for l in 0..32 {
                        let q = b[32 + 32 * j + l];
                        o[64 * j + l] = d1 * (q & 15) as f32 - m1;
                        o[64 * j + 32 + l] = d2 * (q >> 4) as f32 - m2;
                    }
                }
            }
            KQuant::Q6K => {
                let d = f32_at(b, 224);
                let (ql, qh) = (&b[..128], &b[128..192]);
                for h in 0..2 {
                    for l in 0..32 {
                        let (l0, l1, hh) = (ql[64 * h + l], ql[64 * h + 32 + l], qh[32 * h + l]);
                        let q = [
                            (l0 & 15) | ((hh & 3) << 4),
                            (l1 & 15) | (((hh >> 2) & 3) << 4),
                            (l0 >> 4) | (((hh >> 4) & 3) << 4),
                            (l1 >> 4) | (((hh >> 6) & 3) << 4),
                        ];
                        for (k, &qk) in q.iter().enumerate() {
                            let s = q6k_scale(b, 8 * h + 2 * k + l / 16) as f32;
                            o[128 * h + 32 * k + l] = d * s * (qk as i32 - 32) as f32;
                        }
                    }
                }
            }
        }
    }
}

/// One weight row (repacked blocks of `kind`) against `R` activation rows of `nb` blocks
/// each, laid out one after another (`R` of 1, 4 or 8); each row's result is the same bits
/// whatever `R`.
pub fn dot_rows<const R: usize>(kind: KQuant, w: &[u8], x: &[BlockQ8K], nb: usize) -> [f32; R] {
    #[cfg(target_arch = "x86_64")]
    if super::has_avx2() {
        use super::kquant_avx2 as k;
        assert!(w.len() >= nb * kind.block_bytes() && x.len() >= R * nb);
        let q6 = kind == KQuant::Q6K;
        // SAFETY: the CPU supports AVX2 and FMA (and AVX-512 BW + VNNI or AVX-VNNI where
        // used); sizes checked above.
        return unsafe {
            if super::has_avx512() {
                super::kquant_avx512::dot_rows::<R>(q6, w, x, nb)
            } else if super::has_avxvnni() {
                k::dot_rows_vnni::<R>(q6, w, x, nb)
            } else {
                k::dot_rows::<R>(q6, w, x, nb)
            }
        };
    }
    std::array::from_fn(|i| dot_x1_scalar(kind, w, &x[i * nb..(i + 1) * nb]))
}

/// The portable kernel (and the reference the AVX2 one is tested against).
pub fn dot_x1_scalar(kind: KQuant, w: &[u8], x: &[BlockQ8K]) -> f32 {
    let bb = kind.block_bytes();
    let mut s = 0f32;
    for (b, xb) in w.chunks_exact(bb).zip(x) {
        s += match kind {
            KQuant::Q4K => {
                let summ = q4k_min_sum(&b[24..32], xb);
                q4k_value(
                    f32_at(b, 0),
                    f32_at(b, 4),
                    xb.d,
                    q4k_block_isum(b, xb),
                    summ,
                )
            }
            KQuant::Q6K => {
                let bias = q6k_bias_sum(b, xb);
                q6k_value(f32_at(b, 224), xb.d, q6k_block_isum(b, xb) - 32 * bias)
            }
        };
    }
    s
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use candle_core::quantized::k_quants::{BlockQ4K, BlockQ6K, GgmlType};

    /// Random f32 rows quantized by candle's own Q4_K / Q6_K encoders, as raw bytes.
    /// `x` as the file's blocks of `T`.
    pub(in super::super) fn encode<T: GgmlType>(x: &[f32]) -> Vec<u8> {
        let mut blocks = vec![T::zeros(); x.len() / QK_K];
        T::from_float(x, &mut blocks);
        let size = std::mem::size_of::<T>();
        // SAFETY: GGML blocks are plain `repr(C)` data.
        unsafe { std::slice::from_raw_parts(blocks.as_ptr() as *const u8, blocks.len() * size) }
            .to_vec()
    }

    fn decode<T: GgmlType>(bytes: &[u8], n: usize) -> Vec<f32> {
        let size = std::mem::size_of::<T>();
        let mut blocks = vec![T::zeros(); bytes.len() / size];
        // SAFETY: as above; sizes match.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                blocks.as_mut_ptr() as *mut u8,
                bytes.len(),
            )
        };
        let mut out = vec![0f32; n];
        T::to_float(&blocks, &mut out);
        out
    }

    /// Checks a panel matrix against the same matrix in blocks (37 rows): rows 0, 15, 16 and 36
    /// decode to the same values, 40 rows multiply within `tol` (relative, at least 1), and
    /// each batch size in `sizes` gives its rows the same bits as the 40-row batch.
    pub(in super::super) fn check_panels(
        what: &str,
        (panels, plain): (&super::super::Weight, &super::super::Weight),
        tol: f32,
        sizes: &[usize],
    ) {
        let (rows, cols) = (plain.rows(), plain.cols());
        let (mut a, mut b) = (vec![0f32; cols], vec![0f32; cols]);
        for r in [0, 15, 16, 36] {
            panels.row_f32(r, &mut a);
            plain.row_f32(r, &mut b);
            assert_eq!(a, b, "{what} row {r}");
        }
        let t = 40;
        let x = lcg(11, t * cols);
        let mut want = vec![0f32; t * rows];
        plain.matmul(&x, &mut want);
        let mut all = vec![0f32; t * rows];
        panels.matmul(&x, &mut all);
        for (i, (g, w)) in all.iter().zip(&want).enumerate() {
            assert!(
                (g - w).abs() <= tol * w.abs().max(1.0),
                "{what} {i}: {g} vs {w}"
            );
        }
        let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
        for &n in sizes {
            let mut part = vec![0f32; n * rows];
            panels.matmul(&x[..n * cols], &mut part);
            assert_eq!(bits(&part), bits(&all[..n * rows]), "{what}, {n} rows");
        }
    }

    /// `n` reproducible values in [-1, 1).
    pub(in super::super) fn lcg(seed: u64, n: usize) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                ((s >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 2.0
            })
            .collect()
    }

    fn check(kind: KQuant) {
        let n = 4 * QK_K;
        let w = lcg(1, n);
        let file = match kind {
            KQuant::Q4K => encode::<BlockQ4K>(&w),
            KQuant::Q6K => encode::<BlockQ6K>(&w),
        };
        assert_eq!(file.len(), 4 * kind.file_block_bytes());
        let wd = match kind {
            KQuant::Q4K => decode::<BlockQ4K>(&file, n),
            KQuant::Q6K => decode::<BlockQ6K>(&file, n),
        };
        let bytes = repack(kind, &file);
        assert_eq!(bytes.len(), 4 * kind.block_bytes());
        let xs: Vec<Vec<f32>> = (0..8).map(|i| lcg(10 + i, n)).collect();
        let mut xq = vec![BlockQ8K::default(); 8 * 4];
        for (i, x) in xs.iter().enumerate() {
            quantize_row_q8k(x, &mut xq[i * 4..(i + 1) * 4]);
        }
        let mut ours = vec![0f32; n];
        dequantize_row(kind, &bytes, &mut ours);
        assert_eq!(ours, wd, "{kind:?} decoding");
        let x4 = dot_rows::<4>(kind, &bytes, &xq, 4);
        let x8 = dot_rows::<8>(kind, &bytes, &xq, 4);
        for (i, x) in xs.iter().enumerate() {
            let exact: f32 = wd.iter().zip(x).map(|(a, b)| a * b).sum();
            let scalar = dot_x1_scalar(kind, &bytes, &xq[i * 4..(i + 1) * 4]);
            let [fast] = dot_rows::<1>(kind, &bytes, &xq[i * 4..(i + 1) * 4], 4);
            if i < 4 {
                assert_eq!(fast.to_bits(), x4[i].to_bits(), "{kind:?} x4 row {i}");
            }
            assert_eq!(fast.to_bits(), x8[i].to_bits(), "{kind:?} x8 row {i}");
            #[cfg(target_arch = "x86_64")]
            if crate::llm::kernels::has_avx512() {
                // The 512-bit and 256-bit kernels give the same bits.
                let q6 = kind == KQuant::Q6K;
                let row = &xq[i * 4..(i + 1) * 4];
                // SAFETY: the CPU has AVX2, FMA, AVX-512 BW and VNNI; sizes as above.
                let (wide, narrow) = unsafe {
                    (
                        super::super::kquant_avx512::dot_rows::<1>(q6, &bytes, row, 4),
                        super::super::kquant_avx2::dot_rows::<1>(q6, &bytes, row, 4),
                    )
                };
                assert_eq!(
                    wide[0].to_bits(),
                    narrow[0].to_bits(),
                    "{kind:?} avx512 row {i}"
                );
            }
            assert!(
                (scalar - fast).abs() <= 1e-5 * exact.abs().max(1.0),
                "{kind:?} row {i}: scalar {scalar} vs vector {fast}"
            );
            // Only the activations' 8-bit rounding separates the two (|x| ≤ 1, 1024 terms).
            assert!(
                (scalar - exact).abs() < 0.05,
                "{kind:?} row {i}: {scalar} vs {exact}"
            );
        }
    }

    #[test]
    fn q4k_kernels_agree_with_dequantized_weights_and_each_other() {
        check(KQuant::Q4K);
    }

    #[test]
    fn q6k_kernels_agree_with_dequantized_weights_and_each_other() {
        check(KQuant::Q6K);
    }

    #[test]
    fn q8k_quantization_is_the_same_bits_on_every_path() {
        // A block of half-way points of both signs (its scale is 1), a random one and zeros.
        let mut x = lcg(5, 3 * QK_K);
        for (i, v) in x.iter_mut().enumerate().take(QK_K) {
            *v = (i as f32 - 128.0) * 0.5;
        }
        x[QK_K - 1] = 127.0;
        x[2 * QK_K..].iter_mut().for_each(|v| *v = 0.0);
        let (mut a, mut b) = (vec![BlockQ8K::default(); 3], vec![BlockQ8K::default(); 3]);
        quantize_row_q8k(&x, &mut a);
        quantize_row_q8k_scalar(&x, &mut b);
        for (a, b) in a.iter().zip(&b) {
            assert_eq!(a.d.to_bits(), b.d.to_bits());
            assert_eq!(a.qs, b.qs);
            assert_eq!(a.bsums, b.bsums);
        }
    }

    #[test]
    fn q8k_sums_match_the_values() {
        let x = lcg(3, QK_K);
        let mut b = [BlockQ8K::default()];
        quantize_row_q8k(&x, &mut b);
        for (g, s) in b[0].bsums.iter().enumerate() {
            let want: i16 = b[0].qs[16 * g..16 * g + 16].iter().map(|&q| q as i16).sum();
            assert_eq!(*s, want);
        }
        let back: Vec<f32> = b[0].qs.iter().map(|&q| q as f32 * b[0].d).collect();
        let err = x
            .iter()
            .zip(&back)
            .map(|(a, b)| (a - b).abs())
            .fold(0f32, f32::max);
        assert!(err <= b[0].d * 0.5 + 1e-6);
    }
}

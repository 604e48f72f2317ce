//! Q4_K matmul on AMX-INT8 tiles (Intel Xeon from Sapphire Rapids on), used for every batch
//! size so that a row's result does not depend on its batch.
//!
//! Weights are repacked at load into panels of 16 rows (the last one padded with zero rows).
//! Per panel and block of 256 values, 2,432 bytes (the file's blocks take 2,304):
//! - `qs: [u8; 2048]`: per pair `j` of sub-blocks (2j, 2j+1), 512 bytes in the tile multiply's
//!   order: byte `64·kk + 4·n + e` holds value `4·kk + e` of row `n`'s sub-block 2j in its low
//!   nibble and of sub-block 2j+1 in its high nibble (a permutation of the file's bytes);
//! - `d: [f32; 16]`, `dmin: [f32; 16]`, then `sc: [[u8; 16]; 8]` and `m: [[u8; 16]; 8]`, the
//!   sub-blocks' 6-bit scales and mins, row by row.
//!
//! A sub-block's integer dots for up to 16 activation rows × 16 weight rows are one `tdpbsud`
//! (signed activations × unsigned 4-bit values, 32 deep, exact). Each row then takes the same
//! f32 steps whatever the batch: per sub-block, `acc += (dot·xd)·(d·sc) − (d_min·m)·(xd·Σx)`.
//! The tile instructions are written as inline assembly (Rust has no stable AMX intrinsics).

use std::arch::asm;
use std::arch::x86_64::*;

use super::kquant::{BlockQ8K, QK_K};

/// Weight rows per panel.
pub const PANEL: usize = 16;
/// Bytes of one panel's block of 256 values.
pub const PANEL_BLOCK_BYTES: usize = 2048 + 64 + 64 + 128 + 128;
const D_AT: usize = 2048;
const DMIN_AT: usize = 2112;
const SC_AT: usize = 2176;
const M_AT: usize = 2304;

/// Whether the CPU has AMX-INT8 and the OS lets this process use the tiles (Linux asks for
/// the permission once, `arch_prctl(ARCH_REQ_XCOMP_PERM)`). `HUMANOID_NO_AMX` turns it off.
pub fn available() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        if std::env::var_os("HUMANOID_NO_AMX").is_some() || !super::has_avx512() {
            return false;
        }
        let leaf = __cpuid_count(7, 0);
        let (tile, int8) = (leaf.edx >> 24 & 1 == 1, leaf.edx >> 25 & 1 == 1);
        if !(tile && int8) {
            return false;
        }
        request_tiles()
    })
}

#[cfg(target_os = "linux")]
fn request_tiles() -> bool {
    const ARCH_REQ_XCOMP_PERM: libc::c_long = 0x1023;
    const XFEATURE_XTILEDATA: libc::c_long = 18;
    // SAFETY: a plain system call with integer arguments.
    unsafe {
        libc::syscall(
            libc::SYS_arch_prctl,
            ARCH_REQ_XCOMP_PERM,
            XFEATURE_XTILEDATA,
        ) == 0
    }
}

#[cfg(not(target_os = "linux"))]
fn request_tiles() -> bool {
    false
}

/// The file's Q4_K blocks (`rows × cols/256` of 144 bytes) as panels.
pub fn repack(file: &[u8], rows: usize, cols: usize) -> Vec<u8> {
    let nb = cols / QK_K;
    let panels = rows.div_ceil(PANEL);
    let mut out = vec![0u8; panels * nb * PANEL_BLOCK_BYTES];
    for p in 0..panels {
        for i in 0..nb {
            let o = &mut out[(p * nb + i) * PANEL_BLOCK_BYTES..][..PANEL_BLOCK_BYTES];
            for n in 0..PANEL.min(rows - p * PANEL) {
                let b = &file[((p * PANEL + n) * nb + i) * 144..][..144];
                let (sc, m) = super::kquant::q4k_scales_mins(&b[4..16]);
                let f = |at: usize| half::f16::from_le_bytes([b[at], b[at + 1]]).to_f32();
                o[D_AT + 4 * n..][..4].copy_from_slice(&f(0).to_le_bytes());
                o[DMIN_AT + 4 * n..][..4].copy_from_slice(&f(2).to_le_bytes());
                for s in 0..8 {
                    o[SC_AT + 16 * s + n] = sc[s];
                    o[M_AT + 16 * s + n] = m[s];
                }
                let qs = &b[16..144];
                for j in 0..4 {
                    for kk in 0..8 {
                        for e in 0..4 {
                            o[512 * j + 64 * kk + 4 * n + e] = qs[32 * j + 4 * kk + e];
                        }
                    }
                }
            }
        }
    }
    out
}

/// Row `r` of a repacked matrix as f32.
pub fn dequantize_row(bytes: &[u8], cols: usize, r: usize, out: &mut [f32]) {
    let nb = cols / QK_K;
    let (p, n) = (r / PANEL, r % PANEL);
    for (i, o) in out.chunks_exact_mut(QK_K).enumerate().take(nb) {
        let b = &bytes[(p * nb + i) * PANEL_BLOCK_BYTES..][..PANEL_BLOCK_BYTES];
        let f = |at: usize| f32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let (d, dmin) = (f(D_AT + 4 * n), f(DMIN_AT + 4 * n));
        for s in 0..8 {
            let (sc, m) = (b[SC_AT + 16 * s + n] as f32, b[M_AT + 16 * s + n] as f32);
            for l in 0..32 {
                let byte = b[512 * (s / 2) + 64 * (l / 4) + 4 * n + l % 4];
                let q = if s % 2 == 0 { byte & 15 } else { byte >> 4 };
                o[32 * s + l] = d * sc * q as f32 - dmin * m;
            }
        }
    }
}

/// Per activation row and block, its scale and the scaled sums of each sub-block of 32:
/// `[xd, xd·Σ sub 0, …, xd·Σ sub 7]`.
pub fn row_sums(x: &[BlockQ8K]) -> Vec<[f32; 9]> {
    x.iter()
        .map(|b| {
            let mut s = [0f32; 9];
            s[0] = b.d;
            for j in 0..8 {
                s[1 + j] = b.d * (b.bsums[2 * j] as i32 + b.bsums[2 * j + 1] as i32) as f32;
            }
            s
        })
        .collect()
}

/// The tile shapes: A (activations) `mr × 32` bytes in tmm0/tmm1, B (weights) `8 × 64` bytes
/// in tmm2/tmm3, C (`mr × 16` i32) in tmm4/tmm5.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

impl TileConfig {
    fn new(mr: usize) -> Self {
        let mut c = [0u8; 64];
        c[0] = 1; // palette
        let mut set = |t: usize, rows: usize, colsb: u16| {
            c[16 + 2 * t..18 + 2 * t].copy_from_slice(&colsb.to_le_bytes());
            c[48 + t] = rows as u8;
        };
        set(0, mr, 32);
        set(1, mr, 32);
        set(2, 8, 64);
        set(3, 8, 64);
        set(4, mr, 64);
        set(5, mr, 64);
        Self(c)
    }
}

#[repr(C, align(64))]
struct Buf<const N: usize>([u8; N]);

/// `y[r, 16·p + n]` for panels `p0..p1`, every row `r < t` of `x` (row r's blocks at `r·nb`).
///
/// # Safety
/// [`available`] must be true; `w` holds the panels, `x` and `sums` `t·nb` entries, and `y`
/// points at a `t × n_out` matrix of which this call writes only its panels' columns.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn matmul_panels(
    w: &[u8],
    nb: usize,
    x: &[BlockQ8K],
    sums: &[[f32; 9]],
    t: usize,
    (y, n_out): (*mut f32, usize),
    (p0, p1): (usize, usize),
) {
    let stride = nb * std::mem::size_of::<BlockQ8K>();
    let qs_at = std::mem::offset_of!(BlockQ8K, qs);
    let mut bbuf = Buf::<1024>([0; 1024]);
    let mut cbuf = Buf::<2048>([0; 2048]);
    let mut configured = 0;
    for p in p0..p1 {
        let mut r0 = 0;
        while r0 < t {
            let mr = (t - r0).min(16);
            if mr != configured && mr >= VECTOR_BELOW {
                let cfg = TileConfig::new(mr);
                asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
                configured = mr;
            }
            let mut acc = [_mm512_setzero_ps(); 16];
            for i in 0..nb {
                let blk = w.as_ptr().add((p * nb + i) * PANEL_BLOCK_BYTES);
                let d = _mm512_loadu_ps(blk.add(D_AT) as *const f32);
                let dmin = _mm512_loadu_ps(blk.add(DMIN_AT) as *const f32);
                let xa = (x.as_ptr().add(r0 * nb + i) as *const u8).add(qs_at);
                for j in 0..4 {
                    let q = blk.add(512 * j);
                    if mr < VECTOR_BELOW {
                        vector_dots(q, xa.add(64 * j), stride, mr, &mut cbuf);
                    } else {
                        tile_dots(q, xa.add(64 * j), stride, &mut bbuf, &mut cbuf);
                    }
                    for h in 0..2 {
                        let s = 2 * j + h;
                        let u8s = |at: usize| {
                            _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(_mm_loadu_si128(
                                blk.add(at + 16 * s) as *const __m128i,
                            )))
                        };
                        let dsc = _mm512_mul_ps(d, u8s(SC_AT));
                        let dm = _mm512_mul_ps(dmin, u8s(M_AT));
                        let c = cbuf.0.as_ptr().add(1024 * h) as *const __m512i;
                        for (r, a) in acc.iter_mut().enumerate().take(mr) {
                            let rs = sums.get_unchecked((r0 + r) * nb + i);
                            let dot = _mm512_cvtepi32_ps(_mm512_load_si512(c.add(r)));
                            let dot = _mm512_mul_ps(dot, _mm512_set1_ps(rs[0]));
                            *a = _mm512_fmadd_ps(dot, dsc, *a);
                            *a = _mm512_fnmadd_ps(dm, _mm512_set1_ps(rs[1 + s]), *a);
                        }
                    }
                }
            }
            let cols = (n_out - p * PANEL).min(PANEL);
            let mask: __mmask16 = if cols == 16 { !0 } else { (1u16 << cols) - 1 };
            for (r, a) in acc.iter().enumerate().take(mr) {
                _mm512_mask_storeu_ps(y.add((r0 + r) * n_out + p * PANEL), mask, *a);
            }
            r0 += 16;
        }
    }
    if configured > 0 {
        asm!("tilerelease", options(nostack, nomem));
    }
}

/// Batches of fewer rows take the sub-block dots from AVX-512 VNNI instead of the tiles
/// (the same exact integers, so the same bits; decoding one row is faster without the
/// round trip through the tile buffers).
const VECTOR_BELOW: usize = 4;

/// The dots of sub-blocks 2j and 2j+1 (`q`: their 512 packed bytes) with 16 activation rows
/// (`xa`: row 0's sub-block 2j, rows `stride` bytes apart) into `cbuf` as two `16 × 16` i32
/// matrices, on the tiles.
#[inline(always)]
unsafe fn tile_dots(
    q: *const u8,
    xa: *const u8,
    stride: usize,
    bbuf: &mut Buf<1024>,
    cbuf: &mut Buf<2048>,
) {
    let m4 = _mm512_set1_epi8(0x0F);
    for v in 0..8 {
        let b = _mm512_loadu_si512(q.add(64 * v) as *const _);
        let lo = _mm512_and_si512(b, m4);
        let hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
        _mm512_store_si512(bbuf.0.as_mut_ptr().add(64 * v) as *mut _, lo);
        _mm512_store_si512(bbuf.0.as_mut_ptr().add(512 + 64 * v) as *mut _, hi);
    }
    asm!(
        "tileloadd tmm2, [{b} + {s64}]",
        "tileloadd tmm3, [{b2} + {s64}]",
        "tileloadd tmm0, [{a} + {sx}]",
        "tileloadd tmm1, [{a2} + {sx}]",
        "tilezero tmm4",
        "tilezero tmm5",
        "tdpbsud tmm4, tmm0, tmm2",
        "tdpbsud tmm5, tmm1, tmm3",
        "tilestored [{c} + {s64}], tmm4",
        "tilestored [{c2} + {s64}], tmm5",
        b = in(reg) bbuf.0.as_ptr(),
        b2 = in(reg) bbuf.0.as_ptr().add(512),
        a = in(reg) xa,
        a2 = in(reg) xa.add(32),
        sx = in(reg) stride,
        s64 = in(reg) 64usize,
        c = in(reg) cbuf.0.as_mut_ptr(),
        c2 = in(reg) cbuf.0.as_mut_ptr().add(1024),
        options(nostack),
    );
}

/// As [`tile_dots`] for `mr` rows, with `vpdpbusd`: the packed bytes are already in its order
/// (16 weight rows × 4 consecutive values per 64 bytes).
#[inline(always)]
unsafe fn vector_dots(q: *const u8, xa: *const u8, stride: usize, mr: usize, cbuf: &mut Buf<2048>) {
    let m4 = _mm512_set1_epi8(0x0F);
    let mut lo = [_mm512_setzero_si512(); 8];
    let mut hi = [_mm512_setzero_si512(); 8];
    for v in 0..8 {
        let b = _mm512_loadu_si512(q.add(64 * v) as *const _);
        lo[v] = _mm512_and_si512(b, m4);
        hi[v] = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
    }
    for r in 0..mr {
        let x = xa.add(r * stride);
        let (mut c0, mut c1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        for v in 0..8 {
            let x0 = _mm512_set1_epi32((x.add(4 * v) as *const i32).read_unaligned());
            let x1 = _mm512_set1_epi32((x.add(32 + 4 * v) as *const i32).read_unaligned());
            c0 = _mm512_dpbusd_epi32(c0, lo[v], x0);
            c1 = _mm512_dpbusd_epi32(c1, hi[v], x1);
        }
        _mm512_store_si512(cbuf.0.as_mut_ptr().add(64 * r) as *mut _, c0);
        _mm512_store_si512(cbuf.0.as_mut_ptr().add(1024 + 64 * r) as *mut _, c1);
    }
}

#[cfg(test)]
mod tests {
    use super::super::kquant::{self, quantize_row_q8k, KQuant};
    use super::super::Weight;
    use super::*;
    use candle_core::quantized::k_quants::{BlockQ4K, GgmlType};

    fn lcg(seed: u64, n: usize) -> Vec<f32> {
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

    /// 37 rows (a padded last panel) × 512 columns in the file's Q4_K blocks.
    fn file_blocks(rows: usize, cols: usize) -> Vec<u8> {
        let w = lcg(7, rows * cols);
        let mut blocks = vec![BlockQ4K::zeros(); rows * cols / QK_K];
        BlockQ4K::from_float(&w, &mut blocks);
        let size = std::mem::size_of::<BlockQ4K>();
        // SAFETY: the blocks are plain bytes of `size` each.
        unsafe { std::slice::from_raw_parts(blocks.as_ptr() as *const u8, blocks.len() * size) }
            .to_vec()
    }

    #[test]
    fn tiles_agree_with_the_other_kernels_and_do_not_depend_on_the_batch() {
        if !available() {
            eprintln!("no AMX-INT8 here: skipped");
            return;
        }
        let (rows, cols) = (37, 512);
        let file = file_blocks(rows, cols);
        let tiles = Weight::Q4KTiles {
            rows,
            cols,
            bytes: repack(&file, rows, cols),
        };
        let plain = Weight::K {
            kind: KQuant::Q4K,
            rows,
            cols,
            bytes: kquant::repack(KQuant::Q4K, &file),
        };
        // Decoding: the same values as the file's blocks.
        let (mut a, mut b) = (vec![0f32; cols], vec![0f32; cols]);
        for r in [0, 15, 16, 36] {
            tiles.row_f32(r, &mut a);
            plain.row_f32(r, &mut b);
            assert_eq!(a, b, "row {r}");
        }
        let t = 40;
        let x = lcg(11, t * cols);
        let mut want = vec![0f32; t * rows];
        plain.matmul(&x, &mut want);
        let mut all = vec![0f32; t * rows];
        tiles.matmul(&x, &mut all);
        for (i, (g, w)) in all.iter().zip(&want).enumerate() {
            assert!((g - w).abs() <= 1e-3 * w.abs().max(1.0), "{i}: {g} vs {w}");
        }
        // Every batch size gives each row the same bits.
        for n in [1, 3, 16, 17, 33] {
            let mut part = vec![0f32; n * rows];
            tiles.matmul(&x[..n * cols], &mut part);
            assert_eq!(
                part.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                all[..n * rows]
                    .iter()
                    .map(|v| v.to_bits())
                    .collect::<Vec<_>>(),
                "{n} rows"
            );
        }
        // The sums the kernel uses.
        let mut xq = vec![BlockQ8K::default(); 2];
        quantize_row_q8k(&x[..cols], &mut xq);
        let s = row_sums(&xq);
        assert_eq!(s[0][0], xq[0].d);
    }
}

//! K-quant matmul on AMX-INT8 tiles (Intel Xeon from Sapphire Rapids on), used for every
//! batch size of a matrix so that a row's result does not depend on its batch.
//!
//! Weights are repacked at load into panels of 16 rows (the last one padded with zero rows).
//! A panel's block of 256 values holds its values in the tile multiply's order: for each
//! sub-block `g` (the values that share a scale), byte `64·kk + 4·n + e` is value `4·kk + e`
//! of row `n`. Then the rows' scales.
//! - Q4_K (sub-blocks of 32), 2,368 bytes (the file's 16 blocks: 2,304): `qs: [u8; 2048]`,
//!   sub-blocks 2j and 2j+1 in the low and high nibbles of the 512 bytes at `512·j` (a
//!   permutation of the file's bytes); `d, dmin: [f16; 16]`; `sc: [[u8; 16]; 8]`; the
//!   minimums a pair of sub-blocks at a time, row by row, `m: [[[u8; 2]; 16]; 4]`.
//! - Q6_K (sub-blocks of 16), 3,360 bytes (as the file's): `ql: [u8; 2048]`, the low 4 bits
//!   of sub-blocks 2j and 2j+1 in the nibbles of the 256 bytes at `256·j`; `qh: [u8; 1024]`,
//!   the high 2 bits of sub-blocks 4j..4j+3 in the bit pairs of the 256 bytes at `256·j`;
//!   `sc: [[i8; 16]; 16]`; `d: [f16; 16]`. The bits are split into one value a byte (sub-block
//!   g at `256·g`) as they are multiplied, so that a decode step streams no more bytes than
//!   the file holds.
//!
//! A sub-block's integer dots for up to 16 activation rows × 16 weight rows are one `tdpbsud`
//! (signed activations × unsigned values, exact). Fewer than [`VECTOR_BELOW`] rows take the
//! same integers from AVX-512 VNNI. Each row then takes the same integer and f32 steps
//! whatever the batch (`steps.rs`: exact integer sums, then two f32 steps a block).
//! The tile instructions are inline assembly (Rust has no stable AMX intrinsics).

use std::arch::asm;
use std::arch::x86_64::*;

use super::kquant::{BlockQ8K, KQuant};
use super::{prefetch, prefetch_l2};

mod layout;
mod steps;
use layout::Q6_QH;
pub use layout::{dequantize_row, repack};
pub use steps::{row_sums, RowBlock};
use steps::{scaled_by, BlockScales};

/// Weight rows per panel.
pub const PANEL: usize = 16;

/// Batches of fewer rows take the sub-block dots from AVX-512 VNNI instead of the tiles (the
/// same integers, so the same bits). A tile pays for its round trip only when all its 16
/// rows are used: on the 1.5B (Xeon with AMX, `bench llm`) batch-4 decode measured 41 tok/s
/// on the tiles and 57 on the vector dots, batch 16 88 and 88–90, prefill 163 and 135.
pub const VECTOR_BELOW: usize = 16;

/// Bytes of one panel's block of 256 values.
pub const fn panel_block_bytes(kind: KQuant) -> usize {
    kind.panel_block_bytes()
}

/// Sub-blocks per 256 values and values per sub-block.
pub(super) const fn subs(kind: KQuant) -> (usize, usize) {
    match kind {
        KQuant::Q4K => (8, 32),
        KQuant::Q6K => (16, 16),
    }
}

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
        // The OS must have turned the tile state on (XCR0 bits 17 and 18) before a process
        // may ask for it.
        let osxsave = __cpuid(1).ecx >> 27 & 1 == 1;
        // SAFETY: `xgetbv` exists where cpuid reports OSXSAVE.
        let xcr0 = if osxsave { unsafe { xcr0() } } else { 0 };
        tile && int8 && xcr0 >> 17 & 3 == 3 && request_tiles()
    })
}

#[target_feature(enable = "xsave")]
unsafe fn xcr0() -> u64 {
    _xgetbv(0)
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

/// The tile shapes for sub-blocks of `sub` values: A (activations) `mr × sub` bytes in
/// tmm0/tmm1, B (weights) `sub/4 × 64` bytes in tmm2/tmm3, C (`mr × 16` i32) in tmm4/tmm5.
#[repr(C, align(64))]
struct TileConfig([u8; 64]);

impl TileConfig {
    fn new(mr: usize, sub: usize) -> Self {
        let mut c = [0u8; 64];
        c[0] = 1; // palette
        let mut set = |t: usize, rows: usize, colsb: usize| {
            c[16 + 2 * t..18 + 2 * t].copy_from_slice(&(colsb as u16).to_le_bytes());
            c[48 + t] = rows as u8;
        };
        for t in 0..2 {
            set(t, mr, sub);
            set(2 + t, sub / 4, 64);
            set(4 + t, mr, 64);
        }
        Self(c)
    }
}

#[repr(C, align(64))]
struct Buf<const N: usize>([u8; N]);

thread_local! {
    /// Per thread, a panel's blocks split into one value a byte (kept between calls).
    static SCRATCH: std::cell::RefCell<Vec<Buf<4096>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What a call needs to know of the activations.
pub struct Rows<'a> {
    /// `t·nb` quantized blocks, row r's at `r·nb`.
    pub x: &'a [BlockQ8K],
    /// [`row_sums`] of `x`.
    pub sums: &'a [RowBlock],
    pub t: usize,
}

/// Whether K-quant matrices are held in panels: AVX-512 VNNI, with or without the tiles.
pub fn panels() -> bool {
    super::has_avx512()
}

/// `y[r, 16·p + n]` for panels `p0..p1` and every row `r < t`.
///
/// # Safety
/// [`panels`] must be true; `w` holds `kind`'s panels of `nb` blocks a row, and `y` points
/// at a `t × n_out` matrix of which this call writes only its panels' columns.
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
pub unsafe fn matmul_panels(
    kind: KQuant,
    w: &[u8],
    nb: usize,
    rows: &Rows<'_>,
    (y, n_out): (*mut f32, usize),
    (p0, p1): (usize, usize),
) {
    let (nsub, sub) = subs(kind);
    let pb = panel_block_bytes(kind);
    let t = rows.t;
    // A panel's packed bits are split into bytes once for all its row tiles, unless the rows
    // are too few for the tiles (the vector dots split them in registers). Without the tiles
    // (AVX-512 VNNI only) every batch takes the vector dots.
    let below = if available() {
        VECTOR_BELOW
    } else {
        usize::MAX
    };
    let split = t >= below;
    SCRATCH.with_borrow_mut(|unpacked| {
        if split && unpacked.len() < nb {
            unpacked.resize_with(nb, || Buf([0; 4096]));
        }
    });
    let mut cbuf = Buf::<2048>([0; 2048]);
    let mut configured = 0;
    let mut tiles: Vec<*const u8> = Vec::with_capacity(nb);
    for p in p0..p1 {
        let panel = w.as_ptr().add(p * nb * pb);
        tiles.clear();
        if split {
            SCRATCH.with_borrow_mut(|unpacked| {
                for (i, u) in unpacked.iter_mut().take(nb).enumerate() {
                    let blk = panel.add(i * pb);
                    // Ask for the weights ahead: this is where they stream from memory.
                    prefetch(blk.wrapping_add(AHEAD * pb), pb);
                    match kind {
                        KQuant::Q4K => unpack_q4k(blk, u),
                        KQuant::Q6K => unpack_q6k(blk, u),
                    }
                    tiles.push(u.0.as_ptr());
                }
            });
        } else {
            tiles.extend((0..nb).map(|i| panel.add(i * pb)));
        }
        let mut r0 = 0;
        while r0 < t {
            let mr = (t - r0).min(16);
            if mr != configured && mr >= below {
                let cfg = TileConfig::new(mr, sub);
                asm!("ldtilecfg [{}]", in(reg) cfg.0.as_ptr(), options(nostack, readonly));
                configured = mr;
            }
            let job = RowTile {
                kind,
                nsub,
                sub,
                panel,
                pb,
                tiles: &tiles,
                packed: !split,
                nb,
                rows,
                r0,
                mr,
            };
            let cols = (n_out - p * PANEL).min(PANEL);
            let out = (y.add(r0 * n_out + p * PANEL), n_out, cols);
            // Q4_K's packed nibbles take `run`: the dots of all the rows, then their f32 steps
            // (measured faster than `run_vector` for them, slower for the other cases).
            // Q6_K's packed bits (or any sub-block dots off the tiles) take `run_vector`.
            if mr < below && (kind == KQuant::Q6K || !job.packed) {
                match (kind, mr) {
                    (KQuant::Q4K, _) => job.run_vector::<8, 1, 0>(out),
                    (KQuant::Q6K, 1) => job.run_vector::<4, 2, 1>(out),
                    (KQuant::Q6K, _) => job.run_vector::<4, 2, 0>(out),
                }
            } else if mr == 16 {
                job.run::<16>(&mut cbuf, out)
            } else if mr == 1 {
                job.run::<1>(&mut cbuf, out)
            } else {
                job.run::<0>(&mut cbuf, out)
            }
            r0 += 16;
        }
    }
    if configured > 0 {
        asm!("tilerelease", options(nostack, nomem));
    }
}

/// Splits a Q4_K panel block's nibbles into the 8 sub-blocks' tiles of bytes.
#[inline(always)]
unsafe fn unpack_q4k(blk: *const u8, out: &mut Buf<4096>) {
    let m4 = _mm512_set1_epi8(0x0F);
    for j in 0..4 {
        for v in 0..8 {
            let b = _mm512_loadu_si512(blk.add(512 * j + 64 * v) as *const _);
            let lo = _mm512_and_si512(b, m4);
            let hi = _mm512_and_si512(_mm512_srli_epi16(b, 4), m4);
            _mm512_store_si512(out.0.as_mut_ptr().add(1024 * j + 64 * v) as *mut _, lo);
            _mm512_store_si512(
                out.0.as_mut_ptr().add(1024 * j + 512 + 64 * v) as *mut _,
                hi,
            );
        }
    }
}

/// Splits a Q6_K panel block's 4 + 2 bits into the 16 sub-blocks' tiles of bytes.
#[inline(always)]
unsafe fn unpack_q6k(blk: *const u8, out: &mut Buf<4096>) {
    for j in 0..4 {
        for (k, w) in q6k_group(blk, j).iter().enumerate() {
            for (kk, v) in w.iter().enumerate() {
                let to = out.0.as_mut_ptr().add(256 * (4 * j + k) + 64 * kk);
                _mm512_store_si512(to as *mut _, *v);
            }
        }
    }
}

/// Sub-blocks `4j..4j+3` of a Q6_K panel block as bytes, in the tiles' order: `[k][kk]` holds
/// values `4·kk..4·kk+3` of sub-block `4j+k` for the 16 rows.
#[inline(always)]
unsafe fn q6k_group(blk: *const u8, j: usize) -> [[__m512i; 4]; 4] {
    let (m4, m2) = (_mm512_set1_epi8(0x0F), _mm512_set1_epi8(0x30));
    let mut w = [[_mm512_setzero_si512(); 4]; 4];
    for kk in 0..4 {
        let a = _mm512_loadu_si512(blk.add(512 * j + 64 * kk) as *const _);
        let b = _mm512_loadu_si512(blk.add(512 * j + 256 + 64 * kk) as *const _);
        let h = _mm512_loadu_si512(blk.add(Q6_QH + 256 * j + 64 * kk) as *const _);
        let hi = [
            _mm512_and_si512(_mm512_slli_epi16(h, 4), m2),
            _mm512_and_si512(_mm512_slli_epi16(h, 2), m2),
            _mm512_and_si512(h, m2),
            _mm512_and_si512(_mm512_srli_epi16(h, 2), m2),
        ];
        let lo = [a, _mm512_srli_epi16(a, 4), b, _mm512_srli_epi16(b, 4)];
        for (wk, (lo, hi)) in w.iter_mut().zip(lo.iter().zip(&hi)) {
            // `(lo & 0x0F) | hi` in one instruction.
            wk[kk] = _mm512_ternarylogic_epi32::<0xEA>(*lo, m4, *hi);
        }
    }
    w
}

/// One panel against up to 16 activation rows.
struct RowTile<'a> {
    kind: KQuant,
    nsub: usize,
    sub: usize,
    panel: *const u8,
    pb: usize,
    /// Per block, its sub-blocks' tiles of bytes (`16·sub` bytes each, in order), or with
    /// fewer than [`VECTOR_BELOW`] rows the panel's own packed bits.
    tiles: &'a [*const u8],
    /// `tiles` are the panel's packed bits (split as they are multiplied).
    packed: bool,
    nb: usize,
    rows: &'a Rows<'a>,
    r0: usize,
    mr: usize,
}

impl RowTile<'_> {
    /// Asks for the block [`AHEAD`] of `blk` to be brought into L2, a slice for each pair of
    /// sub-blocks `g`, `g + 1` multiplied. Only the panel's first row tile asks: it streams
    /// the panel from memory, the others find it cached. Asking for a whole block at once
    /// (about 40–50 lines into L1) stalled the loads: on an AMD EPYC (Zen 4) Q6_K panels
    /// streamed at 12 GiB/s from memory against 30–37 spread out (BENCHMARKS.md).
    #[inline(always)]
    fn prefetch_ahead(&self, blk: *const u8, g: usize) {
        let (at, parts) = (blk.wrapping_add(AHEAD * self.pb), self.nsub / 2);
        let part = (self.pb / parts).next_multiple_of(64);
        let from = g / 2 * part;
        if from < self.pb {
            prefetch_l2(at.wrapping_add(from), part.min(self.pb - from));
        }
    }

    /// Writes the `mr` rows' results for the panel's first `cols` columns at `y`, rows `n_out`
    /// apart. `M`: `mr` when it is known here (16 for a whole tile, 1 for a single row: the
    /// loops unroll and the accumulators stay in registers), 0 otherwise.
    #[inline(always)]
    unsafe fn run<const M: usize>(
        &self,
        cbuf: &mut Buf<2048>,
        (y, n_out, cols): (*mut f32, usize, usize),
    ) {
        let mr = if M > 0 { M } else { self.mr };
        let stride = self.nb * std::mem::size_of::<BlockQ8K>();
        let qs_at = std::mem::offset_of!(BlockQ8K, qs);
        let tile_bytes = 16 * self.sub;
        let mut acc = [_mm512_setzero_ps(); 16];
        for i in 0..self.nb {
            let blk = self.panel.add(i * self.pb);
            let scales = BlockScales::new(self.kind, blk);
            let xa = (self.rows.x.as_ptr().add(self.r0 * self.nb + i) as *const u8).add(qs_at);
            let rb = self.rows.sums.as_ptr().add(self.r0 * self.nb + i);
            let mut s = [_mm512_setzero_si512(); 16];
            for g in (0..self.nsub).step_by(2) {
                if self.r0 == 0 && self.packed {
                    self.prefetch_ahead(blk, g);
                }
                let b = self.tiles[i].add(tile_bytes * g);
                let a = xa.add(self.sub * g);
                if self.packed {
                    let pair = self.tiles[i].add(512 * (g / 2));
                    vector_dots_q4k(pair, (a, stride, mr), &scales, g, &mut s);
                    continue;
                }
                tile_dots(b, a, (stride, self.sub, tile_bytes), cbuf);
                for h in 0..2 {
                    let c = cbuf.0.as_ptr().add(1024 * h) as *const __m512i;
                    for (r, s) in s.iter_mut().enumerate().take(mr) {
                        let c = scales.offset(
                            _mm512_load_si512(c.add(r)),
                            g + h,
                            &*rb.add(r * self.nb),
                        );
                        *s = scales.scaled(*s, c, g + h);
                    }
                }
            }
            for (r, (a, s)) in acc.iter_mut().zip(&s).enumerate().take(mr) {
                scales.finish(a, *s, &*rb.add(r * self.nb));
            }
        }
        let mask: __mmask16 = if cols == 16 { !0 } else { (1u16 << cols) - 1 };
        for (r, a) in acc.iter().enumerate().take(mr) {
            _mm512_mask_storeu_ps(y.add(r * n_out), mask, *a);
        }
    }

    /// `s` with a pair of sub-blocks' dots `c` (sub-blocks `g`, `g + 1`) of the row of `rb`.
    #[inline(always)]
    unsafe fn pair_step(
        &self,
        scales: &BlockScales,
        s: __m512i,
        c: [__m512i; 2],
        g: usize,
        rb: &RowBlock,
    ) -> __m512i {
        let s = scales.scaled(s, scales.offset(c[0], g, rb), g);
        scales.scaled(s, scales.offset(c[1], g + 1, rb), g + 1)
    }

    /// As [`Self::run`] for fewer rows than [`VECTOR_BELOW`] (or any number without the tiles),
    /// with AVX-512 VNNI: the dots of a pair of sub-blocks (`KK` groups of 4 values each) stay
    /// in registers, `R` activation rows at a time against the pair's weights, then take the
    /// same integer and f32 steps as the tiles' ([`BlockScales`]).
    #[inline(always)]
    unsafe fn run_vector<const KK: usize, const R: usize, const M: usize>(
        &self,
        (y, n_out, cols): (*mut f32, usize, usize),
    ) {
        let mr = if M > 0 { M } else { self.mr };
        let stride = self.nb * std::mem::size_of::<BlockQ8K>();
        let qs_at = std::mem::offset_of!(BlockQ8K, qs);
        let mut acc = [_mm512_setzero_ps(); 16];
        for i in 0..self.nb {
            let blk = self.panel.add(i * self.pb);
            let scales = BlockScales::new(self.kind, blk);
            let xa = (self.rows.x.as_ptr().add(self.r0 * self.nb + i) as *const u8).add(qs_at);
            let rb = self.rows.sums.as_ptr().add(self.r0 * self.nb + i);
            let mut s = [_mm512_setzero_si512(); 16];
            let mut group = [[_mm512_setzero_si512(); 4]; 4];
            for g in (0..self.nsub).step_by(2) {
                if self.r0 == 0 && self.packed {
                    self.prefetch_ahead(blk, g);
                }
                let b = self.tiles[i].add(16 * self.sub * g);
                // No closures here: they would not inherit the caller's target features.
                let mut w = [[_mm512_setzero_si512(); KK]; 2];
                if self.packed && KK == 4 {
                    // Q6_K's packed bits, split in registers a group of 4 sub-blocks at a time.
                    if g % 4 == 0 {
                        group = q6k_group(blk, g / 4);
                    }
                    for (h, wh) in w.iter_mut().enumerate() {
                        wh.copy_from_slice(&group[g % 4 + h][..KK]);
                    }
                } else {
                    for (h, wh) in w.iter_mut().enumerate() {
                        for (kk, v) in wh.iter_mut().enumerate() {
                            *v = _mm512_loadu_si512(b.add(16 * self.sub * h + 64 * kk) as *const _);
                        }
                    }
                }
                let a = xa.add(self.sub * g);
                let mut r = 0;
                while r + R <= mr {
                    let c = pair_dots::<KK, R>(&w, a.add(r * stride), stride);
                    for (k, c) in c.iter().enumerate() {
                        s[r + k] =
                            self.pair_step(&scales, s[r + k], *c, g, &*rb.add((r + k) * self.nb));
                    }
                    r += R;
                }
                while r < mr {
                    let [c] = pair_dots::<KK, 1>(&w, a.add(r * stride), stride);
                    s[r] = self.pair_step(&scales, s[r], c, g, &*rb.add(r * self.nb));
                    r += 1;
                }
            }
            for (r, (a, s)) in acc.iter_mut().zip(&s).enumerate().take(mr) {
                scales.finish(a, *s, &*rb.add(r * self.nb));
            }
        }
        let mask: __mmask16 = if cols == 16 { !0 } else { (1u16 << cols) - 1 };
        for (r, a) in acc.iter().enumerate().take(mr) {
            _mm512_mask_storeu_ps(y.add(r * n_out), mask, *a);
        }
    }
}

/// Blocks ahead of the one being multiplied whose bytes are asked for early (about 5 KB
/// for Q4_K): the panels lie one after another, so this runs on into the next panel.
const AHEAD: usize = 2;

/// The dots of two consecutive sub-blocks (`b`: their tiles of bytes, `tile_bytes` apart)
/// with 16 activation rows (`a`: row 0's first sub-block, rows `stride` apart) into `cbuf` as
/// two `16 × 16` i32 matrices, on the tiles.
#[inline(always)]
unsafe fn tile_dots(
    b: *const u8,
    a: *const u8,
    (stride, sub, tile_bytes): (usize, usize, usize),
    cbuf: &mut Buf<2048>,
) {
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
        b = in(reg) b,
        b2 = in(reg) b.add(tile_bytes),
        a = in(reg) a,
        a2 = in(reg) a.add(sub),
        sx = in(reg) stride,
        s64 = in(reg) 64usize,
        c = in(reg) cbuf.0.as_mut_ptr(),
        c2 = in(reg) cbuf.0.as_mut_ptr().add(1024),
        options(nostack),
    );
}

/// Adds the dots of `mr` activation rows (`a`: row 0's sub-block `g`, rows `stride` apart)
/// with a Q4_K panel block's packed pair of sub-blocks `g`, `g + 1` (`b`: low and high
/// nibbles) to the rows' integer sums `s`, with AVX-512 VNNI: the same integers as
/// [`tile_dots`] and [`BlockScales::scaled`].
#[inline(always)]
unsafe fn vector_dots_q4k(
    b: *const u8,
    (a, stride, mr): (*const u8, usize, usize),
    scales: &BlockScales,
    g: usize,
    s: &mut [__m512i; 16],
) {
    let m4 = _mm512_set1_epi8(0x0F);
    let mut lo = [_mm512_setzero_si512(); 8];
    let mut hi = [_mm512_setzero_si512(); 8];
    for v in 0..8 {
        let q = _mm512_loadu_si512(b.add(64 * v) as *const _);
        lo[v] = _mm512_and_si512(q, m4);
        // The high nibbles where they lie, 16 times their values: one instruction instead of
        // two, and each row's dots are shifted back once (exactly: they are multiples of 16).
        hi[v] = _mm512_andnot_si512(m4, q);
    }
    let (sc0, sc1) = (scales.sc(g), scales.sc(g + 1));
    for (r, sr) in s.iter_mut().enumerate().take(mr) {
        let x = a.add(r * stride);
        // Two chains a sub-block (even and odd groups of 4), so four overlap.
        let mut c = [_mm512_setzero_si512(); 4];
        for v in 0..8 {
            let x0 = _mm512_set1_epi32((x.add(4 * v) as *const i32).read_unaligned());
            let x1 = _mm512_set1_epi32((x.add(32 + 4 * v) as *const i32).read_unaligned());
            c[v & 1] = _mm512_dpbusd_epi32(c[v & 1], lo[v], x0);
            c[2 + (v & 1)] = _mm512_dpbusd_epi32(c[2 + (v & 1)], hi[v], x1);
        }
        let c0 = _mm512_add_epi32(c[0], c[1]);
        let c1 = _mm512_srai_epi32::<4>(_mm512_add_epi32(c[2], c[3]));
        *sr = scaled_by(scaled_by(*sr, c0, sc0), c1, sc1);
    }
}

/// The integer dots of `R` activation rows (`a`: the first row's first sub-block of the pair,
/// rows `stride` apart, sub-blocks `4·KK` bytes apart) with a pair of sub-blocks' weights, in
/// the tiles' order: `w[h][kk]` holds 16 weight rows × 4 consecutive values. The rows' `2·R`
/// chains of `vpdpbusd` are independent, so they overlap.
#[inline(always)]
unsafe fn pair_dots<const KK: usize, const R: usize>(
    w: &[[__m512i; KK]; 2],
    a: *const u8,
    stride: usize,
) -> [[__m512i; 2]; R] {
    let mut c = [[_mm512_setzero_si512(); 2]; R];
    for kk in 0..KK {
        for (r, cr) in c.iter_mut().enumerate() {
            let row = a.add(r * stride);
            for (h, (ch, wh)) in cr.iter_mut().zip(w).enumerate() {
                let x = row.add(4 * (h * KK + kk)) as *const i32;
                *ch = _mm512_dpbusd_epi32(*ch, wh[kk], _mm512_set1_epi32(x.read_unaligned()));
            }
        }
    }
    c
}

#[cfg(test)]
mod tests;

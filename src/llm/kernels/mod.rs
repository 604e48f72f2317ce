//! CPU kernels for the forward pass: Q8_0 weights × Q8_0 activations, the file's own K-quant
//! weights × Q8_K activations ([`kquant`]) and F32 matmuls, each reusing a weight block across
//! every row of the batch, plus the small vector ops.
//!
//! Guarantee used by the batching tests: every output element is computed by the same
//! sequence of operations whatever the number of rows in the batch or their grouping, so a
//! sequence's logits do not depend on what else is in its batch (bit-for-bit).

use rayon::prelude::*;

/// Values per quantization block.
pub const QK: usize = 32;

/// One block of 32 signed 8-bit values with an f32 scale (value = d · q).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub struct BlockQ8 {
    pub d: f32,
    pub qs: [i8; QK],
}

/// Quantizes `x` (length a multiple of 32) into `out` blocks, symmetric, q in -127..=127.
pub fn quantize_row(x: &[f32], out: &mut [BlockQ8]) {
    debug_assert_eq!(x.len(), out.len() * QK);
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 and FMA.
        return unsafe { avx2::quantize_row(x, out) };
    }
    for (blk, xs) in out.iter_mut().zip(x.chunks_exact(QK)) {
        let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
        let d = amax / 127.0;
        let id = if d > 0.0 { 1.0 / d } else { 0.0 };
        blk.d = d;
        for (q, v) in blk.qs.iter_mut().zip(xs) {
            *q = (v * id).round().clamp(-127.0, 127.0) as i8;
        }
    }
}

/// Dequantizes blocks into `out`.
pub fn dequantize_row(blocks: &[BlockQ8], out: &mut [f32]) {
    for (blk, o) in blocks.iter().zip(out.chunks_exact_mut(QK)) {
        for (v, q) in o.iter_mut().zip(blk.qs.iter()) {
            *v = blk.d * *q as f32;
        }
    }
}

/// Asks for the `len` bytes at `at` to be brought into the cache ahead of use; a hint that
/// reads nothing, so `at` may lie past the end of the weights. Decode streams every weight
/// once a step, and on the machines measured (BENCHMARKS.md) the hardware prefetcher alone
/// left batch 1 at half of the memory's bandwidth.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn prefetch(at: *const u8, len: usize) {
    prefetch_lines::<{ std::arch::x86_64::_MM_HINT_T0 }>(at, len)
}

/// As [`prefetch`], into L2 (`prefetcht1`): the lines do not take L1's miss buffers.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn prefetch_l2(at: *const u8, len: usize) {
    prefetch_lines::<{ std::arch::x86_64::_MM_HINT_T1 }>(at, len)
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_lines<const HINT: i32>(at: *const u8, len: usize) {
    for line in (0..len).step_by(64) {
        // SAFETY: SSE is part of x86_64; a prefetch never faults, whatever the address.
        unsafe { std::arch::x86_64::_mm_prefetch::<HINT>(at.wrapping_add(line) as *const i8) };
    }
}

/// A raw pointer that rayon tasks may share for disjoint writes.
#[derive(Clone, Copy)]
pub(crate) struct SendPtr(pub(crate) *mut f32);
// SAFETY: used only for disjoint writes from rayon tasks.
unsafe impl Send for SendPtr {}
unsafe impl Sync for SendPtr {}
impl SendPtr {
    pub(crate) fn get(self) -> *mut f32 {
        self.0
    }
}

/// Splits output features into chunks of at most ~128 KiB of weights (so a chunk stays in
/// L2 while activation tiles pass over it), at least a few per thread. `row_bytes` is one
/// output's weights (a panel's, for panels) and `t` the activation rows.
fn par_over_rows(n_out: usize, t: usize, row_bytes: usize, f: impl Fn(usize, usize) + Sync) {
    let threads = rayon::current_num_threads().max(1);
    // Small problems run inline: the fork-join cost exceeds the work. The work is the weight
    // bytes streamed times the activation rows; a single row over a 1536 × 1536 matrix is
    // a megabyte of weights, which one core cannot stream as fast as two.
    if n_out * row_bytes * t < 64 * 1024 || threads == 1 {
        f(0, n_out);
        return;
    }
    let by_size = (128 * 1024 / row_bytes.max(1)).max(4);
    let by_threads = n_out.div_ceil(threads * 4);
    let step = by_size.min(by_threads).max(1);
    (0..n_out.div_ceil(step)).into_par_iter().for_each(|c| {
        let n0 = c * step;
        f(n0, (n0 + step).min(n_out));
    });
}

/// Dot product of f32 vectors, 8 lanes then a fixed-order reduction.
pub fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 and FMA.
        return unsafe { avx2::dot_f32(a, b) };
    }
    let mut acc = [0f32; 8];
    let mut ca = a.chunks_exact(8);
    let mut cb = b.chunks_exact(8);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..8 {
            acc[i] += x[i] * y[i];
        }
    }
    let mut s: f32 = acc.iter().sum();
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        s += x * y;
    }
    s
}

/// `out[i] = q · rows[i·stride .. i·stride + q.len()]` for `i < out.len()`.
pub fn strided_dots(q: &[f32], rows: &[f32], stride: usize, out: &mut [f32]) {
    let d = q.len();
    // The SIMD kernels read `rows` unchecked: every row they read must be there.
    assert!(out.is_empty() || rows.len() >= (out.len() - 1) * stride + d);
    #[cfg(target_arch = "x86_64")]
    if has_avx512() && d.is_multiple_of(16) {
        // SAFETY: the CPU supports AVX-512F; bounds checked above.
        return unsafe { avx512::strided_dots(q, rows, stride, out) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() && d.is_multiple_of(8) {
        // SAFETY: the CPU supports AVX2 and FMA; bounds checked above.
        return unsafe { avx2::strided_dots(q, rows, stride, out) };
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = dot_f32(q, &rows[i * stride..i * stride + d]);
    }
}

/// `acc += Σ_i p[i] · rows[i·stride .. i·stride + acc.len()]`, accumulating per column in
/// order of `i`.
pub fn strided_weighted_sum(p: &[f32], rows: &[f32], stride: usize, acc: &mut [f32]) {
    let d = acc.len();
    // The SIMD kernels read `rows` unchecked: every row they read must be there.
    assert!(p.is_empty() || rows.len() >= (p.len() - 1) * stride + d);
    #[cfg(target_arch = "x86_64")]
    if has_avx512() && d.is_multiple_of(128) {
        // SAFETY: the CPU supports AVX-512F; bounds checked above.
        return unsafe { avx512::strided_weighted_sum(p, rows, stride, acc) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() && d.is_multiple_of(64) {
        // SAFETY: the CPU supports AVX2 and FMA; bounds checked above.
        return unsafe { avx2::strided_weighted_sum(p, rows, stride, acc) };
    }
    for (i, &w) in p.iter().enumerate() {
        axpy(w, &rows[i * stride..i * stride + d], acc);
    }
}

/// `y += a · x` for f32 vectors.
pub fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 and FMA.
        return unsafe { avx2::axpy(a, x, y) };
    }
    for (yv, xv) in y.iter_mut().zip(x) {
        *yv += a * *xv;
    }
}

fn dot_q8_x1(w: &[BlockQ8], x: &[BlockQ8]) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if has_avxvnni() {
        // SAFETY: the CPU supports AVX2, FMA and AVX-VNNI.
        return unsafe { avx2::dot_q8_x1_vnni(w, x) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 and FMA.
        return unsafe { avx2::dot_q8_x1(w, x) };
    }
    let mut s = 0f32;
    for (bw, bx) in w.iter().zip(x) {
        let mut isum = 0i32;
        for i in 0..QK {
            isum += bw.qs[i] as i32 * bx.qs[i] as i32;
        }
        s += bw.d * bx.d * isum as f32;
    }
    s
}

/// Four activation rows (laid out one after another, `nb` blocks each) against one weight row.
fn dot_q8_x4(w: &[BlockQ8], x: &[BlockQ8], nb: usize) -> [f32; 4] {
    #[cfg(target_arch = "x86_64")]
    if has_avxvnni() {
        // SAFETY: the CPU supports AVX2, FMA and AVX-VNNI.
        return unsafe { avx2::dot_q8_x4_vnni(w, x, nb) };
    }
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 and FMA.
        return unsafe { avx2::dot_q8_x4(w, x, nb) };
    }
    [0, 1, 2, 3].map(|i| dot_q8_x1(w, &x[i * nb..(i + 1) * nb]))
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma"))
}

/// AVX-VNNI (`vpdpbusd` on 256-bit vectors) for the int8 dots, unless
/// `HUMANOID_NO_VNNI` is set (to compare the two paths; they give the same bits).
#[cfg(target_arch = "x86_64")]
fn has_avxvnni() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        has_avx2()
            && is_x86_feature_detected!("avxvnni")
            && std::env::var_os("HUMANOID_NO_VNNI").is_none()
    })
}

/// Whether Q4_K matrices are multiplied on AMX tiles ([`kquant_amx`]); decided once, at the
/// first load, from the CPU and the OS's permission (`HUMANOID_NO_AMX` turns it off).
pub fn has_amx() -> bool {
    #[cfg(target_arch = "x86_64")]
    return kquant_amx::available();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Whether K-quant matrices are held in panels of 16 rows ([`kquant_amx`]) and multiplied on
/// the AMX tiles or, without them, on AVX-512 VNNI; else in their blocks.
pub fn has_kquant_panels() -> bool {
    #[cfg(target_arch = "x86_64")]
    return kquant_amx::panels();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Bytes of a `rows × cols` Q8_0 matrix as the kernels hold it: in blocks, or in panels of 16
/// rows (the last padded) where the AVX-512 kernel multiplies it.
pub fn q8_matrix_bytes(rows: usize, cols: usize) -> usize {
    #[cfg(target_arch = "x86_64")]
    let rows = if has_avx512() {
        rows.div_ceil(q8_panels::PANEL) * q8_panels::PANEL
    } else {
        rows
    };
    rows * (cols / QK) * std::mem::size_of::<BlockQ8>()
}

/// AVX-512 BW and VNNI for the K-quant dots (64 values a step), the Q8_0 panels and the f32
/// ops of [`avx512`], unless `HUMANOID_NO_AVX512` is set (to compare with the 256-bit paths:
/// the K-quant dots and attention's dots and sums give the same bits; Q8_0 falls back to its
/// blocks, whose f32 sums are in another order, and softmax and SiLU to libm's `e^x`).
#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        has_avx2()
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vnni")
            && std::env::var_os("HUMANOID_NO_AVX512").is_none()
    })
}

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx512;
pub mod kquant;
#[cfg(target_arch = "x86_64")]
pub mod kquant_amx;
#[cfg(target_arch = "x86_64")]
mod kquant_avx2;
#[cfg(target_arch = "x86_64")]
mod kquant_avx512;
#[cfg(target_arch = "x86_64")]
mod q8_panels;

mod weight;

pub use kquant::KQuant;
pub use weight::Weight;

/// RMS normalisation of each row of `x` (width `w.len()`) in place: `x · w / rms(x)`.
pub fn rms_norm(x: &mut [f32], w: &[f32], eps: f32) {
    let n = w.len();
    for row in x.chunks_exact_mut(n) {
        let ss = dot_f32(row, row) / n as f32;
        let scale = 1.0 / (ss + eps).sqrt();
        for (v, g) in row.iter_mut().zip(w) {
            *v = *v * scale * g;
        }
    }
}

/// SiLU(gate) · up, in place into `gate` (with AVX-512, `e^x` is a polynomial in 16 lanes,
/// within 2 ulp).
pub fn silu_mul(gate: &mut [f32], up: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        let up = &up[..gate.len()];
        // SAFETY: the CPU supports AVX-512F; `up` is at least as long as `gate`.
        return unsafe { avx512::silu_mul(gate, up) };
    }
    for (g, u) in gate.iter_mut().zip(up) {
        *g = *g / (1.0 + (-*g).exp()) * u;
    }
}

/// GELU (tanh approximation)(gate) · up, in place into `gate`.
pub fn gelu_mul(gate: &mut [f32], up: &[f32]) {
    const C: f32 = 0.797_884_6; // sqrt(2/pi)
    for (g, u) in gate.iter_mut().zip(up) {
        let x = *g;
        *g = 0.5 * x * (1.0 + (C * (x + 0.044_715 * x * x * x)).tanh()) * u;
    }
}

/// Softmax in place (with AVX-512, `e^x` is a polynomial in 16 lanes, within 2 ulp, and the
/// sum runs in 16 lanes).
pub fn softmax(x: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx512() {
        // SAFETY: the CPU supports AVX-512F.
        return unsafe { avx512::softmax(x) };
    }
    let m = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let mut s = 0.0;
    for v in x.iter_mut() {
        *v = (*v - m).exp();
        s += *v;
    }
    for v in x.iter_mut() {
        *v /= s;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f32 {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 33) as f32 / (1u64 << 31) as f32) - 0.5
    }

    /// The AVX-VNNI dots give the AVX2 dots' bits (same integer sums, same order), so a run
    /// does not depend on which of the two the CPU has.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn vnni_dots_equal_the_avx2_dots_bit_for_bit() {
        if !has_avxvnni() {
            eprintln!("no AVX-VNNI on this CPU: nothing to compare");
            return;
        }
        let (nb, mut s) = (24, 7);
        let w: Vec<f32> = (0..nb * QK).map(|_| lcg(&mut s) * 3.0).collect();
        let x: Vec<f32> = (0..4 * nb * QK).map(|_| lcg(&mut s)).collect();
        let mut wq = vec![BlockQ8::default(); nb];
        let mut xq = vec![BlockQ8::default(); 4 * nb];
        quantize_row(&w, &mut wq);
        quantize_row(&x, &mut xq);
        // Extremes: every weight at ±127 against activations at ∓127.
        wq[0].qs = [127; QK];
        xq[0].qs = [-127; QK];
        // SAFETY: has_avxvnni() implies AVX2 and FMA.
        unsafe {
            assert_eq!(
                avx2::dot_q8_x1(&wq, &xq[..nb]).to_bits(),
                avx2::dot_q8_x1_vnni(&wq, &xq[..nb]).to_bits()
            );
            let a = avx2::dot_q8_x4(&wq, &xq, nb).map(f32::to_bits);
            let b = avx2::dot_q8_x4_vnni(&wq, &xq, nb).map(f32::to_bits);
            assert_eq!(a, b);
        }
    }

    /// The AVX-512 attention dots and weighted sums give the AVX2 kernels' bits, whatever
    /// the number of rows (the 4-row and 1-row paths).
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_attention_kernels_equal_avx2_bit_for_bit() {
        if !has_avx512() {
            eprintln!("no AVX-512 on this CPU: nothing to compare");
            return;
        }
        let (hd, stride, mut s) = (128, 256 + 16, 3);
        for n in [1, 3, 4, 7, 33] {
            let q: Vec<f32> = (0..hd).map(|_| lcg(&mut s)).collect();
            let rows: Vec<f32> = (0..n * stride).map(|_| lcg(&mut s) * 4.0).collect();
            let p: Vec<f32> = (0..n).map(|_| lcg(&mut s) + 0.5).collect();
            let (mut a, mut b) = (vec![0f32; n], vec![0f32; n]);
            let init: Vec<f32> = (0..2 * hd).map(|_| lcg(&mut s)).collect();
            let (mut ca, mut cb) = (init.clone(), init);
            // SAFETY: has_avx512() implies AVX2, FMA and AVX-512F; sizes fit.
            unsafe {
                avx2::strided_dots(&q, &rows, stride, &mut a);
                avx512::strided_dots(&q, &rows, stride, &mut b);
                avx2::strided_weighted_sum(&p, &rows, stride, &mut ca);
                avx512::strided_weighted_sum(&p, &rows, stride, &mut cb);
            }
            let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a), bits(&b), "dots of {n} rows");
            assert_eq!(bits(&ca), bits(&cb), "weighted sum of {n} rows");
        }
    }

    /// The polynomial `e^x` is within 2 ulp of libm's over the range softmax and SiLU use,
    /// and saturates to 0 and +∞ outside it; softmax and SiLU built on it stay within a few
    /// ulp of the scalar formulas.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx512_exp_softmax_and_silu_are_within_a_few_ulp() {
        use std::arch::x86_64::*;
        if !has_avx512() {
            eprintln!("no AVX-512 on this CPU: nothing to compare");
            return;
        }
        let mut worst = 0i64;
        let mut x = -87.0f32;
        while x < 88.0 {
            let xs: [f32; 16] = std::array::from_fn(|i| x + i as f32 * 0.000_37);
            let mut out = [0f32; 16];
            // SAFETY: the CPU supports AVX-512F.
            unsafe {
                _mm512_storeu_ps(out.as_mut_ptr(), avx512::exp(_mm512_loadu_ps(xs.as_ptr())))
            };
            for (v, e) in xs.iter().zip(out) {
                let exact = (*v as f64).exp() as f32;
                worst = worst.max((e.to_bits() as i64 - exact.to_bits() as i64).abs());
            }
            x += 0.0171;
        }
        assert!(worst <= 2, "e^x off by {worst} ulp");
        let edges = [-1000.0, -104.0, f32::NEG_INFINITY, 89.0, 1000.0];
        for v in edges {
            let mut out = [0f32; 16];
            // SAFETY: the CPU supports AVX-512F.
            unsafe { _mm512_storeu_ps(out.as_mut_ptr(), avx512::exp(_mm512_set1_ps(v))) };
            assert_eq!(out[0], if v > 0.0 { f32::INFINITY } else { 0.0 }, "e^{v}");
        }
        let mut s = 5;
        for n in [1, 15, 16, 17, 100, 1000] {
            let v: Vec<f32> = (0..n).map(|_| lcg(&mut s) * 30.0).collect();
            let mut fast = v.clone();
            softmax(&mut fast);
            let m = v.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let z: f64 = v.iter().map(|x| ((x - m) as f64).exp()).sum();
            for (f, x) in fast.iter().zip(&v) {
                let exact = ((x - m) as f64).exp() / z;
                assert!((*f as f64 - exact).abs() <= 1e-6 * exact.max(1e-30) + 1e-12);
            }
            let up: Vec<f32> = (0..n).map(|_| lcg(&mut s)).collect();
            let mut g = v.clone();
            silu_mul(&mut g, &up);
            for ((f, x), u) in g.iter().zip(&v).zip(&up) {
                let exact = (*x as f64) / (1.0 + (-*x as f64).exp()) * *u as f64;
                assert!(
                    (*f as f64 - exact).abs() <= 1e-6 * exact.abs() + 1e-30,
                    "{f} vs {exact}"
                );
            }
        }
    }

    #[test]
    fn q8_matmul_matches_f32_reference_and_is_batch_invariant() {
        let (n, k, t) = (37, 96, 7);
        let mut s = 1;
        let w: Vec<f32> = (0..n * k).map(|_| lcg(&mut s)).collect();
        let x: Vec<f32> = (0..t * k).map(|_| lcg(&mut s)).collect();
        let wq = Weight::q8_from_f32(&w, n, k);
        let mut y = vec![0.0; t * n];
        wq.matmul(&x, &mut y);
        for r in 0..t {
            for c in 0..n {
                let exact: f32 = (0..k).map(|i| x[r * k + i] * w[c * k + i]).sum();
                assert!(
                    (y[r * n + c] - exact).abs() < 0.05,
                    "{} vs {exact}",
                    y[r * n + c]
                );
            }
            // Row alone gives the identical bits.
            let mut y1 = vec![0.0; n];
            wq.matmul(&x[r * k..(r + 1) * k], &mut y1);
            assert_eq!(&y[r * n..(r + 1) * n], &y1[..]);
        }
        let wf = Weight::F32 {
            rows: n,
            cols: k,
            data: w.clone(),
        };
        let mut yf = vec![0.0; t * n];
        wf.matmul(&x, &mut yf);
        let mut y1 = vec![0.0; n];
        wf.matmul(&x[k..2 * k], &mut y1);
        assert_eq!(&yf[n..2 * n], &y1[..]);
    }

    #[test]
    fn simd_quantization_equals_scalar() {
        let mut s = 9;
        let x: Vec<f32> = (0..32 * 40)
            .map(|i| lcg(&mut s) * (1 + i % 7) as f32)
            .collect();
        let mut fast = vec![BlockQ8::default(); 40];
        quantize_row(&x, &mut fast);
        for (blk, xs) in fast.iter().zip(x.chunks_exact(QK)) {
            let amax = xs.iter().fold(0f32, |m, v| m.max(v.abs()));
            let d = amax / 127.0;
            assert_eq!(blk.d, d);
            for (q, v) in blk.qs.iter().zip(xs) {
                assert_eq!(*q, (v * (1.0 / d)).round().clamp(-127.0, 127.0) as i8);
            }
        }
    }

    #[test]
    fn quantize_roundtrip_is_close() {
        let x: Vec<f32> = (0..64).map(|i| (i as f32 - 30.0) / 7.0).collect();
        let mut b = vec![BlockQ8::default(); 2];
        quantize_row(&x, &mut b);
        let mut y = vec![0.0; 64];
        dequantize_row(&b, &mut y);
        for (a, c) in x.iter().zip(&y) {
            assert!((a - c).abs() < 0.04);
        }
    }
}

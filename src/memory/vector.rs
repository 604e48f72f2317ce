//! Small vector kernels shared by the index and the stream: a dot product written so the
//! compiler vectorises it, and validation + L2 normalisation of incoming embeddings.

use super::error::{MemoryError, Result};

/// Lanes of independent partial sums in [`dot`]. Each lane is summed in the same order
/// whatever SIMD width the compiler picks, so results are identical across machines.
const LANES: usize = 16;

/// Dot product of the common prefix of `a` and `b`.
#[inline]
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0f32; LANES];
    let mut ca = a.chunks_exact(LANES);
    let mut cb = b.chunks_exact(LANES);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..LANES {
            acc[i] += x[i] * y[i];
        }
    }
    let mut tail = 0f32;
    for (x, y) in ca.remainder().iter().zip(cb.remainder()) {
        tail += x * y;
    }
    // Pairwise reduction of the lanes.
    let mut width = LANES / 2;
    while width > 0 {
        for i in 0..width {
            acc[i] += acc[i + width];
        }
        width /= 2;
    }
    acc[0] + tail
}

/// Checks that `v` has `dim` finite entries and a non-zero length, and returns it scaled
/// to unit length.
pub fn normalized(v: &[f32], dim: usize) -> Result<Vec<f32>> {
    if v.len() != dim {
        return Err(MemoryError::DimensionMismatch {
            expected: dim,
            got: v.len(),
        });
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(MemoryError::NonFiniteEmbedding);
    }
    // Accumulate in f64: robust for tiny or huge entries.
    let norm = v
        .iter()
        .map(|&x| f64::from(x) * f64::from(x))
        .sum::<f64>()
        .sqrt();
    if norm.is_nan() || norm <= 1e-12 || norm.is_infinite() {
        return Err(MemoryError::ZeroEmbedding);
    }
    Ok(v.iter().map(|&x| (f64::from(x) / norm) as f32).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dot_matches_naive_for_all_tail_lengths() {
        for n in 0..70 {
            let a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.37).sin()).collect();
            let b: Vec<f32> = (0..n).map(|i| (i as f32 * 0.11).cos()).collect();
            let naive: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
            assert!((dot(&a, &b) - naive).abs() < 1e-4, "n = {n}");
        }
    }

    #[test]
    fn normalized_validates() {
        let v = normalized(&[3.0, 4.0], 2).unwrap();
        assert!((v[0] - 0.6).abs() < 1e-7 && (v[1] - 0.8).abs() < 1e-7);
        assert!(matches!(
            normalized(&[1.0], 2),
            Err(MemoryError::DimensionMismatch {
                expected: 2,
                got: 1
            })
        ));
        assert!(matches!(
            normalized(&[f32::NAN, 1.0], 2),
            Err(MemoryError::NonFiniteEmbedding)
        ));
        assert!(matches!(
            normalized(&[0.0, 0.0], 2),
            Err(MemoryError::ZeroEmbedding)
        ));
        // Huge entries do not overflow.
        let big = normalized(&[3e38, 3e38], 2).unwrap();
        assert!((dot(&big, &big) - 1.0).abs() < 1e-6);
    }
}

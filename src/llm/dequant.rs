//! Converting GGUF tensors to f32 a chunk of rows at a time, in parallel, so loading never
//! holds a whole large tensor (e.g. a 262k-token embedding) in f32 at once.

use candle_core::quantized::k_quants::{
    BlockQ2K, BlockQ3K, BlockQ4K, BlockQ4_0, BlockQ4_1, BlockQ5K, BlockQ5_0, BlockQ5_1, BlockQ6K,
    BlockQ8_0, GgmlType,
};
use candle_core::quantized::{GgmlDType, QTensor};
use rayon::prelude::*;

/// Rows converted per task.
const CHUNK_ROWS: usize = 256;

/// Maps `f` over consecutive chunks of rows of a `[rows, cols]` tensor, each chunk given as
/// f32 values; chunks run in parallel and the results come back in row order.
pub fn map_row_chunks<R: Send>(
    qt: &QTensor,
    rows: usize,
    cols: usize,
    f: impl Fn(&[f32]) -> Result<R, String> + Sync,
) -> Result<Vec<R>, String> {
    let dtype = qt.dtype();
    let (bs, ts) = (dtype.block_size(), dtype.type_size());
    if !cols.is_multiple_of(bs) {
        return Err(format!(
            "{cols} columns is not a multiple of the {dtype:?} block size {bs}"
        ));
    }
    let data = qt.data().map_err(|e| e.to_string())?;
    let row_bytes = cols / bs * ts;
    if data.len() != rows * row_bytes {
        return Err(format!(
            "holds {} bytes, expected {} for {rows}×{cols} {dtype:?}",
            data.len(),
            rows * row_bytes
        ));
    }
    let convert = converter(dtype)?;
    data.par_chunks((row_bytes * CHUNK_ROWS).max(1))
        .map(|bytes| {
            let n = bytes.len() / row_bytes.max(1);
            let mut out = vec![0f32; n * cols];
            convert(bytes, &mut out);
            if out.iter().any(|v| !v.is_finite()) {
                return Err("holds NaN or infinite values".to_string());
            }
            f(&out)
        })
        .collect()
}

/// Rows `ids` of a `[rows, cols]` tensor in f32 (an embedding lookup on the stored format).
pub fn rows_to_f32(qt: &QTensor, cols: usize, ids: &[u32]) -> Result<Vec<f32>, String> {
    let dtype = qt.dtype();
    let row_bytes = cols / dtype.block_size() * dtype.type_size();
    let data = qt.data().map_err(|e| e.to_string())?;
    let convert = converter(dtype)?;
    let mut out = vec![0f32; ids.len() * cols];
    for (dst, &id) in out.chunks_exact_mut(cols).zip(ids) {
        let start = id as usize * row_bytes;
        let bytes = data
            .get(start..start + row_bytes)
            .ok_or_else(|| format!("row {id} is outside the tensor"))?;
        convert(bytes, dst);
    }
    Ok(out)
}

/// Raw blocks of `dtype` (whole blocks, `n` values) decoded into f32.
pub fn raw_to_f32(dtype: GgmlDType, bytes: &[u8], n: usize) -> Result<Vec<f32>, String> {
    let convert = converter(dtype)?;
    let mut out = vec![0f32; n];
    convert(bytes, &mut out);
    Ok(out)
}

/// Decodes raw blocks into f32 values.
type Decoder = fn(&[u8], &mut [f32]);

/// The decoder of raw blocks of `dtype`.
fn converter(dtype: GgmlDType) -> Result<Decoder, String> {
    Ok(match dtype {
        GgmlDType::F32 => |b, out| {
            for (o, c) in out.iter_mut().zip(b.chunks_exact(4)) {
                *o = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        },
        GgmlDType::F16 => |b, out| {
            for (o, c) in out.iter_mut().zip(b.chunks_exact(2)) {
                *o = half::f16::from_le_bytes([c[0], c[1]]).to_f32();
            }
        },
        GgmlDType::BF16 => |b, out| {
            for (o, c) in out.iter_mut().zip(b.chunks_exact(2)) {
                *o = half::bf16::from_le_bytes([c[0], c[1]]).to_f32();
            }
        },
        GgmlDType::Q4_0 => blocks_to_f32::<BlockQ4_0>,
        GgmlDType::Q4_1 => blocks_to_f32::<BlockQ4_1>,
        GgmlDType::Q5_0 => blocks_to_f32::<BlockQ5_0>,
        GgmlDType::Q5_1 => blocks_to_f32::<BlockQ5_1>,
        GgmlDType::Q8_0 => blocks_to_f32::<BlockQ8_0>,
        GgmlDType::Q2K => blocks_to_f32::<BlockQ2K>,
        GgmlDType::Q3K => blocks_to_f32::<BlockQ3K>,
        GgmlDType::Q4K => blocks_to_f32::<BlockQ4K>,
        GgmlDType::Q5K => blocks_to_f32::<BlockQ5K>,
        GgmlDType::Q6K => blocks_to_f32::<BlockQ6K>,
        other => return Err(format!("tensor type {other:?} is not supported")),
    })
}

/// Decodes raw little-endian blocks of `T` (copied into aligned storage first).
fn blocks_to_f32<T: GgmlType>(bytes: &[u8], out: &mut [f32]) {
    let size = std::mem::size_of::<T>();
    let n = bytes.len() / size;
    let mut blocks: Vec<T> = Vec::with_capacity(n);
    // SAFETY: `T` is a plain-old-data GGML block (`repr(C)`, no invalid bit patterns), the
    // copy fills exactly `n` of them into storage aligned for `T`.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), blocks.as_mut_ptr() as *mut u8, n * size);
        blocks.set_len(n);
    }
    T::to_float(&blocks, out);
}

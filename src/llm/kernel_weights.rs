//! A GGUF file's matrices in the formats our kernels multiply ([`Weight`]): the file's K-quant
//! blocks where the kernels take them, else Q8_0 or F32.

use candle_core::quantized::GgmlDType;

use super::error::{LlmError, Result};
use super::gguf::GgufFile;
use super::kernels::{self, Weight};
use super::model::WeightFormat;
use super::weights::{map_tensor, RawMatrix};

pub(super) fn make_weight(data: &[f32], rows: usize, cols: usize, format: WeightFormat) -> Weight {
    match format {
        WeightFormat::Q8 | WeightFormat::Quantized => Weight::q8_from_f32(data, rows, cols),
        WeightFormat::F32 => Weight::F32 {
            rows,
            cols,
            data: data.to_vec(),
        },
    }
}

/// Reads a `[rows, cols]` weight straight into `format`, a chunk of rows at a time.
pub(super) fn load_weight(
    g: &mut GgufFile,
    name: &str,
    rows: usize,
    cols: usize,
    format: WeightFormat,
) -> Result<Weight> {
    match format {
        WeightFormat::Quantized => {
            let raw = <RawMatrix as super::weights::Matrix>::load(g, name, rows, cols)?;
            weight_from_raw(raw).map_err(|reason| LlmError::BadTensor {
                path: g.path().to_path_buf(),
                name: name.to_string(),
                reason,
            })
        }
        WeightFormat::Q8 => {
            let nb = cols / kernels::QK;
            let chunks = map_tensor(g, name, rows, cols, |x| {
                let n = x.len() / cols;
                let mut blocks = vec![kernels::BlockQ8::default(); n * nb];
                for (b, r) in blocks.chunks_mut(nb).zip(x.chunks(cols)) {
                    kernels::quantize_row(r, b);
                }
                Ok(blocks)
            })?;
            Ok(Weight::q8(rows, cols, chunks.concat()))
        }
        WeightFormat::F32 => Ok(Weight::F32 {
            rows,
            cols,
            data: map_tensor(g, name, rows, cols, |x| Ok(x.to_vec()))?.concat(),
        }),
    }
}

/// A matrix in its stored blocks where our kernels multiply them (Q4_K, Q6_K), else
/// requantized to Q8_0.
pub(super) fn weight_from_raw(m: RawMatrix) -> std::result::Result<Weight, String> {
    let kind = match m.dtype {
        GgmlDType::Q4K => Some(kernels::KQuant::Q4K),
        GgmlDType::Q6K => Some(kernels::KQuant::Q6K),
        _ => None,
    };
    if let Some(kind) = kind {
        if m.cols.is_multiple_of(kernels::kquant::QK_K) {
            #[cfg(target_arch = "x86_64")]
            if kernels::has_kquant_panels() {
                return Ok(Weight::Tiles {
                    kind,
                    rows: m.rows,
                    cols: m.cols,
                    bytes: kernels::kquant_amx::repack(kind, &m.bytes, m.rows, m.cols),
                });
            }
            return Ok(Weight::K {
                kind,
                rows: m.rows,
                cols: m.cols,
                bytes: kernels::kquant::repack(kind, &m.bytes),
            });
        }
    }
    let data = super::dequant::raw_to_f32(m.dtype, &m.bytes, m.rows * m.cols)?;
    Ok(Weight::q8_from_f32(&data, m.rows, m.cols))
}

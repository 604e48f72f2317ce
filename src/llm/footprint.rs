//! What loading a model will take, computed from the GGUF file's tensor list before anything
//! is read or allocated, and the memory the device has free: the one home of these figures
//! (`inspect-model` prints them, [`super::Engine::load`] refuses a load that cannot fit).

use std::fmt;

use candle_core::quantized::gguf_file::TensorInfo;
use candle_core::quantized::GgmlDType;
use serde::Serialize;

use super::backend::DeviceChoice;
use super::config::Config;
use super::gguf::GgufFile;
use super::kernels::kquant::{KQuant, QK_K};
use super::model::WeightFormat;

/// Environment variable that overrides the free memory the check assumes (MiB): for trying
/// the refusal, or for keeping a load below what the machine has.
pub const MEMORY_ENV: &str = "HUMANOID_MEMORY_AVAILABLE_MIB";

/// Slots the tensor path's KV pool starts with (it doubles when full).
pub const INITIAL_KV_SLOTS: usize = 4096;

/// The bytes a load needs, by part.
#[derive(Clone, Debug, Serialize, PartialEq, Eq)]
pub struct Footprint {
    /// Where the weights and the KV cache live: `cpu` or the device's name.
    pub device: String,
    /// Weight matrices, norms and embeddings held on the device.
    pub weights_bytes: u64,
    /// Weights kept in host memory beside a device (the tensor path's embedding table).
    pub host_weights_bytes: u64,
    /// Keys and values of one token, every layer.
    pub kv_bytes_per_token: u64,
    /// KV memory the load reserves or the engine fills: one full context plus the prefix
    /// cache budget (our kernels), or the tensor path's initial pool.
    pub kv_bytes: u64,
    /// Working buffers of one forward step at the step's token limit.
    pub scratch_bytes: u64,
}

impl Footprint {
    /// The device memory needed: weights, KV and scratch (plus the host part when the device
    /// is the CPU itself).
    pub fn total_bytes(&self) -> u64 {
        self.weights_bytes + self.host_weights_bytes + self.kv_bytes + self.scratch_bytes
    }
}

/// Settings that change a load's size.
#[derive(Clone, Copy, Debug)]
pub struct LoadShape {
    pub device: DeviceChoice,
    pub format: WeightFormat,
    /// Longest prompt + reply.
    pub context: usize,
    pub prefix_cache_bytes: usize,
    pub max_batched_tokens: usize,
}

/// What loading `g` with `shape` takes.
pub fn estimate(g: &GgufFile, cfg: &Config, shape: &LoadShape) -> Footprint {
    let infos = &g.content().tensor_infos;
    let tensor_path = shape.device != DeviceChoice::Cpu;
    let tied = !infos.contains_key("output.weight");
    let mut weights = 0u64;
    let mut host = 0u64;
    for (name, info) in infos {
        if name == "rope_freqs.weight" {
            continue;
        }
        let n = info.shape.elem_count() as u64;
        if info.shape.dims().len() == 1 {
            weights += 4 * n;
            continue;
        }
        let bytes = if tensor_path {
            match shape.format {
                WeightFormat::F32 => 4 * n,
                _ => stored_bytes(info),
            }
        } else {
            kernel_bytes(info, shape.format)
        };
        if tensor_path && name == "token_embd.weight" && shape.format != WeightFormat::F32 {
            // The table stays on the host; tied, the device holds it again as the head.
            host += bytes;
            if tied {
                weights += bytes;
            }
        } else {
            weights += bytes;
        }
    }
    let kv_elem = if tensor_path {
        super::tensor::kv_dtype(shape.format).size_in_bytes()
    } else {
        4
    };
    let kv_per_token = (cfg.n_layers * 2 * cfg.kv_dim() * kv_elem) as u64;
    let context = shape.context.min(cfg.context_length).max(1) as u64;
    let kv = if tensor_path {
        kv_per_token * (INITIAL_KV_SLOTS as u64).max(context)
    } else {
        kv_per_token * context + shape.prefix_cache_bytes as u64
    };
    // Per token of a step: the residual, its norm, Q/K/V, attention out, gate+up and the
    // activation (f32); plus logits of up to 64 rows.
    let per_token = cfg.hidden * 3 + cfg.q_dim() * 2 + cfg.kv_dim() * 4 + cfg.ffn * 3;
    let scratch = 4 * (per_token * shape.max_batched_tokens.max(1) + 64 * cfg.vocab) as u64;
    Footprint {
        device: shape.device.to_string(),
        weights_bytes: weights,
        host_weights_bytes: host,
        kv_bytes_per_token: kv_per_token,
        kv_bytes: kv,
        scratch_bytes: scratch,
    }
}

/// A tensor's bytes as stored in the file.
fn stored_bytes(info: &TensorInfo) -> u64 {
    let dt = info.ggml_dtype;
    info.shape.elem_count() as u64 / dt.block_size() as u64 * dt.type_size() as u64
}

/// A matrix's bytes on our kernels: Q4_K/Q6_K kept in their blocks (when whole rows are
/// blocks; repacked, 160 and 228 bytes a block, or AMX panels), everything else as Q8_0 (36
/// bytes per 32 values), or f32.
fn kernel_bytes(info: &TensorInfo, format: WeightFormat) -> u64 {
    let n = info.shape.elem_count() as u64;
    let cols = info.shape.dims().last().copied().unwrap_or(0);
    match format {
        WeightFormat::F32 => 4 * n,
        WeightFormat::Quantized if cols.is_multiple_of(QK_K) => match info.ggml_dtype {
            GgmlDType::Q4K => KQuant::Q4K.matrix_bytes(n as usize / cols, cols) as u64,
            GgmlDType::Q6K => KQuant::Q6K.matrix_bytes(n as usize / cols, cols) as u64,
            _ => q8_bytes(n, cols),
        },
        _ => q8_bytes(n, cols),
    }
}

/// Bytes of `n` values in rows of `cols` as Q8_0 on our kernels (36 bytes per 32 values, the
/// rows padded to panels of 16 where the kernels hold panels).
fn q8_bytes(n: u64, cols: usize) -> u64 {
    let rows = n as usize / cols.max(1);
    super::kernels::q8_matrix_bytes(rows, cols) as u64
}

/// Free memory where `device` holds a model, in bytes, if it can be told: `$`[`MEMORY_ENV`],
/// else the host's available memory (`/proc/meminfo`) for the CPU paths, `nvidia-smi`'s free
/// memory for CUDA, nothing for Metal.
pub fn available_bytes(device: DeviceChoice) -> Option<u64> {
    if let Some(mib) = std::env::var(MEMORY_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return Some(mib << 20);
    }
    match device {
        DeviceChoice::Cpu | DeviceChoice::TensorCpu => host_available(),
        DeviceChoice::Cuda(n) => cuda_free(n),
        DeviceChoice::Metal(_) => None,
    }
}

fn host_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

fn cuda_free(ordinal: usize) -> Option<u64> {
    let out = std::process::Command::new("nvidia-smi")
        .args([
            "--query-gpu=memory.free",
            "--format=csv,noheader,nounits",
            &format!("--id={ordinal}"),
        ])
        .output()
        .ok()?;
    let mib: u64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(mib << 20)
}

/// A load that would not fit: the figures, for the error message.
#[derive(Debug, Clone)]
pub struct TooLarge {
    pub need: Footprint,
    pub available: u64,
}

impl fmt::Display for TooLarge {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mib = |b: u64| b as f64 / 1048576.0;
        let n = &self.need;
        write!(
            f,
            "the model needs {:.0} MiB on {} (weights {:.0} MiB{}, keys and values {:.0} MiB, \
             working buffers {:.0} MiB) but {:.0} MiB is free; nothing was loaded. Try a \
             smaller quantization of the model, a shorter --context, a smaller \
             --prefix-cache-mib{}",
            mib(n.total_bytes()),
            n.device,
            mib(n.weights_bytes),
            if n.host_weights_bytes > 0 {
                format!(" + {:.0} MiB on the host", mib(n.host_weights_bytes))
            } else {
                String::new()
            },
            mib(n.kv_bytes),
            mib(n.scratch_bytes),
            mib(self.available),
            if n.device == "cpu" {
                ""
            } else {
                ", or --device cpu"
            },
        )
    }
}

/// Refuses a load whose footprint exceeds the free memory (when it can be told).
pub fn check(need: Footprint, device: DeviceChoice) -> Result<(), TooLarge> {
    let Some(available) = available_bytes(device) else {
        return Ok(());
    };
    // On a device the host part lives elsewhere.
    let on_device = if device == DeviceChoice::Cpu || device == DeviceChoice::TensorCpu {
        need.total_bytes()
    } else {
        need.total_bytes() - need.host_weights_bytes
    };
    if on_device > available {
        return Err(TooLarge { need, available });
    }
    Ok(())
}

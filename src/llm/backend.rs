//! Which forward pass serves the engine: our CPU kernels, or the tensor forward on a candle
//! device (CUDA, Metal, or candle's CPU backend).

use std::fmt;
use std::str::FromStr;

use candle_core::Device;

use super::config::Config;
use super::error::{LlmError, Result};
use super::gguf::GgufFile;
use super::kv::{SeqCache, SharedPrefix};
use super::model::{Model, SeqInput, WeightFormat};
use super::tensor::TensorModel;

/// Where the model runs, as named on the command line (`--device`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// Our CPU kernels (Q8_0 or F32 weights): the default.
    #[default]
    Cpu,
    /// The tensor forward on candle's CPU backend (F32; for tests and comparison).
    TensorCpu,
    /// The tensor forward on a CUDA GPU (needs a `--features cuda` build).
    Cuda(usize),
    /// The tensor forward on a Metal GPU (needs a `--features metal` build).
    Metal(usize),
}

impl FromStr for DeviceChoice {
    type Err = LlmError;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            LlmError::Device(format!(
                "unknown device `{s}` (expected cpu, tensor-cpu, cuda, cuda:N, metal or metal:N)"
            ))
        };
        let (kind, ordinal) = match s.split_once(':') {
            Some((k, n)) => (k, n.parse::<usize>().map_err(|_| bad())?),
            None => (s, 0),
        };
        match kind {
            "cpu" if ordinal == 0 && !s.contains(':') => Ok(Self::Cpu),
            "tensor-cpu" if !s.contains(':') => Ok(Self::TensorCpu),
            "cuda" | "gpu" => Ok(Self::Cuda(ordinal)),
            "metal" => Ok(Self::Metal(ordinal)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for DeviceChoice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Cpu => write!(f, "cpu"),
            Self::TensorCpu => write!(f, "tensor-cpu"),
            Self::Cuda(n) => write!(f, "cuda:{n}"),
            Self::Metal(n) => write!(f, "metal:{n}"),
        }
    }
}

impl DeviceChoice {
    /// The candle device of a tensor backend (`None` for our CPU kernels), with a clear error
    /// when this build lacks the feature or the device is absent.
    pub fn candle_device(self) -> Result<Option<Device>> {
        let unavailable = |feature: &str, e: candle_core::Error| {
            LlmError::Device(format!(
                "device {self} is not available: {e}{}",
                if feature.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (this binary was built without it: rebuild with \
                         `cargo build --release --features {feature}`)"
                    )
                }
            ))
        };
        match self {
            Self::Cpu => Ok(None),
            Self::TensorCpu => Ok(Some(Device::Cpu)),
            Self::Cuda(n) => Device::new_cuda(n)
                .map(Some)
                .map_err(|e| unavailable(if cfg!(feature = "cuda") { "" } else { "cuda" }, e)),
            Self::Metal(n) => Device::new_metal(n)
                .map(Some)
                .map_err(|e| unavailable(if cfg!(feature = "metal") { "" } else { "metal" }, e)),
        }
    }
}

/// What the engine needs of a forward pass over a loaded model. Two implement it: our CPU
/// kernels ([`Model`]) and the candle tensor path ([`TensorModel`]).
pub trait Forward: Send + Sync {
    /// The model's hyper-parameters.
    fn config(&self) -> &Config;
    /// Largest position the model serves.
    fn max_positions(&self) -> usize;
    /// Bytes of weights held (host or device).
    fn weight_bytes(&self) -> usize;
    /// Where it runs, in words (`cpu`, `tensor-cpu`, `cuda`, ...).
    fn device_name(&self) -> String;
    /// A cache continuing after `prefix`, stored where this backend keeps keys and values.
    fn cache_with_prefix(&self, prefix: SharedPrefix, capacity: usize) -> SeqCache;
    /// One batched forward step (see [`Model::forward`]).
    fn forward(&self, seqs: &mut [SeqInput<'_>]) -> Result<Vec<Vec<f32>>>;
    /// Device KV slots (in use, capacity), for a backend that keeps a slot pool.
    fn kv_slots(&self) -> Option<(usize, usize)> {
        None
    }
}

impl Forward for Model {
    fn config(&self) -> &Config {
        Model::config(self)
    }
    fn max_positions(&self) -> usize {
        Model::max_positions(self)
    }
    fn weight_bytes(&self) -> usize {
        Model::weight_bytes(self)
    }
    fn device_name(&self) -> String {
        "cpu".into()
    }
    fn cache_with_prefix(&self, prefix: SharedPrefix, capacity: usize) -> SeqCache {
        let cfg = Model::config(self);
        SeqCache::with_prefix(prefix, cfg.n_layers, cfg.kv_dim(), capacity)
    }
    fn forward(&self, seqs: &mut [SeqInput<'_>]) -> Result<Vec<Vec<f32>>> {
        Model::forward(self, seqs)
    }
}

impl Forward for TensorModel {
    fn config(&self) -> &Config {
        TensorModel::config(self)
    }
    fn max_positions(&self) -> usize {
        TensorModel::max_positions(self)
    }
    fn weight_bytes(&self) -> usize {
        TensorModel::weight_bytes(self)
    }
    fn device_name(&self) -> String {
        match self.device() {
            Device::Cpu => "tensor-cpu".into(),
            Device::Cuda(_) => "cuda".into(),
            Device::Metal(_) => "metal".into(),
        }
    }
    fn cache_with_prefix(&self, prefix: SharedPrefix, capacity: usize) -> SeqCache {
        TensorModel::cache_with_prefix(self, prefix, capacity)
    }
    fn forward(&self, seqs: &mut [SeqInput<'_>]) -> Result<Vec<Vec<f32>>> {
        TensorModel::forward(self, seqs)
    }
    fn kv_slots(&self) -> Option<(usize, usize)> {
        Some(TensorModel::kv_slots(self))
    }
}

/// A loaded model behind one of the forward passes.
pub struct Backend(Box<dyn Forward>);

impl<F: Forward + 'static> From<F> for Backend {
    fn from(f: F) -> Self {
        Self(Box::new(f))
    }
}

impl Backend {
    /// Loads a GGUF model for `device` (`format` applies to our CPU kernels).
    pub fn load(
        g: &mut GgufFile,
        device: DeviceChoice,
        format: WeightFormat,
        max_positions: usize,
    ) -> Result<Self> {
        Ok(match device.candle_device()? {
            None => Model::load(g, format, max_positions)?.into(),
            Some(dev) => TensorModel::load(g, &dev, format, max_positions)?.into(),
        })
    }
}

impl std::ops::Deref for Backend {
    type Target = dyn Forward;
    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_parse_and_print_back() {
        for (s, d) in [
            ("cpu", DeviceChoice::Cpu),
            ("tensor-cpu", DeviceChoice::TensorCpu),
            ("cuda", DeviceChoice::Cuda(0)),
            ("cuda:1", DeviceChoice::Cuda(1)),
            ("metal", DeviceChoice::Metal(0)),
        ] {
            assert_eq!(s.parse::<DeviceChoice>().unwrap(), d);
        }
        assert_eq!(DeviceChoice::Cuda(1).to_string(), "cuda:1");
        for bad in ["tpu", "cuda:x", "cpu:1", ""] {
            let e = bad.parse::<DeviceChoice>().unwrap_err().to_string();
            assert!(e.contains("unknown device"), "{e}");
        }
    }

    #[test]
    fn a_gpu_missing_from_the_build_is_a_clear_error() {
        if cfg!(feature = "cuda") {
            return;
        }
        let e = DeviceChoice::Cuda(0)
            .candle_device()
            .unwrap_err()
            .to_string();
        assert!(e.contains("--features cuda"), "{e}");
    }
}

//! Engine settings, counters and the events a batch reports.

use std::time::Duration;

use serde::Serialize;

use super::super::backend::DeviceChoice;
use super::super::model::WeightFormat;
use super::super::scheduler::SchedulerLimits;

/// Default budget of the cross-call prefix cache, in MiB. The 1.5B default's KV on our
/// kernels is 57 KiB a token, so this holds about 4,600 tokens: the judgement examples and two
/// contexts (place questions and judgements) per agent of a small town, from step to step.
/// At 64 MiB (1,150 tokens) two agents' contexts already evicted each other.
pub const DEFAULT_PREFIX_CACHE_MIB: usize = 256;

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    pub limits: SchedulerLimits,
    /// Longest prompt + generation allowed (capped by the model's own context).
    pub context_budget: usize,
    pub weight_format: WeightFormat,
    /// Where the forward pass runs.
    pub device: DeviceChoice,
    /// Bytes of keys and values of recent prompt prefixes kept for reuse across calls
    /// (0 disables).
    pub prefix_cache_bytes: usize,
    /// Shortest common prefix worth sharing.
    pub min_shared_prefix: usize,
}

impl Default for EngineOptions {
    fn default() -> Self {
        Self {
            limits: SchedulerLimits::default(),
            context_budget: 4096,
            weight_format: WeightFormat::Quantized,
            device: DeviceChoice::Cpu,
            prefix_cache_bytes: DEFAULT_PREFIX_CACHE_MIB << 20,
            min_shared_prefix: 16,
        }
    }
}

/// Counters over the engine's life, for benchmarks and run logs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct EngineStats {
    pub forward_steps: u64,
    pub prompt_tokens: u64,
    /// Prompt tokens not computed because a shared prefix covered them.
    pub reused_prompt_tokens: u64,
    pub generated_tokens: u64,
    pub choose_calls: u64,
    pub generate_calls: u64,
    /// Sum over steps of sequences in the step (occupancy = this / forward_steps).
    pub batched_seqs: u64,
    pub forward_time: Duration,
}

/// Something that happened while running a batch, for streaming and progress.
pub enum Event<'a> {
    /// New text of request `index`'s generation.
    Text { index: usize, delta: &'a str },
    /// A forward step ran with this many sequences and tokens, taking `elapsed`.
    Step {
        seqs: usize,
        tokens: usize,
        elapsed: Duration,
    },
}

//! The in-process inference engine: GGUF loading, tokenizer, chat template, a batched
//! transformer forward with per-sequence KV caches, the scheduler, sampling and `choose`.
//!
//! Layout: [`gguf`] reads files, [`config`] the hyper-parameters, [`kernels`] the CPU math,
//! [`model`] the ragged-batch forward over [`kv`] caches, [`scheduler`] picks each step,
//! [`prefix`] finds shared prompt prefixes, [`engine`] ties it together behind
//! [`request`] types, and [`batch`] gathers many async callers' requests into one batch.

pub mod backend;
pub mod batch;
pub mod config;
pub mod constrain;
pub mod dequant;
pub mod engine;
pub mod error;
pub mod footprint;
pub mod gguf;
pub mod inference;
mod kernel_weights;
pub mod kernels;
pub mod kv;
pub mod model;
pub mod prefix;
pub mod prompt_log;
pub mod request;
pub mod sampler;
pub mod scheduler;
pub mod template;
pub mod tensor;
pub mod tokenizer;
mod weights;

pub use backend::{Backend, DeviceChoice, Forward};
pub use engine::{
    AnswerFilter, Engine, EngineOptions, EngineStats, Event, DEFAULT_PREFIX_CACHE_MIB,
};
pub use error::LlmError;
pub use inference::Inference;
pub use request::{
    Choice, ChooseRequest, FinishReason, GenerateRequest, Generation, Prompt, Request, Response,
    TokenConstraint,
};
pub use sampler::Sampling;
pub use template::{ChatTemplate, Message};
pub use tokenizer::Tokenizer;

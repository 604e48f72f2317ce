//! The in-process inference engine: GGUF loading, tokenizer, chat template, a batched
//! transformer forward with per-sequence KV caches, the scheduler, sampling and `choose`.

pub mod error;
pub mod gguf;
pub mod template;
pub mod tokenizer;

pub use error::LlmError;
pub mod config;
pub mod kernels;
pub mod kv;
pub mod model;

//! humanoid: an offline simulator of LLM-driven humanoid agents.
//!
//! Layers, lowest first (data flows one way): [`llm`] (GGUF chat models with a batched
//! engine), [`model_store`] (model manifests, fetching and resolution).

pub mod agent;
pub mod embed;
pub mod eval;
pub mod llm;
pub mod memory;
pub mod model_store;
pub mod report;
pub mod sim;
pub mod viewer;
pub mod world;

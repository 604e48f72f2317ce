//! humanoid: an offline simulator of LLM-driven humanoid agents.
//!
//! Layers, lowest first; a module imports only from the layers below it (checked by
//! `tests/layers.rs`):
//!
//! 1. [`formats`]: the simulation's text formats (12-hour clock, plan lines, emoji set).
//! 2. [`model_store`]: model manifests, fetching and resolving `--model` specs to files.
//! 3. [`llm`]: the chat-model engine (GGUF, tokenizer, batched forward on the kernels or the
//!    tensor backend, `choose`, constrained decoding) and the batching port many async
//!    callers share.
//! 4. [`remote`]: the client that runs the same requests on an OpenAI-compatible server;
//!    [`serve`]: `serve-llm`, our engine behind that API.
//! 5. [`embed`]: the sentence-embedding model.
//! 6. [`world`]: world files (schema, validation, locations, needs, emotions, conditions).
//! 7. [`memory`]: each agent's memory stream, vector index and retrieval.
//! 8. [`agent`]: an agent's state and cognition (plans, judgements, conversations,
//!    reflection) as async code over the batching port.
//! 9. [`sim`]: the tick driver, the run directory, state files, events and checkpoints.
//! 10. [`report`]: the well-formedness checker and the quality report on a run.
//! 11. [`eval`]: judgements against labels, annotation sheets, interviews, diffusion.
//! 12. [`viewer`]: the run viewer's server and one-file report.
//!
//! The command line (`src/cli/`, the binary) sits on top of all of them.

pub mod agent;
pub mod embed;
pub mod eval;
pub mod formats;
pub mod llm;
pub mod memory;
pub mod model_store;
pub mod remote;
pub mod report;
pub mod serve;
pub mod sim;
pub mod viewer;
pub mod world;

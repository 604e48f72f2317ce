//! The runtime objects a tick borrows: the model backend, the embedder and the token table.

use std::cell::RefCell;
use std::sync::Arc;

use crate::llm::constrain::TokenTable;
use crate::llm::{Engine, Inference};
use crate::memory::TextEmbedder;

/// Shared, borrowed runtime objects for a tick.
pub struct Runtime<'a> {
    /// The model: the in-process engine or a remote server.
    pub engine: &'a RefCell<Box<dyn Inference>>,
    pub embedder: &'a RefCell<Box<dyn TextEmbedder>>,
    pub table: &'a Arc<TokenTable>,
}

/// The runtime objects a [`Runtime`] borrows: the model backend, the embedder and the
/// backend's token table for constraints.
pub struct RuntimeParts {
    pub engine: RefCell<Box<dyn Inference>>,
    pub embedder: RefCell<Box<dyn TextEmbedder>>,
    pub table: Arc<TokenTable>,
}

impl RuntimeParts {
    /// Wraps a loaded engine and embedder.
    pub fn new(engine: Engine, embedder: Box<dyn TextEmbedder>) -> Self {
        Self::with_backend(Box::new(engine), embedder)
    }

    /// Wraps any model backend (e.g. a remote server's client) and an embedder.
    pub fn with_backend(backend: Box<dyn Inference>, embedder: Box<dyn TextEmbedder>) -> Self {
        let table = TokenTable::new(backend.tokenizer());
        Self {
            engine: RefCell::new(backend),
            embedder: RefCell::new(embedder),
            table,
        }
    }

    /// The borrowed view a tick takes.
    pub fn runtime(&self) -> Runtime<'_> {
        Runtime {
            engine: &self.engine,
            embedder: &self.embedder,
            table: &self.table,
        }
    }
}

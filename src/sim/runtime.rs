//! The runtime objects a tick borrows: the engine, the embedder and the token table.

use std::cell::RefCell;
use std::sync::Arc;

use crate::llm::constrain::TokenTable;
use crate::llm::Engine;
use crate::memory::TextEmbedder;

/// Shared, borrowed runtime objects for a tick.
pub struct Runtime<'a> {
    pub engine: &'a RefCell<Engine>,
    pub embedder: &'a RefCell<Box<dyn TextEmbedder>>,
    pub table: &'a Arc<TokenTable>,
}

/// The runtime objects a [`Runtime`] borrows: the engine, the embedder and the engine's
/// token table for constraints.
pub struct RuntimeParts {
    pub engine: RefCell<Engine>,
    pub embedder: RefCell<Box<dyn TextEmbedder>>,
    pub table: Arc<TokenTable>,
}

impl RuntimeParts {
    /// Wraps a loaded engine and embedder.
    pub fn new(engine: Engine, embedder: Box<dyn TextEmbedder>) -> Self {
        let table = TokenTable::new(engine.tokenizer());
        Self {
            engine: RefCell::new(engine),
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

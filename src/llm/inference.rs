//! What the simulation needs of a language model, whichever serves it: the in-process
//! [`Engine`] or a remote OpenAI-compatible server ([`crate::remote::RemoteClient`]).

use super::engine::{Engine, EngineStats, Event};
use super::error::Result;
use super::request::{Prompt, Request, Response};
use super::tokenizer::Tokenizer;

/// Answers batches of [`Request`]s. Responses come back in request order whatever order they
/// were computed in, so a run's results never depend on completion order.
pub trait Inference {
    /// Runs every request as one batch (see [`Engine::run`]). A request that cannot run gets
    /// its own error; the others still run.
    fn run(
        &mut self,
        requests: Vec<Request>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Vec<Result<Response>>;

    /// The token ids `prompt` becomes (for prompt budgets; a remote backend counts with its
    /// local tokenizer).
    fn prompt_tokens(&self, prompt: &Prompt) -> Result<Vec<u32>>;

    /// Longest prompt + generation a request may have.
    fn context_budget(&self) -> usize;

    /// The tokenizer token-level constraints are built on.
    fn tokenizer(&self) -> &Tokenizer;

    /// Counters since start.
    fn stats(&self) -> &EngineStats;

    /// Why the backend can no longer serve (a server that stayed down through every retry),
    /// once that has happened. A step that saw it must not be applied: the caller stops and
    /// the run resumes from its last checkpoint.
    fn failure(&self) -> Option<String> {
        None
    }

    /// The in-process engine, if that is what this is.
    fn as_engine(&self) -> Option<&Engine> {
        None
    }
}

impl Inference for Engine {
    fn run(
        &mut self,
        requests: Vec<Request>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Vec<Result<Response>> {
        Engine::run(self, requests, on_event)
    }

    fn prompt_tokens(&self, prompt: &Prompt) -> Result<Vec<u32>> {
        Engine::prompt_tokens(self, prompt)
    }

    fn context_budget(&self) -> usize {
        Engine::context_budget(self)
    }

    fn tokenizer(&self) -> &Tokenizer {
        Engine::tokenizer(self)
    }

    fn stats(&self) -> &EngineStats {
        Engine::stats(self)
    }

    fn as_engine(&self) -> Option<&Engine> {
        Some(self)
    }
}

//! The thread that owns the engine: requests that arrive within a short window are run as
//! one engine batch, so concurrent clients share the engine's continuous batching.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::score::{score_prompts, Scored};
use crate::llm::engine::Engine;
use crate::llm::error::{LlmError, Result};
use crate::llm::request::{Request, Response};

/// Work for the engine.
pub enum Work {
    /// A `generate` or `choose` request.
    Run(Request),
    /// Every token of a prompt scored, with `top` alternatives.
    Score { tokens: Vec<u32>, top: usize },
}

/// What came back.
pub enum Done {
    Response(Result<Response>),
    Scored(Result<Scored>),
}

struct Job {
    work: Work,
    reply: Sender<Done>,
}

/// A handle to the engine thread (cheap to clone).
#[derive(Clone)]
pub struct Batcher {
    tx: Sender<Job>,
}

impl Batcher {
    /// Starts the engine thread. Jobs arriving within `window` of the first of a batch join
    /// it (up to `max_batch`).
    pub fn start(engine: Engine, window: Duration, max_batch: usize) -> Self {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("serve-llm-engine".into())
            .spawn(move || engine_loop(engine, rx, window, max_batch.max(1)))
            .map(|_| ())
            .unwrap_or_else(|e| tracing::error!("cannot start the engine thread: {e}"));
        Self { tx }
    }

    /// Submits `work`; the answer arrives on the returned receiver (blocking).
    pub fn submit(&self, work: Work) -> Receiver<Done> {
        let (reply, rx) = mpsc::channel();
        if let Err(e) = self.tx.send(Job { work, reply }) {
            let _ = e.0.reply.send(Done::Response(Err(LlmError::InvalidRequest(
                "the engine thread has stopped".into(),
            ))));
        }
        rx
    }
}

fn engine_loop(mut engine: Engine, rx: Receiver<Job>, window: Duration, max_batch: usize) {
    while let Ok(first) = rx.recv() {
        let mut jobs = vec![first];
        let deadline = Instant::now() + window;
        while jobs.len() < max_batch {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(j) => jobs.push(j),
                Err(RecvTimeoutError::Timeout) => break,
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        let (mut runs, mut scores) = (Vec::new(), Vec::new());
        for j in jobs {
            match j.work {
                Work::Run(r) => runs.push((r, j.reply)),
                Work::Score { tokens, top } => scores.push((tokens, top, j.reply)),
            }
        }
        tracing::debug!(runs = runs.len(), scores = scores.len(), "serve-llm batch");
        if !runs.is_empty() {
            let (reqs, replies): (Vec<_>, Vec<_>) = runs.into_iter().unzip();
            let out = engine.run(reqs, |_| {});
            for (r, reply) in out.into_iter().zip(replies) {
                let _ = reply.send(Done::Response(r));
            }
        }
        if !scores.is_empty() {
            let top = scores.iter().map(|s| s.1).max().unwrap_or(0);
            let prompts: Vec<Vec<u32>> = scores.iter().map(|s| s.0.clone()).collect();
            let out = score_prompts(&engine, &prompts, top);
            for (mut r, (_, k, reply)) in out.into_iter().zip(scores) {
                if let Ok(s) = &mut r {
                    s.tokens.iter_mut().for_each(|t| t.top.truncate(k));
                }
                let _ = reply.send(Done::Scored(r));
            }
        }
    }
}

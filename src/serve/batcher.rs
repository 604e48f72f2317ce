//! The thread that owns the engine: requests that arrive within a short window are run as
//! one engine batch, so concurrent clients share the engine's continuous batching.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

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
    reply: oneshot::Sender<Done>,
}

/// What the engine thread runs: the engine itself (or a scripted stand-in in unit tests).
pub trait Runner: Send + 'static {
    /// Runs requests as one batch.
    fn run_batch(&mut self, requests: Vec<Request>) -> Vec<Result<Response>>;
    /// Scores every token of each prompt with `top` alternatives.
    fn score(&mut self, prompts: &[Vec<u32>], top: usize) -> Vec<Result<Scored>>;
}

impl Runner for Engine {
    fn run_batch(&mut self, requests: Vec<Request>) -> Vec<Result<Response>> {
        self.run(requests, |_| {})
    }
    fn score(&mut self, prompts: &[Vec<u32>], top: usize) -> Vec<Result<Scored>> {
        score_prompts(self, prompts, top)
    }
}

/// Why the engine thread stopped, once it has.
type Stopped = Arc<Mutex<Option<String>>>;

/// A handle to the engine thread (cheap to clone).
#[derive(Clone)]
pub struct Batcher {
    tx: Sender<Job>,
    stopped: Stopped,
}

impl Batcher {
    /// Starts the engine thread. Jobs arriving within `window` of the first of a batch join
    /// it (up to `max_batch`). If the thread cannot start, or the engine panics, the batcher
    /// is stopped for good: every request then fails with [`LlmError::EngineStopped`].
    pub fn start(engine: impl Runner, window: Duration, max_batch: usize) -> Self {
        let (tx, rx) = mpsc::channel::<Job>();
        let stopped: Stopped = Arc::default();
        let flag = stopped.clone();
        let spawned = std::thread::Builder::new()
            .name("serve-llm-engine".into())
            .spawn(move || engine_loop(engine, rx, window, max_batch.max(1), flag));
        if let Err(e) = spawned {
            let why = format!("cannot start the engine thread: {e}");
            tracing::error!("{why}");
            set(&stopped, why);
        }
        Self { tx, stopped }
    }

    /// Why the engine stopped, if it has.
    pub fn stopped(&self) -> Option<String> {
        self.stopped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The error every request gets once the engine has stopped.
    pub fn stopped_error(&self) -> LlmError {
        LlmError::EngineStopped(
            self.stopped()
                .unwrap_or_else(|| "the engine thread has exited".into()),
        )
    }

    /// Submits `work`; the answer arrives on the returned receiver (awaited, so a waiting
    /// request holds no thread).
    pub fn submit(&self, work: Work) -> oneshot::Receiver<Done> {
        let (reply, rx) = oneshot::channel();
        if self.stopped().is_some() {
            let _ = reply.send(Done::Response(Err(self.stopped_error())));
            return rx;
        }
        if let Err(e) = self.tx.send(Job { work, reply }) {
            let _ = e.0.reply.send(Done::Response(Err(self.stopped_error())));
        }
        rx
    }
}

fn set(stopped: &Stopped, why: String) {
    let mut s = stopped.lock().unwrap_or_else(|p| p.into_inner());
    s.get_or_insert(why);
}

/// The text of a panic's payload.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

fn engine_loop(
    mut engine: impl Runner,
    rx: Receiver<Job>,
    window: Duration,
    max_batch: usize,
    stopped: Stopped,
) {
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
        let (reqs, run_replies): (Vec<_>, Vec<_>) = runs.into_iter().unzip();
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            let out = (!reqs.is_empty()).then(|| engine.run_batch(reqs));
            let top = scores.iter().map(|s| s.1).max().unwrap_or(0);
            let prompts: Vec<Vec<u32>> = scores.iter().map(|s| s.0.clone()).collect();
            let scored = (!prompts.is_empty()).then(|| engine.score(&prompts, top));
            (out, scored)
        }));
        let (out, scored) = match outcome {
            Ok(o) => o,
            Err(p) => {
                let why = format!("the engine panicked: {}", panic_text(&*p));
                tracing::error!("{why}; serve-llm answers 503 from now on");
                set(&stopped, why.clone());
                let err = || LlmError::EngineStopped(why.clone());
                for reply in run_replies {
                    let _ = reply.send(Done::Response(Err(err())));
                }
                for (_, _, reply) in scores {
                    let _ = reply.send(Done::Scored(Err(err())));
                }
                // Jobs already queued get the same answer; later ones see `stopped`.
                while let Ok(j) = rx.try_recv() {
                    let _ = j.reply.send(Done::Response(Err(err())));
                }
                return;
            }
        };
        for (r, reply) in out.into_iter().flatten().zip(run_replies) {
            let _ = reply.send(Done::Response(r));
        }
        for (mut r, (_, k, reply)) in scored.into_iter().flatten().zip(scores) {
            if let Ok(s) = &mut r {
                s.tokens.iter_mut().for_each(|t| t.top.truncate(k));
            }
            let _ = reply.send(Done::Scored(r));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::request::{ChooseRequest, Prompt};

    /// Panics on its first batch.
    struct Broken;
    impl Runner for Broken {
        fn run_batch(&mut self, _: Vec<Request>) -> Vec<Result<Response>> {
            panic!("kernel exploded")
        }
        fn score(&mut self, _: &[Vec<u32>], _: usize) -> Vec<Result<Scored>> {
            panic!("kernel exploded")
        }
    }

    fn request() -> Work {
        Work::Run(Request::Choose(ChooseRequest::new(
            Prompt::Text("x".into()),
            ["a", "b"],
        )))
    }

    fn stopped_cause(d: Done) -> String {
        match d {
            Done::Response(Err(LlmError::EngineStopped(why))) => why,
            Done::Response(Err(e)) => panic!("another error: {e}"),
            _ => panic!("not an error"),
        }
    }

    #[test]
    fn a_panicking_engine_stops_the_batcher_for_good_with_its_cause() {
        let b = Batcher::start(Broken, Duration::from_millis(1), 8);
        let first = stopped_cause(b.submit(request()).blocking_recv().unwrap());
        assert!(first.contains("kernel exploded"), "{first}");
        assert!(b.stopped().unwrap().contains("kernel exploded"));
        // Every later request fails the same way, without reaching the engine.
        let later = stopped_cause(b.submit(request()).blocking_recv().unwrap());
        assert_eq!(later, first);
    }
}

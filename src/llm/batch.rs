//! Gathers the model calls of many concurrent tasks into one engine batch.
//!
//! Each agent's cognition is plain sequential async code that awaits its [`Port`]. The
//! [`drive`] loop polls every task until each is waiting on the model or done, sends every
//! waiting request of every task to the engine as one batch, hands the results back and
//! polls again. Tasks are polled and their requests concatenated in task order, and each
//! request carries a seed derived from its port's key and a call counter, so results never
//! depend on completion order.

use std::cell::RefCell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use serde::{Deserialize, Serialize};

use super::{
    Choice, ChooseRequest, Event, GenerateRequest, Generation, Inference, LlmError, Request,
    Response,
};

/// A task's future, borrowed from the tick's state.
pub type Task<'a, T> = Pin<Box<dyn Future<Output = T> + 'a>>;

/// One model call, as the event log records it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallRecord {
    /// What the call was for ("day_plan", "emotion", "location", ...).
    pub purpose: String,
    /// "generate" or "choose".
    pub kind: String,
    pub prompt_tokens: usize,
    pub generated_tokens: usize,
    /// The engine's error, if the call failed.
    pub error: Option<String>,
}

#[derive(Default)]
struct PortState {
    submitted: Option<Vec<(String, Request)>>,
    results: Option<Vec<Result<Response, LlmError>>>,
    calls: Vec<CallRecord>,
    key: u64,
    counter: u64,
}

/// A task's connection to the batched engine: submit requests, await their results.
#[derive(Clone, Default)]
pub struct Port {
    inner: Rc<RefCell<PortState>>,
}

/// SplitMix64 step: a well-mixed 64-bit hash of `x`.
pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// A key from several parts (run seed, step, agent, phase), order-sensitive.
pub fn key_of(parts: &[u64]) -> u64 {
    parts.iter().fold(0x5EED, |acc, &p| mix(acc ^ mix(p)))
}

impl Port {
    /// A port whose requests are seeded from `key` (e.g. [`key_of`] run seed, step, agent).
    pub fn new(key: u64) -> Self {
        let port = Self::default();
        port.inner.borrow_mut().key = key;
        port
    }

    /// The seed for this port's next generation.
    pub fn next_seed(&self) -> u64 {
        let mut s = self.inner.borrow_mut();
        s.counter += 1;
        key_of(&[s.key, s.counter])
    }

    /// Sends `requests` (each with the purpose it is logged under) in the next batch and
    /// waits for their results, in the same order.
    pub async fn run(&self, requests: Vec<(String, Request)>) -> Vec<Result<Response, LlmError>> {
        if requests.is_empty() {
            return Vec::new();
        }
        Submit {
            port: self,
            requests: Some(requests),
        }
        .await
    }

    /// One `choose` call.
    pub async fn choose(&self, purpose: &str, req: ChooseRequest) -> Result<Choice, LlmError> {
        let mut out = self
            .run(vec![(purpose.to_string(), Request::Choose(req))])
            .await;
        match out.pop() {
            Some(Ok(Response::Chosen(c))) => Ok(c),
            Some(Err(e)) => Err(e),
            _ => Err(LlmError::InvalidRequest("choose returned no choice".into())),
        }
    }

    /// One `generate` call; its seed is set from the port.
    pub async fn generate(
        &self,
        purpose: &str,
        mut req: GenerateRequest,
    ) -> Result<Generation, LlmError> {
        req.seed = self.next_seed();
        let mut out = self
            .run(vec![(purpose.to_string(), Request::Generate(req))])
            .await;
        match out.pop() {
            Some(Ok(Response::Generated(g))) => Ok(g),
            Some(Err(e)) => Err(e),
            _ => Err(LlmError::InvalidRequest("generate returned no text".into())),
        }
    }

    /// The calls made through this port so far (and forgets them).
    pub fn take_calls(&self) -> Vec<CallRecord> {
        std::mem::take(&mut self.inner.borrow_mut().calls)
    }
}

struct Submit<'p> {
    port: &'p Port,
    requests: Option<Vec<(String, Request)>>,
}

impl Future for Submit<'_> {
    type Output = Vec<Result<Response, LlmError>>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut state = self.port.inner.borrow_mut();
        if let Some(requests) = self.requests.take() {
            state.submitted = Some(requests);
            return Poll::Pending;
        }
        match state.results.take() {
            Some(r) => Poll::Ready(r),
            None => Poll::Pending,
        }
    }
}

fn record(purpose: String, kind: &str, result: &Result<Response, LlmError>) -> CallRecord {
    let (prompt_tokens, generated_tokens, error) = match result {
        Ok(Response::Generated(g)) => (g.prompt_tokens, g.generated_tokens, None),
        Ok(Response::Chosen(c)) => (c.prompt_tokens, 0, None),
        Err(e) => (0, 0, Some(e.to_string())),
    };
    CallRecord {
        purpose,
        kind: kind.to_string(),
        prompt_tokens,
        generated_tokens,
        error,
    }
}

/// Runs `tasks` to completion, batching every request pending at each round into one
/// engine call. `on_event` sees the engine's step events (for progress). Returns the
/// tasks' outputs in task order (`None` only for a task that waited without a request,
/// which is a bug and is logged).
pub fn drive<'a, T>(
    engine: &RefCell<Box<dyn Inference>>,
    tasks: Vec<(Port, Task<'a, T>)>,
    mut on_event: impl FnMut(&Event),
) -> Vec<Option<T>> {
    let mut outputs: Vec<Option<T>> = tasks.iter().map(|_| None).collect();
    let mut tasks: Vec<(Port, Option<Task<'a, T>>)> =
        tasks.into_iter().map(|(p, t)| (p, Some(t))).collect();
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        for (i, (_, slot)) in tasks.iter_mut().enumerate() {
            if let Some(task) = slot {
                if let Poll::Ready(out) = task.as_mut().poll(&mut cx) {
                    outputs[i] = Some(out);
                    *slot = None;
                }
            }
        }
        // Gather, in task order.
        let mut batch: Vec<Request> = Vec::new();
        let mut owners: Vec<(usize, Vec<(String, &'static str)>)> = Vec::new();
        for (i, (port, slot)) in tasks.iter().enumerate() {
            if slot.is_none() {
                continue;
            }
            if let Some(reqs) = port.inner.borrow_mut().submitted.take() {
                let purposes = reqs
                    .iter()
                    .map(|(p, r)| {
                        let kind = match r {
                            Request::Generate(_) => "generate",
                            Request::Choose(_) => "choose",
                        };
                        (p.clone(), kind)
                    })
                    .collect();
                batch.extend(reqs.into_iter().map(|(_, r)| r));
                owners.push((i, purposes));
            }
        }
        if batch.is_empty() {
            if tasks.iter().all(|(_, t)| t.is_none()) {
                break;
            }
            // A task is pending without a request: it can never finish. Drop it.
            for (i, (_, slot)) in tasks.iter_mut().enumerate() {
                if slot.take().is_some() {
                    tracing::error!(task = i, "a task waited on nothing; dropped");
                }
            }
            break;
        }
        let mut results = engine
            .borrow_mut()
            .run(batch, &mut |e| on_event(&e))
            .into_iter();
        for (i, purposes) in owners {
            let port = &tasks[i].0;
            let mut state = port.inner.borrow_mut();
            let mut mine = Vec::with_capacity(purposes.len());
            for (purpose, kind) in purposes {
                let result = results
                    .next()
                    .unwrap_or_else(|| Err(LlmError::InvalidRequest("missing result".into())));
                state.calls.push(record(purpose, kind, &result));
                mine.push(result);
            }
            state.results = Some(mine);
        }
    }
    outputs
}

//! `serve-llm`: the in-process engine behind an OpenAI-compatible HTTP API, so several
//! simulations (through `--backend openai`) or other tools share one loaded model.
//!
//! `GET /v1/models`, `POST /v1/chat/completions`, `POST /v1/completions` (with `echo` and
//! `logprobs`: every prompt token scored as in-process `choose` scores options), and its own
//! `POST /v1/choose` (the engine's `choose`: a prompt and options in, probabilities out). Requests
//! arriving together run as one engine batch ([`batcher`]). `stream: true` is answered as
//! server-sent events carrying the whole reply in one chunk. Bad requests get a 400 with an
//! OpenAI-style JSON error; nothing a client sends can stop the server.

pub mod api;
pub mod batcher;
pub mod score;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response as HttpResponse};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};

use self::api::{error_body, ChatBody, ChooseBody, CompletionBody, PromptIn};
use self::batcher::{Batcher, Done, Work};
use self::score::Scored;
use crate::llm::constrain::TokenTable;
use crate::llm::engine::Engine;
use crate::llm::error::{LlmError, ENGINE_STOPPED};
use crate::llm::request::{FinishReason, Generation, Prompt, Request, Response};
use crate::llm::sampler::Sampler;
use crate::llm::template::ChatTemplate;
use crate::llm::tokenizer::Tokenizer;

/// Settings of the server.
#[derive(Clone, Debug)]
pub struct ServeOptions {
    /// Names the model answers to (the first is listed by `/v1/models`).
    pub names: Vec<String>,
    /// How long the first request of a batch waits for others.
    pub window: Duration,
    /// Most requests in one engine batch.
    pub max_batch: usize,
    /// Most requests being answered at once; more get HTTP 429.
    pub max_inflight: usize,
    /// Longest a request waits for the engine; then HTTP 504.
    pub request_timeout: Duration,
    /// Largest request body, in bytes; larger ones get HTTP 413.
    pub max_body_bytes: usize,
}

impl ServeOptions {
    /// The defaults of `serve-llm` for a model known by `names`.
    pub fn new(names: Vec<String>) -> Self {
        Self {
            names,
            window: Duration::from_millis(5),
            max_batch: 256,
            max_inflight: 512,
            request_timeout: Duration::from_secs(600),
            max_body_bytes: 2 << 20,
        }
    }
}

struct AppState {
    batcher: Batcher,
    names: Vec<String>,
    tokenizer: Tokenizer,
    /// The vocabulary's bytes, for `humanoid_constraint`.
    table: Arc<TokenTable>,
    template: ChatTemplate,
    budget: usize,
    created: u64,
    counter: AtomicU64,
    inflight: AtomicUsize,
    max_inflight: usize,
    request_timeout: Duration,
    max_body_bytes: usize,
}

/// Counts a request in flight until dropped.
struct Inflight<'a>(&'a AtomicUsize);

impl Drop for Inflight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl AppState {
    /// Admits a request (or answers 429 when `max_inflight` are being answered) and reads
    /// its body (or answers 413 past `max_body_bytes`), with JSON errors as everywhere.
    async fn admit(&self, body: axum::body::Body) -> Result<(Inflight<'_>, Bytes), Reply> {
        let n = self.inflight.fetch_add(1, Ordering::SeqCst);
        let guard = Inflight(&self.inflight);
        if n >= self.max_inflight {
            return Err((
                StatusCode::TOO_MANY_REQUESTS,
                Json(error_body(
                    &format!(
                        "{} requests are being answered (at most {}): retry later",
                        n, self.max_inflight
                    ),
                    "rate_limit_error",
                )),
            ));
        }
        let bytes = axum::body::to_bytes(body, self.max_body_bytes)
            .await
            .map_err(|e| {
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Json(error_body(
                        &format!(
                            "the request body could not be read within {} bytes: {e}",
                            self.max_body_bytes
                        ),
                        "invalid_request_error",
                    )),
                )
            })?;
        Ok((guard, bytes))
    }
}

type Reply = (StatusCode, Json<Value>);

fn bad(msg: impl Into<String>) -> Reply {
    (
        StatusCode::BAD_REQUEST,
        Json(error_body(&msg.into(), "invalid_request_error")),
    )
}

fn from_llm(e: LlmError) -> Reply {
    match e {
        LlmError::EngineStopped(_) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(error_body(&e.to_string(), ENGINE_STOPPED)),
        ),
        LlmError::OverBudget { .. }
        | LlmError::InvalidRequest(_)
        | LlmError::Tokenizer(_)
        | LlmError::Template(_) => bad(e.to_string()),
        other => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(error_body(&other.to_string(), "server_error")),
        ),
    }
}

/// The router over a loaded engine (the engine moves to its own thread).
pub fn router(engine: Engine, opts: ServeOptions) -> Router {
    let tokenizer = engine.tokenizer().clone();
    let text = |id: Option<u32>| id.and_then(|id| tokenizer.token_str(id)).unwrap_or("");
    let template = ChatTemplate::new(
        engine.template().source(),
        text(tokenizer.bos_id()),
        text(tokenizer.eos_id()),
    )
    .unwrap_or_else(|_| ChatTemplate::fallback(&tokenizer));
    let budget = engine.context_budget();
    let created = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let state = Arc::new(AppState {
        batcher: Batcher::start(engine, opts.window, opts.max_batch),
        names: opts.names,
        table: TokenTable::new(&tokenizer),
        tokenizer,
        template,
        budget,
        created,
        counter: AtomicU64::new(0),
        inflight: AtomicUsize::new(0),
        max_inflight: opts.max_inflight.max(1),
        request_timeout: opts.request_timeout,
        max_body_bytes: opts.max_body_bytes,
    });
    Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(chat))
        .route("/v1/completions", post(completions))
        .route("/v1/choose", post(choose))
        .fallback(|| async {
            (
                StatusCode::NOT_FOUND,
                Json(error_body(
                    "no such endpoint (this server has /v1/models, /v1/chat/completions, /v1/completions and /v1/choose)",
                    "invalid_request_error",
                )),
            )
        })
        .layer(axum::extract::DefaultBodyLimit::disable())
        .with_state(state)
}

async fn models(State(s): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({"object": "list", "data": [{
        "id": s.names[0], "object": "model", "created": s.created, "owned_by": "humanoid",
        "context_length": s.budget, "aliases": &s.names[1..]}]}))
}

impl AppState {
    fn check_model(&self, model: &Option<String>) -> Result<(), Reply> {
        match model {
            Some(m) if !m.is_empty() && !self.names.iter().any(|n| n == m) => Err((
                StatusCode::NOT_FOUND,
                Json(error_body(
                    &format!(
                        "model {m:?} is not served here (this server serves {:?})",
                        self.names[0]
                    ),
                    "invalid_request_error",
                )),
            )),
            _ => Ok(()),
        }
    }

    fn next_id(&self) -> u64 {
        self.counter.fetch_add(1, Ordering::SeqCst)
    }

    async fn ask(&self, work: Work) -> Result<Done, Reply> {
        let rx = self.batcher.submit(work);
        match tokio::time::timeout(self.request_timeout, rx).await {
            Ok(Ok(done)) => Ok(done),
            Ok(Err(_)) => Err(from_llm(self.batcher.stopped_error())),
            Err(_) => Err((
                StatusCode::GATEWAY_TIMEOUT,
                Json(error_body(
                    &format!(
                        "the engine did not answer within {} s",
                        self.request_timeout.as_secs()
                    ),
                    "timeout",
                )),
            )),
        }
    }

    async fn generate(&self, g: crate::llm::GenerateRequest) -> Result<Generation, Reply> {
        match self.ask(Work::Run(Request::Generate(g))).await? {
            Done::Response(Ok(Response::Generated(g))) => Ok(g),
            Done::Response(Err(e)) => Err(from_llm(e)),
            _ => Err(from_llm(LlmError::InvalidRequest("no generation".into()))),
        }
    }

    async fn score(&self, tokens: Vec<u32>, top: usize) -> Result<Scored, Reply> {
        match self.ask(Work::Score { tokens, top }).await? {
            Done::Scored(Ok(s)) => Ok(s),
            Done::Scored(Err(e)) => Err(from_llm(e)),
            _ => Err(from_llm(LlmError::InvalidRequest("no scores".into()))),
        }
    }
}

async fn choose(State(s): State<Arc<AppState>>, body: axum::body::Body) -> HttpResponse {
    let (_inflight, body) = match s.admit(body).await {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    match choose_inner(&s, &body).await {
        Ok(v) => Json(v).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `/v1/choose`: the engine's own `choose`, so a client gets in-process probabilities with
/// the engine's shared prompt prefill and cross-call prefix cache.
async fn choose_inner(s: &AppState, body: &[u8]) -> Result<Value, Reply> {
    let b: ChooseBody = api::parse(body).map_err(bad)?;
    s.check_model(&b.model)?;
    let req = b.request(s.tokenizer.vocab_size()).map_err(bad)?;
    match s.ask(Work::Run(Request::Choose(req))).await? {
        Done::Response(Ok(Response::Chosen(c))) => Ok(json!({
            "object": "choice", "model": s.names[0], "index": c.index, "probs": c.probs,
            "logprobs": c.logprobs, "usage": {"prompt_tokens": c.prompt_tokens}})),
        Done::Response(Err(e)) => Err(from_llm(e)),
        _ => Err(from_llm(LlmError::InvalidRequest("no choice".into()))),
    }
}

fn finish_name(f: FinishReason) -> &'static str {
    match f {
        FinishReason::Length => "length",
        _ => "stop",
    }
}

fn json_reply(v: Value, stream: bool) -> HttpResponse {
    if !stream {
        return Json(v).into_response();
    }
    let body = format!("data: {v}\n\ndata: [DONE]\n\n");
    ([(header::CONTENT_TYPE, "text/event-stream")], body).into_response()
}

async fn chat(State(s): State<Arc<AppState>>, body: axum::body::Body) -> HttpResponse {
    let (_inflight, body) = match s.admit(body).await {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    match chat_inner(&s, &body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

async fn chat_inner(s: &AppState, body: &[u8]) -> Result<HttpResponse, Reply> {
    let b: ChatBody = api::parse(body).map_err(bad)?;
    s.check_model(&b.params.model)?;
    let msgs = api::messages(&b.messages).map_err(bad)?;
    let id = s.next_id();
    let mut g = b
        .params
        .generate(Prompt::Chat(msgs.clone()), s.budget, s.budget, id)
        .map_err(bad)?;
    b.params.apply_constraint(&mut g, &s.table).map_err(bad)?;
    let top = b.top_logprobs.unwrap_or(0);
    if !(0..=api::MAX_TOP_LOGPROBS).contains(&top) {
        return Err(bad(format!(
            "top_logprobs = {top}: must be 0 to {}",
            api::MAX_TOP_LOGPROBS
        )));
    }
    let gen = s.generate(g).await?;
    let logprobs = if b.logprobs {
        let text = s.template.render_reply(&msgs).map_err(from_llm)?;
        let prompt = s.tokenizer.encode_prompt(&text, true).map_err(from_llm)?;
        let reply = s.tokenizer.encode(&gen.text, false).map_err(from_llm)?;
        let n = prompt.len();
        let scored = s.score([prompt, reply].concat(), top as usize).await?;
        let content: Vec<Value> = scored.tokens[n..]
            .iter()
            .map(|t| {
                let piece = |id: u32| String::from_utf8_lossy(&s.tokenizer.token_bytes(id)).into_owned();
                json!({"token": piece(t.token), "logprob": t.logprob, "bytes": s.tokenizer.token_bytes(t.token),
                       "top_logprobs": t.top.iter().map(|&(i, lp)| json!({"token": piece(i), "logprob": lp,
                           "bytes": s.tokenizer.token_bytes(i)})).collect::<Vec<_>>()})
            })
            .collect();
        json!({"content": content})
    } else {
        Value::Null
    };
    let usage = json!({"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.generated_tokens,
                       "total_tokens": gen.prompt_tokens + gen.generated_tokens});
    let v = if b.params.stream {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion.chunk", "created": s.created,
               "model": s.names[0], "choices": [{"index": 0, "delta": {"role": "assistant", "content": gen.text},
               "logprobs": logprobs, "finish_reason": finish_name(gen.finish)}], "usage": usage})
    } else {
        json!({"id": format!("chatcmpl-{id}"), "object": "chat.completion", "created": s.created,
               "model": s.names[0], "choices": [{"index": 0, "message": {"role": "assistant", "content": gen.text},
               "logprobs": logprobs, "finish_reason": finish_name(gen.finish)}], "usage": usage})
    };
    Ok(json_reply(v, b.params.stream))
}

async fn completions(State(s): State<Arc<AppState>>, body: axum::body::Body) -> HttpResponse {
    let (_inflight, body) = match s.admit(body).await {
        Ok(a) => a,
        Err(e) => return e.into_response(),
    };
    match completions_inner(&s, &body).await {
        Ok(r) => r,
        Err(e) => e.into_response(),
    }
}

/// One prompt's choice of a completions answer.
async fn one_completion(
    s: Arc<AppState>,
    b: Arc<CompletionBody>,
    prompt: PromptIn,
    index: usize,
    seed: u64,
) -> Result<(Value, usize, usize), Reply> {
    let (text, ids) = match prompt {
        PromptIn::Text(t) => {
            let ids = s.tokenizer.encode_prompt(&t, true).map_err(from_llm)?;
            (t, ids)
        }
        PromptIn::Tokens(ids) => (s.tokenizer.decode(&ids).map_err(from_llm)?, ids),
    };
    if ids.is_empty() {
        return Err(bad("the prompt is empty"));
    }
    let s = &*s;
    let mut g = b
        .params
        .generate(Prompt::Tokens(ids.clone()), 16, s.budget, seed)
        .map_err(bad)?;
    if b.params.humanoid_constraint.is_some() && b.logprobs.is_some() {
        return Err(bad("humanoid_constraint cannot be combined with logprobs"));
    }
    b.params.apply_constraint(&mut g, &s.table).map_err(bad)?;
    let k = match b.logprobs {
        None => None,
        Some(k) if (0..=api::MAX_TOP_LOGPROBS).contains(&k) => Some(k as usize),
        Some(k) => {
            return Err(bad(format!(
                "logprobs = {k}: must be 0 to {}",
                api::MAX_TOP_LOGPROBS
            )))
        }
    };
    let n = ids.len();
    let (gen_text, gen_ids, finish, scored) = match k {
        // One token or none: scored and sampled from the same forward pass.
        Some(k) if g.max_tokens <= 1 => {
            let scored = s.score(ids.clone(), k).await?;
            let mut gen_ids = Vec::new();
            let mut finish = FinishReason::Length;
            if g.max_tokens == 1 && !scored.next.is_empty() {
                let mut sampler = Sampler::new(g.sampling.clone(), g.seed);
                match sampler.sample(&scored.next) {
                    Some(t) if !s.tokenizer.stop_ids().contains(&t) => gen_ids.push(t),
                    _ => finish = FinishReason::Stop,
                }
            }
            let gen_text = s.tokenizer.decode(&gen_ids).map_err(from_llm)?;
            let mut all = scored.tokens;
            if let Some(&t) = gen_ids.first() {
                let (lp, top) = score::row_scores(&scored.next, Some(t), k);
                all.push(score::TokenScore {
                    token: t,
                    logprob: lp,
                    top,
                });
            }
            (gen_text, gen_ids, finish, Some(all))
        }
        Some(k) => {
            let gen = s.generate(g).await?;
            let gen_ids = s.tokenizer.encode(&gen.text, false).map_err(from_llm)?;
            let scored = s.score([ids.clone(), gen_ids.clone()].concat(), k).await?;
            (gen.text, gen_ids, gen.finish, Some(scored.tokens))
        }
        None => {
            let gen = s.generate(g).await?;
            (gen.text, Vec::new(), gen.finish, None)
        }
    };
    let generated = if scored.is_some() {
        gen_ids.len()
    } else {
        s.tokenizer.encode(&gen_text, false).map_or(0, |t| t.len())
    };
    let logprobs = match scored {
        None => Value::Null,
        Some(all) => {
            let from = if b.echo { 0 } else { n };
            let shown = &all[from.min(all.len())..];
            let shown_ids: Vec<u32> = shown.iter().map(|t| t.token).collect();
            let (base_text, base) = if b.echo { (text.as_str(), 0) } else { ("", 0) };
            let (pieces, mut offsets) = api::pieces(&s.tokenizer, &shown_ids, base_text, base);
            if b.echo {
                // Generated tokens continue after the prompt text.
                let prompt_chars = text.chars().count();
                let (_, gen_off) = api::pieces(&s.tokenizer, &gen_ids, "", prompt_chars);
                let keep = offsets.len().saturating_sub(gen_ids.len());
                offsets.truncate(keep);
                offsets.extend(gen_off);
            }
            let piece =
                |id: u32| String::from_utf8_lossy(&s.tokenizer.token_bytes(id)).into_owned();
            json!({
                "tokens": pieces,
                "token_logprobs": shown.iter().map(|t| t.logprob).collect::<Vec<_>>(),
                "top_logprobs": shown.iter().map(|t| match t.logprob {
                    None => Value::Null,
                    Some(_) => Value::Object(t.top.iter().map(|&(i, lp)| (piece(i), json!(lp))).collect()),
                }).collect::<Vec<_>>(),
                "text_offset": offsets,
            })
        }
    };
    let shown_text = if b.echo {
        format!("{text}{gen_text}")
    } else {
        gen_text
    };
    Ok((
        json!({"index": index, "text": shown_text, "logprobs": logprobs,
               "finish_reason": finish_name(finish)}),
        n,
        generated,
    ))
}

async fn completions_inner(s: &Arc<AppState>, body: &[u8]) -> Result<HttpResponse, Reply> {
    let b: Arc<CompletionBody> = Arc::new(api::parse(body).map_err(bad)?);
    s.check_model(&b.params.model)?;
    let prompts = api::prompts(&b.prompt, s.tokenizer.vocab_size()).map_err(bad)?;
    let id = s.next_id();
    let mut pending = Vec::new();
    for (i, p) in prompts.into_iter().enumerate() {
        pending.push(one_completion(
            s.clone(),
            b.clone(),
            p,
            i,
            id.wrapping_add(i as u64),
        ));
    }
    // Every prompt is submitted before any is awaited, so they share a batch.
    let mut choices = Vec::new();
    let (mut prompt_tokens, mut completion_tokens) = (0, 0);
    for r in join_all(pending).await {
        let (c, p, g) =
            r.ok_or_else(|| from_llm(LlmError::InvalidRequest("a completion failed".into())))??;
        choices.push(c);
        prompt_tokens += p;
        completion_tokens += g;
    }
    let v = json!({"id": format!("cmpl-{id}"), "object": "text_completion", "created": s.created,
                   "model": s.names[0], "choices": choices,
                   "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                             "total_tokens": prompt_tokens + completion_tokens}});
    Ok(json_reply(v, b.params.stream))
}

/// Awaits futures concurrently, results in order (`None` for a task that failed).
async fn join_all<F>(futs: Vec<F>) -> Vec<Option<F::Output>>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futs.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::with_capacity(handles.len());
    for h in handles {
        out.push(
            h.await
                .map_err(|e| tracing::error!("a completion task failed: {e}"))
                .ok(),
        );
    }
    out
}

/// Serves `router` on `listener` until the process ends.
pub async fn serve(listener: tokio::net::TcpListener, router: Router) -> std::io::Result<()> {
    axum::serve(listener, router).await
}

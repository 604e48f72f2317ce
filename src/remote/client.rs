//! [`RemoteClient`]: the [`Inference`] backend over an OpenAI-compatible server.
//!
//! A batch becomes HTTP jobs (one per `generate`, one per `choose` option when options are
//! scored one by one) run by at most `max_inflight` threads; results are put back in
//! request order, so a run applies them in (tick, agent, call) order as in-process.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::choose::{self, ChooseMethod};
use super::constrain::{self, ConstraintMethod};
use super::detect;
use super::forced;
use super::http::{CallError, Http};
use super::jobs::{assemble, Job, Out};
use super::local::LocalModel;
use super::{RemoteConfig, RemoteError};
use crate::llm::engine::{EngineStats, Event};
use crate::llm::error::{LlmError, Result};
use crate::llm::inference::Inference;
use crate::llm::request::{
    ChooseRequest, FinishReason, GenerateRequest, Generation, Prompt, Request, Response,
};
use crate::llm::template::{begins_reply, Message};
use crate::llm::tokenizer::Tokenizer;

/// The client of one server, with what was detected about it.
pub struct RemoteClient {
    cfg: RemoteConfig,
    http: Http,
    local: LocalModel,
    method: ChooseMethod,
    constraints: ConstraintMethod,
    stats: EngineStats,
    /// Generations whose token constraint could not be sent (answers parsed defensively).
    unconstrained: u64,
    /// Constrained replies the machine cut short (a grammar looser than the machine).
    cut: AtomicU64,
}

fn messages_json(m: &[Message]) -> Value {
    Value::Array(
        m.iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect(),
    )
}

fn finish_of(v: &Value) -> FinishReason {
    match v
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str)
    {
        Some("length") => FinishReason::Length,
        _ => FinishReason::Stop,
    }
}

impl RemoteClient {
    /// Connects: loads the tokenizer, lists the server's models (a clear error naming the URL
    /// if it cannot be reached) and detects how `choose` can be scored and how generations
    /// can be constrained.
    pub fn connect(cfg: RemoteConfig) -> std::result::Result<Self, RemoteError> {
        let api_key = match &cfg.api_key_env {
            Some(var) => {
                Some(std::env::var(var).map_err(|_| RemoteError::MissingKey(var.clone()))?)
            }
            None => None,
        };
        if cfg.max_inflight == 0 {
            return Err(RemoteError::Invalid(
                "--max-inflight must be at least 1".into(),
            ));
        }
        if !(cfg.timeout_secs > 0.0 && cfg.timeout_secs.is_finite()) {
            return Err(RemoteError::Invalid(
                "--request-timeout must be positive".into(),
            ));
        }
        let local = LocalModel::load(std::path::Path::new(&cfg.tokenizer))?;
        let http = Http::new(
            &cfg.url,
            api_key,
            Duration::from_secs_f64(cfg.timeout_secs),
            cfg.retries,
        );
        let base = http.base().to_string();
        let unreachable = |e: CallError| RemoteError::Unreachable {
            url: base.clone(),
            reason: e.to_string(),
        };
        let ids = http
            .get("/v1/models", |v| {
                let data = v
                    .get("data")
                    .and_then(Value::as_array)
                    .ok_or("no `data` list")?;
                Ok(data
                    .iter()
                    .filter_map(|m| m.get("id").and_then(Value::as_str).map(str::to_string))
                    .collect::<Vec<_>>())
            })
            .map_err(unreachable)?;
        if !ids.contains(&cfg.model) {
            tracing::warn!(
                "{} does not list model {:?} (it lists {:?}); trying it anyway",
                http.base(),
                cfg.model,
                ids
            );
        }
        let mut client = Self {
            cfg,
            http,
            local,
            method: ChooseMethod::Generate,
            constraints: ConstraintMethod::Unconstrained,
            stats: EngineStats::default(),
            unconstrained: 0,
            cut: AtomicU64::new(0),
        };
        client.method =
            detect::detect(&client.http, &client.cfg.model, &client.local).map_err(unreachable)?;
        tracing::info!("{}: choose uses {}", client.http.base(), client.method);
        client.constraints =
            constrain::detect(&client.http, &client.cfg.model).map_err(unreachable)?;
        tracing::info!(
            "{}: constraints: {}",
            client.http.base(),
            client.constraints
        );
        Ok(client)
    }

    /// The settings it was connected with.
    pub fn config(&self) -> &RemoteConfig {
        &self.cfg
    }

    /// How `choose` is scored on this server.
    pub fn choose_method(&self) -> ChooseMethod {
        self.method
    }

    /// Uses `method` for `choose` from now on, instead of the one detected (to compare
    /// methods on one server; a method the server lacks makes every `choose` fail).
    pub fn set_choose_method(&mut self, method: ChooseMethod) {
        self.method = method;
    }

    /// The server's base URL.
    pub fn url(&self) -> &str {
        self.http.base()
    }

    /// How generation constraints are sent to this server.
    pub fn constraint_method(&self) -> ConstraintMethod {
        self.constraints
    }

    /// Sends constraints with `method` from now on, instead of the one detected (to compare
    /// methods on one server).
    pub fn set_constraint_method(&mut self, method: ConstraintMethod) {
        self.constraints = method;
    }

    /// Generations sent without their token constraint so far.
    pub fn unconstrained_generations(&self) -> u64 {
        self.unconstrained
    }

    /// Constrained replies cut to what the constraint's machine accepts so far.
    pub fn cut_replies(&self) -> u64 {
        self.cut.load(Ordering::Relaxed)
    }

    fn jobs(&self, requests: &[Request]) -> Vec<Job> {
        let mut jobs = Vec::new();
        for (i, r) in requests.iter().enumerate() {
            match r {
                Request::Generate(_) => jobs.push(Job::Generate(i)),
                Request::Choose(c) => match self.method {
                    ChooseMethod::Native => jobs.push(Job::Native(i)),
                    ChooseMethod::Echo | ChooseMethod::PromptLogprobs => {
                        jobs.extend((0..c.options.len()).map(|k| Job::Option(i, k)))
                    }
                    ChooseMethod::ForcedTokens | ChooseMethod::ForcedText => {
                        match self.token_jobs(i, c) {
                            Ok(j) => jobs.extend(j),
                            Err(e) => jobs.push(Job::Invalid(i, e.to_string())),
                        }
                    }
                    ChooseMethod::FirstToken => jobs.push(Job::FirstToken(i)),
                    ChooseMethod::Generate => jobs.push(Job::Pick(i)),
                },
            }
        }
        jobs
    }

    /// One job per token of each option of choose request `i` (forced tokens), after the
    /// prompt's token ids and the option's tokens before it, as the engine scores them.
    fn token_jobs(&self, i: usize, c: &ChooseRequest) -> Result<Vec<Job>> {
        let prompt = self.local.prompt_tokens(&c.prompt)?;
        let options = c
            .options
            .iter()
            .map(|o| self.local.option_ids(&c.prompt, o))
            .collect::<Result<Vec<_>>>()?;
        let longest = options.iter().map(Vec::len).max().unwrap_or(0);
        if options.is_empty() || prompt.len() + longest > self.cfg.context {
            return Err(match options.is_empty() {
                true => LlmError::InvalidRequest("choose needs at least one option".into()),
                false => LlmError::OverBudget {
                    tokens: prompt.len() + longest,
                    budget: self.cfg.context,
                },
            });
        }
        let text: Option<Arc<str>> = match self.method {
            ChooseMethod::ForcedText => Some(self.local.prompt_text(&c.prompt)?.into()),
            _ => None,
        };
        let prompt: Arc<[u32]> = prompt.into();
        let mut jobs = Vec::new();
        for (k, ids) in options.iter().enumerate() {
            for (j, &target) in ids.iter().enumerate() {
                jobs.push(Job::Token {
                    request: i,
                    option: k,
                    prompt: prompt.clone(),
                    prefix: ids[..j].to_vec(),
                    text: text.clone(),
                    target,
                });
            }
        }
        Ok(jobs)
    }

    fn run_job(&self, job: &Job, requests: &[Request]) -> std::result::Result<Out, CallError> {
        let m = self.cfg.model.as_str();
        let bad = |e: LlmError| CallError::Request(e.to_string());
        match *job {
            Job::Generate(i) => {
                let Request::Generate(g) = &requests[i] else {
                    return Err(CallError::Request("not a generation".into()));
                };
                self.generate(g).map(Out::Generated)
            }
            Job::Option(i, k) => {
                let Request::Choose(c) = &requests[i] else {
                    return Err(CallError::Request("not a choice".into()));
                };
                let prompt = self.local.prompt_text(&c.prompt).map_err(bad)?;
                let full = format!(
                    "{prompt}{}",
                    self.local.option_text(&c.prompt, &c.options[k])
                );
                let n = self.local.option_tokens(&c.prompt, &c.options[k]);
                if self.method == ChooseMethod::Echo {
                    let (pc, fc) = (prompt.chars().count(), full.chars().count());
                    self.http
                        .post("/v1/completions", &choose::echo_body(m, &full), |v| {
                            choose::parse_echo(v, pc, fc, n)
                        })
                        .map(|(lp, p)| Out::Scored(lp, p))
                } else {
                    let ids = self
                        .local
                        .tokenizer
                        .encode_prompt(&full, true)
                        .map_err(bad)?;
                    let body = choose::prompt_logprobs_body(m, &full);
                    self.http
                        .post("/v1/completions", &body, |v| {
                            choose::parse_prompt_logprobs(v, &ids, n)
                        })
                        .map(|(lp, p)| Out::Scored(lp, p))
                }
            }
            Job::Token {
                ref prompt,
                ref prefix,
                ref text,
                target,
                ..
            } => {
                let token = self.local.tokenizer.decode(&[target]).unwrap_or_default();
                let prompt_json = match text {
                    Some(t) => json!(format!(
                        "{t}{}",
                        self.local.tokenizer.decode(prefix).map_err(bad)?
                    )),
                    None => json!(prompt.iter().chain(prefix).collect::<Vec<_>>()),
                };
                let count = text.as_ref().map(|_| prompt.len() + prefix.len());
                let prompt = prompt.len();
                let body = forced::forced_body(m, prompt_json.clone(), target);
                let forced = self.http.post("/v1/completions", &body, |v| {
                    forced::forced_logprob(v, target, &token, count)
                })?;
                if let Some(lp) = forced {
                    return Ok(Out::Scored(lp, prompt));
                }
                // The server stopped at the (end) token without reporting it: read it from
                // the alternatives of the next token, with the end token banned.
                let body = forced::alternatives_body(m, prompt_json, target);
                let texts = [token.as_str(), ""];
                let (lp, exact) = self.http.post("/v1/completions", &body, |v| {
                    forced::end_logprob(v, target, &texts)
                })?;
                if !exact {
                    tracing::debug!(
                        "end token {target}: log-probability {lp:.3} bounded from the other {} alternatives",
                        forced::ALTERNATIVES
                    );
                }
                Ok(Out::Scored(lp, prompt))
            }
            Job::Invalid(_, ref e) => Err(CallError::Request(e.clone())),
            Job::Native(i) => {
                let Request::Choose(c) = &requests[i] else {
                    return Err(CallError::Request("not a choice".into()));
                };
                let (prompt, chat) = match &c.prompt {
                    Prompt::Chat(m) => (messages_json(m), true),
                    Prompt::Text(t) => (json!(t), false),
                    Prompt::Tokens(ids) => (json!(ids), false),
                };
                let body = choose::native_body(m, prompt, chat, &c.options);
                let n = c.options.len();
                self.http
                    .post("/v1/choose", &body, |v| choose::parse_native(v, n))
                    .map(Out::Chosen)
            }
            Job::FirstToken(i) => {
                let Request::Choose(c) = &requests[i] else {
                    return Err(CallError::Request("not a choice".into()));
                };
                let body = choose::first_token_body(m, &self.messages(&c.prompt).map_err(bad)?);
                self.http
                    .post("/v1/chat/completions", &body, choose::parse_first_token)
                    .map(|(t, p)| Out::Top(t, p))
            }
            Job::Pick(i) => {
                let Request::Choose(c) = &requests[i] else {
                    return Err(CallError::Request("not a choice".into()));
                };
                let longest = c.options.iter().map(|o| o.len()).max().unwrap_or(1);
                let mut g = GenerateRequest::new(with_hint(&c.prompt, &c.options), longest + 8);
                g.stop = vec!["\n".into()];
                self.generate(&g)
                    .map(|x| Out::Picked(x.text, x.prompt_tokens))
            }
        }
    }

    /// Chat messages for a prompt (raw text becomes one user message).
    fn messages(&self, prompt: &Prompt) -> Result<Value> {
        Ok(match prompt {
            Prompt::Chat(m) => messages_json(m),
            p => messages_json(&[Message::user(self.local.prompt_text(p)?)]),
        })
    }

    fn generate(&self, g: &GenerateRequest) -> std::result::Result<Generation, CallError> {
        let mut body = json!({
            "model": self.cfg.model,
            "max_tokens": g.max_tokens.max(1),
            "temperature": g.sampling.temperature,
            "top_p": g.sampling.top_p,
            // Servers take a signed 64-bit seed (vLLM refuses larger values; llama.cpp keeps
            // the low 32 bits): the same 64 bits as i64, which serve-llm reads back as u64.
            "seed": g.seed as i64,
        });
        if g.sampling.top_k > 0 && g.sampling.temperature > 0.0 {
            body["top_k"] = json!(g.sampling.top_k);
        }
        if !g.stop.is_empty() {
            body["stop"] = json!(g.stop);
        }
        let (path, chat) = match &g.prompt {
            // A reply begun by the caller (a last assistant message) goes as the text the
            // model sees: chat endpoints differ in whether they continue it or start anew.
            Prompt::Chat(m) if begins_reply(m) => {
                let text = self
                    .local
                    .prompt_text(&g.prompt)
                    .map_err(|e| CallError::Request(e.to_string()))?;
                body["prompt"] = json!(text);
                ("/v1/completions", false)
            }
            Prompt::Chat(m) => {
                body["messages"] = messages_json(m);
                ("/v1/chat/completions", true)
            }
            Prompt::Text(t) => {
                body["prompt"] = json!(t);
                ("/v1/completions", false)
            }
            Prompt::Tokens(ids) => {
                body["prompt"] = json!(ids);
                ("/v1/completions", false)
            }
        };
        let spec = g
            .spec
            .as_ref()
            .filter(|spec| self.constraints.apply(&mut body, spec));
        let tok = &self.local.tokenizer;
        let mut gen = self.http.post(path, &body, |v| {
            let text = if chat {
                match v.pointer("/choices/0/message") {
                    Some(msg) => msg.get("content").and_then(Value::as_str).unwrap_or(""),
                    None => return Err("no choices[0].message".into()),
                }
            } else {
                v.pointer("/choices/0/text")
                    .and_then(Value::as_str)
                    .ok_or("no choices[0].text")?
            };
            let usage = |k: &str| v.pointer(&format!("/usage/{k}")).and_then(Value::as_u64);
            Ok(Generation {
                text: text.to_string(),
                prompt_tokens: usage("prompt_tokens").unwrap_or(0) as usize,
                generated_tokens: usage("completion_tokens").map_or_else(
                    || tok.encode(text, false).map_or(0, |t| t.len()),
                    |n| n as usize,
                ),
                finish: finish_of(v),
            })
        })?;
        if let Some(spec) = spec {
            let kept = spec.accepted_prefix(&gen.text).len();
            if kept < gen.text.len() {
                tracing::debug!(
                    "{}: reply cut to what its constraint accepts: {:?} -> {:?}",
                    self.http.base(),
                    gen.text,
                    &gen.text[..kept]
                );
                self.cut.fetch_add(1, Ordering::Relaxed);
                gen.text.truncate(kept);
            }
        }
        Ok(gen)
    }

    /// Runs `jobs` on at most `max_inflight` threads; results by job index.
    fn run_jobs(
        &self,
        jobs: &[Job],
        requests: &[Request],
    ) -> Vec<std::result::Result<Out, CallError>> {
        let next = AtomicUsize::new(0);
        let results: Mutex<Vec<Option<std::result::Result<Out, CallError>>>> =
            Mutex::new((0..jobs.len()).map(|_| None).collect());
        let workers = self.cfg.max_inflight.min(jobs.len()).max(1);
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(job) = jobs.get(i) else { break };
                    let r = self.run_job(job, requests);
                    results.lock().unwrap_or_else(|p| p.into_inner())[i] = Some(r);
                });
            }
        });
        results
            .into_inner()
            .unwrap_or_else(|p| p.into_inner())
            .into_iter()
            .map(|r| r.unwrap_or_else(|| Err(CallError::Request("job did not run".into()))))
            .collect()
    }
}

/// A `choose` prompt with the options spelled out at the end of its last message.
fn with_hint(prompt: &Prompt, options: &[String]) -> Prompt {
    let hint = choose::options_hint(options);
    match prompt {
        Prompt::Chat(m) => {
            let mut m = m.clone();
            match m.last_mut() {
                Some(last) => last.content.push_str(&hint),
                None => m.push(Message::user(hint)),
            }
            Prompt::Chat(m)
        }
        Prompt::Text(t) => Prompt::Text(format!("{t}{hint}")),
        Prompt::Tokens(ids) => Prompt::Tokens(ids.clone()),
    }
}

impl Inference for RemoteClient {
    fn run(
        &mut self,
        requests: Vec<Request>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Vec<Result<Response>> {
        let t0 = Instant::now();
        // Constrained generations whose constraint cannot go to this server.
        let sendable = self.constraints != ConstraintMethod::Unconstrained;
        let constrained = requests
            .iter()
            .filter(|r| {
                matches!(r, Request::Generate(g)
                    if g.constraint.is_some() && !(sendable && g.spec.is_some()))
            })
            .count() as u64;
        if constrained > 0 && self.unconstrained == 0 {
            tracing::info!(
                "{}: token constraints cannot be sent to the server; generating unconstrained (answers are parsed defensively, with logged fallbacks)",
                self.http.base()
            );
        }
        self.unconstrained += constrained;
        for r in &requests {
            match r {
                Request::Generate(_) => self.stats.generate_calls += 1,
                Request::Choose(_) => self.stats.choose_calls += 1,
            }
        }
        let jobs = self.jobs(&requests);
        let outs = self.run_jobs(&jobs, &requests);
        let before = self.stats.prompt_tokens + self.stats.generated_tokens;
        let results = assemble(&mut self.stats, &requests, &jobs, outs);
        let elapsed = t0.elapsed();
        self.stats.forward_steps += 1;
        self.stats.batched_seqs += jobs.len() as u64;
        self.stats.forward_time += elapsed;
        on_event(Event::Step {
            seqs: jobs.len(),
            tokens: (self.stats.prompt_tokens + self.stats.generated_tokens - before) as usize,
            elapsed,
        });
        results
    }

    fn prompt_tokens(&self, prompt: &Prompt) -> Result<Vec<u32>> {
        self.local.prompt_tokens(prompt)
    }

    fn context_budget(&self) -> usize {
        self.cfg.context
    }

    fn tokenizer(&self) -> &Tokenizer {
        &self.local.tokenizer
    }

    fn stats(&self) -> &EngineStats {
        &self.stats
    }

    fn failure(&self) -> Option<String> {
        self.http.fatal()
    }
}

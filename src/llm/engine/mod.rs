//! The engine: requests in, responses out, every request of a call batched together.
//!
//! A call to [`Engine::run`] takes any mix of `generate` and `choose` requests. Prompts that
//! share a prefix (with each other, or with a recent call's prompt) prefill it once and
//! continue from its KV cache; `choose` prefills its prompt once and scores every option as
//! a continuation of it. The scheduler then runs continuous batching: each forward step
//! takes decoding sequences and prefill chunks up to the limits; finished sequences free
//! their cache at once and new ones (options, released prefix groups) join the next step.
//! Seeded samplers per request and batch-invariant kernels: a result does not depend on its batch.

use std::path::Path;
use std::time::Instant;

mod apply;
mod filter;
mod options;

pub use filter::AnswerFilter;
pub use options::{EngineOptions, EngineStats, Event, DEFAULT_PREFIX_CACHE_MIB};

use super::backend::Backend;
use super::config::Config;
use super::error::{LlmError, Result};
use super::footprint::{self, LoadShape};
use super::gguf::GgufFile;
use super::kv::{SeqCache, SharedPrefix};
use super::model::{LogitsFor, SeqInput};
use super::prefix::{prefix_tree, PrefixCache, PrefixNode};
use super::request::{
    Choice, ChooseRequest, GenerateRequest, Generation, Prompt, Request, Response,
};
use super::sampler::Sampler;
use super::scheduler::{plan_step, Candidate};
use super::template::ChatTemplate;
use super::tokenizer::Tokenizer;

/// The requests a sequence serves: a prefix's are every request under its node.
fn requests_of(seq: &Seq, tree: &[PrefixNode]) -> Vec<usize> {
    match &seq.role {
        Role::Prefix { group } => {
            let mut out = Vec::new();
            let mut todo = vec![*group];
            while let Some(g) = todo.pop() {
                if let Some(node) = tree.get(g) {
                    out.extend(&node.members);
                    todo.extend(&node.children);
                }
            }
            out
        }
        Role::Generate { req, .. }
        | Role::ChoosePrompt { req }
        | Role::ChooseOption { req, .. } => {
            vec![*req]
        }
    }
}

/// A loaded model with its tokenizer and chat template, ready to serve batches.
pub struct Engine {
    model: Backend,
    tokenizer: Tokenizer,
    template: ChatTemplate,
    opts: EngineOptions,
    budget: usize,
    prefix_cache: PrefixCache,
    stats: EngineStats,
    /// Token that ends an assistant turn, appended when scoring `choose` options of chat prompts.
    end_of_turn: Option<u32>,
    answer_filter: Option<AnswerFilter>,
}

enum Role {
    /// Computes a shared prefix for the members of a group.
    Prefix {
        group: usize,
    },
    Generate {
        req: usize,
        sampler: Box<Sampler>,
        generated: Vec<u32>,
        text_len: usize,
    },
    ChoosePrompt {
        req: usize,
    },
    ChooseOption {
        req: usize,
        option: usize,
    },
}

struct Seq {
    role: Role,
    cache: SeqCache,
    /// Tokens still to feed, in order.
    pending: Vec<u32>,
    /// Which logits the last chunk of `pending` produces.
    want: LogitsFor,
}

/// Per-request bookkeeping while a batch runs.
enum Slot {
    Generate {
        prompt_len: usize,
        max_new: usize,
    },
    Choose {
        options: Vec<Vec<u32>>,
        /// Running sum of log-probabilities per option.
        logp: Vec<f32>,
        remaining: usize,
        prompt_len: usize,
        /// The prompt, for a request outside the batch's prefix tree: its KV goes into the
        /// prefix cache once computed, so a later question in the same context reuses it.
        keep: Option<Vec<u32>>,
    },
    Done,
}

impl Engine {
    /// Loads a GGUF model (tokenizer from its metadata, or a `tokenizer.json` beside it). Every
    /// error names the file.
    pub fn load(path: &Path, opts: EngineOptions) -> Result<Self> {
        Self::load_file(path, opts).map_err(|e| e.in_file(path))
    }

    fn load_file(path: &Path, opts: EngineOptions) -> Result<Self> {
        let mut g = GgufFile::open(path)?;
        // The architecture first: an unsupported one is the error, not what it lacks.
        let cfg = Config::from_gguf(&g)?;
        let shape = LoadShape {
            device: opts.device,
            format: opts.weight_format,
            context: opts.context_budget,
            prefix_cache_bytes: opts.prefix_cache_bytes,
            max_batched_tokens: opts.limits.max_batched_tokens,
        };
        footprint::check(footprint::estimate(&g, &cfg, &shape), opts.device)
            .map_err(LlmError::TooLarge)?;
        let beside = path.with_file_name("tokenizer.json");
        let tokenizer = if beside.exists() {
            Tokenizer::from_file(&beside)?
        } else {
            Tokenizer::from_gguf(&g)?
        };
        let template = ChatTemplate::from_gguf(&g, &tokenizer)?
            .unwrap_or_else(|| ChatTemplate::fallback(&tokenizer));
        let model = Backend::load(&mut g, opts.device, opts.weight_format, opts.context_budget)?;
        Ok(Self::new(model, tokenizer, template, opts))
    }

    /// An engine over already-loaded parts.
    pub fn new(
        model: impl Into<Backend>,
        tokenizer: Tokenizer,
        template: ChatTemplate,
        opts: EngineOptions,
    ) -> Self {
        let model = model.into();
        let budget = opts.context_budget.min(model.max_positions());
        let end_of_turn = tokenizer.end_of_turn_id();
        let prefix_cache = PrefixCache::new(opts.prefix_cache_bytes);
        Self {
            model,
            tokenizer,
            template,
            opts,
            budget,
            prefix_cache,
            stats: EngineStats::default(),
            answer_filter: None,
            end_of_turn,
        }
    }

    /// The model's hyper-parameters.
    pub fn config(&self) -> &Config {
        self.model.config()
    }

    /// The tokenizer.
    pub fn tokenizer(&self) -> &Tokenizer {
        &self.tokenizer
    }

    /// The chat template.
    pub fn template(&self) -> &ChatTemplate {
        &self.template
    }

    /// The model itself.
    pub fn model(&self) -> &Backend {
        &self.model
    }

    /// Longest prompt + generation a request may have.
    pub fn context_budget(&self) -> usize {
        self.budget
    }

    /// Counters since load.
    pub fn stats(&self) -> &EngineStats {
        &self.stats
    }

    /// Bytes of keys and values the cross-call prefix cache keeps alive.
    pub fn prefix_cache_bytes(&self) -> usize {
        self.prefix_cache.bytes()
    }

    /// Drops every cached prefix.
    pub fn clear_prefix_cache(&mut self) {
        self.prefix_cache.clear();
    }

    /// The token ids a prompt becomes (chat template applied for messages).
    pub fn prompt_tokens(&self, prompt: &Prompt) -> Result<Vec<u32>> {
        match prompt {
            Prompt::Chat(messages) => {
                let text = self.template.render_reply(messages)?;
                self.tokenizer.encode_prompt(&text, true)
            }
            Prompt::Text(text) => self.tokenizer.encode_prompt(text, true),
            Prompt::Tokens(ids) => Ok(ids.clone()),
        }
    }

    /// One `generate` request.
    pub fn generate(&mut self, req: GenerateRequest) -> Result<Generation> {
        match self.run(vec![Request::Generate(req)], |_| {}).remove(0)? {
            Response::Generated(g) => Ok(g),
            Response::Chosen(_) => unreachable!("a generate request yields a generation"),
        }
    }

    /// One `choose` request.
    pub fn choose(&mut self, req: ChooseRequest) -> Result<Choice> {
        match self.run(vec![Request::Choose(req)], |_| {}).remove(0)? {
            Response::Chosen(c) => Ok(c),
            Response::Generated(_) => unreachable!("a choose request yields a choice"),
        }
    }

    /// The batch itself (see [`Engine::run`]), before any answer filter.
    fn run_model(
        &mut self,
        requests: Vec<Request>,
        mut on_event: impl FnMut(Event<'_>),
    ) -> Vec<Result<Response>> {
        let n = requests.len();
        let mut results: Vec<Option<Result<Response>>> = (0..n).map(|_| None).collect();
        let mut slots: Vec<Slot> = (0..n).map(|_| Slot::Done).collect();
        // Tokenize and check budgets.
        let mut prompts: Vec<Option<Vec<u32>>> = Vec::with_capacity(n);
        for (i, r) in requests.iter().enumerate() {
            match self.prepare(r) {
                Ok((tokens, slot)) => {
                    prompts.push(Some(tokens));
                    slots[i] = slot;
                }
                Err(e) => {
                    prompts.push(None);
                    results[i] = Some(Err(e));
                }
            }
        }
        // Shared prefixes: within this batch (a tree: a root per shared start, a child per
        // longer prefix some of its requests share), and from earlier calls (the roots).
        let tree = prefix_tree(&prompts, self.opts.min_shared_prefix);
        let lead_tokens: Vec<Vec<u32>> = tree
            .iter()
            .map(|t| prompts[t.lead].as_deref().unwrap_or_default()[..t.len].to_vec())
            .collect();
        let mut in_tree = vec![false; n];
        for node in &tree {
            for &m in &node.members {
                in_tree[m] = true;
            }
        }
        let mut seqs: Vec<Seq> = Vec::new();
        // Tokens of each root's prefix found in the cache of earlier calls.
        let mut cached = vec![0; tree.len()];
        for (gi, node) in tree.iter().enumerate().filter(|(_, t)| t.parent.is_none()) {
            let lead = &lead_tokens[gi];
            let (prefix, hit) = self.prefix_cache.lookup(lead, self.opts.min_shared_prefix);
            cached[gi] = hit;
            let cache = self.cache_from(prefix, node.len);
            seqs.push(Seq {
                role: Role::Prefix { group: gi },
                cache,
                pending: lead[hit..].to_vec(),
                want: LogitsFor::None,
            });
        }
        for i in 0..n {
            if !in_tree[i] {
                if let (Slot::Choose { keep, .. }, Some(p)) = (&mut slots[i], &prompts[i]) {
                    *keep = Some(p.clone());
                }
                if let Some(p) = prompts[i].take() {
                    let seq = self.start_seq(&requests[i], i, p, SharedPrefix::default());
                    seqs.push(seq);
                }
            }
        }

        while !seqs.is_empty() {
            // A prefix whose tokens are all cached already is done without a step.
            let cands: Vec<Candidate> = seqs
                .iter()
                .map(|s| Candidate {
                    pending: s.pending.len(),
                    chunkable: s.want != LogitsFor::All,
                })
                .collect();
            let plan = plan_step(&cands, self.opts.limits);
            let mut finished_idle: Vec<usize> = seqs
                .iter()
                .enumerate()
                .filter(|(_, s)| s.pending.is_empty())
                .map(|(i, _)| i)
                .collect();
            let mut outputs: Vec<(usize, Vec<f32>)> = Vec::new();
            if !plan.is_empty() {
                let t0 = Instant::now();
                let mut chosen: Vec<usize> = plan.iter().map(|p| p.0).collect();
                chosen.sort_unstable();
                let takes: std::collections::HashMap<usize, usize> = plan.iter().copied().collect();
                let mut fed: Vec<Vec<u32>> = Vec::with_capacity(chosen.len());
                let mut modes = Vec::with_capacity(chosen.len());
                for &i in &chosen {
                    let s = &mut seqs[i];
                    let take = takes[&i];
                    let last_chunk = take == s.pending.len();
                    fed.push(s.pending.drain(..take).collect());
                    modes.push(if last_chunk { s.want } else { LogitsFor::None });
                }
                let tokens: usize = fed.iter().map(|f| f.len()).sum();
                let logits = {
                    let mut inputs: Vec<SeqInput<'_>> = Vec::with_capacity(chosen.len());
                    let mut rest: &mut [Seq] = &mut seqs;
                    let mut base = 0;
                    for (k, &i) in chosen.iter().enumerate() {
                        let (_, tail) = rest.split_at_mut(i - base);
                        let (head, tail2) = tail.split_at_mut(1);
                        inputs.push(SeqInput {
                            cache: &mut head[0].cache,
                            tokens: &fed[k],
                            logits: modes[k],
                        });
                        rest = tail2;
                        base = i + 1;
                    }
                    // On a pool thread, which works the kernels' loops instead of sleeping on them.
                    rayon::scope(|_| self.model.forward(&mut inputs))
                };
                self.stats.forward_steps += 1;
                self.stats.batched_seqs += chosen.len() as u64;
                let elapsed = t0.elapsed();
                self.stats.forward_time += elapsed;
                on_event(Event::Step {
                    seqs: chosen.len(),
                    tokens,
                    elapsed,
                });
                match logits {
                    Ok(l) => {
                        for ((&i, rows), mode) in chosen.iter().zip(l).zip(&modes) {
                            if *mode != LogitsFor::None {
                                outputs.push((i, rows));
                            } else if seqs[i].pending.is_empty() {
                                finished_idle.push(i);
                            }
                        }
                    }
                    Err(e) => {
                        // A failed step fails every request it touched.
                        let msg = e.to_string();
                        for &i in &chosen {
                            for r in requests_of(&seqs[i], &tree) {
                                if results[r].is_none() {
                                    results[r] = Some(Err(LlmError::InvalidRequest(msg.clone())));
                                    slots[r] = Slot::Done;
                                }
                            }
                            seqs[i].pending.clear();
                            seqs[i].role = Role::Prefix { group: usize::MAX };
                        }
                    }
                }
            }
            // Apply outputs; collect removals and new sequences.
            let mut remove: Vec<usize> = Vec::new();
            let mut spawned: Vec<Seq> = Vec::new();
            for i in finished_idle {
                if let Role::Prefix { group } = seqs[i].role {
                    if let Some(node) = tree.get(group) {
                        let prefix = seqs[i].cache.share();
                        self.prefix_cache
                            .insert(&lead_tokens[group][..prefix.len()], prefix.clone());
                        for &m in &node.members {
                            if let Some(p) = prompts[m].take() {
                                spawned.push(self.start_seq(&requests[m], m, p, prefix.clone()));
                            }
                        }
                        // Each request under the node counts the prefix as reused; the
                        // tokens this node computed were not.
                        let base = node.parent.map_or(0, |p| tree[p].len);
                        let computed = (node.len - base).saturating_sub(cached[group]);
                        self.stats.reused_prompt_tokens = self
                            .stats
                            .reused_prompt_tokens
                            .saturating_sub(computed as u64);
                        for &c in &node.children {
                            // A child continues its parent's prefix, or a longer one an
                            // earlier call left in the cache (an agent's unchanged context).
                            let lead = &lead_tokens[c];
                            let (found, hit) =
                                self.prefix_cache.lookup(lead, self.opts.min_shared_prefix);
                            let (from, start) = if hit > node.len {
                                (found, hit)
                            } else {
                                (prefix.clone(), node.len)
                            };
                            cached[c] = start - node.len;
                            spawned.push(Seq {
                                role: Role::Prefix { group: c },
                                cache: self.cache_from(from, lead.len()),
                                pending: lead[start..].to_vec(),
                                want: LogitsFor::None,
                            });
                        }
                    }
                }
                remove.push(i);
            }
            for (i, rows) in outputs {
                let done = self.apply(
                    &mut seqs[i],
                    rows,
                    &mut slots,
                    &mut results,
                    &requests,
                    &mut spawned,
                    &mut on_event,
                );
                if done {
                    remove.push(i);
                }
            }
            remove.sort_unstable();
            remove.dedup();
            for i in remove.into_iter().rev() {
                seqs.remove(i);
            }
            seqs.extend(spawned);
        }
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or_else(|| {
                    Err(LlmError::InvalidRequest(
                        "request produced no result".into(),
                    ))
                })
            })
            .collect()
    }

    fn cache_from(&self, prefix: SharedPrefix, capacity: usize) -> SeqCache {
        let cap = capacity.saturating_sub(prefix.len()).max(16);
        self.model.cache_with_prefix(prefix, cap)
    }

    /// Tokenizes a request and checks it against the budget.
    fn prepare(&mut self, r: &Request) -> Result<(Vec<u32>, Slot)> {
        match r {
            Request::Generate(g) => {
                let tokens = self.prompt_tokens(&g.prompt)?;
                self.check_prompt(&tokens)?;
                self.stats.generate_calls += 1;
                self.stats.prompt_tokens += tokens.len() as u64;
                let max_new = g.max_tokens.min(self.budget - tokens.len());
                Ok((
                    tokens.clone(),
                    Slot::Generate {
                        prompt_len: tokens.len(),
                        max_new,
                    },
                ))
            }
            Request::Choose(c) => {
                if c.options.is_empty() {
                    return Err(LlmError::InvalidRequest(
                        "choose needs at least one option".into(),
                    ));
                }
                let tokens = self.prompt_tokens(&c.prompt)?;
                let terminator = match c.prompt {
                    Prompt::Chat(_) => self.end_of_turn,
                    _ => None,
                };
                let mut options = Vec::with_capacity(c.options.len());
                for o in &c.options {
                    options.push(self.tokenizer.option_ids(o, terminator)?);
                }
                let longest = options.iter().map(|o| o.len()).max().unwrap_or(0);
                self.check_prompt(&tokens)?;
                if tokens.len() + longest > self.budget {
                    return Err(LlmError::OverBudget {
                        tokens: tokens.len() + longest,
                        budget: self.budget,
                    });
                }
                self.stats.choose_calls += 1;
                self.stats.prompt_tokens += tokens.len() as u64;
                let k = options.len();
                Ok((
                    tokens.clone(),
                    Slot::Choose {
                        options,
                        logp: vec![0.0; k],
                        remaining: k,
                        prompt_len: tokens.len(),
                        keep: None,
                    },
                ))
            }
        }
    }

    fn check_prompt(&self, tokens: &[u32]) -> Result<()> {
        if tokens.is_empty() {
            return Err(LlmError::InvalidRequest("the prompt is empty".into()));
        }
        if tokens.len() >= self.budget {
            return Err(LlmError::OverBudget {
                tokens: tokens.len(),
                budget: self.budget,
            });
        }
        Ok(())
    }

    /// The first sequence of a request, continuing from `prefix` (which must leave at least
    /// one prompt token to feed).
    fn start_seq(
        &mut self,
        r: &Request,
        index: usize,
        prompt: Vec<u32>,
        prefix: SharedPrefix,
    ) -> Seq {
        let (prefix, hit) = if prefix.is_empty() {
            self.prefix_cache
                .lookup(&prompt, self.opts.min_shared_prefix)
        } else {
            let l = prefix.len();
            (prefix, l)
        };
        let hit = hit.min(prompt.len() - 1);
        let prefix = prefix.truncated(hit);
        self.stats.reused_prompt_tokens += hit as u64;
        let extra = match r {
            Request::Generate(g) => g.max_tokens,
            Request::Choose(_) => 1,
        };
        let cache = self.cache_from(prefix, prompt.len() + extra);
        let mut pending = prompt[hit..].to_vec();
        let role = match r {
            Request::Generate(g) => {
                // Text the constraint forces at the start is fed with the prompt.
                let forced = match &g.constraint {
                    Some(c) => c.lock().unwrap_or_else(|p| p.into_inner()).forced(&[]),
                    None => Vec::new(),
                };
                let forced = if forced.len() < g.max_tokens {
                    forced
                } else {
                    Vec::new()
                };
                pending.extend_from_slice(&forced);
                Role::Generate {
                    req: index,
                    sampler: Box::new(Sampler::new(g.sampling.clone(), g.seed)),
                    generated: forced,
                    text_len: 0,
                }
            }
            Request::Choose(_) => Role::ChoosePrompt { req: index },
        };
        Seq {
            role,
            cache,
            pending,
            want: LogitsFor::Last,
        }
    }
}

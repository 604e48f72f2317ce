//! What an agent's cognition needs to ask the model, and the asking: closed-set questions
//! through `choose`, free text through constrained generation, with logged fallbacks.

use std::cell::RefCell;
use std::sync::Arc;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::llm::batch::Port;
use crate::llm::constrain::{ConstraintSpec, Letters, PlanTimes, TokenTable};
use crate::llm::{
    Choice, ChooseRequest, GenerateRequest, Inference, Message, Prompt, Request, Response, Sampling,
};
use crate::memory::TextEmbedder;

pub use super::activity_text::{
    clean_activity, clean_line, end_of_cut_line, ends_unfinished, plan_lines,
};
use super::state::PlanLine;

/// A model answer that could not be used, and what was used instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fallback {
    pub agent: String,
    pub purpose: String,
    pub reason: String,
    /// What the model wrote, if anything.
    pub output: String,
    /// What the run used instead.
    pub used: String,
}

/// Sampling settings for free text (plans, dialogue): seeded per request, so reproducible.
pub fn text_sampling() -> Sampling {
    let mut s = Sampling::temperature(0.7);
    s.top_p = 0.9;
    s
}

/// One agent's connection to the model for one task, with the time it happens at.
pub struct Mind<'a> {
    pub name: String,
    pub port: Port,
    pub engine: &'a RefCell<Box<dyn Inference>>,
    pub table: &'a Arc<TokenTable>,
    /// For relevance priors (e.g. which place fits an activity).
    pub embedder: Option<&'a RefCell<Box<dyn TextEmbedder>>>,
    pub date: NaiveDate,
    pub minutes: u32,
    /// Per need ([`crate::world::Need::ALL`] order), the P(yes) above which an answer
    /// counts as satisfying it (0.5 unless the model's manifest tunes it).
    pub yes_threshold: [f32; 5],
    /// The P(yes) above which the agent changes its plan (0.5 unless the manifest tunes it).
    pub change_threshold: f32,
    /// The letters generated text may use (the world's script).
    pub letters: Letters,
    fallbacks: RefCell<Vec<Fallback>>,
}

/// A chat prompt: the agent's context as the system message, then the question.
pub fn chat(system: &str, question: &str) -> Prompt {
    Prompt::Chat(vec![Message::system(system), Message::user(question)])
}

impl<'a> Mind<'a> {
    /// A mind for `name` at `date`/`minutes`, asking through `port`.
    pub fn new(
        name: &str,
        port: Port,
        engine: &'a RefCell<Box<dyn Inference>>,
        table: &'a Arc<TokenTable>,
        date: NaiveDate,
        minutes: u32,
    ) -> Self {
        Self {
            name: name.to_string(),
            port,
            engine,
            table,
            embedder: None,
            date,
            minutes,
            yes_threshold: [0.5; 5],
            change_threshold: 0.5,
            letters: Letters::Any,
            fallbacks: RefCell::new(Vec::new()),
        }
    }

    /// The same mind with need thresholds other than 0.5 (a model's `yes_threshold`).
    pub fn with_yes_threshold(mut self, yes_threshold: [f32; 5]) -> Self {
        self.yes_threshold = yes_threshold;
        self
    }

    /// The same mind with a plan-change threshold other than 0.5.
    pub fn with_change_threshold(mut self, threshold: f32) -> Self {
        self.change_threshold = threshold;
        self
    }

    /// The same mind writing only `letters` (a world's [`letters`](crate::world::World::letters)).
    pub fn with_letters(mut self, letters: Letters) -> Self {
        self.letters = letters;
        self
    }

    /// The same mind with an embedder for relevance priors.
    pub fn with_embedder(mut self, embedder: &'a RefCell<Box<dyn TextEmbedder>>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Cosine similarity of `text` to each of `options` (`None` without an embedder or on
    /// an embedding error).
    pub fn similarities(&self, text: &str, options: &[String]) -> Option<Vec<f32>> {
        let embedder = self.embedder?;
        let mut e = embedder.borrow_mut();
        let mut texts: Vec<&str> = vec![text];
        texts.extend(options.iter().map(String::as_str));
        let v = crate::memory::embedder::embed_checked(&mut **e, &texts).ok()?;
        Some(
            v[1..]
                .iter()
                .map(|o| crate::embed::cosine(&v[0], o))
                .collect(),
        )
    }

    /// Records a fallback (it goes to the event log).
    pub fn fallback(&self, purpose: &str, reason: impl Into<String>, output: &str, used: &str) {
        let f = Fallback {
            agent: self.name.clone(),
            purpose: purpose.to_string(),
            reason: reason.into(),
            output: output.chars().take(300).collect(),
            used: used.chars().take(300).collect(),
        };
        tracing::info!(agent = %f.agent, purpose = %f.purpose, reason = %f.reason, "fallback");
        self.fallbacks.borrow_mut().push(f);
    }

    /// The fallbacks recorded so far (and forgets them).
    pub fn take_fallbacks(&self) -> Vec<Fallback> {
        std::mem::take(&mut self.fallbacks.borrow_mut())
    }

    /// Tokens `prompt` takes on the engine (`usize::MAX` if it cannot be rendered).
    pub fn prompt_len(&self, prompt: &Prompt) -> usize {
        self.engine
            .borrow()
            .prompt_tokens(prompt)
            .map_or(usize::MAX, |t| t.len())
    }

    /// The engine's context budget.
    pub fn budget(&self) -> usize {
        self.engine.borrow().context_budget()
    }

    /// A `choose` request over `options`.
    pub fn choose_request(system: &str, question: &str, options: &[&str]) -> Request {
        Request::Choose(ChooseRequest::new(
            chat(system, question),
            options.iter().copied(),
        ))
    }

    /// A yes/no question as a `choose` request.
    pub fn yes_no_request(system: &str, question: &str) -> Request {
        let q = format!("{question} Answer yes or no.");
        Self::choose_request(system, &q, &["yes", "no"])
    }

    /// Interprets a `choose` result, recording a fallback to option `default` on error.
    pub fn chosen(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
        options: &[&str],
        default: usize,
    ) -> Option<Choice> {
        match result {
            Ok(Response::Chosen(c)) if c.index < options.len() => Some(c),
            Ok(_) => {
                self.fallback(purpose, "not a choice", "", options[default]);
                None
            }
            Err(e) => {
                self.fallback(purpose, e.to_string(), "", options[default]);
                None
            }
        }
    }

    /// Interprets a yes/no result: yes where it is the more probable answer (`default` on
    /// error).
    pub fn yes(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
        default: bool,
    ) -> bool {
        self.yes_above(purpose, result, default, 0.5)
    }

    /// Interprets a yes/no result as yes when P(yes) is above `threshold` (`default` on
    /// error).
    pub fn yes_above(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
        default: bool,
        threshold: f32,
    ) -> bool {
        let options = ["yes", "no"];
        match self.chosen(purpose, result, &options, usize::from(!default)) {
            Some(c) => c.probs.first().is_some_and(|&p| p > threshold),
            None => default,
        }
    }

    /// Asks a yes/no question.
    pub async fn ask_yes_no(&self, purpose: &str, system: &str, question: &str) -> bool {
        self.ask_yes_no_above(purpose, system, question, 0.5).await
    }

    /// Asks a yes/no question; yes when P(yes) is above `threshold`.
    pub async fn ask_yes_no_above(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        threshold: f32,
    ) -> bool {
        let r = self
            .port
            .run(vec![(
                purpose.to_string(),
                Self::yes_no_request(system, question),
            )])
            .await;
        let r = r.into_iter().next().unwrap_or_else(missing);
        self.yes_above(purpose, r, false, threshold)
    }

    /// Asks a question with a closed set of answers; `None` (and a fallback) on error.
    pub async fn ask_choice(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        options: &[&str],
        default: usize,
    ) -> Option<Choice> {
        let r = self
            .port
            .run(vec![(
                purpose.to_string(),
                Self::choose_request(system, question, options),
            )])
            .await;
        let r = r.into_iter().next().unwrap_or_else(missing);
        self.chosen(purpose, r, options, default)
    }

    /// A generation request constrained to `spec`, seeded from the port.
    pub fn generate_request(
        &self,
        prompt: Prompt,
        spec: ConstraintSpec,
        max_tokens: usize,
    ) -> Request {
        let mut g = GenerateRequest::new(prompt, max_tokens);
        g.sampling = text_sampling();
        g.seed = self.port.next_seed();
        g.constrain(self.table, spec);
        Request::Generate(g)
    }

    /// Generated text of a result; records a fallback and gives `None` on error.
    pub fn generated(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
    ) -> Option<String> {
        match result {
            Ok(Response::Generated(g)) => Some(g.text),
            Ok(_) => {
                self.fallback(purpose, "not a generation", "", "");
                None
            }
            Err(e) => {
                self.fallback(purpose, e.to_string(), "", "");
                None
            }
        }
    }

    /// One line of free text (at most `max_chars`), trimmed; `None` if nothing usable came
    /// back (the caller falls back and says so).
    pub async fn ask_line(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        max_chars: usize,
    ) -> Option<String> {
        self.line_of(purpose, chat(system, question), max_chars, Vec::new())
            .await
    }

    /// A line of someone's words after the chat `messages` (which end with a user
    /// message): as [`ask_line`](Self::ask_line), with the reply begun by an opening
    /// quotation mark (a prefill) and ended at the closing one.
    pub async fn ask_quoted(
        &self,
        purpose: &str,
        mut messages: Vec<Message>,
        max_chars: usize,
    ) -> Option<String> {
        messages.push(Message::assistant("\""));
        let stop = vec!["\"".into(), "\u{201d}".into()];
        self.line_of(purpose, Prompt::Chat(messages), max_chars, stop)
            .await
    }

    /// The cleaned line generated for `prompt` under a one-line constraint, stopped before
    /// any of `stop`.
    async fn line_of(
        &self,
        purpose: &str,
        prompt: Prompt,
        max_chars: usize,
        stop: Vec<String>,
    ) -> Option<String> {
        let mut req = self.generate_request(
            prompt,
            ConstraintSpec::line(max_chars).in_letters(self.letters),
            max_chars / 2 + 16,
        );
        if let Request::Generate(g) = &mut req {
            g.stop = stop;
        }
        let r = self.port.run(vec![(purpose.to_string(), req)]).await;
        let text = self.generated(purpose, r.into_iter().next().unwrap_or_else(missing))?;
        let line = clean_line(&text);
        (!line.is_empty()).then_some(line)
    }

    /// A plan written under `times`; the well-formed lines parsed back (possibly fewer than
    /// asked if generation stopped early; the caller checks and falls back).
    pub async fn ask_plan(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        times: PlanTimes,
        max_activity_chars: usize,
    ) -> (Vec<PlanLine>, String) {
        let asked = vec![(question.to_string(), times)];
        let mut answers = self
            .ask_plans(purpose, system, asked, max_activity_chars)
            .await;
        answers.pop().unwrap_or_default()
    }

    /// Several plan questions of one purpose asked together (one batch), answered as
    /// [`ask_plan`](Self::ask_plan) answers each, in order.
    pub async fn ask_plans(
        &self,
        purpose: &str,
        system: &str,
        questions: Vec<(String, PlanTimes)>,
        max_activity_chars: usize,
    ) -> Vec<(Vec<PlanLine>, String)> {
        let reqs = questions
            .into_iter()
            .map(|(question, times)| {
                let lines = match &times {
                    PlanTimes::Fixed(t) => t.len(),
                    PlanTimes::Increasing { max_lines, .. } => *max_lines,
                };
                let max_tokens = lines * (max_activity_chars / 3 + 10) + 8;
                let req = self.generate_request(
                    chat(system, &question),
                    ConstraintSpec::plan(times, max_activity_chars).in_letters(self.letters),
                    max_tokens,
                );
                (purpose.to_string(), req)
            })
            .collect::<Vec<_>>();
        let n = reqs.len();
        let mut results = self.port.run(reqs).await.into_iter();
        (0..n)
            .map(|_| {
                let text = self
                    .generated(purpose, results.next().unwrap_or_else(missing))
                    .unwrap_or_default();
                (plan_lines(&text, max_activity_chars), text)
            })
            .collect()
    }
}

/// The result used when a batch returned fewer results than requests (never expected).
pub fn missing() -> Result<Response, crate::llm::LlmError> {
    Err(crate::llm::LlmError::InvalidRequest(
        "no result for this request".into(),
    ))
}

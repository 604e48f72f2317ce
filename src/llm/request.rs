//! What callers ask of the engine and what they get back.

use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::constrain::{ConstraintSpec, TokenTable};
use super::sampler::Sampling;
use super::template::Message;

/// A prompt: chat messages (rendered with the model's template), raw text (special tokens
/// in it are parsed), or token ids.
#[derive(Clone, Debug)]
pub enum Prompt {
    Chat(Vec<Message>),
    Text(String),
    Tokens(Vec<u32>),
}

/// Restricts which tokens a generation may emit next (constrained decoding).
pub trait TokenConstraint: Send {
    /// Sets the logits of every token not allowed after `generated` to negative infinity.
    fn mask(&mut self, generated: &[u32], logits: &mut [f32]);
    /// Whether `generated` is a complete output (generation stops there).
    fn is_complete(&mut self, generated: &[u32]) -> bool;
    /// Tokens that must follow `generated` whatever the model prefers; the engine feeds them
    /// in one step instead of sampling them one by one ("jump-forward"). Default: none.
    fn forced(&mut self, _generated: &[u32]) -> Vec<u32> {
        Vec::new()
    }
}

/// Free-text generation.
#[derive(Clone)]
pub struct GenerateRequest {
    pub prompt: Prompt,
    pub max_tokens: usize,
    /// Generation stops before the first occurrence of any of these.
    pub stop: Vec<String>,
    pub sampling: Sampling,
    /// Seed of this request's own sampler.
    pub seed: u64,
    pub constraint: Option<Arc<Mutex<dyn TokenConstraint>>>,
    /// `constraint` as data, for backends that cannot run it in-process (a server builds it
    /// or takes it as a grammar). Set both with [`constrain`](Self::constrain).
    pub spec: Option<ConstraintSpec>,
}

impl GenerateRequest {
    /// Greedy generation of up to `max_tokens` tokens.
    pub fn new(prompt: Prompt, max_tokens: usize) -> Self {
        Self {
            prompt,
            max_tokens,
            stop: Vec::new(),
            sampling: Sampling::greedy(),
            seed: 0,
            constraint: None,
            spec: None,
        }
    }

    /// Constrains the output to `spec`: its token mask over `table`, and the spec itself.
    pub fn constrain(&mut self, table: &Arc<TokenTable>, spec: ConstraintSpec) {
        self.constraint = Some(spec.constraint(table));
        self.spec = Some(spec);
    }
}

impl std::fmt::Debug for GenerateRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GenerateRequest")
            .field("prompt", &self.prompt)
            .field("max_tokens", &self.max_tokens)
            .field("stop", &self.stop)
            .field("sampling", &self.sampling)
            .field("seed", &self.seed)
            .field("constrained", &self.constraint.is_some())
            .field("spec", &self.spec)
            .finish()
    }
}

/// Classification over a closed set of options by their log-probability as the answer.
#[derive(Clone, Debug)]
pub struct ChooseRequest {
    pub prompt: Prompt,
    pub options: Vec<String>,
}

impl ChooseRequest {
    /// A choice among `options` as the answer to `prompt`.
    pub fn new(prompt: Prompt, options: impl IntoIterator<Item = impl Into<String>>) -> Self {
        Self {
            prompt,
            options: options.into_iter().map(Into::into).collect(),
        }
    }
}

/// Either kind of request.
#[derive(Clone, Debug)]
pub enum Request {
    Generate(GenerateRequest),
    Choose(ChooseRequest),
}

/// Why a generation ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// An end-of-sequence token, a stop string, or a complete constrained output.
    Stop,
    /// `max_tokens` (or the context budget) was reached.
    Length,
    /// The constraint allowed no token.
    NoAllowedToken,
}

/// The result of a `generate` request.
#[derive(Clone, Debug, Serialize)]
pub struct Generation {
    pub text: String,
    pub prompt_tokens: usize,
    pub generated_tokens: usize,
    pub finish: FinishReason,
}

/// The result of a `choose` request.
#[derive(Clone, Debug, Serialize)]
pub struct Choice {
    /// Index of the most likely option.
    pub index: usize,
    /// Probability of each option, normalised over the options (sums to 1).
    pub probs: Vec<f32>,
    /// Log-probability of each option's tokens (and the end of turn, for chat prompts).
    pub logprobs: Vec<f32>,
    pub prompt_tokens: usize,
}

impl Choice {
    /// Expected value of `values[i]` under the option probabilities.
    pub fn expected(&self, values: &[f32]) -> f32 {
        self.probs.iter().zip(values).map(|(p, v)| p * v).sum()
    }
}

/// Either kind of response.
#[derive(Clone, Debug, Serialize)]
pub enum Response {
    Generated(Generation),
    Chosen(Choice),
}

//! The OpenAI-compatible request bodies `serve-llm` accepts, checked into engine requests,
//! and the pieces of its answers. Every problem is a message for a 400 answer.

use std::sync::Arc;

use serde::Deserialize;
use serde_json::{json, Value};

use crate::llm::constrain::{ConstraintSpec, TokenTable};
use crate::llm::request::{ChooseRequest, GenerateRequest, Prompt};
use crate::llm::sampler::Sampling;
use crate::llm::template::Message;
use crate::llm::tokenizer::Tokenizer;

/// `stop`: one string or several.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
pub enum Stop {
    One(String),
    Many(Vec<String>),
}

/// Sampling fields common to both endpoints.
#[derive(Deserialize, Debug, Default)]
pub struct Params {
    pub model: Option<String>,
    pub max_tokens: Option<i64>,
    pub max_completion_tokens: Option<i64>,
    pub temperature: Option<f64>,
    pub top_p: Option<f64>,
    pub top_k: Option<i64>,
    pub seed: Option<i64>,
    pub stop: Option<Stop>,
    pub n: Option<i64>,
    #[serde(default)]
    pub stream: bool,
    /// serve-llm's own field: the reply is written under this constraint, as in-process
    /// (what `--backend openai` sends when a server accepts it).
    pub humanoid_constraint: Option<ConstraintSpec>,
}

/// A chat message's content: text, or a list of parts of which the text ones are used.
#[derive(Deserialize, Debug)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<Value>),
}

#[derive(Deserialize, Debug)]
pub struct MessageIn {
    pub role: String,
    pub content: Option<Content>,
}

/// `POST /v1/chat/completions`.
#[derive(Deserialize, Debug)]
pub struct ChatBody {
    pub messages: Vec<MessageIn>,
    #[serde(flatten)]
    pub params: Params,
    #[serde(default)]
    pub logprobs: bool,
    pub top_logprobs: Option<i64>,
}

/// `POST /v1/completions`.
#[derive(Deserialize, Debug)]
pub struct CompletionBody {
    pub prompt: Value,
    #[serde(flatten)]
    pub params: Params,
    #[serde(default)]
    pub echo: bool,
    pub logprobs: Option<i64>,
}

/// Most alternatives per token a client may ask for.
pub const MAX_TOP_LOGPROBS: i64 = 20;
/// Most prompts in one completions request.
pub const MAX_PROMPTS: usize = 64;
/// Most options of one `/v1/choose` request.
pub const MAX_OPTIONS: usize = 256;
/// Most stop strings of one request, and the longest one in bytes.
pub const MAX_STOPS: usize = 16;
pub const MAX_STOP_BYTES: usize = 256;

/// Parses a JSON body into `T`, the error a readable message.
pub fn parse<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, String> {
    serde_json::from_slice(body).map_err(|e| format!("invalid request body: {e}"))
}

impl Params {
    /// A generate request for `prompt` from these fields (`default_max` when none is given;
    /// `seed` when the client gives none); `max_tokens` may not exceed `context`.
    pub fn generate(
        &self,
        prompt: crate::llm::Prompt,
        default_max: usize,
        context: usize,
        seed: u64,
    ) -> Result<GenerateRequest, String> {
        if let Some(n) = self.n.filter(|&n| n != 1) {
            return Err(format!("n = {n}: only one choice per request is supported"));
        }
        let max = match self.max_completion_tokens.or(self.max_tokens) {
            None => default_max,
            Some(m) if (0..=context as i64).contains(&m) => m as usize,
            Some(m) => {
                return Err(format!(
                    "max_tokens = {m}: must be 0 to the context of {context} tokens"
                ))
            }
        };
        let t = self.temperature.unwrap_or(1.0);
        if !(0.0..=100.0).contains(&t) {
            return Err(format!("temperature = {t}: must be between 0 and 100"));
        }
        let p = self.top_p.unwrap_or(1.0);
        if !(p > 0.0 && p <= 1.0) {
            return Err(format!("top_p = {p}: must be in (0, 1]"));
        }
        let k = match self.top_k {
            None => 0,
            Some(k) if k >= -1 => k.max(0) as usize,
            Some(k) => return Err(format!("top_k = {k}: must be 0 or more")),
        };
        let mut g = GenerateRequest::new(prompt, max);
        g.sampling = Sampling {
            temperature: t as f32,
            top_k: k,
            top_p: p as f32,
        };
        g.seed = match self.seed {
            // The bits of the client's u64 seed, sent as i64.
            Some(s) => s as u64,
            None => seed,
        };
        g.stop = match &self.stop {
            None => Vec::new(),
            Some(Stop::One(s)) => vec![s.clone()],
            Some(Stop::Many(v)) => v.clone(),
        };
        g.stop.retain(|s| !s.is_empty());
        if g.stop.len() > MAX_STOPS {
            return Err(format!(
                "stop has {} strings: at most {MAX_STOPS}",
                g.stop.len()
            ));
        }
        if let Some(long) = g.stop.iter().find(|s| s.len() > MAX_STOP_BYTES) {
            return Err(format!(
                "a stop string of {} bytes: at most {MAX_STOP_BYTES}",
                long.len()
            ));
        }
        Ok(g)
    }

    /// Puts `g` under `humanoid_constraint`, if given, over `table`.
    pub fn apply_constraint(
        &self,
        g: &mut GenerateRequest,
        table: &Arc<TokenTable>,
    ) -> Result<(), String> {
        if let Some(spec) = &self.humanoid_constraint {
            spec.validate()
                .map_err(|e| format!("humanoid_constraint: {e}"))?;
            g.constrain(table, spec.clone());
        }
        Ok(())
    }
}

/// `POST /v1/choose`, serve-llm's own endpoint (what `--backend openai` uses when a server
/// offers it): a prompt, as chat `messages` or a `prompt` (text or token ids), and closed
/// `options`; answered with each option's probability exactly as in-process `choose`.
#[derive(Deserialize, Debug)]
pub struct ChooseBody {
    pub model: Option<String>,
    #[serde(default)]
    pub messages: Vec<MessageIn>,
    pub prompt: Option<Value>,
    pub options: Vec<String>,
}

impl ChooseBody {
    /// The engine request: chat when `messages` are given, else the `prompt`.
    pub fn request(&self, vocab: usize) -> Result<ChooseRequest, String> {
        if self.options.is_empty() {
            return Err("options is empty".into());
        }
        if self.options.len() > MAX_OPTIONS {
            return Err(format!(
                "options has {} entries: at most {MAX_OPTIONS}",
                self.options.len()
            ));
        }
        let prompt = match (&self.prompt, self.messages.is_empty()) {
            (None, false) => Prompt::Chat(messages(&self.messages)?),
            (Some(p), true) => match prompts(p, vocab)?.pop() {
                Some(PromptIn::Text(t)) => Prompt::Text(t),
                Some(PromptIn::Tokens(ids)) => Prompt::Tokens(ids),
                None => return Err("prompt is empty".into()),
            },
            (Some(_), false) => return Err("give either messages or prompt, not both".into()),
            (None, true) => return Err("messages or prompt is needed".into()),
        };
        Ok(ChooseRequest::new(prompt, self.options.clone()))
    }
}

/// Chat messages, roles checked.
pub fn messages(list: &[MessageIn]) -> Result<Vec<Message>, String> {
    if list.is_empty() {
        return Err("messages is empty".into());
    }
    list.iter()
        .enumerate()
        .map(|(i, m)| {
            let role = match m.role.as_str() {
                "system" | "developer" => "system",
                "user" => "user",
                "assistant" => "assistant",
                r => {
                    return Err(format!(
                        "messages[{i}].role = {r:?}: expected system, user or assistant"
                    ))
                }
            };
            let text = match &m.content {
                None => String::new(),
                Some(Content::Text(t)) => t.clone(),
                Some(Content::Parts(parts)) => parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(""),
            };
            Ok(Message::new(role, text))
        })
        .collect()
}

/// One prompt of a completions body: a string or token ids.
pub enum PromptIn {
    Text(String),
    Tokens(Vec<u32>),
}

/// The prompts of a completions body (a string, token ids, or a list of either).
pub fn prompts(v: &Value, vocab: usize) -> Result<Vec<PromptIn>, String> {
    let ids = |a: &[Value]| -> Result<Vec<u32>, String> {
        a.iter()
            .map(|x| {
                x.as_u64()
                    .filter(|&t| (t as usize) < vocab)
                    .map(|t| t as u32)
                    .ok_or_else(|| format!("prompt token {x} is not an id below {vocab}"))
            })
            .collect()
    };
    match v {
        Value::String(s) => Ok(vec![PromptIn::Text(s.clone())]),
        Value::Array(a) if a.is_empty() => Err("prompt is empty".into()),
        Value::Array(a) if a.iter().all(Value::is_number) => Ok(vec![PromptIn::Tokens(ids(a)?)]),
        Value::Array(a) if a.len() > MAX_PROMPTS => Err(format!(
            "prompt is a list of {} prompts: at most {MAX_PROMPTS} a request",
            a.len()
        )),
        Value::Array(a) => a
            .iter()
            .map(|p| match p {
                Value::String(s) => Ok(PromptIn::Text(s.clone())),
                Value::Array(t) => Ok(PromptIn::Tokens(ids(t)?)),
                _ => Err("prompt: expected a string, token ids or a list of them".into()),
            })
            .collect(),
        _ => Err("prompt: expected a string, token ids or a list of them".into()),
    }
}

/// The text pieces of `ids` and each one's character offset from `base`; a BOS the
/// tokenizer added (absent from `text`) is an empty piece, so offsets follow `text`.
pub fn pieces(tok: &Tokenizer, ids: &[u32], text: &str, base: usize) -> (Vec<String>, Vec<usize>) {
    let bos_text = tok
        .bos_id()
        .map(|b| String::from_utf8_lossy(&tok.token_bytes(b)).into_owned());
    let mut out = Vec::with_capacity(ids.len());
    let mut offsets = Vec::with_capacity(ids.len());
    let mut chars = base;
    for (i, &id) in ids.iter().enumerate() {
        let added_bos = i == 0
            && tok.bos_id() == Some(id)
            && bos_text.as_deref().is_some_and(|b| !text.starts_with(b));
        let bytes = if added_bos {
            Vec::new()
        } else {
            tok.token_bytes(id)
        };
        offsets.push(chars);
        // Characters = bytes that start a UTF-8 sequence.
        chars += bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count();
        out.push(String::from_utf8_lossy(&bytes).into_owned());
    }
    (out, offsets)
}

/// An OpenAI-style error body.
pub fn error_body(message: &str, kind: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": null}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_sizes_are_limited() {
        let gen = |body: &str| {
            serde_json::from_str::<Params>(body).unwrap().generate(
                crate::llm::Prompt::Text("x".into()),
                4,
                4096,
                0,
            )
        };
        let e = gen(r#"{"max_tokens": 4097}"#).unwrap_err();
        assert!(e.contains("max_tokens = 4097") && e.contains("4096"), "{e}");
        assert_eq!(gen(r#"{"max_tokens": 4096}"#).unwrap().max_tokens, 4096);
        let many: Vec<String> = (0..=MAX_STOPS).map(|i| format!("s{i}")).collect();
        let e = gen(&serde_json::json!({ "stop": many }).to_string()).unwrap_err();
        assert!(e.contains("stop has 17 strings"), "{e}");
        let long = "x".repeat(MAX_STOP_BYTES + 1);
        let e = gen(&serde_json::json!({ "stop": long }).to_string()).unwrap_err();
        assert!(e.contains("257 bytes"), "{e}");
        let options: Vec<String> = (0..=MAX_OPTIONS).map(|i| i.to_string()).collect();
        let b: ChooseBody =
            serde_json::from_value(serde_json::json!({"prompt": "x", "options": options})).unwrap();
        let e = b.request(100).unwrap_err();
        assert!(e.contains("at most 256"), "{e}");
        let list: Vec<&str> = vec!["a"; MAX_PROMPTS + 1];
        let e = prompts(&serde_json::json!(list), 100).err().unwrap();
        assert!(e.contains("65 prompts"), "{e}");
    }

    #[test]
    fn sampling_fields_are_checked() {
        let p: Params = serde_json::from_str(r#"{"temperature": -1}"#).unwrap();
        let e = p
            .generate(crate::llm::Prompt::Text("x".into()), 4, 4096, 0)
            .unwrap_err();
        assert!(e.contains("temperature"), "{e}");
        let p: Params = serde_json::from_str(r#"{"n": 2}"#).unwrap();
        assert!(p
            .generate(crate::llm::Prompt::Text("x".into()), 4, 4096, 0)
            .is_err());
        let p: Params =
            serde_json::from_str(r#"{"temperature": 0, "seed": 7, "stop": "\n"}"#).unwrap();
        let g = p
            .generate(crate::llm::Prompt::Text("x".into()), 4, 4096, 0)
            .unwrap();
        assert_eq!(
            (g.seed, g.stop.clone(), g.max_tokens),
            (7, vec!["\n".to_string()], 4)
        );
        // A u64 seed travels as the i64 with the same bits.
        let p: Params = serde_json::from_str(r#"{"seed": -1}"#).unwrap();
        let g = p
            .generate(crate::llm::Prompt::Text("x".into()), 4, 4096, 0)
            .unwrap();
        assert_eq!(g.seed, u64::MAX);
        assert!(parse::<ChatBody>(b"{")
            .unwrap_err()
            .contains("invalid request body"));
        let p: Params =
            serde_json::from_str(r#"{"humanoid_constraint": {"kind": "emoji", "count": 65}}"#)
                .unwrap();
        let mut g = p
            .generate(crate::llm::Prompt::Text("x".into()), 4, 4096, 0)
            .unwrap();
        let table = TokenTable::from_parts(Vec::new(), &[]);
        let e = p.apply_constraint(&mut g, &table).unwrap_err();
        assert!(e.contains("humanoid_constraint: count = 65"), "{e}");
        assert!(parse::<ChatBody>(
            br#"{"messages": [], "humanoid_constraint": {"kind": "regex"}}"#
        )
        .unwrap_err()
        .contains("invalid request body"));
        assert!(prompts(&json!([1, 2, 99]), 50).is_err());
        assert!(prompts(&json!({}), 50).is_err());
    }
}

//! A backend that writes every request and its answer to a JSON-lines file, for reading
//! what the agents were asked and what the model said (`HUMANOID_PROMPT_LOG=FILE` on a run).
//! One line per request: `{"prompt": [{"role", "content"}, ...] | "text" | [ids], then
//! `"options"` and `"probs"` for a choice, or `"max_tokens"` and `"text"` for a generation,
//! or `"error"`}. The answers are the inner backend's, unchanged.

use std::io::Write;

use serde_json::{json, Value};

use super::engine::{Engine, EngineStats, Event};
use super::error::Result;
use super::inference::Inference;
use super::request::{Prompt, Request, Response};
use super::tokenizer::Tokenizer;

/// `inner`, with each request and answer written to `out` (a write error is logged once
/// and the run goes on without the log).
pub struct PromptLog {
    inner: Box<dyn Inference>,
    out: Option<Box<dyn Write>>,
}

impl PromptLog {
    /// Wraps `inner`, writing to `out`.
    pub fn new(inner: Box<dyn Inference>, out: Box<dyn Write>) -> Self {
        Self {
            inner,
            out: Some(out),
        }
    }
}

/// A prompt as JSON: chat messages, text, or token ids.
fn prompt_json(p: &Prompt) -> Value {
    match p {
        Prompt::Chat(m) => json!(m
            .iter()
            .map(|m| json!({"role": m.role, "content": m.content}))
            .collect::<Vec<_>>()),
        Prompt::Text(t) => json!(t),
        Prompt::Tokens(ids) => json!(ids),
    }
}

/// One request and its answer as a log line.
fn line(req: &Request, answer: &Result<Response>) -> Value {
    let mut v = match req {
        Request::Generate(g) => {
            json!({"prompt": prompt_json(&g.prompt), "max_tokens": g.max_tokens})
        }
        Request::Choose(c) => json!({"prompt": prompt_json(&c.prompt), "options": c.options}),
    };
    match answer {
        Ok(Response::Generated(g)) => v["text"] = json!(g.text),
        Ok(Response::Chosen(c)) => v["probs"] = json!(c.probs),
        Err(e) => v["error"] = json!(e.to_string()),
    }
    v
}

impl Inference for PromptLog {
    fn run(
        &mut self,
        requests: Vec<Request>,
        on_event: &mut dyn FnMut(Event<'_>),
    ) -> Vec<Result<Response>> {
        let kept = self.out.as_ref().map(|_| requests.clone());
        let answers = self.inner.run(requests, on_event);
        if let (Some(out), Some(reqs)) = (self.out.as_mut(), kept) {
            let written = reqs
                .iter()
                .zip(&answers)
                .try_for_each(|(r, a)| writeln!(out, "{}", line(r, a)))
                .and_then(|()| out.flush());
            if let Err(e) = written {
                tracing::warn!("the prompt log stopped: {e}");
                self.out = None;
            }
        }
        answers
    }

    fn prompt_tokens(&self, prompt: &Prompt) -> Result<Vec<u32>> {
        self.inner.prompt_tokens(prompt)
    }

    fn context_budget(&self) -> usize {
        self.inner.context_budget()
    }

    fn tokenizer(&self) -> &Tokenizer {
        self.inner.tokenizer()
    }

    fn stats(&self) -> &EngineStats {
        self.inner.stats()
    }

    fn failure(&self) -> Option<String> {
        self.inner.failure()
    }

    fn as_engine(&self) -> Option<&Engine> {
        self.inner.as_engine()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::request::{Choice, ChooseRequest, FinishReason, GenerateRequest, Generation};
    use crate::llm::Message;

    #[test]
    fn a_line_holds_the_prompt_and_the_answer() {
        let chat = Prompt::Chat(vec![Message {
            role: "user".into(),
            content: "Hungry?".into(),
        }]);
        let choose = Request::Choose(ChooseRequest::new(chat, ["yes", "no"]));
        let answer = Ok(Response::Chosen(Choice {
            index: 0,
            probs: vec![0.75, 0.25],
            logprobs: vec![-0.3, -1.4],
            prompt_tokens: 9,
        }));
        let v = line(&choose, &answer);
        assert_eq!(v["prompt"][0]["content"], "Hungry?");
        assert_eq!(v["options"], json!(["yes", "no"]));
        assert_eq!(v["probs"], json!([0.75, 0.25]));
        let err = line(
            &choose,
            &Err(crate::llm::LlmError::InvalidRequest("too long".into())),
        );
        assert!(err["error"].as_str().unwrap().contains("too long"));
        let generate = Request::Generate(GenerateRequest::new(Prompt::Text("Hi".into()), 8));
        let answer = Ok(Response::Generated(Generation {
            text: "Hello".into(),
            prompt_tokens: 1,
            generated_tokens: 1,
            finish: FinishReason::Stop,
        }));
        let v = line(&generate, &answer);
        assert_eq!(
            (v["prompt"].as_str(), v["max_tokens"].as_u64()),
            (Some("Hi"), Some(8))
        );
        assert_eq!(v["text"], "Hello");
    }
}

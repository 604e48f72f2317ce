//! Importance rating: a `choose` over "1".."10" whose expected value, rounded, is the
//! memory's importance. Builders return [`Request`]s so a tick driver can batch every
//! agent's new memories together (the tick sends them through its port).

use crate::llm::{ChooseRequest, LlmError, Message, Prompt, Request, Response};

use super::error::{MemoryError, Result};
use super::node::Importance;

/// The options of the rating `choose`, in order of value.
pub const IMPORTANCE_OPTIONS: [&str; 10] = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10"];

const SYSTEM: &str = "Rate how important each memory is, from 1 (mundane) to 10 (life-changing).";

/// Worked examples spanning the scale, as earlier turns of the chat. Without them the small
/// default model (SmolLM2-135M) rates every memory about the same and cannot tell a mundane
/// memory from a life-changing one; with them it orders them, if weakly. They are the same
/// for every memory, so a batch of ratings shares their prefix.
const EXAMPLES: [(&str, &str); 6] = [
    ("Bob combed his hair", "1"),
    ("Bob's father died", "10"),
    ("Bob had an argument with a friend", "5"),
    ("Bob bought milk", "2"),
    ("Bob was fired from his job", "9"),
    ("Bob got a small raise", "6"),
];

/// The prompt asking how important `memory` is (1 = mundane, 10 = life-changing): a system
/// instruction, worked examples, then the memory; the answer is one of
/// [`IMPORTANCE_OPTIONS`].
pub fn importance_prompt(memory: &str) -> Prompt {
    let mut messages = Vec::with_capacity(2 + 2 * EXAMPLES.len());
    messages.push(Message::system(SYSTEM));
    for (m, rating) in EXAMPLES {
        messages.push(Message::user(format!("Memory: {m}")));
        messages.push(Message::assistant(rating));
    }
    messages.push(Message::user(format!("Memory: {}", memory.trim())));
    Prompt::Chat(messages)
}

/// The rating request for one memory.
pub fn importance_request(memory: &str) -> Request {
    Request::Choose(ChooseRequest::new(
        importance_prompt(memory),
        IMPORTANCE_OPTIONS,
    ))
}

/// One rating request per memory, in order: all of a tick's new memories in one batch.
pub fn importance_requests(memories: &[&str]) -> Vec<Request> {
    memories.iter().map(|m| importance_request(m)).collect()
}

/// The importance in a response to an [`importance_request`]: the expected value of the
/// option distribution, rounded and clamped to 1..=10.
pub fn parse_importance(response: &Response) -> Result<Importance> {
    match response {
        Response::Chosen(choice) => {
            let values: Vec<f32> = (1..=IMPORTANCE_OPTIONS.len()).map(|v| v as f32).collect();
            Ok(Importance::from_rating(choice.expected(&values)))
        }
        Response::Generated(_) => Err(MemoryError::UnexpectedResponse { expected: "choice" }),
    }
}

/// [`parse_importance`] of an engine result (its error passed on).
pub fn importance_from_result(
    result: std::result::Result<Response, LlmError>,
) -> Result<Importance> {
    parse_importance(&result?)
}

/// `result`'s importance, or `fallback` with a warning if rating failed.
pub fn importance_or(result: Result<Importance>, fallback: Importance) -> Importance {
    result.unwrap_or_else(|e| {
        tracing::warn!(error = %e, fallback = fallback.get(), "importance rating failed");
        fallback
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::{Choice, FinishReason, Generation};

    fn choice(probs: Vec<f32>) -> Response {
        Response::Chosen(Choice {
            index: 0,
            logprobs: probs.iter().map(|p| p.ln()).collect(),
            probs,
            prompt_tokens: 0,
        })
    }

    #[test]
    fn expected_value_rounds() {
        let mut p = vec![0.0; 10];
        p[0] = 0.5; // 1
        p[9] = 0.5; // 10
        assert_eq!(parse_importance(&choice(p)).unwrap().get(), 6); // 5.5 rounds up
        let mut p = vec![0.0; 10];
        p[2] = 1.0;
        assert_eq!(parse_importance(&choice(p)).unwrap().get(), 3);
        // A malformed distribution still gives an in-range importance.
        assert_eq!(parse_importance(&choice(vec![])).unwrap().get(), 1);
        assert_eq!(parse_importance(&choice(vec![9.0; 10])).unwrap().get(), 10);
    }

    #[test]
    fn wrong_response_kind_is_an_error() {
        let g = Response::Generated(Generation {
            text: "7".into(),
            prompt_tokens: 1,
            generated_tokens: 1,
            finish: FinishReason::Stop,
        });
        assert!(parse_importance(&g).is_err());
        assert_eq!(
            importance_or(parse_importance(&g), Importance::new(4)).get(),
            4
        );
    }

    #[test]
    fn one_request_per_memory_over_ten_options() {
        let reqs = importance_requests(&["a", " b "]);
        assert_eq!(reqs.len(), 2);
        match &reqs[1] {
            Request::Choose(c) => {
                assert_eq!(c.options.len(), 10);
                let Prompt::Chat(m) = &c.prompt else {
                    panic!("chat prompt")
                };
                assert_eq!(m.len(), 14);
                assert_eq!(m.last().unwrap().content, "Memory: b");
                assert_eq!(m[4].content, "10");
            }
            Request::Generate(_) => panic!("a choose request"),
        }
    }
}

//! Which way of scoring `choose` a server offers, probed once per connection, best first
//! (see [`super::choose`] for the methods).

use serde_json::{json, Value};

use super::choose::{self, ChooseMethod};
use super::forced;
use super::http::{CallError, Http};
use super::local::LocalModel;

/// Probes `http` (serving `model`, whose tokenizer is `local`) for the best `choose` method.
/// Only a server that is gone is an error; a feature it lacks is logged and the next tried.
pub fn detect(http: &Http, model: &str, local: &LocalModel) -> Result<ChooseMethod, CallError> {
    let offered = |name: &str, r: Result<(), CallError>| match r {
        Ok(()) => Ok(true),
        Err(CallError::Fatal(e)) => Err(CallError::Fatal(e)),
        Err(CallError::Request(e)) => {
            tracing::info!("{}: {name}: not offered ({e})", http.base());
            Ok(false)
        }
    };
    if offered("/v1/choose", probe_native(http, model))? {
        return Ok(ChooseMethod::Native);
    }
    if offered("echo + logprobs", probe_echo(http, model))? {
        return Ok(ChooseMethod::Echo);
    }
    if offered("prompt_logprobs", probe_prompt_logprobs(http, model))? {
        return Ok(ChooseMethod::PromptLogprobs);
    }
    if offered("forced tokens", probe_forced(http, model, local, false))? {
        return Ok(ChooseMethod::ForcedTokens);
    }
    if offered(
        "forced tokens after text",
        probe_forced(http, model, local, true),
    )? {
        return Ok(ChooseMethod::ForcedText);
    }
    if offered("first-token top_logprobs", probe_first_token(http, model))? {
        return Ok(ChooseMethod::FirstToken);
    }
    tracing::warn!(
        "{}: offers no log-probabilities; choose falls back to a greedy reply matched to the closest option",
        http.base()
    );
    Ok(ChooseMethod::Generate)
}

const PROBE: &str = "<|probe|> The capital of France is Paris";

/// serve-llm's own `/v1/choose`.
fn probe_native(http: &Http, model: &str) -> Result<(), CallError> {
    let options = [" Paris".to_string(), " London".to_string()];
    let body = choose::native_body(model, json!(PROBE), false, &options);
    http.probe("/v1/choose", &body, |v| choose::parse_native(v, 2))
        .map(|_| ())
}

/// Echo with log-probabilities that belong to their own tokens.
fn probe_echo(http: &Http, model: &str) -> Result<(), CallError> {
    let chars = PROBE.chars().count();
    http.probe("/v1/completions", &choose::echo_body(model, PROBE), |v| {
        choose::parse_echo(v, chars - 6, chars, 1)
    })?;
    let body = choose::echo_body(model, choose::ALIGNMENT_PROBE);
    http.probe("/v1/completions", &body, choose::check_echo_alignment)
}

/// vLLM's `prompt_logprobs`.
fn probe_prompt_logprobs(http: &Http, model: &str) -> Result<(), CallError> {
    let body = choose::prompt_logprobs_body(model, PROBE);
    http.probe("/v1/completions", &body, |v| {
        v.pointer("/choices/0/prompt_logprobs")
            .and_then(Value::as_array)
            .filter(|a| a.len() > 1)
            .map(|_| ())
            .ok_or_else(|| "no prompt_logprobs".to_string())
    })
}

/// Forced tokens: after a predictable text, the expected next token and an unlikely one are
/// each forced. Both must come back as the generated token (`logit_bias` honoured, same
/// vocabulary, the prompt as ids or `as_text` tokenized as here), the unlikely one with a
/// low log-probability (read before the bias) and lower than the expected one (the
/// distribution of the right position).
fn probe_forced(
    http: &Http,
    model: &str,
    local: &LocalModel,
    as_text: bool,
) -> Result<(), CallError> {
    const HEAD: &str = "One, two, three, four, five, six, seven, eight, nine, ten, eleven,";
    let tok = &local.tokenizer;
    let local_err = |e: crate::llm::LlmError| CallError::Request(format!("local tokenizer: {e}"));
    let context = tok.encode_prompt(HEAD, true).map_err(local_err)?;
    let first = |t: &str| -> Result<u32, CallError> {
        let ids = tok.encode(t, false).map_err(local_err)?;
        ids.first()
            .copied()
            .ok_or_else(|| CallError::Request(format!("{t:?} has no tokens")))
    };
    let (expected, unlikely) = (first(" twelve")?, first(" zebra")?);
    if expected == unlikely {
        return Err(CallError::Request("probe tokens coincide".into()));
    }
    let prompt = match as_text {
        true => json!(HEAD),
        false => json!(context),
    };
    let count = as_text.then_some(context.len());
    let score = |target: u32| -> Result<f32, CallError> {
        let text = tok.decode(&[target]).unwrap_or_default();
        http.probe(
            "/v1/completions",
            &forced::forced_body(model, prompt.clone(), target),
            |v| {
                forced::forced_logprob(v, target, &text, count)?
                    .ok_or_else(|| "the forced token was not reported".to_string())
            },
        )
    };
    let (lp_expected, lp_unlikely) = (score(expected)?, score(unlikely)?);
    if lp_unlikely > -1.0 || lp_unlikely >= lp_expected {
        return Err(CallError::Request(format!(
            "forced-token log-probabilities are not the model's (expected token {lp_expected:.2}, \
             unlikely token {lp_unlikely:.2}): read after the bias?"
        )));
    }
    Ok(())
}

/// `top_logprobs` of the first token of a chat reply.
fn probe_first_token(http: &Http, model: &str) -> Result<(), CallError> {
    let msgs = json!([{"role": "user", "content": "Answer yes or no: is Paris in France?"}]);
    http.probe(
        "/v1/chat/completions",
        &choose::first_token_body(model, &msgs),
        choose::parse_first_token,
    )
    .map(|_| ())
}

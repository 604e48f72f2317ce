//! Forced tokens: an option's exact log-probability from a server without `echo`
//! (llama.cpp's), one token at a time. Each option token is forced with `logit_bias` after
//! the tokens before it; the server reports its log-probability from the distribution
//! before the bias. An end token a server drops when forced (llama-cpp-python's) is read from
//! the alternatives of the next token instead.

use serde_json::{json, Value};

/// The `logit_bias` that forces a token (OpenAI's largest allowed bias).
pub const FORCING_BIAS: f64 = 100.0;

/// A `/v1/completions` body for the log-probability of token `target` after `context`
/// (token ids, or their text): `logit_bias` makes `target` the generated token, whose
/// log-probability a server like llama.cpp's reports from the model's distribution before
/// the bias.
pub fn forced_body(model: &str, context: Value, target: u32) -> Value {
    let mut bias = serde_json::Map::new();
    bias.insert(target.to_string(), json!(FORCING_BIAS));
    json!({"model": model, "prompt": context, "max_tokens": 1, "temperature": 0.0,
           "logprobs": 1, "logit_bias": bias})
}

/// The generated token of a one-token completion: its id (where the server gives it), its
/// text and its log-probability. Reads llama.cpp's `logprobs.content` and OpenAI's legacy
/// `logprobs.tokens` + `token_logprobs`.
pub fn parse_generated_token(v: &Value) -> Result<(Option<u32>, String, f32), String> {
    let lp = v
        .pointer("/choices/0/logprobs")
        .filter(|l| !l.is_null())
        .ok_or("no choices[0].logprobs")?;
    let (id, token, x) = match lp.pointer("/content/0") {
        Some(c) => (
            c.get("id").and_then(Value::as_u64),
            c.get("token").and_then(Value::as_str),
            c.get("logprob").and_then(Value::as_f64),
        ),
        None => (
            None,
            lp.pointer("/tokens/0").and_then(Value::as_str),
            lp.pointer("/token_logprobs/0").and_then(Value::as_f64),
        ),
    };
    let token = token.ok_or("no generated token in logprobs")?;
    let x = x.ok_or("no log-probability of the generated token")?;
    if !x.is_finite() {
        return Err(format!("non-finite log-probability {x}"));
    }
    let id = id.map(|i| u32::try_from(i).map_err(|_| format!("token id {i} out of range")));
    Ok((id.transpose()?, token.to_string(), x as f32))
}

/// The log-probability of the forced token `target` (whose text is `text`) from a
/// [`forced_body`] answer; an error if the server generated another token (`logit_bias`
/// not honoured, or a different vocabulary), or, where `prompt_tokens` is given (a text
/// prompt), counted another number of prompt tokens (it tokenized the text differently).
///
/// `Ok(None)` when the server stopped at the forced token without reporting it (an end
/// token, which llama-cpp-python's server drops): see [`alternatives_body`].
pub fn forced_logprob(
    v: &Value,
    target: u32,
    text: &str,
    prompt_tokens: Option<usize>,
) -> Result<Option<f32>, String> {
    if let Some(n) = prompt_tokens {
        let served = v.pointer("/usage/prompt_tokens").and_then(Value::as_u64);
        if served != Some(n as u64) {
            return Err(format!(
                "the server counts {served:?} prompt tokens where the local tokenizer counts {n}"
            ));
        }
    }
    let stopped = v
        .pointer("/choices/0/finish_reason")
        .and_then(Value::as_str)
        == Some("stop")
        && v.pointer("/choices/0/text").and_then(Value::as_str) == Some("");
    let (id, token, lp) = match parse_generated_token(v) {
        Ok(t) => t,
        Err(_) if stopped => return Ok(None),
        Err(e) => return Err(e),
    };
    let same = match id {
        Some(id) => id == target,
        // Without ids, texts are compared where both are whole characters.
        None => token == text || token.contains('\u{fffd}') || text.contains('\u{fffd}'),
    };
    if !same {
        return Err(format!(
            "the server generated {token:?} ({id:?}), not the forced token {text:?} ({target}): \
             logit_bias not honoured, or not the tokenizer of the served model"
        ));
    }
    Ok(Some(lp))
}

/// Most alternatives asked for an end token's log-probability.
pub const ALTERNATIVES: usize = 20;

/// A `/v1/completions` body for the alternatives of the next token after `context`, with
/// the end token `target` banned (so the server generates, and reports, another token; the
/// alternatives are read before the ban).
pub fn alternatives_body(model: &str, context: Value, target: u32) -> Value {
    let mut bias = serde_json::Map::new();
    bias.insert(target.to_string(), json!(-FORCING_BIAS));
    json!({"model": model, "prompt": context, "max_tokens": 1, "temperature": 0.0,
           "logprobs": ALTERNATIVES, "logit_bias": bias})
}

/// The log-probability of the end token `target` from the alternatives of an
/// [`alternatives_body`] answer. By id where the server gives ids (llama.cpp): exact when
/// among them. By text (OpenAI's legacy format) special tokens cannot be told apart
/// (llama-cpp-python renders them all as "", overwriting each other), so the end token gets
/// the probability the other alternatives leave, `1 - sum` (an upper bound: the true value
/// plus the mass beyond the alternatives), when a special token is among them; when none
/// is, the end token is less likely than all and gets half the least likely one, or less.
/// The `bool` says whether the value is exact.
pub fn end_logprob(v: &Value, target: u32, texts: &[&str]) -> Result<(f32, bool), String> {
    let lp = v
        .pointer("/choices/0/logprobs")
        .ok_or("no choices[0].logprobs")?;
    let mut least = f32::INFINITY;
    let mut found = None;
    let (mut others, mut special) = (0f64, None::<f32>);
    if let Some(top) = lp
        .pointer("/content/0/top_logprobs")
        .and_then(Value::as_array)
    {
        for t in top {
            let x = t
                .get("logprob")
                .and_then(Value::as_f64)
                .ok_or("no logprob")? as f32;
            least = least.min(x);
            if t.get("id").and_then(Value::as_u64) == Some(u64::from(target)) {
                found = Some(x);
            }
        }
    } else if let Some(top) = lp.pointer("/top_logprobs/0").and_then(Value::as_object) {
        for (k, x) in top {
            let x = x.as_f64().ok_or("a top logprob is not a number")? as f32;
            least = least.min(x);
            if k.is_empty() || texts.contains(&k.as_str()) {
                special = Some(special.map_or(x, |s| s.max(x)));
            } else {
                others += f64::from(x).exp();
            }
        }
    } else {
        return Err("no top_logprobs".into());
    }
    if !least.is_finite() {
        return Err("empty top_logprobs".into());
    }
    let floor = least - std::f32::consts::LN_2;
    let left = (1.0 - others).max(0.0).ln() as f32;
    Ok(match (found, special) {
        (Some(x), _) => (x, true),
        // A special token is among the alternatives: perhaps the end token, at least as
        // likely as the value shown, at most what the others leave.
        (None, Some(s)) => (left.max(s), false),
        // No special token among them: the end token is less likely than all of them.
        (None, None) => (left.min(floor), false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forced_tokens_are_read_in_both_logprob_formats() {
        let llama = json!({"choices": [{"logprobs": {"content": [
            {"id": 504, "token": "The", "logprob": -11.5, "top_logprobs": []}]}}]});
        assert_eq!(
            forced_logprob(&llama, 504, "The", None).unwrap(),
            Some(-11.5)
        );
        let e = forced_logprob(&llama, 7042, " Paris", None).unwrap_err();
        assert!(e.contains("not the forced token"), "{e}");
        let legacy = json!({"choices": [{"logprobs": {
            "tokens": [" Paris"], "token_logprobs": [-0.25]}}], "usage": {"prompt_tokens": 5}});
        assert_eq!(
            forced_logprob(&legacy, 7042, " Paris", Some(5)).unwrap(),
            Some(-0.25)
        );
        let e = forced_logprob(&legacy, 7042, " Paris", Some(6)).unwrap_err();
        assert!(e.contains("counts Some(5) prompt tokens"), "{e}");
        assert!(forced_logprob(&legacy, 504, "The", None).is_err());
        let null = json!({"choices": [{"logprobs": null}]});
        assert!(forced_logprob(&null, 1, "a", None).is_err());
        // A server that stops at a forced end token without reporting it.
        let stopped = json!({"choices": [{"text": "", "finish_reason": "stop", "logprobs": {
            "tokens": [], "token_logprobs": [], "top_logprobs": []}}]});
        assert_eq!(
            forced_logprob(&stopped, 2, "<|im_end|>", None).unwrap(),
            None
        );
        let body = forced_body("m", json!([1, 2]), 3);
        assert_eq!(body["prompt"], json!([1, 2]));
        assert_eq!(body["logit_bias"]["3"], json!(FORCING_BIAS));
    }

    #[test]
    fn end_tokens_are_read_from_the_alternatives() {
        let llama = json!({"choices": [{"logprobs": {"content": [{"id": 9, "token": "x",
            "logprob": -0.1, "top_logprobs": [
                {"id": 9, "logprob": -0.1}, {"id": 2, "logprob": -3.0}]}]}}]});
        assert_eq!(end_logprob(&llama, 2, &[]).unwrap(), (-3.0, true));
        let (x, found) = end_logprob(&llama, 7, &[]).unwrap();
        assert!(!found && x < -3.0);
        let legacy = json!({"choices": [{"logprobs": {"top_logprobs": [
            {"\n": -0.7, "": -6.6, ",": -3.2}]}}]});
        // "" is any special token: the end token gets what the others leave.
        let (x, exact) = end_logprob(&legacy, 2, &["<|im_end|>", ""]).unwrap();
        let left = 1.0 - (-0.7f64).exp() - (-3.2f64).exp();
        assert!(!exact && (f64::from(x) - left.ln()).abs() < 1e-5, "{x}");
        assert!(end_logprob(&json!({"choices": [{"logprobs": {}}]}), 2, &[]).is_err());
    }
}

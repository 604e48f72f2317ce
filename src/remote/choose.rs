//! `choose` over HTTP: how the server is asked for log-probabilities, and how its answers
//! become a [`Choice`].
//!
//! In order of preference (detected once per connection):
//! 0. `POST /v1/choose` (our `serve-llm`): the server's engine runs `choose` itself, exactly
//!    as in-process, one request per `choose`.
//! 1. `echo` + `logprobs` on `/v1/completions` (OpenAI legacy, vLLM, our `serve-llm`): the
//!    chat-templated prompt + option + end of turn is scored; the option's token
//!    log-probabilities are summed, as the in-process engine does.
//! 2. vLLM's `prompt_logprobs`: the same sum, token ids matched with the local tokenizer.
//! 3. Forced tokens (llama.cpp's server, llama-cpp-python's): for each token of each option,
//!    a one-token completion of the token ids before it (or of their text, checked by the
//!    server's prompt token count, where the server takes no ids), with `logit_bias` forcing
//!    that token; the server reports its log-probability from the distribution before the
//!    bias, so the sum is exact. One request per option token (a server's prompt cache
//!    makes each cheap). A server that stops at a forced end token without reporting it
//!    (llama-cpp-python's) has the end of turn read from the alternatives instead, which is
//!    approximate there (it renders all special tokens as "").
//! 4. `top_logprobs` of the first reply token on `/v1/chat/completions`: each option scores
//!    the probability of the top tokens it starts with (approximate).
//! 5. None of these: a greedy reply, matched to the closest option.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::llm::request::Choice;

/// How `choose` is computed on this server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ChooseMethod {
    Native,
    Echo,
    PromptLogprobs,
    ForcedTokens,
    ForcedText,
    FirstToken,
    Generate,
}

impl std::fmt::Display for ChooseMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Native => "the server's own choose (/v1/choose: in-process probabilities)",
            Self::Echo => "completions with echo + logprobs (full option log-probabilities)",
            Self::PromptLogprobs => "prompt_logprobs (full option log-probabilities)",
            Self::ForcedTokens => {
                "forced tokens: each option token forced with logit_bias, its log-probability read before the bias (full option log-probabilities)"
            }
            Self::ForcedText => {
                "forced tokens after text prompts: each option token forced with logit_bias, its log-probability read before the bias (approximate where the server drops forced end tokens: the end of turn is bounded from the other alternatives)"
            }
            Self::FirstToken => {
                "top_logprobs of the first reply token (approximate: options are told apart by their first token)"
            }
            Self::Generate => {
                "no log-probabilities offered: a greedy reply matched to the closest option"
            }
        })
    }
}

/// Most alternatives asked for in `top_logprobs` (OpenAI's limit).
pub const TOP_LOGPROBS: usize = 20;

/// A `/v1/choose` body: the prompt as chat messages, text or token ids, and the options.
pub fn native_body(model: &str, prompt: Value, chat: bool, options: &[String]) -> Value {
    let key = if chat { "messages" } else { "prompt" };
    json!({"model": model, key: prompt, "options": options})
}

/// A [`Choice`] from a `/v1/choose` answer for `n` options.
pub fn parse_native(v: &Value, n: usize) -> Result<Choice, String> {
    let floats = |k: &str| -> Result<Vec<f32>, String> {
        let a = v
            .get(k)
            .and_then(Value::as_array)
            .ok_or(format!("no {k}"))?;
        let x: Option<Vec<f32>> = a.iter().map(|x| x.as_f64().map(|x| x as f32)).collect();
        x.filter(|x| x.len() == n)
            .ok_or(format!("{k}: expected {n} numbers"))
    };
    let probs = floats("probs")?;
    let logprobs = floats("logprobs")?;
    if probs.iter().any(|p| !p.is_finite() || *p < 0.0) {
        return Err("probs: not probabilities".into());
    }
    let index = v
        .get("index")
        .and_then(Value::as_u64)
        .map(|i| i as usize)
        .filter(|&i| i < n)
        .ok_or("no index among the options")?;
    let prompt_tokens = v
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize;
    Ok(Choice {
        index,
        probs,
        logprobs,
        prompt_tokens,
    })
}

/// A `/v1/completions` body scoring `text` (prompt + option) with `echo`.
pub fn echo_body(model: &str, text: &str) -> Value {
    json!({"model": model, "prompt": text, "echo": true, "logprobs": 1,
           "max_tokens": 1, "temperature": 0.0})
}

/// A `/v1/completions` body asking vLLM for `prompt_logprobs`.
pub fn prompt_logprobs_body(model: &str, text: &str) -> Value {
    json!({"model": model, "prompt": text, "prompt_logprobs": 0,
           "max_tokens": 1, "temperature": 0.0})
}

/// Log-probability of the scored option from an `echo` answer: the tokens starting at or
/// after character `prompt_chars` (and before `full_chars`, where generation starts). When
/// the offsets do not line up with the prompt's end (a server that counts a BOS, say), the
/// last `k` prompt tokens are taken instead. Also returns the number of tokens before the
/// option (the prompt's).
pub fn parse_echo(
    v: &Value,
    prompt_chars: usize,
    full_chars: usize,
    k: usize,
) -> Result<(f32, usize), String> {
    let lp = v
        .pointer("/choices/0/logprobs")
        .ok_or("no choices[0].logprobs")?;
    let values = lp
        .get("token_logprobs")
        .and_then(Value::as_array)
        .ok_or("no token_logprobs")?;
    if values.len() < 2 {
        return Err("token_logprobs holds no prompt tokens (echo unsupported)".into());
    }
    let offsets: Option<Vec<usize>> = lp.get("text_offset").and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(|o| o.as_u64().map(|o| o as usize))
            .collect()
    });
    let usage_prompt = v
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    let range = match offsets.filter(|o| o.len() == values.len()) {
        Some(o) if o.contains(&prompt_chars) => {
            let first = o.iter().position(|&x| x >= prompt_chars).unwrap_or(o.len());
            let end = o.iter().position(|&x| x >= full_chars).unwrap_or(o.len());
            first..end
        }
        _ => {
            let n = usage_prompt.unwrap_or(values.len() - 1).min(values.len());
            n.saturating_sub(k)..n
        }
    };
    if range.is_empty() || range.start == 0 {
        return Err(format!("no option tokens in the echoed prompt ({range:?})"));
    }
    let mut sum = 0f32;
    for i in range.clone() {
        let x = values[i]
            .as_f64()
            .ok_or_else(|| format!("token_logprobs[{i}] is not a number"))?;
        sum += x as f32;
    }
    if !sum.is_finite() {
        return Err("non-finite log-probability".into());
    }
    Ok((sum, range.start))
}

/// A predictable text for checking that echoed log-probabilities belong to their tokens.
pub const ALIGNMENT_PROBE: &str =
    "One, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve";

/// Checks an `echo` answer's alignment: at a correct server the top alternative at position
/// `i` (the distribution *before* token `i`) is usually token `i` itself on a predictable
/// text. Some servers (llama-cpp-python 0.3) report each position's distribution one token
/// late, which makes the echoed log-probabilities those of the wrong distribution: refused.
pub fn check_echo_alignment(v: &Value) -> Result<(), String> {
    let lp = v
        .pointer("/choices/0/logprobs")
        .ok_or("no choices[0].logprobs")?;
    let tokens: Vec<&str> = lp
        .get("tokens")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let top = lp.get("top_logprobs").and_then(Value::as_array);
    let Some(top) = top.filter(|t| t.len() == tokens.len() && tokens.len() > 4) else {
        return Ok(()); // nothing to check against: accepted as offered
    };
    let best = |i: usize| -> Option<&str> {
        top[i]
            .as_object()?
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_f64()?)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(k, _)| k)
    };
    let (mut aligned, mut late) = (0, 0);
    for i in 1..tokens.len() {
        let b = best(i);
        aligned += usize::from(b == Some(tokens[i]));
        late += usize::from(i + 1 < tokens.len() && b == Some(tokens[i + 1]));
    }
    if late > aligned {
        return Err(format!(
            "the echoed log-probabilities are one token late ({late} of {} positions predict \
             the next token, {aligned} their own): unusable for scoring",
            tokens.len() - 1
        ));
    }
    Ok(())
}

/// Log-probability of the last `k` of `ids` from a vLLM `prompt_logprobs` answer (one map
/// from token id to `{logprob}` per prompt token, the first `null`).
pub fn parse_prompt_logprobs(v: &Value, ids: &[u32], k: usize) -> Result<(f32, usize), String> {
    let lp = v
        .pointer("/choices/0/prompt_logprobs")
        .and_then(Value::as_array)
        .ok_or("no choices[0].prompt_logprobs")?;
    if lp.len() != ids.len() || k == 0 || k >= ids.len() {
        return Err(format!(
            "{} prompt log-probabilities for {} local tokens (is --tokenizer the served model's?)",
            lp.len(),
            ids.len()
        ));
    }
    let mut sum = 0f32;
    for i in ids.len() - k..ids.len() {
        let entry = lp[i]
            .get(ids[i].to_string())
            .ok_or_else(|| format!("token {} missing at position {i}", ids[i]))?;
        let x = entry
            .get("logprob")
            .and_then(Value::as_f64)
            .or_else(|| entry.as_f64())
            .ok_or("logprob is not a number")?;
        sum += x as f32;
    }
    Ok((sum, ids.len() - k))
}

/// A chat body asking for one token with its `top_logprobs`.
pub fn first_token_body(model: &str, messages: &Value) -> Value {
    json!({"model": model, "messages": messages, "max_tokens": 1, "temperature": 0.0,
           "logprobs": true, "top_logprobs": TOP_LOGPROBS})
}

/// The alternatives of the first reply token: `(token text, logprob)`.
pub fn parse_first_token(v: &Value) -> Result<(Vec<(String, f32)>, usize), String> {
    let top = v
        .pointer("/choices/0/logprobs/content/0/top_logprobs")
        .and_then(Value::as_array)
        .ok_or("no choices[0].logprobs.content[0].top_logprobs")?;
    let mut out = Vec::new();
    for t in top {
        let token = t.get("token").and_then(Value::as_str).ok_or("no token")?;
        let lp = t
            .get("logprob")
            .and_then(Value::as_f64)
            .ok_or("no logprob")?;
        out.push((token.to_string(), lp as f32));
    }
    if out.is_empty() {
        return Err("empty top_logprobs".into());
    }
    let prompt = v
        .pointer("/usage/prompt_tokens")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize;
    Ok((out, prompt))
}

/// Each option's log-probability from the first token's alternatives: the total probability
/// of the alternatives the option starts with; options starting with none get less than the
/// least likely alternative.
pub fn first_token_scores(top: &[(String, f32)], options: &[String]) -> Vec<f32> {
    let floor = top.iter().map(|t| t.1).fold(f32::INFINITY, f32::min) - std::f32::consts::LN_2;
    options
        .iter()
        .map(|o| {
            let o = o.trim_start();
            let p: f64 = top
                .iter()
                .filter(|(t, _)| {
                    let t = t.trim_start();
                    !t.is_empty()
                        && (o.starts_with(t) || o.to_lowercase().starts_with(&t.to_lowercase()))
                })
                .map(|(_, lp)| f64::from(*lp).exp())
                .sum();
            if p > 0.0 {
                p.ln() as f32
            } else {
                floor
            }
        })
        .collect()
}

/// A `Choice` from per-option log-probabilities (softmax over the options; ties go to the
/// first, as in the engine).
pub fn choice_from_logprobs(logp: Vec<f32>, prompt_tokens: usize) -> Choice {
    let max = logp.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let exp: Vec<f64> = logp.iter().map(|&l| f64::from(l - max).exp()).collect();
    let sum: f64 = exp.iter().sum::<f64>().max(f64::MIN_POSITIVE);
    let probs = exp.iter().map(|e| (e / sum) as f32).collect();
    let mut index = 0;
    for (i, &l) in logp.iter().enumerate() {
        if l > logp[index] {
            index = i;
        }
    }
    Choice {
        index,
        probs,
        logprobs: logp,
        prompt_tokens,
    }
}

/// The question with the options spelled out, for servers that can only generate.
pub fn options_hint(options: &[String]) -> String {
    format!("\n\nAnswer with exactly one of: {}.", options.join("; "))
}

fn normalise(s: &str) -> String {
    s.to_lowercase()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { ' ' })
        .collect::<String>()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn edit_distance(a: &[char], b: &[char]) -> usize {
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The option a free reply means: an exact match, else the option the reply starts with,
/// else the earliest (then longest) option named in it, else the nearest by edit distance.
pub fn closest_option(reply: &str, options: &[String]) -> usize {
    let r = normalise(reply);
    let opts: Vec<String> = options.iter().map(|o| normalise(o)).collect();
    if let Some(i) = opts.iter().position(|o| *o == r) {
        return i;
    }
    let starts = |o: &String| !o.is_empty() && (r == *o || r.starts_with(&format!("{o} ")));
    if let Some(i) = (0..opts.len())
        .filter(|&i| starts(&opts[i]))
        .max_by_key(|&i| opts[i].len())
    {
        return i;
    }
    let padded = format!(" {r} ");
    let found = (0..opts.len())
        .filter(|&i| !opts[i].is_empty())
        .filter_map(|i| padded.find(&format!(" {} ", opts[i])).map(|p| (p, i)))
        .min_by_key(|&(p, i)| (p, usize::MAX - opts[i].len()));
    if let Some((_, i)) = found {
        return i;
    }
    let rc: Vec<char> = r.chars().take(64).collect();
    (0..opts.len())
        .min_by_key(|&i| {
            let oc: Vec<char> = opts[i].chars().take(64).collect();
            let head: Vec<char> = rc.iter().copied().take(oc.len().max(1)).collect();
            edit_distance(&head, &oc)
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn replies_map_to_the_closest_option() {
        let o = opts(&["yes", "no"]);
        assert_eq!(closest_option("No.", &o), 1);
        assert_eq!(closest_option("yes, I think so", &o), 0);
        assert_eq!(closest_option("Well... no", &o), 1);
        let places = opts(&["Kitchen", "Living room", "Bedroom"]);
        assert_eq!(closest_option("the living room", &places), 1);
        assert_eq!(closest_option("Bedrom", &places), 2);
        assert_eq!(closest_option("", &places), 0);
    }

    #[test]
    fn echo_answers_sum_the_option_tokens() {
        // "ab" + "yes" + "<e>": offsets 0,1 | 2 (yes) 5 (<e>) | 8 (generated).
        let v = json!({"choices": [{"logprobs": {
            "tokens": ["a", "b", "yes", "<e>", "x"],
            "token_logprobs": [null, -1.0, -0.5, -0.25, -3.0],
            "text_offset": [0, 1, 2, 5, 8]}}],
            "usage": {"prompt_tokens": 4}});
        let (lp, n) = parse_echo(&v, 2, 8, 2).unwrap();
        assert_eq!(lp, -0.75);
        assert_eq!(n, 2);
        // Offsets shifted by a BOS: the last k prompt tokens.
        let v = json!({"choices": [{"logprobs": {
            "token_logprobs": [null, -1.0, -0.5, -0.25, -3.0],
            "text_offset": [0, 3, 4, 7, 10]}}], "usage": {"prompt_tokens": 4}});
        assert_eq!(parse_echo(&v, 2, 8, 2).unwrap().0, -0.75);
        let v = json!({"choices": [{"logprobs": {"token_logprobs": [-0.1]}}]});
        assert!(parse_echo(&v, 2, 8, 2).is_err());
    }

    #[test]
    fn echo_alignment_refuses_log_probabilities_one_token_late() {
        let tokens = ["One", ",", " two", ",", " three", ","];
        let answer = |late: bool| {
            let top: Vec<Value> = (0..tokens.len())
                .map(|i| {
                    let j = if late { i + 1 } else { i };
                    match tokens.get(j) {
                        Some(t) if i > 0 => json!({ *t: -0.1, " x": -3.0 }),
                        _ => Value::Null,
                    }
                })
                .collect();
            json!({"choices": [{"logprobs": {"tokens": tokens, "top_logprobs": top}}]})
        };
        assert!(check_echo_alignment(&answer(false)).is_ok());
        let e = check_echo_alignment(&answer(true)).unwrap_err();
        assert!(e.contains("one token late"), "{e}");
        // Without alternatives there is nothing to check.
        assert!(check_echo_alignment(&json!({"choices": [{"logprobs": {}}]})).is_ok());
    }

    #[test]
    fn native_answers_become_choices() {
        let v = json!({"index": 1, "probs": [0.25, 0.75], "logprobs": [-2.0, -0.9],
                       "usage": {"prompt_tokens": 12}});
        let c = parse_native(&v, 2).unwrap();
        assert_eq!((c.index, c.prompt_tokens), (1, 12));
        assert_eq!(c.probs, vec![0.25, 0.75]);
        assert!(parse_native(&v, 3).is_err());
        assert!(parse_native(&json!({"index": 2, "probs": [1.0], "logprobs": [0.0]}), 1).is_err());
        let body = native_body("m", json!("Q?"), false, &["a".into()]);
        assert_eq!(body["prompt"], "Q?");
    }

    #[test]
    fn first_token_scores_follow_the_alternatives() {
        let top = vec![("yes".to_string(), -0.2), (" No".to_string(), -1.8)];
        let s = first_token_scores(&top, &opts(&["yes", "no", "maybe"]));
        assert!(s[0] > s[1] && s[1] > s[2], "{s:?}");
        let c = choice_from_logprobs(s, 3);
        assert_eq!(c.index, 0);
        assert!((c.probs.iter().sum::<f32>() - 1.0).abs() < 1e-5);
    }
}

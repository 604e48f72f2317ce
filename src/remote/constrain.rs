//! How a generation's constraint reaches a server: [`ConstraintMethod`], probed once per
//! connection, and the request field it adds.
//!
//! - `serve-llm` takes the [`ConstraintSpec`] itself (`humanoid_constraint`) and runs the same
//!   token mask as in-process: the reply is exactly what the engine would write.
//! - llama.cpp's server and llama-cpp-python's take a GBNF `grammar`
//!   ([`ConstraintSpec::gbnf`]); the same grammar goes to vLLM (`structured_outputs`, or the
//!   older `guided_grammar`) and SGLang (`ebnf`), whose xgrammar reads GBNF (probed like the
//!   others, but not tested here: no such server runs on this machine).
//! - Any other server generates unconstrained; the simulation parses the reply defensively,
//!   with logged fallbacks.
//!
//! A constrained reply is also cut to the machine's
//! [`accepted_prefix`](ConstraintSpec::accepted_prefix), so a server whose grammar support
//! differs from llama.cpp's never hands the simulation text beyond the machine's.

use serde_json::{json, Value};

use super::http::{CallError, Http};
use crate::llm::constrain::{ConstraintSpec, PlanTimes};

/// How constraints are sent to a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConstraintMethod {
    /// serve-llm's `humanoid_constraint`: the spec, run as in-process.
    Native,
    /// llama.cpp's `grammar` (GBNF): llama-server, llama-cpp-python.
    Grammar,
    /// vLLM's `structured_outputs.grammar` (0.10.2 and later; xgrammar reads GBNF).
    StructuredOutputs,
    /// vLLM's older `guided_grammar`.
    GuidedGrammar,
    /// SGLang's `ebnf`.
    Ebnf,
    /// Not sent: unconstrained generation.
    Unconstrained,
}

impl std::fmt::Display for ConstraintMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Native => "the server's own constraints (humanoid_constraint: as in-process)",
            Self::Grammar => "GBNF grammars (llama.cpp's `grammar` field)",
            Self::StructuredOutputs => "GBNF grammars (vLLM's `structured_outputs.grammar`)",
            Self::GuidedGrammar => "GBNF grammars (vLLM's `guided_grammar`)",
            Self::Ebnf => "GBNF grammars (SGLang's `ebnf`)",
            Self::Unconstrained => {
                "none offered: generation is unconstrained (answers are parsed defensively, with logged fallbacks)"
            }
        })
    }
}

impl ConstraintMethod {
    /// The ways to try, best first.
    const PROBED: [Self; 5] = [
        Self::Native,
        Self::Grammar,
        Self::StructuredOutputs,
        Self::GuidedGrammar,
        Self::Ebnf,
    ];

    /// Adds `spec` to a request `body` the way this method sends it; whether it was sent.
    pub fn apply(self, body: &mut Value, spec: &ConstraintSpec) -> bool {
        match self {
            Self::Native => body["humanoid_constraint"] = json!(spec),
            Self::Grammar => body["grammar"] = json!(spec.gbnf()),
            Self::StructuredOutputs => body["structured_outputs"] = json!({"grammar": spec.gbnf()}),
            Self::GuidedGrammar => body["guided_grammar"] = json!(spec.gbnf()),
            Self::Ebnf => body["ebnf"] = json!(spec.gbnf()),
            Self::Unconstrained => return false,
        }
        true
    }
}

/// Probes `http` for a way to send constraints, best first. A greeting asked for under a
/// one-emoji constraint must come back as exactly one emoji, and under a one-line plan as
/// that plan line (a server that ignores the field answers in words; the two grammars hold
/// the escapes, classes and repetition [`ConstraintSpec::gbnf`] writes). Only a server that
/// is gone is an error.
pub fn detect(http: &Http, model: &str) -> Result<ConstraintMethod, CallError> {
    for method in ConstraintMethod::PROBED {
        match probe(http, model, method) {
            Ok(()) => return Ok(method),
            Err(CallError::Fatal(e)) => return Err(CallError::Fatal(e)),
            Err(CallError::Request(e)) => {
                tracing::info!(
                    "{}: constraints as {method}: not offered ({e})",
                    http.base()
                )
            }
        }
    }
    Ok(ConstraintMethod::Unconstrained)
}

fn probe(http: &Http, model: &str, method: ConstraintMethod) -> Result<(), CallError> {
    let specs = [
        ConstraintSpec::Emoji { count: 1 },
        ConstraintSpec::plan(PlanTimes::Fixed(vec![420]), 12),
    ];
    for spec in specs {
        let mut body = json!({
            "model": model,
            "messages": [{"role": "user", "content": "Say hello to me in a few words."}],
            "max_tokens": 40,
            "temperature": 0.0,
            "seed": 0,
        });
        method.apply(&mut body, &spec);
        http.probe("/v1/chat/completions", &body, |v| {
            let text = v
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .ok_or("no choices[0].message.content")?;
            if spec.is_complete(text) {
                Ok(())
            } else {
                Err(format!("the reply {text:?} ignores the constraint"))
            }
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_writes_its_own_field() {
        let spec = ConstraintSpec::Emoji { count: 1 };
        let sent = |m: ConstraintMethod| {
            let mut body = json!({"model": "m"});
            let sent = m.apply(&mut body, &spec);
            (sent, body)
        };
        let (ok, b) = sent(ConstraintMethod::Native);
        assert!(ok);
        assert_eq!(
            b["humanoid_constraint"],
            json!({"kind": "emoji", "count": 1})
        );
        let (_, b) = sent(ConstraintMethod::Grammar);
        assert_eq!(b["grammar"], json!(spec.gbnf()));
        let (_, b) = sent(ConstraintMethod::StructuredOutputs);
        assert_eq!(b["structured_outputs"]["grammar"], json!(spec.gbnf()));
        let (_, b) = sent(ConstraintMethod::GuidedGrammar);
        assert_eq!(b["guided_grammar"], json!(spec.gbnf()));
        let (_, b) = sent(ConstraintMethod::Ebnf);
        assert_eq!(b["ebnf"], json!(spec.gbnf()));
        let (ok, b) = sent(ConstraintMethod::Unconstrained);
        assert!(!ok);
        assert_eq!(b, json!({"model": "m"}));
    }
}

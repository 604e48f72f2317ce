//! How a generation's constraint reaches a server: [`ConstraintMethod`], probed once per
//! connection, and the request field it adds.
//!
//! - `serve-llm` takes the [`ConstraintSpec`] itself (`humanoid_constraint`) and runs the same
//!   token mask as in-process: the reply is exactly what the engine would write.
//! - llama.cpp's server and llama-cpp-python's take a GBNF `grammar`
//!   ([`ConstraintSpec::gbnf`]).
//! - Any other server generates unconstrained; the simulation parses the reply defensively,
//!   with logged fallbacks.
//!
//! A constrained reply is cut to the machine's
//! [`accepted_prefix`](ConstraintSpec::accepted_prefix), so what a server's grammar allows
//! beyond the machine (a plan's times out of order) never reaches the simulation.

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use super::http::{CallError, Http};
use crate::llm::constrain::ConstraintSpec;

/// How constraints are sent to a server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConstraintMethod {
    /// serve-llm's `humanoid_constraint`: the spec, run as in-process.
    Native,
    /// llama.cpp's `grammar` (GBNF).
    Grammar,
    /// Not sent: unconstrained generation.
    Unconstrained,
}

impl std::fmt::Display for ConstraintMethod {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Native => "the server's own constraints (humanoid_constraint: as in-process)",
            Self::Grammar => "GBNF grammars (llama.cpp's `grammar` field)",
            Self::Unconstrained => {
                "none offered: generation is unconstrained (answers are parsed defensively, with logged fallbacks)"
            }
        })
    }
}

impl ConstraintMethod {
    /// Adds `spec` to a request `body` the way this method sends it; whether it was sent.
    pub fn apply(self, body: &mut Value, spec: &ConstraintSpec) -> bool {
        match self {
            Self::Native => body["humanoid_constraint"] = json!(spec),
            Self::Grammar => body["grammar"] = json!(spec.gbnf()),
            Self::Unconstrained => return false,
        }
        true
    }
}

/// Probes `http` for a way to send constraints, best first: a greeting asked for under a
/// one-emoji constraint must come back as exactly one emoji (a server that ignores the field
/// answers in words). Only a server that is gone is an error.
pub fn detect(http: &Http, model: &str) -> Result<ConstraintMethod, CallError> {
    for method in [ConstraintMethod::Native, ConstraintMethod::Grammar] {
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
    let spec = ConstraintSpec::Emoji { count: 1 };
    let mut body = json!({
        "model": model,
        "messages": [{"role": "user", "content": "Say hello to me in a few words."}],
        "max_tokens": 8,
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
    })
}

//! A tick's event collection: model calls and fallbacks become events and counters.

use serde::{Deserialize, Serialize};

use super::events::LogEvent;
use crate::agent::Fallback;
use crate::llm::batch::CallRecord;

/// Counters over a run, kept in the checkpoint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Counters {
    pub model_calls: u64,
    pub generate_calls: u64,
    pub choose_calls: u64,
    pub prompt_tokens: u64,
    pub generated_tokens: u64,
    pub max_prompt_tokens: u64,
    pub failed_calls: u64,
    pub fallbacks: u64,
    pub agent_steps: u64,
    pub conversations: u64,
    pub reflections: u64,
}

/// Collects a tick's events and keeps the counters.
pub(crate) struct Logger {
    pub step: u64,
    pub date: String,
    pub time: String,
    pub events: Vec<LogEvent>,
    pub counters: Counters,
}

impl Logger {
    pub fn push(&mut self, agent: Option<&str>, body: &impl Serialize) {
        self.events.push(LogEvent::new(
            self.step, &self.date, &self.time, agent, body,
        ));
    }

    pub fn calls(&mut self, agent: &str, calls: &[CallRecord]) {
        for c in calls {
            let k = &mut self.counters;
            k.model_calls += 1;
            if c.kind == "generate" {
                k.generate_calls += 1;
            } else {
                k.choose_calls += 1;
            }
            k.prompt_tokens += c.prompt_tokens as u64;
            k.generated_tokens += c.generated_tokens as u64;
            k.max_prompt_tokens = k.max_prompt_tokens.max(c.prompt_tokens as u64);
            if c.error.is_some() {
                k.failed_calls += 1;
            }
            let mut body = serde_json::to_value(c).unwrap_or_default();
            if let Some(m) = body.as_object_mut() {
                m.insert("type".into(), "model_call".into());
            }
            self.push(Some(agent), &body);
        }
    }

    pub fn fallbacks(&mut self, fallbacks: &[Fallback]) {
        for f in fallbacks {
            self.counters.fallbacks += 1;
            let mut body = serde_json::to_value(f).unwrap_or_default();
            if let Some(m) = body.as_object_mut() {
                m.remove("agent");
                m.insert("type".into(), "fallback".into());
            }
            let agent = f.agent.clone();
            self.push(Some(&agent), &body);
        }
    }
}

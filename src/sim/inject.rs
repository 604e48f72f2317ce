//! Thoughts planted in agents at the start of a run (`humanoid run --inject "AGENT: text"`),
//! the papers' "inner voice" (Park et al. seed a fact such as "Sam is running for mayor" in
//! one agent and watch it spread).
//!
//! An injection is stored as a [`MemoryKind::Thought`] memory of [`INJECTED_IMPORTANCE`]
//! before the first step, right after the agents' seed memories, and logged as a `memory`
//! event with `"injected": true`. The run's config records the injections; since only
//! [`Run::create`](super::Run::create) plants them, a resumed run never plants them twice.

use serde::{Deserialize, Serialize};

use super::error::{Result, SimError};
use super::events::LogEvent;
use super::tick::{Runtime, Sim};
use crate::memory::{GameTime, Importance, MemoryKind, NewMemory};
use crate::world::{clock, World};

/// Importance of an injected thought: the highest, since the inner voice is meant to be
/// recalled (importance is not asked of the model for it).
pub const INJECTED_IMPORTANCE: Importance = Importance::MAX;

/// Longest injected text, in characters.
pub const MAX_INJECT_CHARS: usize = 1000;

/// One thought to plant: which agent, and what it thinks.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// The agent's name as the world spells it.
    pub agent: String,
    /// The thought, on one line.
    pub text: String,
}

impl Injection {
    /// Parses `"AGENT: text"` against `world`'s agents. The agent's name may differ from the
    /// world's in ASCII case (the world's spelling is kept); the text is trimmed and its
    /// whitespace collapsed to single spaces. Errors name the value and the known agents.
    pub fn parse(arg: &str, world: &World) -> Result<Injection> {
        let arg = arg.trim();
        let bad = |why: String| SimError::Invalid(format!("--inject {arg:?}: {why}"));
        // The longest agent name the argument starts with, then a colon.
        let matched = world
            .agents
            .iter()
            .filter_map(|a| {
                let head = arg.get(..a.name.len())?;
                let rest = arg.get(a.name.len()..)?.trim_start().strip_prefix(':')?;
                head.eq_ignore_ascii_case(&a.name)
                    .then_some((a.name.as_str(), rest))
            })
            .max_by_key(|(name, _)| name.len());
        let (agent, rest) = match matched {
            Some(m) => m,
            None => {
                let Some((name, _)) = arg.split_once(':') else {
                    return Err(bad("expected \"AGENT: text\"".into()));
                };
                return Err(bad(format!(
                    "no agent named {:?} in {} (agents: {})",
                    name.trim(),
                    world.name,
                    world.agent_list()
                )));
            }
        };
        let text = rest.split_whitespace().collect::<Vec<_>>().join(" ");
        if text.is_empty() {
            return Err(bad("the thought is empty".into()));
        }
        if text.chars().count() > MAX_INJECT_CHARS {
            return Err(bad(format!(
                "the thought is longer than {MAX_INJECT_CHARS} characters"
            )));
        }
        Ok(Injection {
            agent: agent.to_string(),
            text,
        })
    }
}

/// Checks that every injection names an agent of `world` and has a non-empty text (a
/// config edited by hand, or built by a caller without [`Injection::parse`]).
pub fn check(injections: &[Injection], world: &World) -> Result<()> {
    for inj in injections {
        if world.agent_index(&inj.agent).is_none() {
            return Err(SimError::Invalid(format!(
                "injection for {:?}: no such agent in {} (agents: {})",
                inj.agent,
                world.name,
                world.agent_list()
            )));
        }
        if inj.text.trim().is_empty() {
            return Err(SimError::Invalid(format!(
                "injection for {:?}: the thought is empty",
                inj.agent
            )));
        }
    }
    Ok(())
}

impl Sim {
    /// Stores `injections` as thought memories created at the start of the first day and
    /// returns their `memory` events. Nothing is stored if any injection is invalid or an
    /// embedding fails.
    pub fn inject(&mut self, rt: &Runtime<'_>, injections: &[Injection]) -> Result<Vec<LogEvent>> {
        check(injections, &self.world)?;
        let now = GameTime(u64::from(self.world.day_start));
        let date = self.world.start_date.format("%Y-%m-%d").to_string();
        let time = clock::format_time(self.world.day_start);
        let mut batches: Vec<Vec<NewMemory>> = vec![Vec::new(); self.memories.len()];
        let mut events = Vec::new();
        for inj in injections {
            let Some(i) = self.world.agent_index(&inj.agent) else {
                continue;
            };
            let v = {
                let mut emb = rt.embedder.borrow_mut();
                crate::memory::embedder::embed_checked(&mut **emb, &[inj.text.as_str()])?
            };
            let embedding = v.into_iter().next().unwrap_or_default();
            batches[i].push(NewMemory::new(
                MemoryKind::Thought,
                inj.text.clone(),
                now,
                INJECTED_IMPORTANCE,
                embedding,
            ));
            events.push(LogEvent::new(
                self.state.step,
                &date,
                &time,
                Some(&inj.agent),
                serde_json::json!({"type": "memory", "kind": MemoryKind::Thought.as_str(),
                    "text": inj.text, "importance": INJECTED_IMPORTANCE.get(), "injected": true}),
            ));
        }
        for (stream, batch) in self.memories.iter_mut().zip(batches) {
            if !batch.is_empty() {
                stream.add_batch(batch)?;
            }
        }
        Ok(events)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn world() -> World {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/lin-family.toml");
        World::load(&path).unwrap()
    }

    #[test]
    fn parses_agent_and_text() {
        let w = world();
        let i = Injection::parse("  Eddy Lin:  Sam is   running for mayor ", &w).unwrap();
        assert_eq!(i.agent, "Eddy Lin");
        assert_eq!(i.text, "Sam is running for mayor");
        let i = Injection::parse("eddy lin : a: b", &w).unwrap();
        assert_eq!((i.agent.as_str(), i.text.as_str()), ("Eddy Lin", "a: b"));
    }

    #[test]
    fn rejects_unknown_agents_and_bad_shapes() {
        let w = world();
        let e = Injection::parse("Sam Moore: hello", &w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"Sam Moore\"") && e.contains("John Lin"), "{e}");
        let e = Injection::parse("no colon here", &w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("AGENT: text"), "{e}");
        let e = Injection::parse("John Lin:   ", &w)
            .unwrap_err()
            .to_string();
        assert!(e.contains("empty"), "{e}");
        let long = format!("John Lin: {}", "x".repeat(MAX_INJECT_CHARS + 1));
        assert!(Injection::parse(&long, &w).is_err());
        // A name that only starts like an agent's is not that agent.
        assert!(Injection::parse("John Linx: hi", &w).is_err());
    }

    #[test]
    fn check_names_the_unknown_agent() {
        let w = world();
        let bad = [Injection {
            agent: "Nobody".into(),
            text: "x".into(),
        }];
        let e = check(&bad, &w).unwrap_err().to_string();
        assert!(e.contains("Nobody"), "{e}");
        let good = [Injection {
            agent: "John Lin".into(),
            text: "x".into(),
        }];
        check(&good, &w).unwrap();
    }
}

//! A run as it stood at the end of one step, read back from its directory without writing
//! anything: the config, the world, every agent's state and memory stream.
//!
//! The memory streams come from `checkpoint.bin` (as `humanoid resume` restores them). The
//! checkpoint holds the latest step only, so an earlier step is reconstructed: its agents'
//! states from that step's state file, and each stream cut to the memories created up to
//! that step's time (every memory of step *s* is created at step *s*'s time, so this is
//! exact). A memory retrieved after that step has its last access moved back to the step's
//! time, an approximation: the earlier accesses are not recorded.

use std::path::{Path, PathBuf};

use chrono::NaiveDate;

use super::error::{EvalError, Result};
use super::run_dir::{read_config, run_err};
use crate::agent::AgentState;
use crate::memory::{GameTime, MemoryStream, NewMemory};
use crate::sim::StateFile;
use crate::sim::{checkpoint, RunConfig};
use crate::world::{clock, Condition, World};

/// A run at the end of one step (or at its start, before any step).
pub struct Snapshot {
    pub dir: PathBuf,
    pub config: RunConfig,
    pub world: World,
    /// The step (0-based, as `events.jsonl` counts) whose end this is; `None` at the start
    /// of a run that has completed no step.
    pub step: Option<u64>,
    /// Steps the run has completed.
    pub completed: u64,
    pub date: NaiveDate,
    /// Minutes after midnight of the step.
    pub minutes: u32,
    /// The step's time as memories record it.
    pub now: GameTime,
    /// Every agent's state, in world order.
    pub agents: Vec<AgentState>,
    /// Every agent's memory stream, in world order.
    pub memories: Vec<MemoryStream>,
    /// Every agent's state when the run started (world and conditions).
    pub start: Vec<AgentState>,
}

impl Snapshot {
    /// Reads `dir` at the end of step `at` (0-based; default: the last completed step).
    /// Errors name the directory, a file that is missing or broken, or the step asked for
    /// and the steps the run has.
    pub fn load(dir: &Path, at: Option<u64>) -> Result<Snapshot> {
        let (config, world) = read_config(dir)?;
        let ck_path = crate::sim::RunDir::new(dir).checkpoint_path();
        if !ck_path.is_file() {
            return Err(run_err(
                dir,
                "no checkpoint.bin (the run stopped before its first checkpoint)",
            ));
        }
        let ck = checkpoint::read(&ck_path).map_err(|e| run_err(&ck_path, e.to_string()))?;
        if ck.state.agents.len() != world.agents.len() {
            return Err(run_err(
                &ck_path,
                "the checkpoint's agents do not match the world",
            ));
        }
        let completed = ck.state.step;
        let step = match at {
            None => completed.checked_sub(1),
            Some(s) if s < completed => Some(s),
            Some(s) if completed == 0 => {
                return Err(EvalError::Invalid(format!(
                    "--at {s}: {} has completed no step yet",
                    dir.display()
                )))
            }
            Some(s) => {
                return Err(EvalError::Invalid(format!(
                    "--at {s}: {} has completed steps 0 to {} only",
                    dir.display(),
                    completed - 1
                )))
            }
        };
        let (day, minutes) = world.step_time(step.unwrap_or(0));
        let date = world.start_date + chrono::Days::new(day);
        let now = GameTime(day * 1440 + u64::from(minutes));
        let frozen = config.conditions.iter().any(|c| {
            c.parse::<Condition>()
                .is_ok_and(|c| matches!(c, Condition::Emotion(_)))
        });
        let start: Vec<AgentState> = world
            .agents
            .iter()
            .map(|a| AgentState::from_spec(a, frozen))
            .collect();
        let latest = step.is_none_or(|s| s + 1 == completed);
        let (agents, memories) = if latest {
            (ck.state.agents, ck.memories)
        } else {
            let file =
                crate::sim::RunDir::new(dir).state_path(&clock::state_file_name(date, minutes));
            let agents = states_from_file(&file, &start)?;
            let memories = ck
                .memories
                .iter()
                .map(|m| memories_until(m, now))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| run_err(&ck_path, e.to_string()))?;
            (agents, memories)
        };
        Ok(Snapshot {
            dir: dir.to_path_buf(),
            config,
            world,
            step,
            completed,
            date,
            minutes,
            now,
            agents,
            memories,
            start,
        })
    }

    /// The index of the agent called `name` (exact, else the one name equal ignoring ASCII
    /// case); the error names the value and the run's agents.
    pub fn agent_index(&self, name: &str) -> Result<usize> {
        let name = name.trim();
        if let Some(i) = self.world.agent_index(name) {
            return Ok(i);
        }
        let folded: Vec<usize> = (0..self.world.agents.len())
            .filter(|&i| self.world.agents[i].name.eq_ignore_ascii_case(name))
            .collect();
        if let [i] = folded[..] {
            return Ok(i);
        }
        let names: Vec<&str> = self.world.agents.iter().map(|a| a.name.as_str()).collect();
        Err(EvalError::Invalid(format!(
            "--agent {name:?}: no such agent in {} (agents: {})",
            self.dir.display(),
            names.join(", ")
        )))
    }

    /// Every agent's state at the end of `step` as its state file wrote it (on top of the
    /// starting states, as [`Snapshot::load`] reads an earlier step), without the memories.
    pub fn states_of_step(&self, step: u64) -> Result<Vec<AgentState>> {
        let file = crate::sim::RunDir::new(&self.dir).state_path(&self.world.state_file_of(step));
        states_from_file(&file, &self.start)
    }

    /// "Tuesday Jan 03 2023 06:30 am".
    pub fn time_label(&self) -> String {
        format!(
            "{} {}",
            clock::format_date(self.date),
            clock::format_time(self.minutes)
        )
    }
}

/// A run's state file, read; errors name the file.
pub fn read_state_file(path: &Path) -> Result<StateFile> {
    let text = std::fs::read_to_string(path).map_err(|source| EvalError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    serde_json::from_str(&text).map_err(|e| run_err(path, format!("not a state file: {e}")))
}

/// The agents' states from a state file, on top of their starting states (plans and other
/// fields the state file does not hold keep their starting values).
fn states_from_file(path: &Path, start: &[AgentState]) -> Result<Vec<AgentState>> {
    let file = read_state_file(path)?;
    start
        .iter()
        .map(|s| {
            let snap = file
                .agents
                .iter()
                .find(|a| a.name == s.name)
                .ok_or_else(|| run_err(path, format!("no agent {:?}", s.name)))?;
            let mut state = s.clone();
            state.activity = snap.activity.clone();
            state.activity_emoji = snap.activity_emoji.clone();
            state.suggested_change = snap.most_recent_suggested_change.clone();
            state.location = snap.location.clone();
            state.emotion = snap
                .emotion
                .parse()
                .map_err(|e: String| run_err(path, format!("{}: {e}", s.name)))?;
            state.needs = snap.basic_needs;
            let mut rels: Vec<_> = state
                .relationships
                .iter()
                .filter_map(|(n, _)| Some((n.clone(), snap.social_relationships.get(n)?.clone())))
                .collect();
            for (n, r) in &snap.social_relationships {
                if !rels.iter().any(|(m, _)| m == n) {
                    rels.push((n.clone(), r.clone()));
                }
            }
            state.relationships = rels;
            Ok(state)
        })
        .collect()
}

/// The stream as it was at `now`: the memories created up to then (a prefix, since memories
/// are stored in time order), last accesses after `now` moved back to `now`.
pub fn memories_until(
    stream: &MemoryStream,
    now: GameTime,
) -> crate::memory::error::Result<MemoryStream> {
    let mut out = MemoryStream::new(stream.dim(), stream.config().clone())?;
    let kept: Vec<_> = stream
        .nodes()
        .iter()
        .take_while(|n| n.created <= now)
        .collect();
    out.add_batch(
        kept.iter()
            .map(|n| {
                NewMemory::new(
                    n.kind,
                    n.text.clone(),
                    n.created,
                    n.importance,
                    n.embedding.clone(),
                )
                .with_evidence(n.evidence.clone())
            })
            .collect(),
    )?;
    for n in kept {
        out.touch([n.id], n.last_accessed.min(now));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{HashingEmbedder, Importance, MemoryKind, StreamConfig};

    #[test]
    fn a_stream_cut_at_a_time_keeps_the_earlier_memories() {
        let mut e = HashingEmbedder::new(16);
        let mut s = MemoryStream::new(16, StreamConfig::default()).unwrap();
        for (t, text) in [(0, "a b"), (15, "c d"), (15, "e f"), (30, "g h")] {
            s.add_texts(
                &mut e,
                MemoryKind::Observation,
                &[text],
                &[Importance::new(3)],
                GameTime(t),
            )
            .unwrap();
        }
        s.touch([0], GameTime(30));
        let cut = memories_until(&s, GameTime(15)).unwrap();
        assert_eq!(cut.len(), 3);
        assert_eq!(cut.nodes()[2].text, "e f");
        // Accessed at 30, after the cut: moved back to the cut's time.
        assert_eq!(cut.nodes()[0].last_accessed, GameTime(15));
        assert_eq!(cut.nodes()[1].last_accessed, GameTime(15));
        assert_eq!(cut.nodes()[1].embedding, s.nodes()[1].embedding);
        assert!(memories_until(&s, GameTime(0)).unwrap().len() == 1);
    }
}

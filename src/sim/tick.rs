//! The simulation state and one tick: every agent's step (batched), observations of others
//! at the same place, conversations (batched), importance of the new memories (batched),
//! reflections (batched), then the state file. Results are applied in agent order.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::state_file::{place_key, AgentSnapshot, StateFile, TurnSnapshot, WorldNode};
use crate::agent::converse::{converse, speaker_system, Conversation, NoTalk, Speaker};
use crate::agent::plan::{is_sleep, talk_wait, Whereabouts};
use crate::agent::reflect::{reflect, sim_reflection_config, Reflection};
use crate::agent::step::{step, PendingMemory, StepOutcome};
use crate::agent::{context, AgentState, Fallback, Mind};
use crate::llm::Event;
use crate::memory::importance::{importance_from_result, importance_or, importance_requests};
use crate::memory::{GameTime, Importance, MemoryKind, MemoryStream, NewMemory};
use crate::world::{clock, World};

use super::events::LogEvent;
pub use super::log::Counters;
use super::log::Logger;
pub use super::runtime::{Runtime, RuntimeParts};
use crate::llm::batch::{drive, key_of, CallRecord, Port, Task};

/// How many of an agent's latest memories a new observation is compared with.
const RECENT_DEDUP: usize = 12;

/// Everything that changes during a run (the world itself does not).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SimState {
    /// The next step to run (0-based over all days).
    pub step: u64,
    /// The step the run ends before.
    pub end_step: u64,
    pub seed: u64,
    pub agents: Vec<AgentState>,
    /// When each pair of agents (by index) last began a conversation (game minutes).
    pub last_talk: Vec<(usize, usize, u64)>,
    pub counters: Counters,
}

/// What a tick produced.
pub struct TickOutput {
    pub events: Vec<LogEvent>,
    pub state: StateFile,
    pub file_name: String,
}

struct TaskResult<T> {
    value: T,
    fallbacks: Vec<Fallback>,
    calls: Vec<CallRecord>,
}

/// Agent tasks of one phase: each with its port, giving a value and its fallbacks.
type Tasks<'a, T> = Vec<(Port, Task<'a, (T, Vec<Fallback>)>)>;

/// Runs tasks through the batching driver and collects each task's fallbacks and calls.
fn run_tasks<'a, T: 'a>(
    rt: &Runtime<'a>,
    tasks: Tasks<'a, T>,
    on_event: &mut dyn FnMut(&Event),
) -> Vec<Option<TaskResult<T>>> {
    let ports: Vec<Port> = tasks.iter().map(|(p, _)| p.clone()).collect();
    let outs = drive(rt.engine, tasks, |e| on_event(e));
    outs.into_iter()
        .zip(ports)
        .map(|(o, p)| {
            o.map(|(value, fallbacks)| TaskResult {
                value,
                fallbacks,
                calls: p.take_calls(),
            })
        })
        .collect()
}

/// The simulation: a world, its agents' states and memories.
pub struct Sim {
    pub world: World,
    pub state: SimState,
    pub memories: Vec<MemoryStream>,
    /// Per need ([`crate::world::Need::ALL`] order), the P(yes) above which the model's
    /// answer counts as satisfying it (the run's `yes_threshold`).
    pub yes_threshold: [f32; 5],
    /// The P(yes) above which an agent changes its plan (the run's
    /// `yes_threshold.change_plan`).
    pub change_threshold: f32,
}

impl Sim {
    /// Stores every agent's description sentences as seed memories (importance rated by
    /// the model in one batch) and returns the events of doing so.
    pub fn seed_memories(
        &mut self,
        rt: &Runtime<'_>,
        on_event: &mut dyn FnMut(&Event),
    ) -> Vec<LogEvent> {
        let mut log = Logger {
            step: self.state.step,
            date: self.world.start_date.format("%Y-%m-%d").to_string(),
            time: clock::format_time(self.world.day_start),
            events: Vec::new(),
            counters: std::mem::take(&mut self.state.counters),
        };
        let pending = self
            .world
            .agents
            .iter()
            .map(|a| {
                a.description
                    .iter()
                    .map(|d| PendingMemory {
                        kind: MemoryKind::SeedStatement,
                        text: d.clone(),
                    })
                    .collect()
            })
            .collect();
        let now = GameTime(u64::from(self.world.day_start));
        self.store_memories(rt, &mut log, pending, now, on_event);
        self.state.counters = log.counters;
        log.events
    }

    /// Runs the step `self.state.step` and advances to the next.
    pub fn tick(&mut self, rt: &Runtime<'_>, on_event: &mut dyn FnMut(&Event)) -> TickOutput {
        let s = self.state.step;
        let (day, minutes) = self.world.step_time(s);
        let date = self.world.start_date + chrono::Days::new(day);
        let now = GameTime(day * 1440 + u64::from(minutes));
        let first_of_day = minutes == self.world.day_start;
        let date_s = date.format("%Y-%m-%d").to_string();
        let time_s = clock::format_time(minutes);
        let mut log = Logger {
            step: s,
            date: date_s,
            time: time_s.clone(),
            events: Vec::new(),
            counters: std::mem::take(&mut self.state.counters),
        };
        let seed = self.state.seed;
        let n = self.state.agents.len();

        // 1. Every agent's step, each seeing where the others were when it began.
        let world = &self.world;
        let letters = world.letters();
        let whereabouts: Vec<Whereabouts> = self.state.agents.iter().map(Whereabouts::of).collect();
        let whereabouts = &whereabouts;
        let mut tasks: Tasks<'_, StepOutcome> = Vec::new();
        for (i, (agent, memory)) in self
            .state
            .agents
            .iter_mut()
            .zip(self.memories.iter_mut())
            .enumerate()
        {
            let port = Port::new(key_of(&[seed, s, i as u64, 1]));
            let spec = &world.agents[i];
            let p = port.clone();
            let rng_seed = key_of(&[seed, s, i as u64, 2]);
            let embedder = rt.embedder;
            let (engine, table) = (rt.engine, rt.table);
            let yes_threshold = self.yes_threshold;
            let change_threshold = self.change_threshold;
            tasks.push((
                port,
                Box::pin(async move {
                    let mind = Mind::new(&spec.name, p, engine, table, date, minutes)
                        .with_letters(letters)
                        .with_embedder(embedder)
                        .with_yes_threshold(yes_threshold)
                        .with_change_threshold(change_threshold);
                    let out = step(
                        &mind,
                        world,
                        spec,
                        agent,
                        whereabouts,
                        memory,
                        embedder,
                        now,
                        first_of_day,
                        rng_seed,
                    )
                    .await;
                    (out, mind.take_fallbacks())
                }),
            ));
        }
        let results = run_tasks(rt, tasks, on_event);
        let mut pending: Vec<Vec<PendingMemory>> = vec![Vec::new(); n];
        for (i, r) in results.into_iter().enumerate() {
            let name = self.state.agents[i].name.clone();
            log.counters.agent_steps += 1;
            let Some(r) = r else { continue };
            log.calls(&name, &r.calls);
            log.fallbacks(&r.fallbacks);
            for e in &r.value.events {
                log.push(Some(&name), e);
            }
            pending[i].extend(r.value.memories);
        }

        // 2. Observations of others at the same place.
        for (i, mine) in pending.iter_mut().enumerate() {
            for j in 0..n {
                let (a, b) = (&self.state.agents[i], &self.state.agents[j]);
                if i != j && a.location == b.location {
                    mine.push(PendingMemory {
                        kind: MemoryKind::Observation,
                        text: format!("{} saw {}: {}", a.name, b.name, b.activity),
                    });
                }
            }
        }

        // 3. Conversations.
        let conversations = self.conversations(rt, &mut log, now, date, minutes, on_event);
        let mut by_place: BTreeMap<String, Vec<Vec<TurnSnapshot>>> = BTreeMap::new();
        for (i, j, c) in conversations {
            let (ni, nj) = (
                self.state.agents[i].name.clone(),
                self.state.agents[j].name.clone(),
            );
            let text = crate::agent::converse::transcript(&c.turns);
            for (k, (me, other)) in [(i, &nj), (j, &ni)].into_iter().enumerate() {
                let delta = crate::agent::converse::closeness_delta(c.enjoyed[k]);
                let closeness = self.state.agents[me].change_closeness(other, delta);
                if let Some(e) = c.emotions[k] {
                    let a = &mut self.state.agents[me];
                    if e != a.emotion {
                        log.push(
                            Some(&a.name.clone()),
                            &serde_json::json!({"type": "emotion", "from": a.emotion, "to": e}),
                        );
                        a.emotion = e;
                    }
                }
                pending[me].push(PendingMemory {
                    kind: MemoryKind::Dialogue,
                    text: format!("Conversation with {other}:\n{text}"),
                });
                log.push(
                    Some(&self.state.agents[me].name.clone()),
                    &serde_json::json!({"type": "closeness", "other": other,
                        "enjoyed": c.enjoyed[k], "closeness": closeness}),
                );
            }
            let place = place_key(&self.state.agents[i].location);
            log.push(
                None,
                &serde_json::json!({"type": "conversation", "place": place,
                    "participants": [ni, nj], "topic": c.topic, "turns": c.turns,
                    "ended": c.ended}),
            );
            let last_turn = |name: &str| c.turns.iter().rposition(|t| t.name == name);
            let (li, lj) = (last_turn(&ni), last_turn(&nj));
            let mut turns: Vec<TurnSnapshot> = c
                .turns
                .iter()
                .enumerate()
                .map(|(t, turn)| {
                    let reaction = if Some(t) == li {
                        Some(c.reaction(0))
                    } else if Some(t) == lj {
                        Some(c.reaction(1))
                    } else {
                        None
                    };
                    TurnSnapshot {
                        name: turn.name.clone(),
                        text: Some(turn.text.clone()),
                        reaction,
                    }
                })
                .collect();
            // A participant who never spoke still appears, silent, with their judgement.
            for (k, (name, last)) in [(&ni, li), (&nj, lj)].into_iter().enumerate() {
                if last.is_none() {
                    turns.push(TurnSnapshot {
                        name: name.clone(),
                        text: None,
                        reaction: Some(c.reaction(k)),
                    });
                }
            }
            by_place.entry(place).or_default().push(turns);
        }

        // 4. Importance of the new memories, then storage.
        self.store_memories(rt, &mut log, pending, now, on_event);

        // 5. Reflections.
        self.reflections(rt, &mut log, now, date, minutes, on_event);

        self.state.counters = log.counters;
        let events = log.events;
        self.state.step += 1;
        TickOutput {
            events,
            state: StateFile {
                date: clock::format_date(date),
                time: time_s,
                agents: self.state.agents.iter().map(AgentSnapshot::of).collect(),
                conversations: by_place,
                world: Some(WorldNode::of(
                    &self.world.locations,
                    &self
                        .state
                        .agents
                        .iter()
                        .map(|a| (a.name.as_str(), a.location.as_slice()))
                        .collect::<Vec<_>>(),
                )),
            },
            file_name: clock::state_file_name(date, minutes),
        }
    }

    /// Pairs at the same place talk (each agent in at most one conversation per step, pairs
    /// not within their wait, [`talk_wait`]), all conversations batched together.
    fn conversations(
        &mut self,
        rt: &Runtime<'_>,
        log: &mut Logger,
        now: GameTime,
        date: chrono::NaiveDate,
        minutes: u32,
        on_event: &mut dyn FnMut(&Event),
    ) -> Vec<(usize, usize, Conversation)> {
        let n = self.state.agents.len();
        let cooldown = u64::from(self.world.conversation_cooldown_minutes);
        let mut busy = vec![false; n];
        let mut pairs = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                // An agent asleep neither starts a conversation nor is woken for one.
                let asleep = |k: usize| is_sleep(&self.state.agents[k].activity);
                if busy[i]
                    || busy[j]
                    || asleep(i)
                    || asleep(j)
                    || self.state.agents[i].location != self.state.agents[j].location
                {
                    continue;
                }
                let (a, b) = (&self.state.agents[i], &self.state.agents[j]);
                let wait = talk_wait(a, b, cooldown, self.world.step_minutes);
                let talked =
                    |&(x, y, t): &(usize, usize, u64)| (x, y) == (i, j) && now.0 < t + wait;
                if self.state.last_talk.iter().any(talked) {
                    continue;
                }
                busy[i] = true;
                busy[j] = true;
                pairs.push((i, j));
            }
        }
        if pairs.is_empty() {
            return Vec::new();
        }
        // Each speaker's context, with memories about the other.
        let mut systems = BTreeMap::new();
        for &(i, j) in &pairs {
            for (me, other) in [(i, j), (j, i)] {
                let sys = speaker_system(
                    &self.world.agents[me],
                    &self.state.agents[me],
                    &self.state.agents[other],
                    &mut self.memories[me],
                    &mut **rt.embedder.borrow_mut(),
                    now,
                    date,
                    minutes,
                );
                systems.insert(me, sys);
            }
        }
        let seed = self.state.seed;
        let s = self.state.step;
        let agents = &self.state.agents;
        let letters = self.world.letters();
        let mut tasks: Tasks<'_, Result<Conversation, NoTalk>> = Vec::new();
        for &(i, j) in &pairs {
            let port = Port::new(key_of(&[seed, s, i as u64, j as u64, 3]));
            let p = port.clone();
            let (sys_a, mems_a) = systems.get(&i).cloned().unwrap_or_default();
            let (sys_b, mems_b) = systems.get(&j).cloned().unwrap_or_default();
            let a = Speaker {
                state: &agents[i],
                system: sys_a,
                memories: mems_a,
            };
            let b = Speaker {
                state: &agents[j],
                system: sys_b,
                memories: mems_b,
            };
            let name = format!("{} & {}", agents[i].name, agents[j].name);
            let (engine, table) = (rt.engine, rt.table);
            tasks.push((
                port,
                Box::pin(async move {
                    let mind =
                        Mind::new(&name, p, engine, table, date, minutes).with_letters(letters);
                    let c = converse(&mind, &a, &b).await;
                    (c, mind.take_fallbacks())
                }),
            ));
        }
        let results = run_tasks(rt, tasks, on_event);
        let mut out = Vec::new();
        for (&(i, j), r) in pairs.iter().zip(results) {
            let Some(r) = r else { continue };
            let name = self.state.agents[i].name.clone();
            log.calls(&name, &r.calls);
            log.fallbacks(&r.fallbacks);
            // A talk begun that came to nothing starts the cooldown too: on SmolLM2 Eddy Lin,
            // whose opening lines were out of his voice, began again at every step from 6:15
            // to 7 pm (session 40).
            if !matches!(r.value, Err(NoTalk::NobodyStarts)) {
                self.state.last_talk.retain(|&(a, b, _)| (a, b) != (i, j));
                self.state.last_talk.push((i, j, now.0));
            }
            if let Ok(c) = r.value {
                log.counters.conversations += 1;
                out.push((i, j, c));
            }
        }
        out
    }

    /// Rates the importance of every new memory (one batch), embeds and stores them.
    fn store_memories(
        &mut self,
        rt: &Runtime<'_>,
        log: &mut Logger,
        pending: Vec<Vec<PendingMemory>>,
        now: GameTime,
        on_event: &mut dyn FnMut(&Event),
    ) {
        let seed = self.state.seed;
        let s = self.state.step;
        // An observation or plan the agent already has among its latest memories (the same
        // activity seen again) is not stored twice.
        let pending: Vec<Vec<PendingMemory>> = pending
            .into_iter()
            .zip(&self.memories)
            .map(|(mems, stream)| {
                let mut kept: Vec<PendingMemory> = Vec::new();
                for m in mems {
                    let repeat = matches!(m.kind, MemoryKind::Observation | MemoryKind::Plan)
                        && (stream.latest(RECENT_DEDUP).iter().any(|n| n.text == m.text)
                            || kept.iter().any(|k| k.text == m.text));
                    if !repeat {
                        kept.push(m);
                    }
                }
                kept
            })
            .collect();
        let mut tasks: Tasks<'_, Vec<Importance>> = Vec::new();
        for (i, mems) in pending.iter().enumerate() {
            let port = Port::new(key_of(&[seed, s, i as u64, 4]));
            let p = port.clone();
            let texts: Vec<String> = mems.iter().map(|m| context::memory_line(&m.text)).collect();
            tasks.push((
                port,
                Box::pin(async move {
                    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
                    let reqs = importance_requests(&refs)
                        .into_iter()
                        .map(|r| ("importance".to_string(), r))
                        .collect();
                    let out = p
                        .run(reqs)
                        .await
                        .into_iter()
                        .map(|r| importance_or(importance_from_result(r), Importance::from(5)))
                        .collect();
                    (out, Vec::new())
                }),
            ));
        }
        let results = run_tasks(rt, tasks, on_event);
        for (i, (mems, r)) in pending.into_iter().zip(results).enumerate() {
            let name = self.state.agents[i].name.clone();
            let importances = match r {
                Some(r) => {
                    log.calls(&name, &r.calls);
                    r.value
                }
                None => Vec::new(),
            };
            if mems.is_empty() {
                continue;
            }
            let texts: Vec<&str> = mems.iter().map(|m| m.text.as_str()).collect();
            let vectors = {
                let mut emb = rt.embedder.borrow_mut();
                crate::memory::embedder::embed_checked(&mut **emb, &texts)
            };
            let vectors = match vectors {
                Ok(v) => v,
                Err(e) => {
                    log.fallbacks(&[Fallback {
                        agent: name.clone(),
                        purpose: "embedding".into(),
                        reason: e.to_string(),
                        output: String::new(),
                        used: "memories not stored".into(),
                    }]);
                    continue;
                }
            };
            let mut new = Vec::new();
            for (k, (m, v)) in mems.into_iter().zip(vectors).enumerate() {
                let imp = importances.get(k).copied().unwrap_or_default();
                log.push(
                    Some(&name),
                    &serde_json::json!({"type": "memory", "kind": m.kind.as_str(),
                        "text": m.text, "importance": imp.get()}),
                );
                new.push(NewMemory::new(m.kind, m.text, now, imp, v));
            }
            if let Err(e) = self.memories[i].add_batch(new) {
                log.fallbacks(&[Fallback {
                    agent: name,
                    purpose: "memory".into(),
                    reason: e.to_string(),
                    output: String::new(),
                    used: "memories not stored".into(),
                }]);
            }
        }
    }

    /// Reflects for every agent whose importance count reached the threshold (batched).
    fn reflections(
        &mut self,
        rt: &Runtime<'_>,
        log: &mut Logger,
        now: GameTime,
        date: chrono::NaiveDate,
        minutes: u32,
        on_event: &mut dyn FnMut(&Event),
    ) {
        let seed = self.state.seed;
        let s = self.state.step;
        let config = sim_reflection_config();
        let config = &config;
        let letters = self.world.letters();
        let mut who = Vec::new();
        let mut tasks: Tasks<'_, Reflection> = Vec::new();
        for (i, (agent, memory)) in self
            .state
            .agents
            .iter()
            .zip(self.memories.iter_mut())
            .enumerate()
        {
            if !memory.should_reflect() {
                continue;
            }
            who.push(i);
            let port = Port::new(key_of(&[seed, s, i as u64, 5]));
            let p = port.clone();
            let (engine, table, embedder) = (rt.engine, rt.table, rt.embedder);
            let name = agent.name.clone();
            tasks.push((
                port,
                Box::pin(async move {
                    let mind =
                        Mind::new(&name, p, engine, table, date, minutes).with_letters(letters);
                    let r = reflect(&mind, memory, embedder, &name, now, config).await;
                    (r, mind.take_fallbacks())
                }),
            ));
        }
        if tasks.is_empty() {
            return;
        }
        let results = run_tasks(rt, tasks, on_event);
        for (i, r) in who.into_iter().zip(results) {
            let Some(r) = r else { continue };
            let name = self.state.agents[i].name.clone();
            log.calls(&name, &r.calls);
            log.fallbacks(&r.fallbacks);
            log.counters.reflections += 1;
            let mut body = serde_json::to_value(&r.value).unwrap_or_default();
            if let Some(m) = body.as_object_mut() {
                m.insert("type".into(), "reflection".into());
            }
            log.push(Some(&name), &body);
        }
    }
}

//! `eval converse`: a run's conversations talked again, by the current prompts and any
//! model, next to what the run said, with the quality report's figures for both.
//!
//! Each `conversation` event of a run is a meeting: two agents at one place at one step.
//! The replay puts both agents back as they were when they met: their states from the
//! step's state file (the activity, place and needs of the step), their relationships from
//! the step before (the conversation's own ±1 closeness undone), and their memory streams
//! cut to the memories made before the step (a tick adds the step's memories after its
//! conversations). The emotion is the step's as written, after the conversation may have
//! changed it: an approximation. The conversation then runs as in a run
//! ([`converse`]), every meeting batched together, each seeded as the run seeded it.
//!
//! Both the run's and the replay's utterances are scored with the quality report's checks:
//! about something in the situation, in the speaker's voice, not a repeat.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use super::error::Result;
use super::run_dir::run_err;
use super::snapshot::{read_state_file, Snapshot};
use crate::agent::converse::{converse, speaker_system, Conversation, Ending, Speaker, Turn};
use crate::agent::plan::is_sleep;
use crate::agent::utterance::{about_situation, out_of_voice, repeats_earlier};
use crate::agent::{AgentState, Fallback, Mind};
use crate::llm::batch::{drive, key_of, Port, Task};
use crate::memory::GameTime;
use crate::report::quality::{talk_situation, Share};
use crate::sim::events::read_events;
use crate::sim::{RunDir, Runtime};

/// One replayed conversation as a batching task: its result and fallbacks.
type TalkTask<'a> = Task<'a, (Option<Conversation>, Vec<Fallback>)>;

/// Two agents who talked at one step of a run, and what they said.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Meeting {
    /// The step (0-based).
    pub step: u64,
    /// "07:00 am".
    pub time: String,
    pub place: String,
    /// The two, the pair's first (who starts on a tie) first.
    pub names: [String; 2],
    /// What the run said.
    pub turns: Vec<Turn>,
    /// How the run's talk ended (`None` in runs made before it was written).
    pub ended: Option<Ending>,
}

/// A meeting talked again.
#[derive(Clone, Debug, Serialize)]
pub struct Replayed {
    pub meeting: Meeting,
    /// The replay's topic (`None`: no conversation or no topic).
    pub topic: Option<String>,
    /// The replay's turns (empty when neither wanted to talk this time).
    pub turns: Vec<Turn>,
    /// How the replay's talk ended (`None`: no talk).
    pub ended: Option<Ending>,
    /// Each participant's activity at the step.
    pub activities: [String; 2],
    pub fallbacks: Vec<Fallback>,
}

/// The quality report's checks over a set of conversations.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TalkScore {
    /// Conversations with at least one turn.
    pub conversations: usize,
    pub utterances: usize,
    /// Mean turns of the conversations that happened.
    pub mean_turns: f64,
    /// Utterances about something in the situation.
    pub about_something: Share,
    /// Utterances in the speaker's own voice.
    pub own_voice: Share,
    /// Utterances that do not repeat an earlier line.
    pub fresh: Share,
}

/// Everything `eval converse` reports.
#[derive(Clone, Debug, Serialize)]
pub struct ConverseReport {
    pub model: String,
    pub replayed: Vec<Replayed>,
    /// The run's own conversations, scored.
    pub run: TalkScore,
    /// The replay's, scored.
    pub replay: TalkScore,
    pub fallbacks: usize,
    /// How the replay's conversations ended, with how many ended so.
    pub endings: BTreeMap<Ending, usize>,
    /// How the run's ended, once per try as the run's figures are (runs made before the
    /// ending was written count none).
    pub run_endings: BTreeMap<Ending, usize>,
}

/// The run's conversations (optionally only those of `step`), in log order; with `met`,
/// also every other step at which two agents were at one place without talking (as
/// meetings with no turns: the run's cool-down or their answers kept them apart), after
/// the conversations.
pub fn meetings(dir: &Path, step: Option<u64>, met: bool) -> Result<Vec<Meeting>> {
    let (config, world) = super::run_dir::read_config(dir)?;
    let mut out = talks(dir, step)?;
    if !met {
        return Ok(out);
    }
    let run = RunDir::new(dir);
    let steps = step.map_or(0..config.steps, |s| s..s + 1);
    for s in steps {
        let path = run.state_path(&world.state_file_of(s));
        if !path.is_file() {
            continue;
        }
        let file = read_state_file(&path)?;
        for (i, a) in file.agents.iter().enumerate() {
            for b in &file.agents[i + 1..] {
                let talked = out
                    .iter()
                    .any(|m| m.step == s && m.names.contains(&a.name) && m.names.contains(&b.name));
                // As in a run: an agent asleep does not talk.
                let awake = !is_sleep(&a.activity) && !is_sleep(&b.activity);
                if a.location == b.location && awake && !talked {
                    out.push(Meeting {
                        step: s,
                        time: file.time.clone(),
                        place: crate::sim::state_file::place_key(&a.location),
                        names: [a.name.clone(), b.name.clone()],
                        turns: Vec::new(),
                        ended: None,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// The run's conversations (optionally only those of `step`), in log order.
fn talks(dir: &Path, step: Option<u64>) -> Result<Vec<Meeting>> {
    let path = RunDir::new(dir).events_path();
    let events = read_events(&path).map_err(|e| run_err(&path, e.to_string()))?;
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e.kind() == "conversation") {
        if step.is_some_and(|s| s != e.step) {
            continue;
        }
        let bad = |why: &str| run_err(&path, format!("step {}: a conversation {why}", e.step));
        let names: Vec<String> = e
            .body
            .get("participants")
            .and_then(|p| serde_json::from_value(p.clone()).ok())
            .ok_or_else(|| bad("without two participants"))?;
        let [a, b] = <[String; 2]>::try_from(names).map_err(|_| bad("without two participants"))?;
        let turns: Vec<Turn> = e
            .body
            .get("turns")
            .and_then(|t| serde_json::from_value(t.clone()).ok())
            .ok_or_else(|| bad("without turns"))?;
        let place = e
            .body
            .get("place")
            .and_then(|p| p.as_str())
            .unwrap_or_default()
            .to_string();
        // Optional, as the place and topic are: runs before it have none.
        let ended = e
            .body
            .get("ended")
            .and_then(|v| serde_json::from_value(v.clone()).ok());
        out.push(Meeting {
            step: e.step,
            time: e.time.clone(),
            place,
            names: [a, b],
            turns,
            ended,
        });
    }
    Ok(out)
}

/// Talks every meeting again on `rt`'s model, batched, `repeat` times (the first seeded as
/// the run seeded it, the others with other seeds: sampled talk varies, and a comparison
/// of prompts on few meetings needs several tries of each); `model` names it in the report.
pub fn replay(
    dir: &Path,
    meetings: &[Meeting],
    repeat: usize,
    rt: &Runtime<'_>,
    model: &str,
) -> Result<ConverseReport> {
    // Each meeting's speakers as they were: the step's snapshot and the relationships of
    // the step before (each read once per step).
    let mut snaps: BTreeMap<u64, (Snapshot, Vec<AgentState>)> = BTreeMap::new();
    for m in meetings {
        if let std::collections::btree_map::Entry::Vacant(e) = snaps.entry(m.step) {
            let snap = Snapshot::load(dir, Some(m.step))?;
            let before = match m.step.checked_sub(1) {
                Some(s) => snap.states_of_step(s)?,
                None => snap.start.clone(),
            };
            e.insert((snap, before));
        }
    }
    let mut once = Vec::new();
    for m in meetings {
        let (snap, before) = &snaps[&m.step];
        let idx = [
            snap.agent_index(&m.names[0])?,
            snap.agent_index(&m.names[1])?,
        ];
        let mut states = [snap.agents[idx[0]].clone(), snap.agents[idx[1]].clone()];
        for (k, s) in states.iter_mut().enumerate() {
            s.relationships = before[idx[k]].relationships.clone();
        }
        let cut = GameTime(snap.now.0.saturating_sub(1));
        let mut systems = Vec::new();
        for k in 0..2 {
            let mut stream = super::snapshot::memories_until(&snap.memories[idx[k]], cut)
                .map_err(|e| run_err(dir, e.to_string()))?;
            systems.push(speaker_system(
                &snap.world.agents[idx[k]],
                &states[k],
                &states[1 - k],
                &mut stream,
                &mut **rt.embedder.borrow_mut(),
                snap.now,
                snap.date,
                snap.minutes,
            ));
        }
        let key = vec![snap.config.seed, m.step, idx[0] as u64, idx[1] as u64, 3];
        once.push((snap, states, systems, key));
    }
    // Every try of every meeting: the first keyed as the run keyed it, the others with the
    // try's number added.
    let mut prepared = Vec::new();
    let mut tried = Vec::new();
    for t in 0..repeat.max(1) {
        for (m, (snap, states, systems, key)) in meetings.iter().zip(&once) {
            let mut key = key.clone();
            if t > 0 {
                key.push(t as u64);
            }
            prepared.push((*snap, states.clone(), systems.clone(), key_of(&key)));
            tried.push(m.clone());
        }
    }
    let meetings = &tried[..];
    // All conversations at once, batched as a tick batches them.
    let mut tasks: Vec<(Port, TalkTask<'_>)> = Vec::new();
    for (snap, states, systems, key) in &prepared {
        let port = Port::new(*key);
        let p = port.clone();
        let name = format!("{} & {}", states[0].name, states[1].name);
        let letters = snap.world.letters();
        let (date, minutes) = (snap.date, snap.minutes);
        let (engine, table) = (rt.engine, rt.table);
        tasks.push((
            port,
            Box::pin(async move {
                let a = Speaker {
                    state: &states[0],
                    system: systems[0].0.clone(),
                    memories: systems[0].1.clone(),
                };
                let b = Speaker {
                    state: &states[1],
                    system: systems[1].0.clone(),
                    memories: systems[1].1.clone(),
                };
                let mind = Mind::new(&name, p, engine, table, date, minutes).with_letters(letters);
                let c = converse(&mind, &a, &b).await.ok();
                (c, mind.take_fallbacks())
            }),
        ));
    }
    let outs = drive(rt.engine, tasks, |_| {});
    let mut replayed = Vec::new();
    for ((m, (_, states, _, _)), out) in meetings.iter().zip(&prepared).zip(outs) {
        let (conv, fallbacks) = out.unwrap_or((None, Vec::new()));
        replayed.push(Replayed {
            meeting: m.clone(),
            topic: conv.as_ref().and_then(|c| c.topic.clone()),
            ended: conv.as_ref().map(|c| c.ended),
            turns: conv.map(|c| c.turns).unwrap_or_default(),
            activities: [states[0].activity.clone(), states[1].activity.clone()],
            fallbacks,
        });
    }
    let world = prepared.first().map(|p| &p.0.world);
    let score_of = |pick: &dyn Fn(&Replayed) -> &[Turn]| match world {
        Some(w) => score(w, &replayed, pick),
        None => TalkScore::default(),
    };
    let run = score_of(&|r: &Replayed| &r.meeting.turns);
    let replay = score_of(&|r: &Replayed| &r.turns);
    let fallbacks = replayed.iter().map(|r| r.fallbacks.len()).sum();
    let count = |ended: &dyn Fn(&Replayed) -> Option<Ending>| {
        let mut n = BTreeMap::new();
        for e in replayed.iter().filter_map(ended) {
            *n.entry(e).or_insert(0) += 1;
        }
        n
    };
    let endings = count(&|r| r.ended);
    let run_endings = count(&|r| r.meeting.ended);
    Ok(ConverseReport {
        endings,
        run_endings,
        model: model.to_string(),
        run,
        replay,
        fallbacks,
        replayed,
    })
}

/// The quality checks over the turns `pick` takes from each replayed meeting.
fn score(
    world: &crate::world::World,
    replayed: &[Replayed],
    pick: &dyn Fn(&Replayed) -> &[Turn],
) -> TalkScore {
    let names: Vec<&str> = world.agents.iter().map(|a| a.name.as_str()).collect();
    let mut s = TalkScore::default();
    let mut turns_total = 0;
    for r in replayed {
        let turns = pick(r);
        if turns.is_empty() {
            continue;
        }
        s.conversations += 1;
        turns_total += turns.len();
        let people = [
            (r.meeting.names[0].as_str(), r.activities[0].as_str()),
            (r.meeting.names[1].as_str(), r.activities[1].as_str()),
        ];
        let situation = talk_situation(world, &people);
        for (k, t) in turns.iter().enumerate() {
            let example = || format!("{} {}: {}", r.meeting.time, t.name, t.text);
            let said: Vec<&str> = turns[..k].iter().map(|t| t.text.as_str()).collect();
            s.about_something
                .add(about_situation(&t.text, &situation, &names), example);
            s.own_voice.add(!out_of_voice(&t.text, &t.name), example);
            s.fresh.add(!repeats_earlier(&t.text, &said), example);
        }
    }
    s.utterances = turns_total;
    s.mean_turns = if s.conversations == 0 {
        0.0
    } else {
        turns_total as f64 / s.conversations as f64
    };
    s.about_something = s.about_something.done();
    s.own_voice = s.own_voice.done();
    s.fresh = s.fresh.done();
    s
}

//! One agent's 15-minute step, written as plain sequential code: plan the day (at its first
//! step), decompose the hour, reconsider the plan when feelings call for it, do the
//! activity, judge it. Each `await` hands requests to the tick driver, which batches them
//! with every other agent's.

use std::cell::RefCell;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use crate::memory::{GameTime, MemoryKind, MemoryStream, TextEmbedder};
use crate::world::{clock, display_path, AgentSpec, Emotion, Need, Needs, World};

use super::act::{act, update_needs, Evaluation};
use super::context::{placeless_prompt, recall, system_prompt, CONTEXT_MEMORIES};
use super::mind::Mind;
use super::plan::{self, apply_change, day_plan, hourly_plan, quarter_plan, Whereabouts};
use super::state::{line_at, AgentState, Judged, PlanLine};

/// Something that happened to an agent, for the event log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    DayPlan {
        lines: Vec<String>,
    },
    HourlyPlan {
        lines: Vec<String>,
    },
    QuarterPlan {
        lines: Vec<String>,
    },
    PlanChange {
        suggestion: String,
        lines: Vec<String>,
    },
    Activity {
        activity: String,
        emoji: String,
    },
    Location {
        from: String,
        to: String,
    },
    Needs {
        before: Needs,
        after: Needs,
        satisfied: Vec<Need>,
    },
    Emotion {
        from: Emotion,
        to: Emotion,
    },
}

/// A memory to store once its importance is rated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PendingMemory {
    pub kind: MemoryKind,
    pub text: String,
}

/// What a step produced besides the new state.
#[derive(Debug, Default)]
pub struct StepOutcome {
    pub events: Vec<AgentEvent>,
    pub memories: Vec<PendingMemory>,
}

fn lines(plan: &[PlanLine]) -> Vec<String> {
    plan.iter().map(ToString::to_string).collect()
}

/// Runs one step for an agent at `mind`'s time. `first_of_day` starts a new day plan;
/// `rng_seed` drives the needs' decay; `others` are where the other agents are.
#[allow(clippy::too_many_arguments)]
pub async fn step(
    mind: &Mind<'_>,
    world: &World,
    spec: &AgentSpec,
    state: &mut AgentState,
    others: &[Whereabouts],
    memory: &mut MemoryStream,
    embedder: &RefCell<Box<dyn TextEmbedder>>,
    now: GameTime,
    first_of_day: bool,
    rng_seed: u64,
) -> StepOutcome {
    let mut out = StepOutcome::default();
    let minutes = mind.minutes;
    if first_of_day {
        state.start_day();
    }
    let query = line_at(&state.hourly_plan, minutes)
        .map(|l| l.activity.clone())
        .unwrap_or_else(|| format!("{}'s plans for today", spec.name));
    let memories = recall(
        memory,
        &mut **embedder.borrow_mut(),
        &query,
        now,
        CONTEXT_MEMORIES,
    );
    // The day plan and plan changes see the memories. The 15-minute plan and the judgements
    // of the activity see only the base context (a prefix of the same system message, so
    // the engine shares it): with memories, the 15-minute plans restarted the day from the
    // remembered day plan ("03:00 pm: wake up") and repeated remembered activities.
    let system = system_prompt(spec, state, mind.date, minutes, &memories);
    let base = system_prompt(spec, state, mind.date, minutes, &[]);

    if state.day_plan.is_empty() {
        state.day_plan = day_plan(mind, world, spec, &system).await;
        out.events.push(AgentEvent::DayPlan {
            lines: lines(&state.day_plan),
        });
        out.memories.push(PendingMemory {
            kind: MemoryKind::Plan,
            text: format!(
                "{}'s plan for {}: {}",
                spec.name,
                clock::format_date(mind.date),
                state
                    .day_plan
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
        });
        state.hourly_plan = hourly_plan(mind, world, spec, &system, &state.day_plan).await;
        out.events.push(AgentEvent::HourlyPlan {
            lines: lines(&state.hourly_plan),
        });
    }
    // A new 15-minute plan when the one at hand does not cover the hour (a remedy carried
    // past the last hour begins it).
    if !plan::covers_hour(world, &state.quarter_plan, minutes) {
        state.quarter_plan = quarter_plan(mind, world, state, &base).await;
        state.part_of = line_at(&state.hourly_plan, minutes).map(|l| l.activity.clone());
        out.events.push(AgentEvent::QuarterPlan {
            lines: lines(&state.quarter_plan),
        });
    }
    if state.needs_attention(now.0) {
        state.reconsidered_for = Some(state.feeling());
        state.reconsidered_at = Some(now.0);
        if let Some(change) =
            plan::maybe_change_plan(mind, world, spec, state, others, &system).await
        {
            apply_change(state, &change, minutes);
            out.events.push(AgentEvent::PlanChange {
                suggestion: change.suggestion.clone(),
                lines: lines(&[change.lines.as_slice(), &change.carry].concat()),
            });
            out.memories.push(PendingMemory {
                kind: MemoryKind::Plan,
                text: format!("{} changed the plan: {}", spec.name, change.suggestion),
            });
        }
    }
    state.activity = line_at(&state.quarter_plan, minutes)
        .map_or("go about the day".to_string(), |l| l.activity.clone());

    // An activity continued from the last step keeps its judgement (place, needs it
    // satisfies, emoji); a new one is judged by the model.
    let eval = match state
        .judged
        .as_ref()
        .filter(|j| j.activity == state.activity)
    {
        Some(j) => Evaluation {
            emotion: None,
            satisfied: j.satisfied.clone(),
            emoji: j.emoji.clone(),
            location: state.location.clone(),
        },
        None => {
            let placeless = placeless_prompt(spec, state, mind.date, minutes);
            let eval = act(mind, world, state, &base, &placeless).await;
            state.judged = Some(Judged {
                activity: state.activity.clone(),
                satisfied: eval.satisfied.clone(),
                emoji: eval.emoji.clone(),
            });
            eval
        }
    };
    state.activity_emoji = eval.emoji.clone();
    out.events.push(AgentEvent::Activity {
        activity: state.activity.clone(),
        emoji: eval.emoji.clone(),
    });
    if eval.location != state.location {
        out.events.push(AgentEvent::Location {
            from: display_path(&state.location),
            to: display_path(&eval.location),
        });
        state.location = eval.location.clone();
    }
    if let Some(e) = eval.emotion {
        if e != state.emotion {
            out.events.push(AgentEvent::Emotion {
                from: state.emotion,
                to: e,
            });
            state.emotion = e;
        }
    }
    let before = state.needs;
    let mut rng = ChaCha8Rng::seed_from_u64(rng_seed);
    update_needs(
        state,
        &eval.satisfied,
        &world.decay,
        world.step_minutes,
        &mut rng,
    );
    out.events.push(AgentEvent::Needs {
        before,
        after: state.needs,
        satisfied: eval.satisfied,
    });
    out.memories.push(PendingMemory {
        kind: MemoryKind::Observation,
        text: format!(
            "{} at {}: {}",
            spec.name,
            state.location.last().map_or("", String::as_str),
            state.activity
        ),
    });
    out
}

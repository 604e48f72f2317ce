//! `humanoid eval converse`: a run's conversations talked again with the current prompts.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Args;
use humanoid::eval::converse::{meetings, replay, ConverseReport, TalkScore};
use humanoid::eval::Snapshot;
use humanoid::sim::RuntimeParts;

use super::interview::load_for_run;
use super::ModelArgs;

/// Arguments of `eval converse`.
#[derive(Args, Debug)]
pub struct ConverseArgs {
    /// The run directory.
    pub dir: PathBuf,
    /// Only the conversations of this step (0-based).
    #[arg(long, value_name = "STEP")]
    pub step: Option<u64>,
    /// Also every step at which two agents were at one place and did not talk (whether
    /// they would talk now, and what they would say).
    #[arg(long)]
    pub met: bool,
    /// Talk each conversation this many times (the first seeded as the run was, the others
    /// differently), for figures steadier than one sampled try.
    #[arg(long, default_value_t = 1)]
    pub repeat: usize,
    /// Print one JSON object instead of the transcripts and a table.
    #[arg(long)]
    pub json: bool,
    /// The chat model defaults to the one the run used (config.json).
    #[command(flatten)]
    pub model: ModelArgs,
}

pub fn converse(a: ConverseArgs) -> Result<()> {
    let found = meetings(&a.dir, a.step, a.met)?;
    if found.is_empty() {
        match a.step {
            Some(s) => bail!("{}: no conversation at step {s}", a.dir.display()),
            None => bail!("{}: the run has no conversation", a.dir.display()),
        }
    }
    let snapshot = Snapshot::load(&a.dir, None)?;
    let (model, engine, embedder) = load_for_run(&snapshot.config, a.model)?;
    if a.repeat == 0 {
        bail!("--repeat 0: talk each conversation at least once");
    }
    let tries = if a.repeat > 1 {
        format!(" ({} times each)", a.repeat)
    } else {
        String::new()
    };
    eprintln!(
        "talking {} conversations of {} again{tries} on {model}",
        found.len(),
        a.dir.display()
    );
    let parts = RuntimeParts::with_backend(engine, Box::new(embedder));
    let report = replay(&a.dir, &found, a.repeat, &parts.runtime(), &model)?;
    if a.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", text(&report));
    }
    Ok(())
}

/// The transcripts, then the figures of the run and the replay side by side.
fn text(r: &ConverseReport) -> String {
    let mut s = String::new();
    for x in &r.replayed {
        let m = &x.meeting;
        s.push_str(&format!(
            "step {} {} at {}: {} & {}\n",
            m.step, m.time, m.place, m.names[0], m.names[1]
        ));
        s.push_str("  run:\n");
        for t in &m.turns {
            s.push_str(&format!("    {}: {}\n", t.name, t.text));
        }
        if let Some(e) = m.ended {
            s.push_str(&format!("    (ended: {})\n", e.as_str()));
        }
        match &x.topic {
            Some(t) => s.push_str(&format!("  now (topic: {t}):\n")),
            None => s.push_str("  now:\n"),
        }
        if x.turns.is_empty() {
            s.push_str("    (no conversation)\n");
        }
        for t in &x.turns {
            s.push_str(&format!("    {}: {}\n", t.name, t.text));
        }
        if let Some(e) = x.ended {
            s.push_str(&format!("    (ended: {})\n", e.as_str()));
        }
        for f in &x.fallbacks {
            s.push_str(&format!(
                "    fallback ({}): {} {:?}\n",
                f.purpose, f.reason, f.output
            ));
        }
    }
    let row = |label: &str, f: &dyn Fn(&TalkScore) -> String| {
        format!("{label:<32} {:>14} {:>14}\n", f(&r.run), f(&r.replay))
    };
    let share =
        |x: &humanoid::report::quality::Share| format!("{:.3} ({}/{})", x.share, x.good, x.total);
    s.push_str(&format!("\n{:<32} {:>14} {:>14}\n", "", "run", "now"));
    s.push_str(&row("conversations", &|t| t.conversations.to_string()));
    s.push_str(&row("mean turns", &|t| format!("{:.1}", t.mean_turns)));
    s.push_str(&row("utterances about something", &|t| {
        share(&t.about_something)
    }));
    s.push_str(&row("utterances in the speaker's voice", &|t| {
        share(&t.own_voice)
    }));
    s.push_str(&row("utterances that say something new", &|t| {
        share(&t.fresh)
    }));
    let endings = |m: &std::collections::BTreeMap<humanoid::agent::converse::Ending, usize>| {
        let v: Vec<String> = m
            .iter()
            .map(|(e, n)| format!("{} {n}", e.as_str()))
            .collect();
        v.join(", ")
    };
    if !r.run_endings.is_empty() {
        s.push_str(&format!(
            "talks in the run ended by: {}\n",
            endings(&r.run_endings)
        ));
    }
    s.push_str(&format!("talks now ended by: {}\n", endings(&r.endings)));
    s.push_str(&format!(
        "fallbacks now: {} (on {})\n",
        r.fallbacks, r.model
    ));
    s
}

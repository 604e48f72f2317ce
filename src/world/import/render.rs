//! Writing the converted world as a readable TOML world file, with a header comment.

use std::fmt::Write;

use chrono::NaiveDate;

use super::agent::RelationshipDraft;
use crate::world::write::{list, q};
use crate::world::{Emotion, Need, Needs};

/// The converted world, ready to write.
pub(super) struct Draft {
    /// Lines of the header comment (without `# `).
    pub header: Vec<String>,
    pub name: String,
    pub description: String,
    pub start_date: NaiveDate,
    pub days: u32,
    /// Slash-separated paths of the places with nothing inside them.
    pub locations: Vec<String>,
    /// `[needs.decay]`, per 5 hours (empty: our default).
    pub decay: Vec<(Need, f64)>,
    pub events: Vec<(NaiveDate, String)>,
    pub agents: Vec<AgentOut>,
}

/// One `[[agents]]` table.
pub(super) struct AgentOut {
    pub name: String,
    pub age: u32,
    pub traits: Vec<String>,
    pub description: Vec<String>,
    pub example_day_plan: Vec<String>,
    pub location: String,
    pub emotion: Option<Emotion>,
    /// Written only when not our default.
    pub needs: Option<Needs>,
    pub relationships: Vec<RelationshipDraft>,
}

/// One line of a comment: no line breaks or other control characters.
fn comment(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// The world file's text.
pub(super) fn render(d: &Draft) -> String {
    let mut o = String::new();
    for line in &d.header {
        let line = comment(line);
        if line.is_empty() {
            o.push_str("#\n");
        } else {
            let _ = writeln!(o, "# {line}");
        }
    }
    o.push('\n');
    let _ = writeln!(o, "name = {}", q(&d.name));
    let _ = writeln!(o, "description = {}", q(&d.description));
    let _ = writeln!(o, "start_date = \"{}\"", d.start_date.format("%Y-%m-%d"));
    let _ = writeln!(o, "days = {}", d.days);
    o.push('\n');
    list(&mut o, "locations", &d.locations);
    if !d.decay.is_empty() {
        o.push_str("\n[needs.decay]\nper = \"5 hours\"\n");
        for (need, rate) in &d.decay {
            let _ = writeln!(o, "{} = {rate:?}", need.as_str());
        }
    }
    for (date, text) in &d.events {
        let _ = writeln!(o, "\n[[events]]");
        let _ = writeln!(o, "date = \"{}\"", date.format("%Y-%m-%d"));
        let _ = writeln!(o, "text = {}", q(text));
    }
    for a in &d.agents {
        let _ = writeln!(o, "\n[[agents]]");
        let _ = writeln!(o, "name = {}", q(&a.name));
        let _ = writeln!(o, "age = {}", a.age);
        let traits: Vec<String> = a.traits.iter().map(|t| q(t)).collect();
        let _ = writeln!(o, "traits = [{}]", traits.join(", "));
        list(&mut o, "description", &a.description);
        list(&mut o, "example_day_plan", &a.example_day_plan);
        let _ = writeln!(o, "location = {}", q(&a.location));
        if let Some(e) = a.emotion {
            let _ = writeln!(o, "emotion = \"{}\"", e.as_str());
        }
        if let Some(n) = &a.needs {
            let _ = writeln!(
                o,
                "needs = {{ fullness = {}, social = {}, fun = {}, health = {}, energy = {} }}",
                n.fullness, n.social, n.fun, n.health, n.energy
            );
        }
        for r in &a.relationships {
            let _ = writeln!(o, "\n[agents.relationships.{}]", q(&r.other));
            let _ = writeln!(o, "relationship = {}", q(&r.relationship));
            let _ = writeln!(o, "closeness = {}", r.closeness);
        }
    }
    o
}

//! Writing a world back as TOML (used for synthetic worlds, whose `source` must re-load to the
//! same world).

use super::clock::format_hhmm;
use super::location::display_path;
use super::World;
use std::fmt::Write;

/// A TOML string literal.
pub(super) fn q(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

/// `key = [ ... ]`, one string per line.
pub(super) fn list(out: &mut String, key: &str, items: &[String]) {
    let _ = writeln!(out, "{key} = [");
    for it in items {
        let _ = writeln!(out, "  {},", q(it));
    }
    out.push_str("]\n");
}

impl World {
    /// The world as a TOML world file that loads back to an equal world (apart from `source`).
    pub fn to_toml(&self) -> String {
        let mut o = String::new();
        let _ = writeln!(o, "name = {}", q(&self.name));
        let _ = writeln!(o, "description = {}", q(&self.description));
        let _ = writeln!(o, "start_date = \"{}\"", self.start_date.format("%Y-%m-%d"));
        let _ = writeln!(o, "days = {}", self.days);
        let _ = writeln!(o, "day_start = \"{}\"", format_hhmm(self.day_start));
        let _ = writeln!(o, "day_end = \"{}\"", format_hhmm(self.day_end));
        let _ = writeln!(o, "step_minutes = {}", self.step_minutes);
        let _ = writeln!(
            o,
            "conversation_cooldown_minutes = {}",
            self.conversation_cooldown_minutes
        );
        let leaves: Vec<String> = self
            .locations
            .leaves()
            .iter()
            .map(|l| display_path(l))
            .collect();
        list(&mut o, "locations", &leaves);
        if self.decay != crate::world::needs::Decay::default() {
            let _ = writeln!(o, "\n[needs.decay]\nper = \"hour\"");
            for (n, r) in crate::world::Need::ALL.iter().zip(self.decay.per_hour) {
                let _ = writeln!(o, "{} = {r:?}", n.as_str());
            }
        }
        for ev in &self.events {
            let _ = writeln!(o, "\n[[events]]");
            let _ = writeln!(o, "date = \"{}\"", ev.date.format("%Y-%m-%d"));
            let _ = writeln!(o, "text = {}", q(&ev.text));
        }
        for a in &self.agents {
            let _ = writeln!(o, "\n[[agents]]");
            let _ = writeln!(o, "name = {}", q(&a.name));
            let _ = writeln!(o, "age = {}", a.age);
            let traits: Vec<String> = a.traits.iter().map(|t| q(t)).collect();
            let _ = writeln!(o, "traits = [{}]", traits.join(", "));
            list(&mut o, "description", &a.description);
            list(&mut o, "example_day_plan", &a.example_day_plan);
            let _ = writeln!(o, "location = {}", q(&display_path(&a.location)));
            if let Some(h) = &a.home {
                let _ = writeln!(o, "home = {}", q(&display_path(h)));
            }
            let _ = writeln!(o, "emotion = \"{}\"", a.emotion.as_str());
            let n = &a.needs;
            let _ = writeln!(
                o,
                "needs = {{ fullness = {}, social = {}, fun = {}, health = {}, energy = {} }}",
                n.fullness, n.social, n.fun, n.health, n.energy
            );
            for (other, r) in &a.relationships {
                let _ = writeln!(o, "\n[agents.relationships.{}]", q(other));
                let _ = writeln!(o, "relationship = {}", q(&r.relationship));
                let _ = writeln!(o, "closeness = {}", r.closeness);
            }
        }
        o
    }
}

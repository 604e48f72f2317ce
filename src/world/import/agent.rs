//! The original's agent JSON (`specific_agents/*.json`): name, age, traits, description (a list,
//! or one string of `;`-separated sentences), example day plan (a list, or one string of lines),
//! social relationships with closeness, and an optional fixed emotion.

use serde_json::{Map, Value};

use super::error::Report;
use super::plan::{self, Line};
use super::source::{json_kind, Source};
use crate::world::locate::join;
use crate::world::{Emotion, CLOSENESS_DEFAULT, CLOSENESS_MAX};

/// An agent as read from its file, before the map and the other agents are known.
pub(super) struct AgentDraft {
    /// The file it came from.
    pub file: String,
    pub name: String,
    pub age: u32,
    pub traits: Vec<String>,
    pub description: Vec<String>,
    pub example_day_plan: Vec<String>,
    pub emotion: Option<Emotion>,
    pub relationships: Vec<RelationshipDraft>,
}

/// One entry of `social_relationships`.
pub(super) struct RelationshipDraft {
    pub other: String,
    pub relationship: String,
    pub closeness: u8,
}

/// Fields of the original's agent files that we read.
const KNOWN: [&str; 7] = [
    "name",
    "age",
    "traits",
    "description",
    "example_day_plan",
    "social_relationships",
    "emotion",
];

struct Fields<'a> {
    src: &'a Source,
    obj: &'a Map<String, Value>,
    r: &'a mut Report,
}

impl<'a> Fields<'a> {
    fn error(&mut self, keys: &[&str], field: &str, message: impl Into<String>) {
        let line = self.src.json_line(keys);
        self.r.error(&self.src.name, line, field, message);
    }

    fn warn(&mut self, field: &str, message: impl Into<String>) {
        self.r.warn(&self.src.name, field, message);
    }

    /// A required field, or a problem saying it is missing.
    fn required(&mut self, key: &str, example: &str) -> Option<&'a Value> {
        let obj: &'a Map<String, Value> = self.obj;
        let v = obj.get(key);
        if v.is_none() {
            self.r.error(
                &self.src.name,
                None,
                key,
                format!("missing: every agent needs one, e.g. \"{key}\": {example}"),
            );
        }
        v
    }

    /// A list of strings, or one string split at `sep` (with a warning); blank items are left
    /// out with a warning. `None` after recording a problem.
    fn strings(&mut self, key: &str, v: &Value, sep: char, what: &str) -> Option<Vec<String>> {
        let items: Vec<(String, String)> = match v {
            Value::String(s) => {
                let parts: Vec<(String, String)> = s
                    .split(sep)
                    .map(|p| (key.to_string(), p.trim().to_string()))
                    .filter(|(_, p)| !p.is_empty())
                    .collect();
                if parts.len() > 1 || sep == '\n' {
                    self.warn(
                        key,
                        format!(
                            "one string: split at {} into {} {what}{}",
                            if sep == '\n' {
                                "line breaks".to_string()
                            } else {
                                format!("{sep:?}")
                            },
                            parts.len(),
                            if parts.len() == 1 { "" } else { "s" }
                        ),
                    );
                }
                parts
            }
            Value::Array(a) => {
                let mut out = Vec::new();
                for (i, item) in a.iter().enumerate() {
                    let field = format!("{key}[{i}]");
                    match item {
                        Value::String(s) if s.trim().is_empty() => {
                            self.warn(&field, format!("an empty {what}: left out"));
                        }
                        Value::String(s) => out.push((field, s.trim().to_string())),
                        other => {
                            self.error(
                                &[key],
                                &field,
                                format!("expected a string, found {}", json_kind(other)),
                            );
                            return None;
                        }
                    }
                }
                out
            }
            other => {
                self.error(
                    &[key],
                    key,
                    format!(
                        "expected a list of strings (or one string), found {}",
                        json_kind(other)
                    ),
                );
                return None;
            }
        };
        if key == "example_day_plan" {
            let lines: Vec<Line> = items
                .into_iter()
                .enumerate()
                .map(|(i, (field, text))| Line {
                    field: if matches!(v, Value::String(_)) {
                        format!("{key} (line {})", i + 1)
                    } else {
                        field
                    },
                    text,
                })
                .collect();
            let out = plan::normalize(&lines, &self.src.name, self.r);
            if out.is_empty() {
                self.error(
                    &[key],
                    key,
                    "no line with a time of day: write lines like \"06:00 am: wake up\"",
                );
                return None;
            }
            return Some(out);
        }
        if items.is_empty() {
            self.error(&[key], key, format!("at least one {what} is needed"));
            return None;
        }
        Some(items.into_iter().map(|(_, s)| s).collect())
    }

    fn name(&mut self) -> Option<String> {
        match self.required("name", "\"John Lin\"")? {
            Value::String(s) if !s.trim().is_empty() => {
                if s.trim() != s {
                    self.warn("name", format!("spaces around {s:?} removed"));
                }
                Some(s.trim().to_string())
            }
            other => {
                let found = if other.is_string() {
                    "an empty string"
                } else {
                    json_kind(other)
                };
                self.error(
                    &["name"],
                    "name",
                    format!("expected the agent's name, found {found}"),
                );
                None
            }
        }
    }

    fn age(&mut self) -> Option<u32> {
        let v = self.required("age", "45")?.clone();
        let age = match &v {
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Some(i),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 1e9 => Some(f as i64),
                (None, Some(f)) => {
                    let r = f.round() as i64;
                    self.warn("age", format!("{f} rounded to {r}"));
                    Some(r)
                }
                _ => None,
            },
            Value::String(s) => match s.trim().parse::<i64>() {
                Ok(i) => {
                    self.warn("age", format!("the string {s:?} read as the number {i}"));
                    Some(i)
                }
                Err(_) => None,
            },
            _ => None,
        };
        match age {
            Some(a) if (1..=150).contains(&a) => Some(a as u32),
            Some(a) => {
                self.error(
                    &["age"],
                    "age",
                    format!("{a} is out of range: an age is 1–150"),
                );
                None
            }
            None => {
                self.error(
                    &["age"],
                    "age",
                    format!("expected a whole number of years, found {}", json_kind(&v)),
                );
                None
            }
        }
    }

    fn emotion(&mut self) -> Option<Option<Emotion>> {
        let Some(v) = self.obj.get("emotion") else {
            return Some(None);
        };
        match v {
            Value::Null => Some(None),
            Value::String(s) => match s.trim().to_lowercase().parse::<Emotion>() {
                Ok(e) => {
                    self.warn(
                        "emotion",
                        format!(
                            "the original keeps a given emotion for the whole run; here {e} is only the starting emotion (run with --condition emotion={e} to keep it)"
                        ),
                    );
                    Some(Some(e))
                }
                Err(msg) => {
                    self.error(&["emotion"], "emotion", msg);
                    None
                }
            },
            other => {
                self.error(
                    &["emotion"],
                    "emotion",
                    format!("expected an emotion's name, found {}", json_kind(other)),
                );
                None
            }
        }
    }

    fn relationships(&mut self, own: &str) -> Option<Vec<RelationshipDraft>> {
        let key = "social_relationships";
        let Some(v) = self.obj.get(key) else {
            return Some(Vec::new());
        };
        let map = match v {
            Value::Null => return Some(Vec::new()),
            Value::Object(m) => m,
            other => {
                self.error(
                    &[key],
                    key,
                    format!(
                        "expected an object of names to {{\"relationship\", \"closeness\"}}, found {}",
                        json_kind(other)
                    ),
                );
                return None;
            }
        };
        let mut out = Vec::new();
        let mut ok = true;
        for (other_name, rel) in map {
            let other = other_name.trim().to_string();
            let field = join(key, other_name);
            if other == own {
                self.warn(&field, "a relationship with oneself: left out");
                continue;
            }
            let Value::Object(rel) = rel else {
                self.error(
                    &[key, other_name],
                    &field,
                    format!(
                        "expected {{\"relationship\": \"friend\", \"closeness\": 5}}, found {}",
                        json_kind(rel)
                    ),
                );
                ok = false;
                continue;
            };
            let relationship = match rel.get("relationship") {
                Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
                None | Some(Value::Null) => {
                    self.warn(
                        &field,
                        "no relationship given: written as \"acquaintance\" (ours needs one; edit it)",
                    );
                    "acquaintance".to_string()
                }
                Some(Value::String(_)) => {
                    self.error(
                        &[key, other_name, "relationship"],
                        &format!("{field}.relationship"),
                        "empty: say what the other is to this agent, e.g. \"son\"",
                    );
                    ok = false;
                    continue;
                }
                Some(bad) => {
                    self.error(
                        &[key, other_name, "relationship"],
                        &format!("{field}.relationship"),
                        format!("expected a string, found {}", json_kind(bad)),
                    );
                    ok = false;
                    continue;
                }
            };
            let Some(closeness) = self.closeness(rel.get("closeness"), key, other_name, &field)
            else {
                ok = false;
                continue;
            };
            for extra in rel
                .keys()
                .filter(|k| *k != "relationship" && *k != "closeness")
            {
                self.warn(&field, format!("{extra:?} is not a field we read: ignored"));
            }
            out.push(RelationshipDraft {
                other,
                relationship,
                closeness,
            });
        }
        ok.then_some(out)
    }

    fn closeness(&mut self, v: Option<&Value>, key: &str, other: &str, field: &str) -> Option<u8> {
        let max = i64::from(CLOSENESS_MAX);
        let n = match v {
            None | Some(Value::Null) => {
                self.warn(
                    field,
                    format!("no closeness given: our default {CLOSENESS_DEFAULT} used"),
                );
                return Some(CLOSENESS_DEFAULT);
            }
            Some(Value::Number(n)) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i,
                (None, Some(f)) if f.is_finite() => {
                    let r = f.round().clamp(-1e6, 1e6) as i64;
                    if f.fract() != 0.0 {
                        self.warn(field, format!("closeness {f} rounded to {r}"));
                    }
                    r
                }
                _ => max,
            },
            Some(bad) => {
                self.error(
                    &[key, other, "closeness"],
                    &format!("{field}.closeness"),
                    format!("expected a number 0–{max}, found {}", json_kind(bad)),
                );
                return None;
            }
        };
        let clamped = n.clamp(0, max);
        if clamped != n {
            self.warn(field, format!("closeness {n} clamped to {clamped}"));
        }
        Some(clamped as u8)
    }
}

/// Reads one agent file; `None` (with problems recorded) if it cannot be used.
pub(super) fn read(src: &Source, r: &mut Report) -> Option<AgentDraft> {
    let root = src.json(r)?;
    let Value::Object(obj) = &root else {
        r.error(
            &src.name,
            Some(1),
            "",
            format!(
                "expected an object with name, age, traits, description and example_day_plan, found {}",
                json_kind(&root)
            ),
        );
        return None;
    };
    let mut f = Fields { src, obj, r };
    for k in obj.keys().filter(|k| !KNOWN.contains(&k.as_str())) {
        let why = if k == "basic_needs" {
            "the original replaces an agent file's basic_needs with its default_agent_config.json (pass that with --agent-config): ignored"
        } else {
            "not a field of the original's agent files that we have: ignored"
        };
        f.warn(k, why);
    }
    let name = f.name();
    let age = f.age();
    let traits = f
        .required("traits", "[\"friendly\", \"kind\"]")
        .cloned()
        .and_then(|v| f.strings("traits", &v, ',', "trait"));
    let description = f
        .required("description", "[\"John Lin is a pharmacist.\"]")
        .cloned()
        .and_then(|v| f.strings("description", &v, ';', "sentence"));
    let example_day_plan = f
        .required("example_day_plan", "[\"06:00 am: wake up\"]")
        .cloned()
        .and_then(|v| f.strings("example_day_plan", &v, '\n', "line"));
    let emotion = f.emotion();
    let relationships = f.relationships(name.as_deref().unwrap_or(""));
    Some(AgentDraft {
        file: src.name.clone(),
        name: name?,
        age: age?,
        traits: traits?,
        description: description?,
        example_day_plan: example_day_plan?,
        emotion: emotion?,
        relationships: relationships?,
    })
}

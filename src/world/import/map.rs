//! The original's map YAML: `World`, a list of places (a name, or `name:` followed by the list
//! of the places inside it), and `Agents`, a list of `agent name: place name` giving where each
//! agent starts (by the name of a place with nothing inside it).

use serde_yaml_ng::Value;

use super::error::Report;
use super::source::{yaml_kind, Source};
use crate::world::locate::join;

/// The places and starting places of a map file.
pub(super) struct Map {
    /// Every place, outside in, in file order.
    places: Vec<Place>,
    /// Where each agent starts, in file order.
    pub starts: Vec<Start>,
}

struct Place {
    /// Our path of the place (names as written to our file).
    path: Vec<String>,
    /// Its name as the map writes it.
    original: String,
    /// Whether it has nothing inside it.
    leaf: bool,
}

/// One `agent name: place name` of `Agents`.
pub(super) struct Start {
    /// The agent's name.
    pub agent: String,
    /// The place's name as written.
    pub place: String,
}

impl Map {
    /// The paths of the places with nothing inside them, slash-separated, in file order.
    pub fn leaves(&self) -> Vec<String> {
        self.places
            .iter()
            .filter(|p| p.leaf)
            .map(|p| p.path.join("/"))
            .collect()
    }

    /// Our path of the place an agent starts in, by the place's name; a place with others
    /// inside it resolves to its first place with nothing inside, with a warning. The error
    /// says what the names are.
    pub fn resolve(&self, name: &str) -> Result<(Vec<String>, Option<String>), String> {
        let name = name.trim();
        let found: Vec<&Place> = self
            .places
            .iter()
            .filter(|p| p.original == name || p.path.last().is_some_and(|l| l == name))
            .collect();
        match found.as_slice() {
            [] => {
                let mut names: Vec<String> = self
                    .places
                    .iter()
                    .filter(|p| p.leaf)
                    .take(12)
                    .map(|p| format!("{:?}", p.original))
                    .collect();
                let leaves = self.places.iter().filter(|p| p.leaf).count();
                if leaves > 12 {
                    names.push(format!("and {} more", leaves - 12));
                }
                Err(format!(
                    "unknown place {name:?}: not in World (places with nothing inside: {})",
                    names.join(", ")
                ))
            }
            [p] if p.leaf => Ok((p.path.clone(), None)),
            [p] => {
                let first = self
                    .places
                    .iter()
                    .find(|q| q.leaf && q.path.starts_with(&p.path))
                    .map(|q| q.path.clone())
                    .unwrap_or_else(|| p.path.clone());
                let warning = format!(
                    "{name:?} has places inside it, and agents start in a place with nothing inside: starting in {:?}",
                    first.join("/")
                );
                Ok((first, Some(warning)))
            }
            many => Err(format!(
                "place name {name:?} is used for {} places ({}): the original needs every name to be unique; rename one",
                many.len(),
                many.iter()
                    .map(|p| format!("{:?}", p.path.join("/")))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// Reads a map file; `None` (with problems recorded) if it has no usable `World`.
pub(super) fn read(src: &Source, r: &mut Report) -> Option<Map> {
    let root = src.yaml(r)?;
    let Value::Mapping(top) = &root else {
        r.error(
            &src.name,
            None,
            "",
            format!(
                "expected a mapping with World (the places) and Agents (where they start), found {}",
                yaml_kind(&root)
            ),
        );
        return None;
    };
    let mut map = Map {
        places: Vec::new(),
        starts: Vec::new(),
    };
    let mut world = None;
    for (k, v) in top {
        match k.as_str() {
            Some("World") => world = Some(v),
            Some("Agents") => read_starts(&mut map, v, src, r),
            _ => r.warn(
                &src.name,
                &key_text(k),
                "not a field of the original's maps (World, Agents): ignored",
            ),
        }
    }
    let Some(world) = world else {
        r.error(
            &src.name,
            None,
            "World",
            "missing: the list of places, e.g. \"World:\\n- House:\\n  - Kitchen\\n- Park\"",
        );
        return None;
    };
    let mut walk = Walk {
        map: &mut map,
        src,
        r,
    };
    walk.list(world, &[], &[], "World");
    if map.places.iter().all(|p| !p.leaf) {
        r.error(
            &src.name,
            src.find_line(&["World".to_string()]),
            "World",
            "no places: list at least one, e.g. \"- Park\"",
        );
        return None;
    }
    Some(map)
}

/// A key for a field path or message.
fn key_text(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        other => serde_yaml_ng::to_string(other)
            .unwrap_or_default()
            .trim()
            .to_string(),
    }
}

struct Walk<'a> {
    map: &'a mut Map,
    src: &'a Source,
    r: &'a mut Report,
}

impl Walk<'_> {
    /// The places inside `parent` (our path; `originals` as written, for finding lines).
    fn list(&mut self, v: &Value, parent: &[String], originals: &[String], field: &str) {
        match v {
            Value::Sequence(items) => {
                for item in items {
                    match item {
                        Value::String(s) => self.place(s, None, parent, originals, field),
                        Value::Mapping(m) => {
                            for (k, inside) in m {
                                self.branch(k, inside, parent, originals, field);
                            }
                        }
                        other => self.bad(
                            originals,
                            field,
                            format!("expected a place's name, or \"name:\" and the places inside it, found {}", yaml_kind(other)),
                        ),
                    }
                }
            }
            Value::Mapping(m) => {
                for (k, inside) in m {
                    self.branch(k, inside, parent, originals, field);
                }
            }
            Value::Null => {}
            other => self.bad(
                originals,
                field,
                format!("expected a list of places, found {}", yaml_kind(other)),
            ),
        }
    }

    /// `name:` and the places inside it.
    fn branch(
        &mut self,
        k: &Value,
        inside: &Value,
        parent: &[String],
        originals: &[String],
        field: &str,
    ) {
        let Value::String(name) = k else {
            self.bad(
                originals,
                field,
                format!("expected a place's name, found {}", yaml_kind(k)),
            );
            return;
        };
        self.place(name, Some(inside), parent, originals, field);
    }

    /// Adds a place (with the places `inside` it, if any).
    fn place(
        &mut self,
        raw: &str,
        inside: Option<&Value>,
        parent: &[String],
        originals: &[String],
        parent_field: &str,
    ) {
        let original = raw.trim().to_string();
        let field = join(parent_field, &original);
        let mut trail = originals.to_vec();
        trail.push(original.clone());
        if original.is_empty() {
            self.bad(originals, parent_field, "a place's name is empty");
            return;
        }
        let mut name = original.clone();
        if raw != original {
            self.r.warn(
                &self.src.name,
                &field,
                format!("spaces around the name {raw:?} removed"),
            );
        }
        if name.contains('/') {
            name = name.replace('/', "-");
            self.r.warn(
                &self.src.name,
                &field,
                format!("\"/\" separates places in our paths: {original:?} renamed {name:?}"),
            );
        }
        let mut path = parent.to_vec();
        path.push(name);
        if self.map.places.iter().any(|p| p.path == path) {
            self.bad(
                &trail,
                &field,
                format!(
                    "{original:?} is listed twice in {}: give the places inside one place different names",
                    if parent.is_empty() { "World".to_string() } else { format!("{:?}", parent.join("/")) }
                ),
            );
            return;
        }
        let leaf = match inside {
            None => true,
            Some(Value::Null) => {
                self.r.warn(
                    &self.src.name,
                    &field,
                    "nothing after the colon: taken as a place with nothing inside",
                );
                true
            }
            Some(Value::Sequence(s)) if s.is_empty() => true,
            Some(Value::Sequence(_) | Value::Mapping(_)) => false,
            Some(other) => {
                self.bad(
                    &trail,
                    &field,
                    format!(
                        "expected the list of the places inside {original:?}, found {}",
                        yaml_kind(other)
                    ),
                );
                return;
            }
        };
        self.map.places.push(Place {
            path: path.clone(),
            original,
            leaf,
        });
        if let (false, Some(inside)) = (leaf, inside) {
            self.list(inside, &path, &trail, &field);
        }
    }

    fn bad(&mut self, trail: &[String], field: &str, message: impl Into<String>) {
        let mut needles = vec!["World".to_string()];
        needles.extend(trail.iter().cloned());
        let line = self.src.find_line(&needles);
        self.r.error(&self.src.name, line, field, message);
    }
}

/// `Agents`: a list of `name: place` (or one mapping of them).
fn read_starts(map: &mut Map, v: &Value, src: &Source, r: &mut Report) {
    let entries: Vec<(&Value, &Value)> = match v {
        Value::Sequence(items) => {
            let mut out = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match item {
                    Value::Mapping(m) => out.extend(m.iter()),
                    other => r.error(
                        &src.name,
                        src.find_line(&["Agents".to_string()]),
                        &format!("Agents[{i}]"),
                        format!(
                            "expected \"agent name: place name\", found {}",
                            yaml_kind(other)
                        ),
                    ),
                }
            }
            out
        }
        Value::Mapping(m) => m.iter().collect(),
        Value::Null => Vec::new(),
        other => {
            r.error(
                &src.name,
                src.find_line(&["Agents".to_string()]),
                "Agents",
                format!(
                    "expected a list of \"agent name: place name\", found {}",
                    yaml_kind(other)
                ),
            );
            return;
        }
    };
    for (k, place) in entries {
        let agent = key_text(k).trim().to_string();
        let field = join("Agents", &agent);
        let line = src.find_line(&["Agents".to_string(), agent.clone()]);
        let Value::String(place) = place else {
            r.error(
                &src.name,
                line,
                &field,
                format!(
                    "expected the name of the place where {agent} starts, found {}",
                    yaml_kind(place)
                ),
            );
            continue;
        };
        if let Some(prev) = map.starts.iter_mut().find(|s| s.agent == agent) {
            r.warn(
                &src.name,
                &field,
                format!(
                    "listed twice: the later place {place:?} is used (as the original does), not {:?}",
                    prev.place
                ),
            );
            prev.place = place.clone();
            continue;
        }
        map.starts.push(Start {
            agent,
            place: place.clone(),
        });
    }
}

//! The annotation sheet: the items of a run (new activities and conversations) with the
//! run's own answers, written as CSV, and the instructions for annotators.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::error::{EvalError, Result};
use super::run_dir::{read_config, run_err};
use crate::sim::events::{read_events, LogEvent};
use crate::world::{display_path, Emotion, Need};

/// What a row is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemKind {
    Activity,
    Conversation,
}

impl ItemKind {
    /// The name in the `kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            ItemKind::Activity => "activity",
            ItemKind::Conversation => "conversation",
        }
    }
}

/// One judged dimension: a need (yes/no), the emotion, or whether a conversation brought
/// its participants closer (yes/no).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dimension {
    Need(Need),
    Emotion,
    Closer,
}

impl Dimension {
    /// Every dimension, in column order.
    pub const ALL: [Dimension; 7] = [
        Dimension::Need(Need::Fullness),
        Dimension::Need(Need::Social),
        Dimension::Need(Need::Fun),
        Dimension::Need(Need::Health),
        Dimension::Need(Need::Energy),
        Dimension::Emotion,
        Dimension::Closer,
    ];

    /// The column suffix: `fullness`, ..., `emotion`, `closer`.
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Need(n) => n.as_str(),
            Dimension::Emotion => "emotion",
            Dimension::Closer => "closer",
        }
    }

    /// Whether the answers are yes/no (else emotion names).
    pub fn binary(self) -> bool {
        !matches!(self, Dimension::Emotion)
    }

    /// Whether rows of `kind` carry this dimension.
    pub fn applies(self, kind: ItemKind) -> bool {
        match self {
            Dimension::Closer => kind == ItemKind::Conversation,
            _ => kind == ItemKind::Activity,
        }
    }

    /// Reads a label: `Ok(None)` when empty, the normalised value (lowercase `yes`/`no` or
    /// emotion name) when valid, else an error saying what is allowed.
    pub fn parse_label(self, cell: &str) -> std::result::Result<Option<String>, String> {
        let v = cell.trim().to_lowercase();
        if v.is_empty() {
            return Ok(None);
        }
        if self.binary() {
            match v.as_str() {
                "yes" | "no" => Ok(Some(v)),
                _ => Err(format!("{cell:?} is not yes, no or empty")),
            }
        } else {
            v.parse::<Emotion>()
                .map(|e| Some(e.as_str().to_string()))
                .map_err(|e| format!("{e}, or empty"))
        }
    }
}

/// The key columns, identical in the exported sheet and every annotator's copy.
pub const KEY_COLUMNS: [&str; 8] = [
    "id", "kind", "step", "date", "time", "agent", "place", "text",
];

/// The full header: key columns, `model_<dimension>`, `label_<dimension>`.
pub fn header() -> Vec<String> {
    let mut h: Vec<String> = KEY_COLUMNS.iter().map(|s| s.to_string()).collect();
    for prefix in ["model_", "label_"] {
        h.extend(
            Dimension::ALL
                .iter()
                .map(|d| format!("{prefix}{}", d.name())),
        );
    }
    h
}

/// One row of the sheet.
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub step: u64,
    pub date: String,
    pub time: String,
    /// The agent (activities) or the participants joined with "; " (conversations).
    pub agent: String,
    /// The agent's place after the step (activities) or the conversation's place.
    pub place: String,
    /// The activity, or the dialogue as "Name: text" lines.
    pub text: String,
    /// The run's answer per dimension ([`Dimension::ALL`] order); `None` where the
    /// dimension does not apply.
    pub model: Vec<Option<String>>,
}

impl Item {
    /// The key cells (`id` is the 1-based row number).
    pub fn keys(&self, id: usize) -> [String; 8] {
        [
            id.to_string(),
            self.kind.as_str().to_string(),
            self.step.to_string(),
            self.date.clone(),
            self.time.clone(),
            self.agent.clone(),
            self.place.clone(),
            self.text.clone(),
        ]
    }
}

fn yes_no(b: bool) -> Option<String> {
    Some(if b { "yes" } else { "no" }.to_string())
}

fn str_field<'a>(e: &'a LogEvent, key: &str) -> &'a str {
    e.body.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The items of the run in `dir`, in event order (see the module doc for the mapping).
pub fn items_from_run(dir: &Path) -> Result<Vec<Item>> {
    let (_, world) = read_config(dir)?;
    let events_path = crate::sim::RunDir::new(dir).events_path();
    let events = read_events(&events_path).map_err(|e| run_err(&events_path, e.to_string()))?;

    let mut emotion: BTreeMap<String, String> = BTreeMap::new();
    let mut place: BTreeMap<String, String> = BTreeMap::new();
    for a in &world.agents {
        emotion.insert(a.name.clone(), a.emotion.as_str().to_string());
        place.insert(a.name.clone(), display_path(&a.location));
    }
    let judged: HashSet<(u64, String)> = events
        .iter()
        .filter(|e| e.kind() == "model_call" && str_field(e, "purpose") == "need_fullness")
        .filter_map(|e| Some((e.step, e.agent.clone()?)))
        .collect();

    let mut items = Vec::new();
    let mut last_activity: BTreeMap<String, String> = BTreeMap::new();
    let mut pending: BTreeMap<String, usize> = BTreeMap::new();
    let mut enjoyed: Vec<(String, bool)> = Vec::new();
    for e in &events {
        let agent = e.agent.clone().unwrap_or_default();
        match e.kind() {
            "activity" => {
                let activity = str_field(e, "activity").to_string();
                let new = judged.contains(&(e.step, agent.clone()))
                    || last_activity.get(&agent) != Some(&activity);
                last_activity.insert(agent.clone(), activity.clone());
                if new {
                    pending.insert(agent.clone(), items.len());
                    items.push(Item {
                        kind: ItemKind::Activity,
                        step: e.step,
                        date: e.date.clone(),
                        time: e.time.clone(),
                        agent,
                        place: String::new(),
                        text: activity,
                        model: vec![None; Dimension::ALL.len()],
                    });
                }
            }
            "location" => {
                place.insert(agent, str_field(e, "to").to_string());
            }
            "emotion" => {
                emotion.insert(agent, str_field(e, "to").to_string());
            }
            "needs" => {
                let Some(i) = pending.remove(&agent) else {
                    continue;
                };
                let satisfied: Vec<&str> = e
                    .body
                    .get("satisfied")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let item = &mut items[i];
                item.place = place.get(&agent).cloned().unwrap_or_default();
                for (k, d) in Dimension::ALL.iter().enumerate() {
                    item.model[k] = match d {
                        Dimension::Need(n) => yes_no(satisfied.contains(&n.as_str())),
                        Dimension::Emotion => emotion.get(&agent).cloned(),
                        Dimension::Closer => None,
                    };
                }
            }
            "closeness" => {
                let b = e.body.get("enjoyed").and_then(Value::as_bool);
                enjoyed.push((agent, b.unwrap_or(false)));
            }
            "conversation" => {
                let participants: Vec<String> = e
                    .body
                    .get("participants")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default();
                let turns: Vec<String> = e
                    .body
                    .get("turns")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .map(|t| {
                                let f = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or("");
                                format!("{}: {}", f("name"), f("text"))
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let mine: Vec<bool> = enjoyed
                    .iter()
                    .filter(|(a, _)| participants.contains(a))
                    .map(|(_, b)| *b)
                    .collect();
                enjoyed.clear();
                let mut model = vec![None; Dimension::ALL.len()];
                model[Dimension::ALL.len() - 1] =
                    yes_no(!mine.is_empty() && mine.iter().all(|b| *b));
                items.push(Item {
                    kind: ItemKind::Conversation,
                    step: e.step,
                    date: e.date.clone(),
                    time: e.time.clone(),
                    agent: participants.join("; "),
                    place: str_field(e, "place").to_string(),
                    text: turns.join("\n"),
                    model,
                });
            }
            _ => {}
        }
    }
    Ok(items)
}

/// The instructions for annotators, worded as the model's own questions
/// (`src/agent/act.rs`, `src/agent/converse.rs`).
pub fn instructions() -> String {
    let emotions: Vec<&str> = Emotion::ALL.iter().map(|e| e.as_str()).collect();
    let mut s = String::from(
        "Annotation instructions (humanoid eval)\n\
         \n\
         Each row of the sheet is one item of a simulated day: a new activity of an agent\n\
         (kind = activity) or a conversation (kind = conversation). Read the row's agent,\n\
         place and text, then fill in the label_ columns of that row with your own judgement.\n\
         Do not look at or copy the model_ columns, and do not change any other column.\n\
         Leave a cell empty if you cannot decide. Leave the label_ columns that do not apply\n\
         to the row's kind empty.\n\
         \n\
         Activity rows (\"AGENT is doing: TEXT.\"), answer yes or no:\n",
    );
    for need in Need::ALL {
        s.push_str(&format!(
            "  label_{}: {}\n",
            need.as_str(),
            crate::agent::act::need_question(need, "AGENT")
        ));
    }
    s.push_str(&format!(
        "  label_emotion: {} Choose one of: {}.\n\
         \n\
         Conversation rows (\"Conversation between A and B: TEXT\"), answer yes or no:\n\
         \x20 label_closer: Did this conversation bring A and B closer, that is, did both of\n\
         \x20   them enjoy this conversation?\n",
        crate::agent::act::emotion_question("AGENT"),
        emotions.join(", ")
    ));
    s
}

/// Where the instructions of `sheet` go: `NAME.instructions.txt` next to `NAME.csv`.
pub fn instructions_path(sheet: &Path) -> PathBuf {
    let stem = sheet
        .file_stem()
        .map_or_else(|| "sheet".into(), |s| s.to_string_lossy().into_owned());
    sheet.with_file_name(format!("{stem}.instructions.txt"))
}

/// Writes the sheet of `items` to `out` and the instructions next to it; returns the
/// instructions' path.
pub fn write_sheet(items: &[Item], out: &Path) -> Result<PathBuf> {
    let csv_err = EvalError::csv(out);
    let mut w = csv::Writer::from_path(out).map_err(csv_err)?;
    w.write_record(header()).map_err(csv_err)?;
    for (i, item) in items.iter().enumerate() {
        let mut row: Vec<String> = item.keys(i + 1).to_vec();
        row.extend(item.model.iter().map(|m| m.clone().unwrap_or_default()));
        row.extend(Dimension::ALL.iter().map(|_| String::new()));
        w.write_record(&row).map_err(csv_err)?;
    }
    w.flush().map_err(|source| EvalError::Io {
        path: out.to_path_buf(),
        source,
    })?;
    let path = instructions_path(out);
    std::fs::write(&path, instructions()).map_err(|source| EvalError::Io {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

/// Exports the run in `dir` as a sheet at `out`; returns the items and the instructions'
/// path.
pub fn export(dir: &Path, out: &Path) -> Result<(Vec<Item>, PathBuf)> {
    let items = items_from_run(dir)?;
    let path = write_sheet(&items, out)?;
    Ok((items, path))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::sim::run::ModelInfo;
    use crate::sim::run::RunConfig;

    /// A run directory with the Lin family's world and the given event lines.
    pub(crate) fn fixture_run(dir: &Path, events: &[serde_json::Value]) {
        let config = RunConfig {
            version: "0.1.0".into(),
            world_file: "worlds/lin-family.toml".into(),
            world_source: include_str!("../../worlds/lin-family.toml").into(),
            model: ModelInfo {
                spec: "x".into(),
                path: "x".into(),
                sha256: "x".into(),
            },
            embed_model: "x".into(),
            seed: 0,
            device: "cpu".into(),
            weights: "quantized".into(),
            threads: 1,
            max_num_seqs: 1,
            max_batched_tokens: 1,
            context: 1,
            days: 1,
            steps: 3,
            conditions: vec![],
            injections: Vec::new(),
            yes_threshold: Default::default(),
            backend: None,
        };
        std::fs::write(
            dir.join("config.json"),
            serde_json::to_string(&config).unwrap(),
        )
        .unwrap();
        let text: String = events.iter().map(|e| format!("{e}\n")).collect();
        std::fs::write(dir.join("events.jsonl"), text).unwrap();
    }

    pub(crate) fn fixture_events() -> Vec<serde_json::Value> {
        use serde_json::json;
        let ev = |step: u64, agent: Option<&str>, mut body: serde_json::Value| {
            body["step"] = json!(step);
            body["date"] = json!("2023-01-03");
            body["time"] = json!(format!("06:{:02} am", step * 15));
            if let Some(a) = agent {
                body["agent"] = json!(a);
            }
            body
        };
        let call = |step, agent| {
            ev(
                step,
                Some(agent),
                json!({"type": "model_call", "purpose": "need_fullness"}),
            )
        };
        vec![
            call(0, "John Lin"),
            ev(
                0,
                Some("John Lin"),
                json!({"type": "activity", "activity": "Shower", "emoji": "🚿🧼"}),
            ),
            ev(
                0,
                Some("John Lin"),
                json!({"type": "location", "from": "a", "to": "Home/Bathroom"}),
            ),
            ev(
                0,
                Some("John Lin"),
                json!({"type": "emotion", "from": "neutral", "to": "happy"}),
            ),
            ev(
                0,
                Some("John Lin"),
                json!({"type": "needs", "before": {}, "after": {},
                "satisfied": ["health", "fun"]}),
            ),
            ev(
                0,
                Some("John Lin"),
                json!({"type": "closeness", "other": "Eddy Lin", "enjoyed": true, "closeness": 5}),
            ),
            ev(
                0,
                Some("Eddy Lin"),
                json!({"type": "closeness", "other": "John Lin", "enjoyed": false, "closeness": 3}),
            ),
            // A conversation emotion change: not the activity's.
            ev(
                0,
                Some("John Lin"),
                json!({"type": "emotion", "from": "happy", "to": "sad"}),
            ),
            ev(
                0,
                None,
                json!({"type": "conversation", "place": "Home-Bathroom",
                "participants": ["John Lin", "Eddy Lin"],
                "turns": [{"name": "John Lin", "text": "Hi"}, {"name": "Eddy Lin", "text": "Hello"}]}),
            ),
            // Continued: no judgement, same text.
            ev(
                1,
                Some("John Lin"),
                json!({"type": "activity", "activity": "Shower", "emoji": "🚿🧼"}),
            ),
            ev(
                1,
                Some("John Lin"),
                json!({"type": "needs", "satisfied": ["health", "fun"]}),
            ),
            call(2, "John Lin"),
            ev(
                2,
                Some("John Lin"),
                json!({"type": "activity", "activity": "Breakfast", "emoji": "🍳🥓"}),
            ),
            ev(
                2,
                Some("John Lin"),
                json!({"type": "needs", "satisfied": ["fullness"]}),
            ),
            ev(
                2,
                Some("John Lin"),
                json!({"type": "closeness", "other": "Eddy Lin", "enjoyed": true, "closeness": 6}),
            ),
            ev(
                2,
                Some("Eddy Lin"),
                json!({"type": "closeness", "other": "John Lin", "enjoyed": true, "closeness": 4}),
            ),
            ev(
                2,
                None,
                json!({"type": "conversation", "place": "Home-Kitchen",
                "participants": ["John Lin", "Eddy Lin"], "turns": []}),
            ),
        ]
    }

    #[test]
    fn items_follow_the_documented_mapping() {
        let dir = tempfile::tempdir().unwrap();
        fixture_run(dir.path(), &fixture_events());
        let items = items_from_run(dir.path()).unwrap();
        assert_eq!(items.len(), 4, "{items:#?}");
        let s = |v: &[&str]| -> Vec<Option<String>> {
            v.iter()
                .map(|x| (!x.is_empty()).then(|| x.to_string()))
                .collect()
        };
        assert_eq!(items[0].kind, ItemKind::Activity);
        assert_eq!(
            (items[0].text.as_str(), items[0].place.as_str()),
            ("Shower", "Home/Bathroom")
        );
        assert_eq!(
            items[0].model,
            s(&["no", "no", "yes", "yes", "no", "happy", ""])
        );
        assert_eq!(items[1].kind, ItemKind::Conversation);
        assert_eq!(items[1].agent, "John Lin; Eddy Lin");
        assert_eq!(items[1].text, "John Lin: Hi\nEddy Lin: Hello");
        assert_eq!(items[1].model, s(&["", "", "", "", "", "", "no"]));
        // The step-1 continuation is no item; Breakfast keeps the conversation's "sad".
        assert_eq!((items[2].step, items[2].text.as_str()), (2, "Breakfast"));
        assert_eq!(items[2].place, "Home/Bathroom");
        assert_eq!(
            items[2].model,
            s(&["yes", "no", "no", "no", "no", "sad", ""])
        );
        assert_eq!(items[3].model[6].as_deref(), Some("yes"));
    }

    #[test]
    fn export_writes_sheet_and_instructions() {
        let dir = tempfile::tempdir().unwrap();
        fixture_run(dir.path(), &fixture_events());
        let out = dir.path().join("sheet.csv");
        let (items, instr) = export(dir.path(), &out).unwrap();
        assert_eq!(instr, dir.path().join("sheet.instructions.txt"));
        let text = std::fs::read_to_string(&instr).unwrap();
        assert!(text.contains("Does AGENT eat or drink something filling while doing this?"));
        assert!(text.contains("neutral, happy, sad"));
        let mut r = csv::Reader::from_path(&out).unwrap();
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), header());
        let rows: Vec<csv::StringRecord> = r.records().map(|r| r.unwrap()).collect();
        assert_eq!(rows.len(), items.len());
        assert_eq!(&rows[1][7], "John Lin: Hi\nEddy Lin: Hello");
        assert_eq!(
            rows[0].iter().skip(8).take(7).collect::<Vec<_>>(),
            ["no", "no", "yes", "yes", "no", "happy", ""]
        );
        assert!(rows.iter().all(|r| r.iter().skip(15).all(str::is_empty)));
    }

    #[test]
    fn a_folder_that_is_not_a_run_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let e = items_from_run(dir.path()).unwrap_err().to_string();
        assert!(e.contains("config.json"), "{e}");
    }
}

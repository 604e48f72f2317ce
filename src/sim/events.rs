//! The append-only event log (`events.jsonl`): one JSON object per line, each with the step,
//! the simulated date and time, the agent (if any) and a `type`.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{io_err, Result};

/// One line of the event log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LogEvent {
    pub step: u64,
    pub date: String,
    pub time: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub agent: Option<String>,
    /// The event itself: an object with a `type` field.
    #[serde(flatten)]
    pub body: serde_json::Map<String, Value>,
}

impl LogEvent {
    /// An event from any serializable body that serializes to an object with a `type`.
    pub fn new(
        step: u64,
        date: &str,
        time: &str,
        agent: Option<&str>,
        body: impl Serialize,
    ) -> Self {
        let body = match serde_json::to_value(body) {
            Ok(Value::Object(m)) => m,
            Ok(other) => {
                let mut m = serde_json::Map::new();
                m.insert("type".into(), Value::String("value".into()));
                m.insert("value".into(), other);
                m
            }
            Err(e) => {
                let mut m = serde_json::Map::new();
                m.insert("type".into(), Value::String("unserializable".into()));
                m.insert("error".into(), Value::String(e.to_string()));
                m
            }
        };
        Self {
            step,
            date: date.to_string(),
            time: time.to_string(),
            agent: agent.map(str::to_string),
            body,
        }
    }

    /// The event's `type`.
    pub fn kind(&self) -> &str {
        self.body.get("type").and_then(Value::as_str).unwrap_or("")
    }
}

/// Appends events to `events.jsonl`; [`EventLog::len`] is the byte length a checkpoint
/// records, so a resumed run first cuts off what an interrupted step had written.
pub struct EventLog {
    path: PathBuf,
    out: BufWriter<File>,
    len: u64,
}

impl EventLog {
    /// Opens `path` for appending after truncating it to `len` bytes (0 creates it empty).
    pub fn open(path: &Path, len: u64) -> Result<Self> {
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(path)
            .map_err(io_err(path))?;
        let actual = file.metadata().map_err(io_err(path))?.len();
        if actual < len {
            return Err(super::error::SimError::Corrupt {
                path: path.to_path_buf(),
                reason: format!(
                    "the checkpoint expects {len} bytes of events but the file has {actual}"
                ),
            });
        }
        file.set_len(len).map_err(io_err(path))?;
        let file = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(io_err(path))?;
        Ok(Self {
            path: path.to_path_buf(),
            out: BufWriter::new(file),
            len,
        })
    }

    /// Appends events (buffered until [`EventLog::flush`]).
    pub fn append(&mut self, events: &[LogEvent]) -> Result<()> {
        for e in events {
            let mut line =
                serde_json::to_vec(e).map_err(|err| super::error::SimError::Corrupt {
                    path: self.path.clone(),
                    reason: err.to_string(),
                })?;
            line.push(b'\n');
            self.out.write_all(&line).map_err(io_err(&self.path))?;
            self.len += line.len() as u64;
        }
        Ok(())
    }

    /// Writes buffered events to disk (and syncs them).
    pub fn flush(&mut self) -> Result<()> {
        self.out.flush().map_err(io_err(&self.path))?;
        self.out.get_ref().sync_data().map_err(io_err(&self.path))
    }

    /// Bytes in the log, including buffered events.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the log is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Reads every event of a log (a malformed line is an error naming its line number).
pub fn read_events(path: &Path) -> Result<Vec<LogEvent>> {
    let text = std::fs::read_to_string(path).map_err(io_err(path))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| super::error::SimError::Corrupt {
                path: path.to_path_buf(),
                reason: format!("line {}: {e}", i + 1),
            })
        })
        .collect()
}

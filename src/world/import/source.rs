//! Reading the original's files: text, YAML and JSON with the parser's line and column, and
//! finding the line of a field for problems found after parsing.

use std::path::Path;

use super::error::{ImportError, Report, SourceProblem};
use crate::world::locate::line_col;

/// One original file: its name as given (used in warnings and errors) and its text.
#[derive(Clone, Debug)]
pub struct Source {
    /// The file name as given on the command line.
    pub name: String,
    /// Its text.
    pub text: String,
}

impl Source {
    /// A file already in memory.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> Source {
        Source {
            name: name.into(),
            text: text.into(),
        }
    }

    /// Reads a file; it must be UTF-8 text.
    pub fn read(path: &Path) -> Result<Source, ImportError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| ImportError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        match String::from_utf8(bytes) {
            // A byte-order mark (some Windows editors write one) is not part of the text.
            Ok(text) => Ok(Source {
                name,
                text: text
                    .strip_prefix('\u{feff}')
                    .map(str::to_string)
                    .unwrap_or(text),
            }),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let before = std::str::from_utf8(&e.as_bytes()[..valid]).unwrap_or_default();
                let (line, column) = line_col(before, valid);
                Err(ImportError::Input(vec![SourceProblem {
                    file: name,
                    line: Some(line),
                    column: Some(column),
                    field: String::new(),
                    message: format!(
                        "not UTF-8 text: byte {valid} is not valid UTF-8; save the file as UTF-8"
                    ),
                }]))
            }
        }
    }

    /// The 1-based line where `needles` occur one after the other (each searched after the
    /// previous one), or of the last one found; `None` if the first is not found.
    pub(super) fn find_line(&self, needles: &[String]) -> Option<usize> {
        let mut at = None;
        let mut from = 0;
        for n in needles {
            match self.text[from..].find(n.as_str()) {
                Some(i) => {
                    at = Some(from + i);
                    from += i + n.len();
                }
                None => break,
            }
        }
        at.map(|offset| line_col(&self.text, offset).0)
    }

    /// The line of a JSON field given by its keys (`["social_relationships", "Bob"]`).
    pub(super) fn json_line(&self, keys: &[&str]) -> Option<usize> {
        let needles: Vec<String> = keys
            .iter()
            .map(|k| serde_json::to_string(k).unwrap_or_default())
            .collect();
        self.find_line(&needles)
    }

    /// Parses the file as YAML, recording the parser's problem (with line and column) if it
    /// fails.
    pub(super) fn yaml(&self, r: &mut Report) -> Option<serde_yaml_ng::Value> {
        match serde_yaml_ng::from_str(&self.text) {
            Ok(v) => Some(v),
            Err(e) => {
                let loc = e.location();
                let message =
                    strip_position(&e.to_string(), loc.as_ref().map(|l| (l.line(), l.column())));
                r.problems.push(SourceProblem {
                    file: self.name.clone(),
                    line: loc.as_ref().map(|l| l.line()),
                    column: loc.as_ref().map(|l| l.column()),
                    field: String::new(),
                    message: format!("invalid YAML: {message}"),
                });
                None
            }
        }
    }

    /// Parses the file as JSON, recording the parser's problem (with line and column) if it
    /// fails.
    pub(super) fn json(&self, r: &mut Report) -> Option<serde_json::Value> {
        match serde_json::from_str(&self.text) {
            Ok(v) => Some(v),
            Err(e) => {
                let (line, column) = (e.line(), e.column());
                let message = strip_position(&e.to_string(), Some((line, column)));
                r.problems.push(SourceProblem {
                    file: self.name.clone(),
                    line: Some(line.max(1)),
                    column: Some(column.max(1)),
                    field: String::new(),
                    message: format!("invalid JSON: {message}"),
                });
                None
            }
        }
    }
}

/// A parser's message without its own " at line L column C" (the problem says where).
fn strip_position(message: &str, at: Option<(usize, usize)>) -> String {
    let Some((line, column)) = at else {
        return message.to_string();
    };
    message
        .replacen(&format!(" at line {line} column {column}"), "", 1)
        .trim()
        .to_string()
}

/// What a JSON value is, for messages: "a number", "a list", ...
pub(super) fn json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value as J;
    match v {
        J::Null => "null",
        J::Bool(_) => "true/false",
        J::Number(_) => "a number",
        J::String(_) => "a string",
        J::Array(_) => "a list",
        J::Object(_) => "an object",
    }
}

/// What a YAML value is, for messages.
pub(super) fn yaml_kind(v: &serde_yaml_ng::Value) -> &'static str {
    use serde_yaml_ng::Value as Y;
    match v {
        Y::Null => "nothing (null)",
        Y::Bool(_) => "true/false",
        Y::Number(_) => "a number",
        Y::String(_) => "a string",
        Y::Sequence(_) => "a list",
        Y::Mapping(_) => "a mapping",
        Y::Tagged(_) => "a tagged value",
    }
}

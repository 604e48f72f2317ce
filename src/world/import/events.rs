//! The original's daily events YAML: one `date: event` per line, the date written as the
//! original writes dates (`Tuesday Jan 03 2023`) or as `2023-01-03`.

use chrono::NaiveDate;
use serde_yaml_ng::Value;

use super::error::Report;
use super::source::{yaml_kind, Source};
use crate::world::locate::join;

/// One event as read.
pub(super) struct EventDraft {
    /// The key as written (the field of warnings).
    pub field: String,
    pub date: NaiveDate,
    pub text: String,
}

/// Reads an events file; problems are recorded, and the events that could be read returned.
pub(super) fn read(src: &Source, r: &mut Report) -> Vec<EventDraft> {
    let Some(root) = src.yaml(r) else {
        return Vec::new();
    };
    let map = match &root {
        Value::Mapping(m) => m,
        Value::Null => return Vec::new(),
        other => {
            r.error(
                &src.name,
                None,
                "",
                format!(
                    "expected one \"Tuesday Jan 03 2023: what happens\" per line, found {}",
                    yaml_kind(other)
                ),
            );
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for (k, v) in map {
        let key = match k {
            Value::String(s) => s.trim().to_string(),
            other => serde_yaml_ng::to_string(other)
                .unwrap_or_default()
                .trim()
                .to_string(),
        };
        let field = join("", &key);
        let line = src.find_line(std::slice::from_ref(&key));
        let date = match parse_date(&key) {
            Ok((date, note)) => {
                if let Some(note) = note {
                    r.warn(&src.name, &field, note);
                }
                date
            }
            Err(msg) => {
                r.error(&src.name, line, &field, msg);
                continue;
            }
        };
        let texts: Vec<&str> = match v {
            Value::String(s) => vec![s.as_str()],
            Value::Sequence(items) if items.iter().all(Value::is_string) => {
                items.iter().filter_map(Value::as_str).collect()
            }
            other => {
                r.error(
                    &src.name,
                    line,
                    &field,
                    format!("expected what happens, as text, found {}", yaml_kind(other)),
                );
                continue;
            }
        };
        for text in texts {
            if text.trim().is_empty() {
                r.warn(&src.name, &field, "an empty event: left out");
                continue;
            }
            out.push(EventDraft {
                field: field.clone(),
                date,
                text: text.trim().to_string(),
            });
        }
    }
    out
}

/// A date as the original writes it (`Tuesday Jan 03 2023`; the weekday may be left out or
/// wrong, as Python's parser ignores it, and the month may be written in full) or
/// `2023-01-03`; with a note when the weekday does not match.
fn parse_date(s: &str) -> Result<(NaiveDate, Option<String>), String> {
    if let Some(d) = crate::world::clock::parse_date(s) {
        return Ok((d, None));
    }
    let words: Vec<&str> = s.split_whitespace().map(|w| w.trim_matches(',')).collect();
    let (weekday, rest) = match words.as_slice() {
        [w, rest @ ..] if rest.len() == 3 => (Some(*w), rest.join(" ")),
        rest if rest.len() == 3 => (None, rest.join(" ")),
        _ => return Err(bad_date(s)),
    };
    let date = NaiveDate::parse_from_str(&rest, "%b %d %Y")
        .or_else(|_| NaiveDate::parse_from_str(&rest, "%B %d %Y"))
        .map_err(|_| bad_date(s))?;
    let actual = date.format("%A").to_string();
    let note = match weekday {
        Some(w) if !actual.to_lowercase().starts_with(&w.to_lowercase()) || w.len() < 3 => {
            Some(format!(
                "{date} is a {actual}, not a {w}: read as {date} (the original reads only the date)"
            ))
        }
        _ => None,
    };
    Ok((date, note))
}

fn bad_date(s: &str) -> String {
    format!("{s:?} is not a date: write it as the original does, \"Tuesday Jan 03 2023\", or as \"2023-01-03\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_originals_dates() {
        let d = NaiveDate::from_ymd_opt(2023, 1, 3).unwrap();
        assert_eq!(parse_date("Tuesday Jan 03 2023"), Ok((d, None)));
        assert_eq!(parse_date("2023-01-03"), Ok((d, None)));
        assert_eq!(parse_date("Tue January 3 2023"), Ok((d, None)));
        assert_eq!(parse_date("Jan 03 2023"), Ok((d, None)));
        let (date, note) = parse_date("Monday Jan 03 2023").unwrap();
        assert_eq!(date, d);
        assert!(note.unwrap().contains("is a Tuesday, not a Monday"));
        for bad in [
            "tomorrow",
            "Tuesday Jan 32 2023",
            "2023-13-01",
            "Tuesday 03 Jan",
        ] {
            assert!(parse_date(bad).is_err(), "{bad}");
        }
    }
}

//! Reading an annotator's sheet: the same header and key cells as the run's export, with
//! `label_*` cells of yes/no, emotion names, or empty (missing).

use std::path::Path;

use super::error::{EvalError, Result};
use super::sheet::{header, Dimension, Item, KEY_COLUMNS};

/// One annotator's labels: `labels[item][dimension]` ([`Dimension::ALL`] order), `None`
/// when missing or not applicable.
pub type Labels = Vec<Vec<Option<String>>>;

/// Reads the sheet at `path` and checks it against the run's `items`: the header, the row
/// count and every key cell must match; a label must be valid for its column and empty
/// where the column does not apply. Errors name the file, line and column.
pub fn read_labels(path: &Path, items: &[Item]) -> Result<Labels> {
    let csv_err = EvalError::csv(path);
    let cell = |line: u64, column: usize, name: &str, reason: String| {
        EvalError::cell(path, line, column, name, reason)
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_path(path)
        .map_err(csv_err)?;
    let expected = header();
    let label_start = KEY_COLUMNS.len() + Dimension::ALL.len();
    let mut out = Vec::with_capacity(items.len());
    let mut rows = 0usize;
    let mut saw_header = false;
    for (r, record) in reader.records().enumerate() {
        let record = record.map_err(csv_err)?;
        let line = record.position().map_or(r as u64 + 1, |p| p.line());
        if record.len() != expected.len() {
            return Err(EvalError::Sheet {
                path: path.to_path_buf(),
                reason: format!(
                    "line {line}: {} columns, expected {} ({})",
                    record.len(),
                    expected.len(),
                    expected.join(",")
                ),
            });
        }
        if r == 0 {
            for (c, (got, want)) in record.iter().zip(&expected).enumerate() {
                let got = got.trim_start_matches('\u{feff}');
                if got != want {
                    return Err(cell(
                        line,
                        c,
                        want,
                        format!("header is {got:?}, expected {want:?}"),
                    ));
                }
            }
            saw_header = true;
            continue;
        }
        rows += 1;
        let Some(item) = items.get(rows - 1) else {
            return Err(EvalError::Sheet {
                path: path.to_path_buf(),
                reason: format!(
                    "line {line}: more rows than the run's {} items (the sheet must be the run's own export)",
                    items.len()
                ),
            });
        };
        for (c, want) in item.keys(rows).iter().enumerate() {
            if &record[c] != want {
                return Err(cell(
                    line,
                    c,
                    KEY_COLUMNS[c],
                    format!("{:?} but the run has {want:?}", &record[c]),
                ));
            }
        }
        let mut labels = Vec::with_capacity(Dimension::ALL.len());
        for (k, d) in Dimension::ALL.iter().enumerate() {
            let c = label_start + k;
            let value = d
                .parse_label(&record[c])
                .map_err(|reason| cell(line, c, &expected[c], reason))?;
            if value.is_some() && !d.applies(item.kind) {
                return Err(cell(
                    line,
                    c,
                    &expected[c],
                    format!("must be empty on a {} row", item.kind.as_str()),
                ));
            }
            labels.push(value);
        }
        out.push(labels);
    }
    if !saw_header {
        return Err(EvalError::Sheet {
            path: path.to_path_buf(),
            reason: "empty: no header line".into(),
        });
    }
    if out.len() != items.len() {
        return Err(EvalError::Sheet {
            path: path.to_path_buf(),
            reason: format!(
                "{} rows but the run has {} items (the sheet must be the run's own export)",
                out.len(),
                items.len()
            ),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::sheet::{export, tests as fx};

    /// Exports the fixture run; returns (dir, sheet path, items, sheet text).
    fn exported() -> (tempfile::TempDir, std::path::PathBuf, Vec<Item>, String) {
        let dir = tempfile::tempdir().unwrap();
        fx::fixture_run(dir.path(), &fx::fixture_events());
        let out = dir.path().join("sheet.csv");
        let (items, _) = export(dir.path(), &out).unwrap();
        let text = std::fs::read_to_string(&out).unwrap();
        (dir, out, items, text)
    }

    /// Rewrites the sheet with `edit` applied to each data record (index, cells).
    fn edited(path: &Path, edit: impl Fn(usize, &mut Vec<String>)) -> std::path::PathBuf {
        let mut r = csv::Reader::from_path(path).unwrap();
        let out = path.with_file_name("edited.csv");
        let mut w = csv::WriterBuilder::new()
            .flexible(true)
            .from_path(&out)
            .unwrap();
        w.write_record(r.headers().unwrap()).unwrap();
        for (i, rec) in r.records().enumerate() {
            let mut cells: Vec<String> = rec.unwrap().iter().map(str::to_string).collect();
            edit(i, &mut cells);
            w.write_record(&cells).unwrap();
        }
        w.flush().unwrap();
        out
    }

    #[test]
    fn labels_are_read_normalised_and_missing_is_none() {
        let (_d, sheet, items, _) = exported();
        let p = edited(&sheet, |i, c| {
            if i == 0 {
                c[15] = " YES ".into();
                c[20] = "Happy".into();
            }
            if i == 1 {
                c[21] = "no".into();
            }
        });
        let labels = read_labels(&p, &items).unwrap();
        assert_eq!(labels[0][0].as_deref(), Some("yes"));
        assert_eq!(labels[0][5].as_deref(), Some("happy"));
        assert_eq!(labels[0][1], None);
        assert_eq!(labels[1][6].as_deref(), Some("no"));
    }

    #[test]
    fn mismatched_sheets_name_file_line_and_column() {
        let (_d, sheet, items, text) = exported();
        let err = |p: &Path| read_labels(p, &items).unwrap_err().to_string();
        // A bad value on the first data row (line 2), column 17 = label_fun.
        let e = err(&edited(&sheet, |i, c| {
            if i == 0 {
                c[17] = "maybe".into();
            }
        }));
        assert!(
            e.contains("edited.csv: line 2, column 18 (label_fun)"),
            "{e}"
        );
        assert!(e.contains("maybe"), "{e}");
        // A wrong emotion.
        let e = err(&edited(&sheet, |i, c| {
            if i == 0 {
                c[20] = "bored".into();
            }
        }));
        assert!(e.contains("(label_emotion)") && e.contains("bored"), "{e}");
        // A label where the column does not apply.
        let e = err(&edited(&sheet, |i, c| {
            if i == 1 {
                c[15] = "yes".into();
            }
        }));
        assert!(e.contains("must be empty on a conversation row"), "{e}");
        // A changed key: the conversation row spans lines 3–4.
        let e = err(&edited(&sheet, |i, c| {
            if i == 2 {
                c[7] = "Lunch".into();
            }
        }));
        assert!(e.contains("line 5, column 8 (text)"), "{e}");
        // A short row, then a missing row.
        let e = err(&edited(&sheet, |i, c| {
            if i == 3 {
                c.truncate(3);
            }
        }));
        assert!(
            e.contains("edited.csv: line 6: 3 columns, expected 22"),
            "{e}"
        );
        let short = sheet.with_file_name("short.csv");
        let cut: Vec<&str> = text.lines().collect();
        std::fs::write(&short, cut[..cut.len() - 1].join("\n") + "\n").unwrap();
        let e = err(&short);
        assert!(
            e.contains("short.csv: 3 rows but the run has 4 items"),
            "{e}"
        );
        // A wrong header.
        let bad = sheet.with_file_name("header.csv");
        std::fs::write(&bad, text.replacen("label_fun", "label_joy", 1)).unwrap();
        let e = err(&bad);
        assert!(
            e.contains("header.csv: line 1, column 18 (label_fun)"),
            "{e}"
        );
        // Empty.
        std::fs::write(&bad, "").unwrap();
        assert!(err(&bad).contains("no header"));
    }
}

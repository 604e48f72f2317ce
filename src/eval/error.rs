//! Errors of exporting and scoring annotation sheets, and of interviewing a run's agents.

use std::path::PathBuf;

/// What can go wrong reading a run or a sheet.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The run directory is not usable (no config, broken events).
    #[error("{path}: {reason}")]
    Run { path: PathBuf, reason: String },
    /// A sheet as a whole does not match the run (row count, empty file).
    #[error("{path}: {reason}")]
    Sheet { path: PathBuf, reason: String },
    /// One cell of a sheet is wrong.
    #[error("{path}: line {line}, column {column} ({name}): {reason}")]
    Cell {
        path: PathBuf,
        line: u64,
        column: usize,
        name: String,
        reason: String,
    },
    /// A value asked of a run does not fit it (an unknown agent, a step it has not run, no
    /// questions); the message names the value.
    #[error("{0}")]
    Invalid(String),
    /// The embedder or the model failed for a whole request.
    #[error("{0}")]
    Model(String),
    /// The CSV itself is malformed.
    #[error("{path}: {source}")]
    Csv {
        path: PathBuf,
        #[source]
        source: csv::Error,
    },
}

impl EvalError {
    /// An error of the CSV file at `path` as a whole (for `map_err`).
    pub fn csv(path: &std::path::Path) -> impl Fn(csv::Error) -> EvalError + Copy + '_ {
        move |source| EvalError::Csv {
            path: path.to_path_buf(),
            source,
        }
    }

    /// An error of one cell: `line` 1-based, `column` 0-based (named 1-based).
    pub fn cell(
        path: &std::path::Path,
        line: u64,
        column: usize,
        name: &str,
        reason: impl Into<String>,
    ) -> EvalError {
        EvalError::Cell {
            path: path.to_path_buf(),
            line,
            column: column + 1,
            name: name.to_string(),
            reason: reason.into(),
        }
    }
}

/// Opens a CSV with a header row: the reader and the column names, trimmed and lower-case
/// (a byte-order mark dropped).
pub fn open_csv(path: &std::path::Path) -> Result<(csv::Reader<std::fs::File>, Vec<String>)> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_path(path)
        .map_err(EvalError::csv(path))?;
    let header = reader
        .headers()
        .map_err(EvalError::csv(path))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').trim().to_ascii_lowercase())
        .collect();
    Ok((reader, header))
}

/// A yes/no cell: `Some` of yes/y/1/true or no/n/0/false (any case), `None` when empty, and
/// `Err` with the reason otherwise.
pub fn yes_no_cell(text: &str) -> std::result::Result<Option<bool>, String> {
    match text.trim().to_ascii_lowercase().as_str() {
        "" => Ok(None),
        "yes" | "y" | "1" | "true" => Ok(Some(true)),
        "no" | "n" | "0" | "false" => Ok(Some(false)),
        other => Err(format!("{other:?} is not yes or no")),
    }
}

/// The index of column `name` in `header` (as [`open_csv`] gives it), or an error naming
/// `path` and the header when it has none.
pub fn required_column(path: &std::path::Path, header: &[String], name: &str) -> Result<usize> {
    header
        .iter()
        .position(|h| h == name)
        .ok_or_else(|| EvalError::Sheet {
            path: path.to_path_buf(),
            reason: format!("line 1: no `{name}` column (header: {})", header.join(",")),
        })
}

/// `items`, or an error naming `path` when the file had no rows of `what` ("rows").
pub fn non_empty<T>(path: &std::path::Path, items: Vec<T>, what: &str) -> Result<Vec<T>> {
    if items.is_empty() {
        return Err(EvalError::Sheet {
            path: path.to_path_buf(),
            reason: format!("no {what} (only a header, or an empty file)"),
        });
    }
    Ok(items)
}

/// Shorthand for results of this module.
pub type Result<T> = std::result::Result<T, EvalError>;

//! The world layer's error type: every problem names the file, the line and column, the field
//! path and what would be valid.

use std::fmt;
use std::path::PathBuf;

/// One thing wrong with a world file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line of the offending text, when known.
    pub line: Option<usize>,
    /// 1-based column (in characters) of the offending text, when known.
    pub column: Option<usize>,
    /// The field path, e.g. `agents[1].relationships."Eddy Lin".closeness` (indices 0-based).
    pub field: String,
    /// What is wrong and what would be valid.
    pub message: String,
}

impl Problem {
    /// Formats the problem as `FILE:LINE:COLUMN: FIELD: MESSAGE` (parts that are unknown left
    /// out).
    pub fn render(&self, path: &std::path::Path) -> String {
        let mut s = path.display().to_string();
        if let Some(line) = self.line {
            s.push_str(&format!(":{line}"));
            if let Some(column) = self.column {
                s.push_str(&format!(":{column}"));
            }
        }
        s.push_str(": ");
        if !self.field.is_empty() {
            s.push_str(&self.field);
            s.push_str(": ");
        }
        s.push_str(&self.message);
        s
    }
}

/// Everything that can go wrong loading a world file.
#[derive(Debug, thiserror::Error)]
pub enum WorldError {
    /// The file could not be read.
    #[error("cannot read world file {}: {source}", path.display())]
    Io {
        /// The world file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The file was read but is not a valid world: bad TOML, unknown or missing fields, or
    /// values out of range or inconsistent. Displays one line per problem.
    #[error("{}", DisplayProblems { path, problems })]
    Invalid {
        /// The world file.
        path: PathBuf,
        /// Every problem found (a TOML or schema error stops at the first; semantic checks
        /// collect all).
        problems: Vec<Problem>,
    },
}

impl WorldError {
    /// The problems of an [`WorldError::Invalid`] error; empty for an I/O error.
    pub fn problems(&self) -> &[Problem] {
        match self {
            WorldError::Io { .. } => &[],
            WorldError::Invalid { problems, .. } => problems,
        }
    }
}

struct DisplayProblems<'a> {
    path: &'a PathBuf,
    problems: &'a [Problem],
}

impl fmt::Display for DisplayProblems<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.problems.is_empty() {
            return write!(f, "{}: invalid world", self.path.display());
        }
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}", p.render(self.path))?;
        }
        Ok(())
    }
}

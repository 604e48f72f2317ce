//! What an import says: warnings about what it adjusted, and the problems that stop it.

use std::fmt;
use std::path::PathBuf;

use crate::world::WorldError;

/// Something the importer changed to fit our format, naming the file and field it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportWarning {
    /// The original file, as given.
    pub file: String,
    /// The field inside it, e.g. `social_relationships.Bob` (empty for the whole file).
    pub field: String,
    /// What was changed, and to what.
    pub message: String,
}

impl fmt::Display for ImportWarning {
    /// `FILE: FIELD: MESSAGE`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.file)?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// Something wrong with one of the original files that the importer cannot resolve.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceProblem {
    /// The original file, as given.
    pub file: String,
    /// 1-based line, when the parser gives one or the field could be found in the text.
    pub line: Option<usize>,
    /// 1-based column, when the parser gives one.
    pub column: Option<usize>,
    /// The field, e.g. `example_day_plan[2]` (empty when the whole file is concerned).
    pub field: String,
    /// What is wrong and what would do.
    pub message: String,
}

impl fmt::Display for SourceProblem {
    /// `FILE:LINE:COLUMN: FIELD: MESSAGE`, unknown parts left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        f.write_str(": ")?;
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.message)
    }
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// A file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The original files have problems (bad YAML or JSON, missing or wrong fields): one line
    /// each.
    #[error("{}", join_lines(.0))]
    Input(Vec<SourceProblem>),
    /// An option given to the importer is out of range.
    #[error("{flag}: {message}")]
    Option {
        /// The option, e.g. `--days`.
        flag: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The converted world does not pass our own validation (a bug of the importer, or a case
    /// it does not know): nothing should be written.
    #[error("the converted world does not validate, so it is not written:\n{0}")]
    Invalid(WorldError),
}

impl ImportError {
    /// The problems of an [`ImportError::Input`]; empty otherwise.
    pub fn problems(&self) -> &[SourceProblem] {
        match self {
            ImportError::Input(p) => p,
            _ => &[],
        }
    }
}

fn join_lines(problems: &[SourceProblem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("\n")
}

/// Collects the warnings and problems of one import.
#[derive(Default)]
pub(super) struct Report {
    pub warnings: Vec<ImportWarning>,
    pub problems: Vec<SourceProblem>,
}

impl Report {
    /// Records an adjustment.
    pub fn warn(&mut self, file: &str, field: &str, message: impl Into<String>) {
        self.warnings.push(ImportWarning {
            file: file.to_string(),
            field: field.to_string(),
            message: message.into(),
        });
    }

    /// Records a problem at a known line (or none).
    pub fn error(
        &mut self,
        file: &str,
        line: Option<usize>,
        field: &str,
        message: impl Into<String>,
    ) {
        self.problems.push(SourceProblem {
            file: file.to_string(),
            line,
            column: None,
            field: field.to_string(),
            message: message.into(),
        });
    }
}

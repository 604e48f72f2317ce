//! Collects a world file's problems with their line and column.

use std::ops::Range;

use toml::Spanned;

use super::error::Problem;
use super::locate::line_col;
use super::schema::SpannedList;

/// Collects problems against the text they are found in.
pub(crate) struct Checker<'a> {
    pub text: &'a str,
    pub problems: Vec<Problem>,
}

impl Checker<'_> {
    pub(crate) fn at(
        &mut self,
        span: Range<usize>,
        field: impl Into<String>,
        message: impl Into<String>,
    ) {
        let (line, column) = line_col(self.text, span.start);
        self.problems.push(Problem {
            line: Some(line),
            column: Some(column),
            field: field.into(),
            message: message.into(),
        });
    }

    pub(crate) fn nowhere(&mut self, field: &str, message: &str) {
        self.problems.push(Problem {
            line: None,
            column: None,
            field: field.to_string(),
            message: message.to_string(),
        });
    }

    pub(crate) fn line_of(&self, span: Range<usize>) -> usize {
        line_col(self.text, span.start).0
    }

    /// An integer in `lo..=hi`, or a problem saying so.
    pub(crate) fn int(&mut self, v: &Spanned<i64>, field: &str, lo: i64, hi: i64) -> Option<u32> {
        let x = *v.get_ref();
        if (lo..=hi).contains(&x) {
            u32::try_from(x).ok()
        } else {
            self.at(
                v.span(),
                field,
                format!("{x} is out of range: must be an integer {lo}–{hi}"),
            );
            None
        }
    }

    /// A non-blank string, or a problem saying so.
    pub(crate) fn text(&mut self, v: &Spanned<String>, field: &str, what: &str) -> String {
        if v.get_ref().trim().is_empty() {
            self.at(v.span(), field, format!("{what} must not be empty"));
        }
        v.get_ref().clone()
    }

    /// A non-empty list of non-blank strings.
    pub(crate) fn list(&mut self, v: &SpannedList, field: &str, what: &str) -> Vec<String> {
        if v.get_ref().is_empty() {
            self.at(
                v.span(),
                field,
                format!("at least one {what} is needed: write a list of strings, e.g. [\"...\"]"),
            );
        }
        v.get_ref()
            .iter()
            .enumerate()
            .map(|(i, s)| self.text(s, &format!("{field}[{i}]"), what))
            .collect()
    }
}

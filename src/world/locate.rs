//! Turning byte offsets into lines, columns and field paths, for errors that the TOML parser
//! reports with a span but without the field they concern.

use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use std::fmt;
use std::ops::Range;

/// 1-based line and column (in characters) of a byte offset of `text`.
pub(crate) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut offset = offset.min(text.len());
    while !text.is_char_boundary(offset) {
        offset -= 1;
    }
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// A key as it is written in a field path: bare when TOML allows, quoted otherwise.
pub(crate) fn key(k: &str) -> String {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        format!("{k:?}")
    }
}

/// Joins a parent field path and a key.
pub(crate) fn join(parent: &str, k: &str) -> String {
    if parent.is_empty() {
        key(k)
    } else {
        format!("{parent}.{}", key(k))
    }
}

// The private protocol by which the TOML deserializer hands out spans (what `toml::Spanned`
// uses). Reading it by hand lets a table implied by a header (which has no span) come through
// as a table instead of failing.
const SPANNED: &str = "$__serde_spanned_private_Spanned";
const START: &str = "$__serde_spanned_private_start";
const END: &str = "$__serde_spanned_private_end";
const VALUE: &str = "$__serde_spanned_private_value";
const SPANNED_FIELDS: &[&str] = &[START, END, VALUE];

/// Any TOML value, to find which field a byte offset falls in.
enum Node {
    Leaf,
    Array(Vec<SpanNode>),
    Table(Vec<(String, SpanNode)>),
}

/// A value and its span, when the deserializer knows it. Deserialises through the span
/// protocol.
struct SpanNode {
    span: Option<Range<usize>>,
    node: Node,
}

impl<'de> Deserialize<'de> for SpanNode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_struct(SPANNED, SPANNED_FIELDS, NodeVisitor)
    }
}

/// A value deserialised without asking for its span (the document, and the value inside a
/// span).
struct Plain(SpanNode);

impl<'de> Deserialize<'de> for Plain {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor).map(Plain)
    }
}

struct NodeVisitor;

fn leaf<E>() -> Result<SpanNode, E> {
    Ok(SpanNode {
        span: None,
        node: Node::Leaf,
    })
}

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = SpanNode;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any TOML value")
    }
    fn visit_bool<E: de::Error>(self, _: bool) -> Result<SpanNode, E> {
        leaf()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<SpanNode, E> {
        leaf()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<SpanNode, E> {
        leaf()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<SpanNode, E> {
        leaf()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<SpanNode, E> {
        leaf()
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SpanNode, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<SpanNode>()? {
            items.push(item);
        }
        Ok(SpanNode {
            span: None,
            node: Node::Array(items),
        })
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SpanNode, A::Error> {
        let mut entries = Vec::new();
        while let Some(k) = map.next_key::<String>()? {
            if k == START {
                let start: usize = map.next_value()?;
                map.next_key::<String>()?;
                let end: usize = map.next_value()?;
                map.next_key::<String>()?;
                let Plain(inner) = map.next_value::<Plain>()?;
                return Ok(SpanNode {
                    span: Some(start..end),
                    node: inner.node,
                });
            }
            if k.starts_with("$__toml_private") {
                // A date/time literal: a leaf.
                map.next_value::<IgnoredAny>()?;
                return leaf();
            }
            let v = map.next_value::<SpanNode>()?;
            entries.push((k, v));
        }
        Ok(SpanNode {
            span: None,
            node: Node::Table(entries),
        })
    }
}

fn deepest(node: &Node, path: &str, offset: usize, depth: usize, best: &mut (usize, String)) {
    let mut visit = |child: &SpanNode, child_path: String| {
        let inside = child.span.as_ref().is_some_and(|s| s.contains(&offset));
        if inside && depth + 1 > best.0 {
            *best = (depth + 1, child_path.clone());
        }
        deepest(&child.node, &child_path, offset, depth + 1, best);
    };
    match node {
        Node::Leaf => {}
        Node::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                visit(item, format!("{path}[{i}]"));
            }
        }
        Node::Table(entries) => {
            for (k, v) in entries {
                visit(v, join(path, k));
            }
        }
    }
}

/// The field path of the deepest value whose text contains `offset` (`""` for the top level),
/// and whether the text is not valid TOML at all (then the path is [`header_path`]'s guess).
pub(crate) fn field_at(text: &str, offset: usize) -> (String, bool) {
    match toml::from_str::<Plain>(text) {
        Ok(Plain(root)) => {
            let mut best = (0, String::new());
            deepest(&root.node, "", offset, 0, &mut best);
            (best.1, false)
        }
        Err(_) => (header_path(text, offset), true),
    }
}

/// Splits a dotted TOML key (`agents.relationships."Eddy Lin"`) into its parts.
fn dotted(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    for c in s.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '.') => parts.push(std::mem::take(&mut cur).trim().to_string()),
            (None, c) => cur.push(c),
        }
    }
    parts.push(cur.trim().to_string());
    parts
}

/// A best guess at the field path of a line of text that is not valid TOML: the table header
/// in force at `offset` (with array-of-tables indices) and the key on that line, if any.
pub(crate) fn header_path(text: &str, offset: usize) -> String {
    let (line_no, _) = line_col(text, offset);
    let mut counts: Vec<(Vec<String>, usize)> = Vec::new();
    let mut table = String::new();
    let mut last_line = "";
    for (i, line) in text.lines().enumerate() {
        if i + 1 > line_no {
            break;
        }
        let t = line.trim();
        let (inner, is_array) = if let Some(r) = t.strip_prefix("[[") {
            (r.split("]]").next().unwrap_or(""), true)
        } else if let Some(r) = t.strip_prefix('[') {
            (r.split(']').next().unwrap_or(""), false)
        } else {
            last_line = line;
            continue;
        };
        last_line = "";
        let parts = dotted(inner);
        if is_array {
            match counts.iter_mut().find(|(p, _)| *p == parts) {
                Some((_, n)) => *n += 1,
                None => counts.push((parts.clone(), 1)),
            }
        }
        table.clear();
        for (j, part) in parts.iter().enumerate() {
            table = join(&table, part);
            if let Some((_, n)) = counts.iter().find(|(p, _)| p[..] == parts[..=j]) {
                table.push_str(&format!("[{}]", n - 1));
            }
        }
    }
    match last_line.split_once('=') {
        Some((k, _)) if !k.trim().is_empty() => {
            dotted(k.trim()).iter().fold(table, |acc, k| join(&acc, k))
        }
        _ => table,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns() {
        let t = "ab\ncdé\nf";
        assert_eq!(line_col(t, 0), (1, 1));
        assert_eq!(line_col(t, 3), (2, 1));
        assert_eq!(line_col(t, 7), (2, 4));
        assert_eq!(line_col(t, 6), (2, 3));
        assert_eq!(line_col(t, 100), (3, 2));
    }

    #[test]
    fn keys_are_quoted_when_needed() {
        assert_eq!(
            join("agents[1].relationships", "Eddy Lin"),
            "agents[1].relationships.\"Eddy Lin\""
        );
        assert_eq!(join("", "name"), "name");
    }

    #[test]
    fn finds_the_field_at_an_offset() {
        let t = "name = \"x\"\n[[agents]]\nname = \"a\"\n[[agents]]\nname = \"b\"\nneeds = { fun = 3 }\n[agents.relationships.\"A B\"]\ncloseness = 4\n";
        let off = |s: &str| t.find(s).unwrap();
        let at = |s: &str| field_at(t, off(s)).0;
        assert_eq!(at("\"b\""), "agents[1].name");
        assert_eq!(at("3 }"), "agents[1].needs.fun");
        assert_eq!(at("4\n"), "agents[1].relationships.\"A B\".closeness");
        assert_eq!(at("\"x\""), "name");
    }

    #[test]
    fn finds_fields_under_implied_tables_and_dates() {
        let t = "[[agents]]\nname = \"a\"\n[agents.relationships.\"X Y\"]\nrelationship = \"s\"\n[[agents]]\nneeds.fun = 3\nd = 2023-01-03\n";
        let at = |s: &str| field_at(t, t.find(s).unwrap());
        assert_eq!(
            at("\"s\""),
            (
                "agents[0].relationships.\"X Y\".relationship".to_string(),
                false
            )
        );
        assert_eq!(at("3\n"), ("agents[1].needs.fun".to_string(), false));
        assert_eq!(at("2023"), ("agents[1].d".to_string(), false));
    }

    #[test]
    fn guesses_the_field_of_broken_text() {
        let t = "name = \"x\"\n[[agents]]\nname = \"a\"\n[[agents]]\nage = 4 4\n";
        assert_eq!(
            field_at(t, t.find("4 4").unwrap()),
            ("agents[1].age".to_string(), true)
        );
        let t = "[[agents]]\n[agents.relationships.'A B']\ncloseness = = 4\n";
        assert_eq!(
            header_path(t, t.find("= 4").unwrap()),
            "agents[0].relationships.\"A B\".closeness"
        );
    }
}

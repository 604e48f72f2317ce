//! Example day plans: the original's loose lines (`8:00 am: ...`, `8:00 AM - ...`, 24-hour
//! times, out of order) made into our strict `hh:mm am: activity` lines in time order.

use super::error::Report;
use crate::world::clock::format_time;

/// A plan line as read: minutes after midnight, the activity, and how it was written.
#[derive(Debug, PartialEq, Eq)]
struct Loose {
    minutes: u32,
    activity: String,
    /// Written `12:mm am` (which the original's files sometimes mean as noon).
    twelve_am: bool,
    /// Why the line is not already in our form.
    reasons: Vec<&'static str>,
}

/// One line of a plan and the field it came from.
pub(super) struct Line {
    /// E.g. `example_day_plan[2]`.
    pub field: String,
    /// The text.
    pub text: String,
}

/// Our plan lines from the original's, with a warning for each change; lines without a time
/// of day are left out (with a warning). May be empty.
pub(super) fn normalize(lines: &[Line], file: &str, r: &mut Report) -> Vec<String> {
    let mut read: Vec<(usize, u32, String)> = Vec::new(); // (input index, minutes, activity)
    let mut prev: Option<u32> = None;
    for (i, line) in lines.iter().enumerate() {
        let text = line.text.trim();
        let Some(mut l) = parse_loose(text) else {
            r.warn(
                file,
                &line.field,
                format!("{text:?} has no time of day (\"hh:mm am: activity\"): left out"),
            );
            continue;
        };
        if l.twelve_am && prev.is_some_and(|p| p < 720 && p > l.minutes) {
            l.minutes += 720;
            r.warn(
                file,
                &line.field,
                format!(
                    "{text:?}: 12:{:02} am (midnight) after {} read as {} (noon)",
                    l.minutes % 60,
                    format_time(prev.unwrap_or(0)),
                    format_time(l.minutes)
                ),
            );
        } else if !l.reasons.is_empty() {
            r.warn(
                file,
                &line.field,
                format!(
                    "{text:?} written as \"{}: {}\" ({})",
                    format_time(l.minutes),
                    l.activity,
                    l.reasons.join(", ")
                ),
            );
        }
        prev = Some(l.minutes);
        read.push((i, l.minutes, l.activity));
    }
    if let Some(w) = read.windows(2).find(|w| w[1].1 < w[0].1) {
        let field = plan_field(lines);
        r.warn(
            file,
            &field,
            format!(
                "lines not in time order (first: {} at {} after {}): sorted by time",
                lines[w[1].0].field,
                format_time(w[1].1),
                format_time(w[0].1)
            ),
        );
        read.sort_by_key(|&(_, m, _)| m);
    }
    let mut out: Vec<(u32, String)> = Vec::new();
    for (_, m, activity) in read {
        match out.last_mut() {
            Some((pm, pa)) if *pm == m => {
                let merged = format!("{pa}, then {activity}");
                r.warn(
                    file,
                    &plan_field(lines),
                    format!(
                        "two lines at {}: merged into \"{}: {merged}\"",
                        format_time(m),
                        format_time(m)
                    ),
                );
                *pa = merged;
            }
            _ => out.push((m, activity)),
        }
    }
    out.into_iter()
        .map(|(m, a)| format!("{}: {a}", format_time(m)))
        .collect()
}

/// The field of the whole plan (`example_day_plan`), from the fields of its lines.
fn plan_field(lines: &[Line]) -> String {
    lines
        .first()
        .map(|l| l.field.split(['[', ' ']).next().unwrap_or("").to_string())
        .unwrap_or_else(|| "example_day_plan".to_string())
}

/// Reads `H[H][:MM] [am|pm|a.m.|p.m.] [:|-] activity`, any case; without am/pm the time is
/// 24-hour (and needs the minutes).
fn parse_loose(s: &str) -> Option<Loose> {
    let mut reasons = Vec::new();
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 2 {
        return None;
    }
    let hour: u32 = s[..digits].parse().ok()?;
    if digits == 1 {
        reasons.push("one-digit hour");
    }
    let mut rest = &s[digits..];
    let mut minutes = None;
    if let Some(after) = rest.strip_prefix(':') {
        let b = after.as_bytes();
        if b.len() >= 2 && b[0].is_ascii_digit() && b[1].is_ascii_digit() {
            minutes = Some(u32::from(b[0] - b'0') * 10 + u32::from(b[1] - b'0'));
            rest = &after[2..];
        }
    }
    let before_space = rest.len();
    let rest_trim = rest.trim_start();
    let spaces = before_space - rest_trim.len();
    let mut half = None;
    let mut after_half = rest_trim;
    for (word, pm) in [("a.m.", false), ("p.m.", true), ("am", false), ("pm", true)] {
        let Some(head) = rest_trim.get(..word.len()) else {
            continue;
        };
        if head.eq_ignore_ascii_case(word) {
            let tail = &rest_trim[word.len()..];
            if tail.chars().next().is_some_and(char::is_alphanumeric) {
                continue;
            }
            if head != word || word.contains('.') {
                reasons.push("am/pm written differently");
            }
            half = Some(pm);
            after_half = tail;
            break;
        }
    }
    if half.is_some() && spaces != 1 {
        reasons.push("spacing");
    }
    let minutes_of_hour = match (minutes, half) {
        (Some(m), _) if m <= 59 => m,
        (Some(_), _) => return None,
        (None, Some(_)) => {
            reasons.push("no minutes");
            0
        }
        (None, None) => return None,
    };
    let (time, twelve_am) = match half {
        Some(pm) => {
            if !(1..=12).contains(&hour) {
                return None;
            }
            (
                (hour % 12 + if pm { 12 } else { 0 }) * 60,
                !pm && hour == 12,
            )
        }
        None => {
            if hour > 23 {
                return None;
            }
            reasons.push("24-hour time");
            (hour * 60, false)
        }
    };
    let after_sep = after_half.trim_start();
    let (activity, sep_ok) = match after_sep.strip_prefix(':') {
        Some(a) => (
            a,
            after_half.starts_with(':') && a.starts_with(' ') && !a.starts_with("  "),
        ),
        None => match after_sep
            .strip_prefix('-')
            .or_else(|| after_sep.strip_prefix('–'))
        {
            Some(a) => (a, false),
            None => (after_sep, false),
        },
    };
    if !sep_ok && !reasons.contains(&"spacing") {
        reasons.push("separator");
    }
    let activity = activity.trim();
    if activity.is_empty() {
        return None;
    }
    Some(Loose {
        minutes: time + minutes_of_hour,
        activity: activity.to_string(),
        twelve_am,
        reasons,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(texts: &[&str]) -> Vec<Line> {
        texts
            .iter()
            .enumerate()
            .map(|(i, t)| Line {
                field: format!("example_day_plan[{i}]"),
                text: t.to_string(),
            })
            .collect()
    }

    #[test]
    fn reads_loose_times() {
        let p = |s| parse_loose(s).map(|l| (l.minutes, l.activity, l.reasons));
        assert_eq!(
            p("06:00 am: wake up"),
            Some((360, "wake up".into(), vec![]))
        );
        assert_eq!(
            p("8:00 am: eat"),
            Some((480, "eat".into(), vec!["one-digit hour"]))
        );
        assert_eq!(
            p("08:30 PM: read"),
            Some((1230, "read".into(), vec!["am/pm written differently"]))
        );
        assert_eq!(p("7 pm - dinner").map(|x| x.0), Some(1140));
        assert_eq!(
            p("14:00: work").map(|x| (x.0, x.2)),
            Some((840, vec!["24-hour time"]))
        );
        assert_eq!(p("12:00 am: sleep").map(|x| x.0), Some(0));
        assert_eq!(p("12:15 pm: lunch").map(|x| x.0), Some(735));
        for bad in [
            "wake up",
            "13:00 pm: x",
            "06:00 am:",
            "25:00: x",
            "123:00 am: x",
            "8: x",
        ] {
            assert_eq!(parse_loose(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn one_digit_hours_are_padded_with_a_warning() {
        let mut r = Report::default();
        let out = normalize(
            &lines(&["6:00 am: wake up", "07:00 am: eat"]),
            "a.json",
            &mut r,
        );
        assert_eq!(out, ["06:00 am: wake up", "07:00 am: eat"]);
        assert_eq!(r.warnings.len(), 1);
        let w = r.warnings[0].to_string();
        assert!(
            w.starts_with("a.json: example_day_plan[0]: ") && w.contains("one-digit hour"),
            "{w}"
        );
    }

    #[test]
    fn out_of_order_lines_are_sorted() {
        let mut r = Report::default();
        let out = normalize(
            &lines(&["09:00 am: work", "07:00 am: wake up", "06:00 pm: dinner"]),
            "a.json",
            &mut r,
        );
        assert_eq!(
            out,
            ["07:00 am: wake up", "09:00 am: work", "06:00 pm: dinner"]
        );
        let w: Vec<String> = r.warnings.iter().map(ToString::to_string).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(
            w[0].starts_with("a.json: example_day_plan: lines not in time order")
                && w[0].contains("example_day_plan[1]"),
            "{w:?}"
        );
    }

    #[test]
    fn midnight_between_morning_lines_is_noon() {
        let mut r = Report::default();
        let out = normalize(
            &lines(&["10:00 am: class", "12:00 am: lunch", "01:00 pm: compose"]),
            "eddy.json",
            &mut r,
        );
        assert_eq!(
            out,
            ["10:00 am: class", "12:00 pm: lunch", "01:00 pm: compose"]
        );
        assert!(r.warnings[0].message.contains("read as 12:00 pm (noon)"));
        // At the start of the day it stays midnight.
        let mut r = Report::default();
        let out = normalize(&lines(&["12:00 am: sleep", "07:00 am: wake"]), "x", &mut r);
        assert_eq!(out, ["12:00 am: sleep", "07:00 am: wake"]);
        assert!(r.warnings.is_empty());
    }

    #[test]
    fn lines_without_times_are_left_out_and_equal_times_merged() {
        let mut r = Report::default();
        let out = normalize(
            &lines(&["07:00 am: wake", "relax", "07:00 am: shower"]),
            "x.json",
            &mut r,
        );
        assert_eq!(out, ["07:00 am: wake, then shower"]);
        let w: Vec<String> = r.warnings.iter().map(ToString::to_string).collect();
        assert!(
            w[0].contains("example_day_plan[1]") && w[0].contains("left out"),
            "{w:?}"
        );
        assert!(w[1].contains("merged"), "{w:?}");
    }
}

//! Simulated time: dates and 12-hour times as the Humanoid Agents state files write them, the
//! strict parser of a day-plan line, and state file names. The one home of these formats:
//! the world, the agents, the checker and the engine's plan machine all use it.
//!
//! Times are minutes after midnight (`360` is 06:00).

use chrono::NaiveDate;

/// Minutes in a day.
pub const MINUTES_PER_DAY: u32 = 24 * 60;

/// Characters in a written 12-hour time (`"06:00 am"`).
pub const TIME_LEN: usize = 8;

/// The text of quarter hour `q` of a day (`0` → `"12:00 am"`), as [`format_time`] writes it;
/// `const` so that tables of times can be built at compile time.
pub const fn quarter_text(q: usize) -> [u8; TIME_LEN] {
    let m = q * 15;
    let h24 = (m / 60) % 24;
    let mm = m % 60;
    let h12 = if h24.is_multiple_of(12) { 12 } else { h24 % 12 };
    [
        b'0' + (h12 / 10) as u8,
        b'0' + (h12 % 10) as u8,
        b':',
        b'0' + (mm / 10) as u8,
        b'0' + (mm % 10) as u8,
        b' ',
        if h24 < 12 { b'a' } else { b'p' },
        b'm',
    ]
}

/// A date as the state JSON writes it: `"Tuesday Jan 03 2023"`.
pub fn format_date(d: NaiveDate) -> String {
    d.format("%A %b %d %Y").to_string()
}

/// A time as a 12-hour clock: `0` → `"12:00 am"`, `375` → `"06:15 am"`, `750` → `"12:30 pm"`,
/// `1380` → `"11:00 pm"`. Minutes of 1440 and more wrap to the next day (`1440` → `"12:00 am"`).
pub fn format_time(minutes: u32) -> String {
    let m = minutes % MINUTES_PER_DAY;
    let (h, mm) = (m / 60, m % 60);
    let h12 = if h % 12 == 0 { 12 } else { h % 12 };
    let half = if h < 12 { "am" } else { "pm" };
    format!("{h12:02}:{mm:02} {half}")
}

/// Parses a 12-hour time written exactly as [`format_time`] writes it, `"hh:mm am"` or
/// `"hh:mm pm"` (hh 01–12, mm 00–59, lowercase, one space); `None` for anything else.
pub fn parse_time(s: &str) -> Option<u32> {
    let b = s.as_bytes();
    if b.len() != TIME_LEN || b[2] != b':' || b[5] != b' ' {
        return None;
    }
    let h = two_digits(b[0], b[1])?;
    let m = two_digits(b[3], b[4])?;
    if !(1..=12).contains(&h) || m > 59 {
        return None;
    }
    let pm = match &b[6..8] {
        b"am" => false,
        b"pm" => true,
        _ => return None,
    };
    Some((h % 12 + if pm { 12 } else { 0 }) * 60 + m)
}

/// Parses a 24-hour `"HH:MM"` time of day (00:00–23:59, and `"24:00"` for the end of the day);
/// `None` for anything else.
pub fn parse_hhmm(s: &str) -> Option<u32> {
    let b = s.as_bytes();
    if b.len() != 5 || b[2] != b':' {
        return None;
    }
    let h = two_digits(b[0], b[1])?;
    let m = two_digits(b[3], b[4])?;
    match (h, m) {
        (24, 0) => Some(MINUTES_PER_DAY),
        (0..=23, 0..=59) => Some(h * 60 + m),
        _ => None,
    }
}

/// Writes minutes after midnight as `"HH:MM"` (24-hour, `1440` → `"24:00"`).
pub fn format_hhmm(minutes: u32) -> String {
    format!("{:02}:{:02}", minutes / 60, minutes % 60)
}

/// Splits one line of a day plan, `"06:00 am: wake up"` → `(360, "wake up")`: a time as
/// [`parse_time`] reads it, then `": "`; the rest is returned as it is (possibly empty).
pub fn split_plan_line(line: &str) -> Option<(u32, &str)> {
    let time = parse_time(line.get(..TIME_LEN)?)?;
    let activity = line.get(TIME_LEN..)?.strip_prefix(": ")?;
    Some((time, activity))
}

/// Parses one line of a day plan, `"06:00 am: wake up"` → `(360, "wake up")`: a line as
/// [`split_plan_line`] splits it, with a non-empty activity (returned trimmed). `None` if the
/// line is malformed or the activity is empty.
pub fn parse_plan_line(line: &str) -> Option<(u32, &str)> {
    let (time, activity) = split_plan_line(line)?;
    let activity = activity.trim();
    (!activity.is_empty()).then_some((time, activity))
}

/// The file name of the state JSON of a step: `"state_2023-01-03_06h15.json"` (24-hour; the
/// end of the day, 1440, is `24h00`).
pub fn state_file_name(d: NaiveDate, minutes: u32) -> String {
    format!(
        "state_{}_{:02}h{:02}.json",
        d.format("%Y-%m-%d"),
        minutes / 60,
        minutes % 60
    )
}

/// Parses a strict `YYYY-MM-DD` date.
pub fn parse_date(s: &str) -> Option<NaiveDate> {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    if !b
        .iter()
        .enumerate()
        .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    {
        return None;
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()
}

fn two_digits(a: u8, b: u8) -> Option<u32> {
    if a.is_ascii_digit() && b.is_ascii_digit() {
        Some(u32::from(a - b'0') * 10 + u32::from(b - b'0'))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_times_on_a_twelve_hour_clock() {
        assert_eq!(format_time(0), "12:00 am");
        assert_eq!(format_time(375), "06:15 am");
        assert_eq!(format_time(720), "12:00 pm");
        assert_eq!(format_time(750), "12:30 pm");
        assert_eq!(format_time(1380), "11:00 pm");
        assert_eq!(format_time(1439), "11:59 pm");
        assert_eq!(format_time(1440), "12:00 am");
        assert_eq!(format_time(1440 + 375), "06:15 am");
    }

    #[test]
    fn every_quarter_hour_round_trips() {
        let mut seen = std::collections::HashSet::new();
        for q in 0..96 {
            let m = q * 15;
            let s = format_time(m);
            assert!(seen.insert(s.clone()), "{s} twice");
            assert_eq!(parse_time(&s), Some(m), "{s}");
        }
        for m in 0..MINUTES_PER_DAY {
            assert_eq!(parse_time(&format_time(m)), Some(m));
        }
        for q in 0..200 {
            let text = quarter_text(q);
            assert_eq!(
                std::str::from_utf8(&text).unwrap(),
                format_time(q as u32 * 15)
            );
        }
    }

    #[test]
    fn time_parsing_is_strict() {
        for bad in [
            "6:00 am",
            "06:00am",
            "06:00 AM",
            "13:00 pm",
            "00:30 am",
            "06:60 am",
            "06:00  am",
            "06:00 am ",
            " 06:00 am",
            "06-00 am",
            "",
            "é6:00 am",
            "06:00 xm",
        ] {
            assert_eq!(parse_time(bad), None, "{bad:?}");
        }
        assert_eq!(parse_time("12:00 am"), Some(0));
        assert_eq!(parse_time("12:45 pm"), Some(765));
    }

    #[test]
    fn parses_plan_lines() {
        assert_eq!(
            parse_plan_line("06:00 am: wake up and stretch"),
            Some((360, "wake up and stretch"))
        );
        assert_eq!(parse_plan_line("11:30 pm: sleep "), Some((1410, "sleep")));
        for bad in [
            "06:00 am wake up",
            "06:00 am:",
            "06:00 am:   ",
            "06:00 am:wake up",
            "6:00 am: wake up",
            "06:00: wake up",
            "wake up",
            "06:00 aé: x",
        ] {
            assert_eq!(parse_plan_line(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn parses_24_hour_times() {
        assert_eq!(parse_hhmm("06:00"), Some(360));
        assert_eq!(parse_hhmm("00:00"), Some(0));
        assert_eq!(parse_hhmm("24:00"), Some(1440));
        for bad in ["24:15", "6:00", "06:60", "25:00", "06.00", "06:00:00"] {
            assert_eq!(parse_hhmm(bad), None, "{bad}");
        }
        assert_eq!(format_hhmm(1440), "24:00");
        assert_eq!(format_hhmm(375), "06:15");
    }

    #[test]
    fn formats_dates_and_state_file_names() {
        let d = NaiveDate::from_ymd_opt(2023, 1, 3).unwrap();
        assert_eq!(format_date(d), "Tuesday Jan 03 2023");
        assert_eq!(state_file_name(d, 375), "state_2023-01-03_06h15.json");
        assert_eq!(state_file_name(d, 1440), "state_2023-01-03_24h00.json");
        assert_eq!(parse_date("2023-01-03"), Some(d));
        for bad in [
            "2023-1-3",
            "2023-02-30",
            "03/01/2023",
            "2023-01-03T00:00",
            "+023-01-03",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }
}

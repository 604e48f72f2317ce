//! 12-hour clock times as plan lines write them (`"06:00 am"`), and the quarter-hour table
//! the plan machine matches prefixes against.

/// Quarter hours in a day.
pub(crate) const QUARTERS: usize = 96;

/// Characters in a written time.
pub(crate) const TIME_LEN: usize = 8;

/// The text of quarter hour `q` (`0` → `"12:00 am"`).
const fn quarter_text(q: usize) -> [u8; TIME_LEN] {
    let m = q * 15;
    let h24 = m / 60;
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

/// `CANDIDATES[pos][byte]`: the quarter hours whose text has `byte` at `pos`, as bits.
const CANDIDATES: [[u128; 128]; TIME_LEN] = {
    let mut table = [[0u128; 128]; TIME_LEN];
    let mut q = 0;
    while q < QUARTERS {
        let text = quarter_text(q);
        let mut pos = 0;
        while pos < TIME_LEN {
            table[pos][text[pos] as usize] |= 1 << q;
            pos += 1;
        }
        q += 1;
    }
    table
};

/// The quarter hours (as bits) whose text has `c` at position `pos`.
pub(crate) fn candidates(pos: usize, c: char) -> u128 {
    match CANDIDATES.get(pos) {
        Some(row) if c.is_ascii() => row[c as usize],
        _ => 0,
    }
}

/// Quarter hours `q` (as bits) with `after < 15 q <= last` (minutes; no lower bound for
/// `None`).
pub(crate) fn quarters_between(after: Option<u32>, last: u32) -> u128 {
    let upto = (last / 15 + 1).min(QUARTERS as u32);
    let below_last = (1u128 << upto) - 1;
    let from = after.map_or(0, |a| a / 15 + 1);
    if from >= QUARTERS as u32 {
        return 0;
    }
    below_last & !((1u128 << from) - 1)
}

/// The quarter hour of a time in minutes after midnight (wrapping days, rounding down).
pub(crate) fn quarter_of(minutes: u32) -> u8 {
    ((minutes % 1440) / 15) as u8
}

/// A time as a 12-hour clock: `0` → `"12:00 am"`, `750` → `"12:30 pm"` (wrapping days).
pub(crate) fn format_time(minutes: u32) -> String {
    let m = minutes % 1440;
    let h24 = m / 60;
    let h12 = if h24.is_multiple_of(12) { 12 } else { h24 % 12 };
    let half = if h24 < 12 { "am" } else { "pm" };
    format!("{h12:02}:{:02} {half}", m % 60)
}

/// Parses a time written exactly as plan lines write them: `"hh:mm am"` with `hh` 01–12,
/// `mm` one of 00, 15, 30, 45 and lowercase `am`/`pm`. Minutes after midnight.
pub(crate) fn parse_time(s: &str) -> Option<u32> {
    let b: &[u8; TIME_LEN] = s.as_bytes().try_into().ok()?;
    let num = |i: usize| -> Option<u32> {
        let (t, u) = (b[i], b[i + 1]);
        (t.is_ascii_digit() && u.is_ascii_digit())
            .then(|| u32::from(t - b'0') * 10 + u32::from(u - b'0'))
    };
    let (h, m) = (num(0)?, num(3)?);
    if b[2] != b':'
        || b[5] != b' '
        || b[7] != b'm'
        || !(1..=12).contains(&h)
        || m % 15 != 0
        || m >= 60
    {
        return None;
    }
    let pm = match b[6] {
        b'a' => 0,
        b'p' => 720,
        _ => return None,
    };
    Some((h % 12) * 60 + m + pm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_parses_twelve_hour_times() {
        for (m, s) in [
            (0, "12:00 am"),
            (360, "06:00 am"),
            (720, "12:00 pm"),
            (750, "12:30 pm"),
            (1425, "11:45 pm"),
            (1440 + 15, "12:15 am"),
        ] {
            assert_eq!(format_time(m), s);
            assert_eq!(parse_time(s), Some(m % 1440));
        }
        for q in 0..QUARTERS {
            let text = quarter_text(q);
            assert_eq!(
                std::str::from_utf8(&text).unwrap(),
                format_time(q as u32 * 15)
            );
        }
        for bad in [
            "00:00 am",
            "13:00 pm",
            "06:10 am",
            "06:00 AM",
            "6:00 am",
            "06:00am",
            "06:60 am",
            "06:00 xm",
            "٠٦:00 am",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn quarter_sets() {
        assert_eq!(quarters_between(None, 1439).count_ones(), 96);
        assert_eq!(quarters_between(None, 0), 1);
        assert_eq!(quarters_between(Some(0), 0), 0);
        assert_eq!(quarters_between(Some(1425), 5000), 0);
        assert_eq!(quarters_between(Some(360), 420), 0b1111 << 25);
        assert_eq!(quarters_between(Some(361), 419), 0b111 << 25);
        // "1" then "2" first: 12:xx am/pm and 10-12.
        let c = candidates(0, '1') & candidates(1, '2');
        assert_eq!(c.count_ones(), 8);
        assert_eq!(candidates(0, 'é'), 0);
        assert_eq!(candidates(8, '1'), 0);
    }
}

//! The quarter-hour table the plan machine matches 12-hour times (`"06:00 am"`, written by
//! [`crate::formats::clock`]) against.

/// Quarter hours in a day.
pub(crate) const QUARTERS: usize = 96;

use crate::formats::clock::quarter_text;
pub(crate) use crate::formats::clock::{format_time, TIME_LEN};

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

#[cfg(test)]
mod tests {
    use super::*;

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

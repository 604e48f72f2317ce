//! [`PlanMachine`]: day-plan lines `"hh:mm am: activity\n"`, and [`parse_plan`] to read them.

use std::sync::Arc;

use super::time::{candidates, format_time, quarter_of, quarters_between, TIME_LEN};
use super::{extend_text, newline, CharMachine, Letters, TextRun};
use crate::formats::clock::split_plan_line;
use crate::formats::script::all_east_asian;

/// Which times the lines of a plan carry (minutes after midnight).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PlanTimes {
    /// Line `i` must start with exactly the time `times[i]` (rounded down to a quarter hour,
    /// wrapping days); the plan must end after the last line's `'\n'`.
    Fixed(Vec<u32>),
    /// Model-chosen quarter-hour times, strictly increasing, each in `(after, last]`, between
    /// `min_lines` and `max_lines` lines. At a line start after at least `min_lines` lines an
    /// empty line (`'\n'`) ends the plan, as may a stop token; the plan must end when
    /// `max_lines` lines are written or no later time is possible.
    Increasing {
        after: Option<u32>,
        last: u32,
        min_lines: usize,
        max_lines: usize,
    },
}

/// The times as the machine uses them.
#[derive(Debug)]
enum Spec {
    /// Quarter hour of each line.
    Fixed(Vec<u8>),
    Increasing {
        after: Option<u32>,
        last: u32,
        min_lines: usize,
        max_lines: usize,
    },
}

/// Where in the plan the output stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// At the start of a line: a time next (or, when the plan may end, an empty line).
    Start,
    /// `typed` characters of the time written, matching the quarter hours `cand` (as bits).
    Time { typed: u8, cand: u128 },
    /// The time and `':'` written; a space is next.
    Colon,
    /// `chars` characters of the activity written.
    Activity { chars: usize },
    /// The plan is complete.
    Done,
}

/// The small, copyable part of the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct St {
    /// Lines completed.
    lines: usize,
    /// Quarter hour of the latest time written.
    prev: Option<u8>,
    phase: Phase,
}

/// Plan lines `"hh:mm am: activity\n"`: a 12-hour time (`hh` 01–12, `mm` 00/15/30/45,
/// lowercase `am`/`pm`), `": "`, then an activity of `1..=max_activity_chars` characters (the
/// first not a space, no control characters), ended by `'\n'`. Built by [`plan`].
#[derive(Clone, Debug)]
pub struct PlanMachine {
    spec: Arc<Spec>,
    max_chars: usize,
    letters: Letters,
    st: St,
}

/// A machine for plan lines with `times` and activities of at most `max_activity_chars`
/// characters (at least 1).
pub fn plan(times: PlanTimes, max_activity_chars: usize) -> PlanMachine {
    let spec = match times {
        PlanTimes::Fixed(times) => Spec::Fixed(times.into_iter().map(quarter_of).collect()),
        PlanTimes::Increasing {
            after,
            last,
            min_lines,
            max_lines,
        } => Spec::Increasing {
            after,
            last,
            min_lines,
            max_lines,
        },
    };
    let machine = PlanMachine {
        spec: Arc::new(spec),
        max_chars: max_activity_chars.max(1),
        letters: Letters::Any,
        st: St {
            lines: 0,
            prev: None,
            phase: Phase::Start,
        },
    };
    let st = machine.line_start(machine.st);
    PlanMachine { st, ..machine }
}

impl PlanMachine {
    /// The same machine with activities taking only `letters`.
    pub fn with_letters(self, letters: Letters) -> Self {
        Self { letters, ..self }
    }

    /// Lines completed so far.
    pub fn lines(&self) -> usize {
        self.st.lines
    }

    /// The quarter hours (as bits) the next line's time may be.
    fn next_times(&self, st: &St) -> u128 {
        match &*self.spec {
            Spec::Fixed(q) => q.get(st.lines).map_or(0, |&q| 1 << q),
            Spec::Increasing {
                after,
                last,
                max_lines,
                ..
            } => {
                if st.lines >= *max_lines {
                    return 0;
                }
                let prev = st.prev.map(|q| u32::from(q) * 15);
                let lower = match (prev, *after) {
                    (Some(p), Some(a)) => Some(p.max(a)),
                    (p, a) => p.or(a),
                };
                quarters_between(lower, *last)
            }
        }
    }

    /// `st` at the start of a line: done if no time may follow.
    fn line_start(&self, st: St) -> St {
        let phase = if self.next_times(&st) == 0 {
            Phase::Done
        } else {
            Phase::Start
        };
        St { phase, ..st }
    }

    /// Whether an empty line may end the plan at a line start.
    fn may_stop_at_start(&self, st: &St) -> bool {
        matches!(&*self.spec, Spec::Increasing { min_lines, .. } if st.lines >= *min_lines)
    }

    /// The state after `c`.
    fn step(&self, st: St, c: char) -> Option<St> {
        let phase = match st.phase {
            Phase::Done => return None,
            Phase::Start if c == '\n' => {
                return self.may_stop_at_start(&st).then_some(St {
                    phase: Phase::Done,
                    ..st
                })
            }
            Phase::Start => Phase::Time {
                typed: 0,
                cand: self.next_times(&st),
            },
            phase => phase,
        };
        let phase = match phase {
            Phase::Time { typed, cand } if usize::from(typed) < TIME_LEN => {
                let cand = cand & candidates(usize::from(typed), c);
                if cand == 0 {
                    return None;
                }
                let typed = typed + 1;
                let prev = if usize::from(typed) == TIME_LEN {
                    Some(cand.trailing_zeros() as u8)
                } else {
                    st.prev
                };
                return Some(St {
                    prev,
                    phase: Phase::Time { typed, cand },
                    ..st
                });
            }
            Phase::Time { .. } => (c == ':').then_some(Phase::Colon)?,
            Phase::Colon => (c == ' ').then_some(Phase::Activity { chars: 0 })?,
            Phase::Activity { chars } if c == '\n' => {
                if chars == 0 {
                    return None;
                }
                return Some(self.line_start(St {
                    lines: st.lines + 1,
                    ..st
                }));
            }
            // An activity starts with a letter (any script): a small model otherwise runs on
            // with more times ("10:00 am: 11:00 am: ...") or list numbers.
            Phase::Activity { chars: 0 } if !c.is_alphabetic() => return None,
            Phase::Activity { chars } => Phase::Activity {
                chars: extend_text(
                    chars,
                    self.max_chars,
                    c.encode_utf8(&mut [0; 4]),
                    self.letters,
                )?,
            },
            Phase::Start | Phase::Done => return None,
        };
        Some(St { phase, ..st })
    }
}

impl CharMachine for PlanMachine {
    fn feed(&self, c: char) -> Option<Self> {
        let st = self.step(self.st, c)?;
        Some(Self {
            spec: self.spec.clone(),
            max_chars: self.max_chars,
            letters: self.letters,
            st,
        })
    }

    fn can_end(&self) -> bool {
        match self.st.phase {
            Phase::Done => true,
            Phase::Start => self.may_stop_at_start(&self.st),
            _ => false,
        }
    }

    fn must_end(&self) -> bool {
        self.st.phase == Phase::Done
    }

    fn accepts(&self, s: &str) -> bool {
        let mut st = self.st;
        let mut rest = s;
        loop {
            if let Phase::Activity { chars } = st.phase {
                // The activity text up to the next '\n' in one pass.
                let (text, after) = rest.split_at(newline(rest));
                if chars == 0 && text.chars().next().is_some_and(|c| !c.is_alphabetic()) {
                    return false;
                }
                match extend_text(chars, self.max_chars, text, self.letters) {
                    Some(chars) => st.phase = Phase::Activity { chars },
                    None => return false,
                }
                rest = after;
            }
            let mut it = rest.chars();
            let Some(c) = it.next() else {
                return true;
            };
            match self.step(st, c) {
                Some(next) => st = next,
                None => return false,
            }
            rest = it.as_str();
        }
    }

    fn text_run(&self) -> Option<TextRun> {
        match self.st.phase {
            // The first character has its own rule (a letter): checked character by character.
            Phase::Activity { chars } if chars > 0 => Some(TextRun {
                chars,
                max_chars: self.max_chars,
                letters: self.letters,
            }),
            _ => None,
        }
    }

    fn forced(&self) -> Option<String> {
        let Spec::Fixed(q) = &*self.spec else {
            return None;
        };
        // The space after the colon is left to the model: BPE vocabularies spell it as part
        // of the next word (" Wake"), and a lone forced space throws a small model off.
        match self.st.phase {
            Phase::Start => {
                let quarter = *q.get(self.st.lines)?;
                Some(format!("{}:", format_time(u32::from(quarter) * 15)))
            }
            _ => None,
        }
    }

    fn accepts_any(&self, lo: char, hi: char) -> bool {
        // Times are ASCII; every range a partial multi-byte character spans holds printable,
        // non-space characters. The first character of an activity (a letter) must come
        // whole within a token, since a partial one might complete to a non-letter.
        !lo.is_ascii()
            && matches!(self.st.phase, Phase::Activity { chars } if chars > 0 && chars < self.max_chars)
            && (self.letters.is_any() || !all_east_asian(lo, hi))
    }
}

/// Parses plan text back: the well-formed lines `"hh:mm am: activity"` as (minutes after
/// midnight, activity with trailing spaces trimmed), in order, dropping any malformed line
/// (also a validation of untrusted text). A last line without `'\n'` counts; a `'\r'` before
/// the `'\n'` is ignored. Times need not increase.
pub fn parse_plan(text: &str) -> Vec<(u32, String)> {
    text.split('\n')
        .filter_map(|line| {
            let line = line.strip_suffix('\r').unwrap_or(line);
            let (minutes, activity) = split_plan_line(line).filter(|(m, _)| m % 15 == 0)?;
            let ok = !activity.is_empty()
                && extend_text(0, usize::MAX, activity, Letters::Any).is_some();
            ok.then(|| (minutes, activity.trim_end().to_string()))
        })
        .collect()
}

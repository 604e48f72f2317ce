//! Unit tests of each machine on strings (the token adapter in `adapter`).

use super::time::format_time;
use super::*;
use crate::formats::emoji::{is_emoji, is_emoji_text};

/// Feeds `s`; `None` if some character is rejected.
fn run<M: CharMachine>(m: &M, s: &str) -> Option<M> {
    let mut m = m.clone();
    for c in s.chars() {
        m = m.feed(c)?;
    }
    assert!(m.accepts("") && m.clone().accepts(""));
    Some(m)
}

fn accepted<M: CharMachine>(m: &M, s: &str) -> bool {
    let fed = run(m, s).is_some();
    assert_eq!(fed, m.accepts(s), "accepts and feed disagree on {s:?}");
    if let Some(r) = m.text_run().filter(|_| !s.contains('\n')) {
        let by_rules = super::extend_text(r.chars, r.max_chars, s, r.letters).is_some();
        assert_eq!(fed, by_rules, "the text run and feed disagree on {s:?}");
    }
    fed
}

#[test]
fn emoji_machine() {
    let m = emoji(2);
    assert!(!m.can_end() && !m.must_end());
    for ok in ["🙂", "🙂😀", "☀️🌧", "❤️☕"] {
        assert!(accepted(&m, ok), "{ok:?}");
    }
    for bad in [
        "a",
        "🙂 ",
        " 🙂",
        "🙂😀🙂",
        "️🙂",
        "🙂️️",
        "1",
        "#",
        "©",
        "🙂\n",
        "🇫",
        "🏻",
    ] {
        assert!(!accepted(&m, bad), "{bad:?}");
    }
    let one = run(&m, "🙂").unwrap();
    assert!(!one.can_end() && !one.must_end());
    let two = run(&m, "🙂😀").unwrap();
    assert!(two.can_end() && two.must_end());
    assert!(two.feed('\u{FE0F}').is_some() && two.feed('😀').is_none());
    assert!(emoji(0).must_end() && emoji(0).feed('🙂').is_none());
    assert!(is_emoji_text("🙂😀", Some(2)) && is_emoji_text("☀️", None));
    assert!(!is_emoji_text("🙂😀", Some(1)) && !is_emoji_text("", None));
    assert!(is_emoji_text("", Some(0)) && !is_emoji_text("🙂 😀", None));
    assert!(is_emoji('🙂') && is_emoji('☕') && is_emoji('🫠') && !is_emoji('a'));
    assert!(!is_emoji('\u{FE0F}') && !is_emoji('0') && !is_emoji('\u{1F3FD}'));
    assert!(!is_emoji('‼') && !is_emoji('™') && !is_emoji('➡') && is_emoji('❤') && is_emoji('⭐'));
    // Partial characters: F0 9F.. holds emoji, F0 90.. does not.
    assert!(m.accepts_any('\u{1F000}', '\u{1FFFF}'));
    assert!(!m.accepts_any('\u{10000}', '\u{10FFF}'));
    assert!(one.accepts_any('\u{FE00}', '\u{FE3F}') && !m.accepts_any('\u{FE00}', '\u{FE3F}'));
}

#[test]
fn line_machine() {
    let m = line(10);
    assert!(!m.can_end() && !m.must_end());
    for ok in ["hello\n", "Grüße, 世界!", "a b c", "0123456789\n", "x  \n"] {
        assert!(accepted(&m, ok), "{ok:?}");
    }
    for bad in [
        " hi",
        "\n",
        "a\tb",
        "hi\nthere",
        "01234567890",
        "a\r\n",
        "a\u{7}",
        "\u{2028}",
    ] {
        assert!(!accepted(&m, bad), "{bad:?}");
    }
    let some = run(&m, "hi").unwrap();
    assert!(some.can_end() && !some.must_end() && some.chars() == 2);
    let full = run(&m, "0123456789").unwrap();
    assert!(full.feed('x').is_none() && full.feed('\n').is_some());
    assert!(!full.accepts_any('\u{80}', '\u{FF}') && some.accepts_any('\u{80}', '\u{FF}'));
    let done = run(&m, "hi\n").unwrap();
    assert!(done.must_end() && done.can_end() && done.feed('x').is_none());
    assert!(accepted(&line(0), "x\n") && !accepted(&line(0), "xy"));
}

#[test]
fn machines_in_an_alphabet_refuse_east_asian_characters() {
    let m = line(20).with_letters(Letters::Alphabet);
    for ok in ["Grüße, café!", "naïve — “yes”", "Привет", "ok 🙂"] {
        assert!(accepted(&m, ok), "{ok:?}");
    }
    for bad in ["世界", "hi！", "at the柜台", "안녕", "カフェ", "a，b"] {
        assert!(!accepted(&m, bad), "{bad:?}");
        assert!(accepted(&line(20), bad), "{bad:?} with any letters");
    }
    let some = run(&m, "hi").unwrap();
    // A partial character that can only become an ideograph (E4 ..) is refused; one that
    // may become a Latin letter (C3 ..) or punctuation (E2 80 ..) is not.
    assert!(!some.accepts_any('\u{4000}', '\u{4FFF}'));
    assert!(some.accepts_any('\u{C0}', '\u{FF}') && some.accepts_any('\u{2000}', '\u{203F}'));
    let p = plan(PlanTimes::Fixed(vec![360]), 20).with_letters(Letters::Alphabet);
    assert!(accepted(&p, "06:00 am: wake up\n"));
    assert!(!accepted(&p, "06:00 am: 起床\n"));
    assert!(!accepted(&p, "06:00 am: wake up！\n"));
    let act = run(&p, "06:00 am: w").unwrap();
    assert!(!act.accepts_any('\u{4000}', '\u{4FFF}') && act.accepts_any('\u{C0}', '\u{FF}'));
}

#[test]
fn plan_machine_fixed_times() {
    let m = plan(PlanTimes::Fixed(vec![360, 450, 720]), 12);
    assert!(!m.can_end() && !m.must_end());
    let text = "06:00 am: wake up\n07:30 am: breakfast\n12:00 pm: lunch\n";
    let done = run(&m, text).expect("plan accepted");
    assert!(done.must_end() && done.can_end() && done.lines() == 3);
    assert!(done.feed('0').is_none() && done.feed('\n').is_none());
    for bad in [
        "07:00 am: wake up\n",
        "06:00 am: wake\n06:00 am",
        "6:00 am: wake\n",
        "06:00 AM: wake\n",
        "06:00 am:  wake\n",
        "06:00 am: \n",
        "06:00 am:wake\n",
        "06:00 am: wake\tup\n",
        "06:00 am: wake up early!\n",
        "06:00 am: 10:00 am: wake\n",
        "\n",
        " 06:00 am",
    ] {
        assert!(!accepted(&m, bad), "{bad:?}");
    }
    let full = run(&m, "06:00 am: a23456789012").unwrap();
    assert!(full.feed('x').is_none() && full.feed('\n').is_some());
    assert!(!full.accepts_any('\u{80}', '\u{FF}'));
    let mid = run(&m, "06:00 am: é").unwrap();
    assert!(mid.accepts_any('\u{800}', '\u{FFF}') && !m.accepts_any('\u{80}', '\u{FF}'));
    assert!(plan(PlanTimes::Fixed(vec![]), 5).must_end());
    // Non-quarter times round down; days wrap.
    assert!(accepted(
        &plan(PlanTimes::Fixed(vec![1440 + 367]), 5),
        "06:00 am: x\n"
    ));
    for q in 0..96 {
        let line = format!("{}: x\n", format_time(q * 15));
        assert!(
            accepted(&plan(PlanTimes::Fixed(vec![q * 15]), 5), &line),
            "{line}"
        );
    }
}

fn increasing(after: Option<u32>, last: u32, min: usize, max: usize) -> PlanMachine {
    plan(
        PlanTimes::Increasing {
            after,
            last,
            min_lines: min,
            max_lines: max,
        },
        20,
    )
}

#[test]
fn plan_machine_increasing_times() {
    let m = increasing(Some(480), 1080, 2, 4);
    assert!(!m.can_end());
    assert!(accepted(&m, "09:00 am: work\n12:30 pm: lunch\n"));
    assert!(!accepted(&m, "08:00 am: work\n"), "not after `after`");
    assert!(!accepted(&m, "06:15 pm: work\n"), "after `last`");
    assert!(accepted(&m, "06:00 pm: work\n"), "`last` itself");
    assert!(
        !accepted(&m, "09:00 am: a\n09:00 am: b\n"),
        "strictly increasing"
    );
    assert!(!accepted(&m, "12:00 pm: a\n11:45 am: b\n"));
    assert!(!accepted(&m, "09:00 am: a\n\n"), "fewer than min_lines");
    let two = run(&m, "09:00 am: a\n10:00 am: b\n").unwrap();
    assert!(two.can_end() && !two.must_end());
    assert!(run(&two, "\n").unwrap().must_end());
    let four = run(&two, "11:00 am: c\n11:15 am: d\n").unwrap();
    assert!(four.must_end() && four.feed('1').is_none(), "max_lines");
    let at_last = run(&m, "09:00 am: a\n06:00 pm: b\n").unwrap();
    assert!(at_last.must_end(), "no later time is possible");
    // Prefixes: only those some allowed time completes.
    let late = increasing(Some(1380), 1439, 1, 5);
    assert!(accepted(&late, "11:"));
    assert!(!accepted(&late, "10"), "10:xx pm is before 11:00 pm");
    assert!(
        !accepted(&late, "11:0"),
        "11:00 am/pm are not after 11:00 pm"
    );
    assert!(!accepted(&late, "11:15 a"));
    assert!(accepted(&late, "11:15 pm: sleep\n11:45 pm: dream\n"));
    assert!(run(&late, "11:45 pm: sleep\n").unwrap().must_end());
    assert!(
        increasing(Some(1425), 2000, 1, 5).must_end(),
        "nothing after 11:45 pm"
    );
    assert!(increasing(Some(600), 600, 1, 5).must_end());
    assert!(increasing(None, 600, 0, 0).must_end());
    let free = increasing(None, 1439, 0, 3);
    assert!(free.can_end() && accepted(&free, "12:00 am: midnight snack\n"));
    assert!(run(&free, "\n").unwrap().must_end());
}

#[test]
fn parses_plans() {
    let text = "06:00 am: wake up  \r\nnot a line\n07:15 am: 早餐\n13:00 pm: bad\n07:20 am: bad\n\
                08:00 am:  space\n08:00 am: \n09:45 pm: last";
    assert_eq!(
        parse_plan(text),
        vec![
            (360, "wake up".to_string()),
            (435, "早餐".to_string()),
            (1305, "last".to_string())
        ]
    );
    for junk in [
        "",
        "\n\n",
        "06:00 a€: x",
        "€€€€€€€€€€€",
        "12:00 am:",
        "06:10 am: off the quarter hour",
        "6:00 am: x",
        "12:00 am: \u{0}x",
    ] {
        assert!(parse_plan(junk).is_empty(), "{junk:?}");
    }
    assert_eq!(
        parse_plan("12:00 am: x\n12:00 pm: y"),
        vec![(0, "x".into()), (720, "y".into())]
    );
}

mod adapter;

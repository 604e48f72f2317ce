//! Unit tests: each machine on strings, and the token adapter on small vocabularies.

use std::sync::Arc;

use super::super::request::TokenConstraint;
use super::time::format_time;
use super::*;

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
        let by_rules = super::extend_text(r.chars, r.max_chars, s).is_some();
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
        "\n",
        " 06:00 am",
    ] {
        assert!(!accepted(&m, bad), "{bad:?}");
    }
    let full = run(&m, "06:00 am: 123456789012").unwrap();
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
        "12:00 am: \u{0}x",
    ] {
        assert!(parse_plan(junk).is_empty(), "{junk:?}");
    }
    assert_eq!(
        parse_plan("12:00 am: x\n12:00 pm: y"),
        vec![(0, "x".into()), (720, "y".into())]
    );
}

/// A byte-level-like vocabulary: every single byte, then `extra`, a stop token, two special
/// tokens (the second plain whitespace) and an empty token. Returns the table and the ids of
/// the stop and the first special token. Extra tokens may repeat a single byte ([`id_of`]
/// finds the extra one).
fn vocab(extra: &[&[u8]]) -> (Arc<TokenTable>, u32, u32) {
    let mut tokens: Vec<(Vec<u8>, bool)> = (0..=255u8).map(|b| (vec![b], false)).collect();
    tokens.extend(extra.iter().map(|t| (t.to_vec(), false)));
    let stop = tokens.len() as u32;
    tokens.push((b"<eos>".to_vec(), true));
    tokens.push((b"<special>".to_vec(), true));
    tokens.push((b"\n\n".to_vec(), true));
    tokens.push((Vec::new(), false));
    (TokenTable::from_parts(tokens, &[stop]), stop, stop + 1)
}

fn allowed(c: &mut dyn TokenConstraint, generated: &[u32], n: usize) -> Vec<u32> {
    let mut logits = vec![0.0; n + 3];
    c.mask(generated, &mut logits);
    assert!(logits[n..].iter().all(|l| *l == f32::NEG_INFINITY));
    (0..n as u32)
        .filter(|&i| logits[i as usize] == 0.0)
        .collect()
}

fn id_of(table: &TokenTable, bytes: &[u8]) -> u32 {
    (0..table.len() as u32)
        .rev()
        .find(|&i| table.token_bytes(i) == Some(bytes))
        .unwrap()
}

#[test]
fn adapter_masks_tokens_across_utf8_boundaries() {
    let (table, stop, special) = vocab(&[
        b"\xF0\x9F",
        b"\x99\x82",
        b"\xF0\x9F\x99",
        b"\x82\xEF\xB8",
        b"ab",
    ]);
    let n = table.len();
    assert_eq!(table.token_bytes(stop), None);
    assert_eq!(table.token_bytes(special), None);
    assert_eq!(
        table.token_bytes(special + 1),
        Some(&b"\n\n"[..]),
        "whitespace specials are text"
    );
    let mut c = Constrained::new(table.clone(), emoji(1));
    let first = allowed(&mut c, &[], n);
    let f0_9f = id_of(&table, b"\xF0\x9F");
    assert!(first.contains(&f0_9f) && first.contains(&0xF0) && first.contains(&(0xE2)));
    assert!(!first.contains(&stop) && !first.contains(&special) && !first.contains(&(b'a' as u32)));
    assert!(
        !first.contains(&0x80) && !first.contains(&0xF5),
        "continuations and bad leads"
    );
    // After F0 9F only continuation bytes that lead to emoji.
    let next = allowed(&mut c, &[f0_9f], n);
    let x99_82 = id_of(&table, b"\x99\x82");
    assert!(next.contains(&x99_82) && next.contains(&0x98) && !next.contains(&0x87));
    assert!(!c.is_complete(&[f0_9f]));
    assert!(c.is_complete(&[f0_9f, x99_82]), "🙂 then must end");
    assert_eq!(allowed(&mut c, &[f0_9f, x99_82], n), vec![stop]);
    // 🙂 plus a partial U+FE0F: not complete until the selector is.
    let head = id_of(&table, b"\xF0\x9F\x99");
    let tail = id_of(&table, b"\x82\xEF\xB8");
    assert!(!c.is_complete(&[head, tail]));
    assert_eq!(allowed(&mut c, &[head, tail], n), vec![0x8F]);
    assert!(c.is_complete(&[head, tail, 0x8F]));
    // A token the mask forbids leaves nothing allowed.
    assert!(allowed(&mut c, &[b'a' as u32], n).is_empty() && !c.is_complete(&[b'a' as u32]));
    assert!(c.state_after(&[]).is_some() && c.state_after(&[head]).is_none());
}

#[test]
fn adapter_stops_only_where_the_machine_may_end() {
    let (table, stop, special) = vocab(&[b"hi", b" there", b"\n", b"x\ny"]);
    let n = table.len();
    let t = |s: &[u8]| id_of(&table, s);
    let mut c = Constrained::new(table.clone(), line(8));
    let first = allowed(&mut c, &[], n);
    assert!(
        !first.contains(&stop) && !first.contains(&t(b"\n")) && !first.contains(&(b' ' as u32))
    );
    assert!(first.contains(&t(b"hi")) && !first.contains(&special));
    let after = allowed(&mut c, &[t(b"hi")], n);
    assert!(after.contains(&stop) && after.contains(&t(b" there")) && !after.contains(&t(b"x\ny")));
    assert!(!after.contains(&(special + 1)), "\\n\\n is two lines");
    assert!(c.is_complete(&[t(b"hi"), t(b"\n")]));
    // Length: "hi there" is 8 characters, so only the end may follow.
    let full = allowed(&mut c, &[t(b"hi"), t(b" there")], n);
    assert_eq!(full, vec![b'\n' as u32, t(b"\n"), stop]);
    assert_ne!(t(b"\n"), b'\n' as u32);
    // Starting over with another sequence.
    assert!(!c.is_complete(&[t(b"hi")]));
    assert_eq!(allowed(&mut c, &[], n), first);
}

/// A check of a complete output.
type Check = Box<dyn Fn(&str) -> bool>;

/// Random walks through each machine's mask: every allowed token keeps the output
/// completable, and what ends is well-formed.
#[test]
fn random_walks_never_dead_end() {
    let extra: Vec<&[u8]> = vec![
        b"06",
        b":00",
        b" am",
        b": ",
        b"wake up",
        b"\n",
        b"12",
        b":30 pm",
        b" pm",
        b"\xC3",
        b"\xA9",
        b"caf\xC3",
        b"\xE4\xB8\xAD\xE6",
        b"\x96\x87",
        b"\xF0\x9F\x98",
        b"\x80",
        b"\xE2\x98\x80\xEF\xB8\x8F",
        b"10:",
        b"45",
        b"\n\n",
        b"09:15 am: read\n",
    ];
    let (table, stop, _) = vocab(&extra);
    let n = table.len();
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move |k: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % k as u64) as usize
    };
    let mut complete = 0;
    for walk in 0..300 {
        let (mut c, check): (Box<dyn TokenConstraint>, Check) = match walk % 4 {
            0 => (
                Box::new(Constrained::new(table.clone(), emoji(3))),
                Box::new(|s| is_emoji_text(s, Some(3))),
            ),
            1 => (
                Box::new(Constrained::new(table.clone(), line(12))),
                Box::new(|s: &str| {
                    let s = s.strip_suffix('\n').unwrap_or(s);
                    (1..=12).contains(&s.chars().count()) && !s.starts_with(' ')
                }),
            ),
            2 => (
                Box::new(Constrained::new(
                    table.clone(),
                    plan(PlanTimes::Fixed(vec![360, 750]), 6),
                )),
                Box::new(|s| parse_plan(s).iter().map(|p| p.0).collect::<Vec<_>>() == [360, 750]),
            ),
            _ => (
                Box::new(Constrained::new(
                    table.clone(),
                    increasing(Some(500), 800, 1, 3),
                )),
                Box::new(|s| {
                    let p = parse_plan(s);
                    (1..=3).contains(&p.len())
                        && p.windows(2).all(|w| w[0].0 < w[1].0)
                        && p.iter().all(|&(t, _)| t > 500 && t <= 800)
                }),
            ),
        };
        let mut generated = Vec::new();
        let mut ended = false;
        for _ in 0..200 {
            let ok = allowed(c.as_mut(), &generated, n);
            assert!(!ok.is_empty(), "dead end after {generated:?}");
            let id = ok[rand(ok.len())];
            if id == stop {
                ended = true;
                break;
            }
            generated.push(id);
            if c.is_complete(&generated) {
                ended = true;
                break;
            }
        }
        if ended {
            let bytes: Vec<u8> = generated
                .iter()
                .flat_map(|&i| table.token_bytes(i).unwrap().to_vec())
                .collect();
            let text = String::from_utf8(bytes).expect("complete outputs are UTF-8");
            assert!(check(&text), "walk {walk}: {text:?}");
            complete += 1;
        }
    }
    assert!(complete > 200, "only {complete} walks ended");
}

/// `accepts` (the mask's fast path) agrees with feeding character by character.
#[test]
fn accepts_agrees_with_feed_on_random_strings() {
    let pieces = [
        "0", "6", "1", ":", "00", "15", " am", " pm", ": ", "a", " ", "\n", "é", "🙂", "\u{FE0F}",
        "\t", "12", "30", "45", "ok",
    ];
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let mut rand = move |k: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % k as u64) as usize
    };
    let fixed = plan(PlanTimes::Fixed(vec![0, 375]), 4);
    let free = increasing(Some(0), 400, 1, 3);
    for _ in 0..5000 {
        let len = 1 + rand(12);
        let s: String = (0..len).map(|_| pieces[rand(pieces.len())]).collect();
        for prefix in ["", "12:00 am: ", "12:00 am: ab"] {
            if let Some(m) = run(&fixed, prefix) {
                accepted(&m, &s);
            }
        }
        accepted(&free, &s);
        accepted(&line(5), &s);
        accepted(&emoji(2), &s);
    }
}

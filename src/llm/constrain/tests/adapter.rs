//! Unit tests of the token adapter on small byte-level vocabularies.

use std::sync::Arc;

use super::super::super::request::TokenConstraint;
use super::*;

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

#[test]
fn in_an_alphabet_the_mask_drops_east_asian_tokens_and_their_first_bytes() {
    let han = "世".as_bytes();
    let (table, stop, _) = vocab(&[b"hi", "柜台".as_bytes(), " café".as_bytes(), &han[..2]]);
    let n = table.len();
    let t = |s: &[u8]| id_of(&table, s);
    let mut any = Constrained::new(table.clone(), line(20));
    let mut alpha = Constrained::new(table.clone(), line(20).with_letters(Letters::Alphabet));
    let after = [t(b"hi")];
    let (a, b) = (allowed(&mut any, &after, n), allowed(&mut alpha, &after, n));
    for tok in [t("柜台".as_bytes()), t(&han[..2]), 0xE4] {
        assert!(a.contains(&tok) && !b.contains(&tok), "{tok}");
    }
    for tok in [t(" café".as_bytes()), 0xC3, 0xE2, stop] {
        assert!(b.contains(&tok), "{tok}");
    }
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

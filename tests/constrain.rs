//! Constrained generation on the real default models: greedy outputs under each machine are
//! well-formed, end with `Stop`, and repeat exactly; and the per-step mask cost.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use humanoid::formats::emoji::is_emoji_text;
use humanoid::llm::constrain::{self, parse_plan, CharMachine, Constrained, PlanTimes, TokenTable};
use humanoid::llm::gguf::GgufFile;
use humanoid::llm::{
    Engine, EngineOptions, FinishReason, GenerateRequest, Generation, Message, Prompt, Request,
    Response, TokenConstraint, Tokenizer,
};

use crate::util;

fn chat(system: &str, user: &str) -> Prompt {
    Prompt::Chat(vec![Message::system(system), Message::user(user)])
}

fn request<M: CharMachine>(
    table: &Arc<TokenTable>,
    prompt: Prompt,
    machine: M,
    max_tokens: usize,
) -> Request {
    let mut g = GenerateRequest::new(prompt, max_tokens);
    g.constraint = Some(Constrained::shared(table.clone(), machine));
    Request::Generate(g)
}

/// Runs the requests as one batch, twice (the constraints start over), and checks that both
/// runs give the same generations, each ended by `Stop`.
fn run_twice(engine: &mut Engine, requests: &[Request]) -> Vec<Generation> {
    let mut run = || -> Vec<Generation> {
        engine.clear_prefix_cache();
        engine
            .run(requests.to_vec(), |_| {})
            .into_iter()
            .map(|r| match r.expect("request runs") {
                Response::Generated(g) => g,
                Response::Chosen(_) => unreachable!(),
            })
            .collect()
    };
    let first = run();
    let second = run();
    for (a, b) in first.iter().zip(&second) {
        assert_eq!(a.text, b.text, "the same request gave different text");
        assert_eq!(a.finish, FinishReason::Stop, "{:?}", a.text);
    }
    first
}

const PERSONA: &str = "You are Maria Lopez, 34, the baker of a small town. You love mornings.";

const FIXED: [u32; 5] = [360, 420, 540, 720, 1020];

fn plan_prompt() -> Prompt {
    chat(
        PERSONA,
        "Write your plan for today, one line per activity, each line like \
         `07:30 am: open the bakery`.",
    )
}

fn check_fixed(text: &str) {
    let parsed = parse_plan(text);
    let times: Vec<u32> = parsed.iter().map(|p| p.0).collect();
    assert_eq!(times, FIXED, "{text:?}");
    assert_eq!(text.lines().count(), FIXED.len(), "{text:?}");
    assert!(text.ends_with('\n') && parsed.iter().all(|p| !p.1.is_empty()));
}

fn check_increasing(text: &str, after: u32, last: u32, lines: std::ops::RangeInclusive<usize>) {
    let parsed = parse_plan(text);
    let nonempty = text.lines().filter(|l| !l.is_empty()).count();
    assert_eq!(parsed.len(), nonempty, "a malformed line in {text:?}");
    assert!(
        lines.contains(&parsed.len()),
        "{} lines: {text:?}",
        parsed.len()
    );
    assert!(parsed.windows(2).all(|w| w[0].0 < w[1].0), "{text:?}");
    assert!(
        parsed
            .iter()
            .all(|&(t, _)| t > after && t <= last && t % 15 == 0),
        "{text:?}"
    );
}

fn check_line(text: &str, max: usize) {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let n = body.chars().count();
    assert!((1..=max).contains(&n), "{text:?}");
    assert!(!body.starts_with(char::is_whitespace) && !body.chars().any(char::is_control));
}

#[test]
fn smollm2_constrained_outputs_are_well_formed_and_repeatable() {
    let mut engine = Engine::load(&util::smollm2(), EngineOptions::default()).expect("load");
    let table = TokenTable::new(engine.tokenizer());
    let feelings = [
        "How do you feel about the rain today? Answer with emoji only.",
        "Your best friend just got married. React with emoji.",
        "What did you have for breakfast? Answer with emoji.",
    ];
    let mut requests: Vec<Request> = feelings
        .iter()
        .map(|q| request(&table, chat(PERSONA, q), constrain::emoji(2), 24))
        .collect();
    requests.push(request(
        &table,
        chat(PERSONA, feelings[0]),
        constrain::emoji(3),
        32,
    ));
    requests.push(request(
        &table,
        plan_prompt(),
        constrain::plan(PlanTimes::Fixed(FIXED.to_vec()), 60),
        600,
    ));
    let increasing = PlanTimes::Increasing {
        after: Some(360),
        last: 1320,
        min_lines: 3,
        max_lines: 8,
    };
    requests.push(request(
        &table,
        plan_prompt(),
        constrain::plan(increasing, 60),
        800,
    ));
    let greet = "Greet your neighbour Tom in one short sentence.";
    requests.push(request(
        &table,
        chat(PERSONA, greet),
        constrain::line(80),
        64,
    ));
    requests.push(request(
        &table,
        chat(PERSONA, "What is your favourite bread?"),
        constrain::line(40),
        64,
    ));
    let out = run_twice(&mut engine, &requests);
    for g in &out {
        eprintln!("{:?} ({} tokens)", g.text, g.generated_tokens);
    }
    for g in &out[..3] {
        assert!(is_emoji_text(&g.text, Some(2)), "{:?}", g.text);
    }
    assert!(is_emoji_text(&out[3].text, Some(3)), "{:?}", out[3].text);
    check_fixed(&out[4].text);
    check_increasing(&out[5].text, 360, 1320, 3..=8);
    check_line(&out[6].text, 80);
    check_line(&out[7].text, 40);
}

#[test]
fn gemma3_emoji_and_plan_are_well_formed() {
    let mut engine = Engine::load(&util::gemma3(), EngineOptions::default()).expect("load");
    let table = TokenTable::new(engine.tokenizer());
    let requests = vec![
        request(
            &table,
            chat(
                PERSONA,
                "How do you feel about the rain today? Answer with emoji only.",
            ),
            constrain::emoji(2),
            24,
        ),
        request(
            &table,
            plan_prompt(),
            constrain::plan(PlanTimes::Fixed(FIXED.to_vec()), 50),
            500,
        ),
    ];
    let out = run_twice(&mut engine, &requests);
    for g in &out {
        eprintln!("{:?} ({} tokens)", g.text, g.generated_tokens);
    }
    assert!(is_emoji_text(&out[0].text, Some(2)), "{:?}", out[0].text);
    check_fixed(&out[1].text);
}

/// The mask's cost per step on a real vocabulary, in a few machine states (printed, not
/// asserted: it depends on the machine running the tests).
fn measure(path: &Path) {
    let g = GgufFile::open(path).expect("open gguf");
    let tok = Tokenizer::from_gguf(&g).expect("tokenizer");
    let start = Instant::now();
    let table = TokenTable::new(&tok);
    let built = start.elapsed();
    let encode = |s: &str| tok.encode(s, false).expect("encode");
    let fixed = || constrain::plan(PlanTimes::Fixed(FIXED.to_vec()), 60);
    let cases: Vec<(&str, Box<dyn TokenConstraint>, Vec<u32>)> = vec![
        (
            "plan, line start",
            Box::new(Constrained::new(table.clone(), fixed())),
            vec![],
        ),
        (
            "plan, activity",
            Box::new(Constrained::new(table.clone(), fixed())),
            encode("06:00 am: wake up and"),
        ),
        (
            "emoji, start",
            Box::new(Constrained::new(table.clone(), constrain::emoji(2))),
            vec![],
        ),
        (
            "line, middle",
            Box::new(Constrained::new(table.clone(), constrain::line(80))),
            encode("Good morning"),
        ),
    ];
    eprintln!(
        "{}: {} tokens, table built in {built:.2?}",
        path.file_name().unwrap().to_string_lossy(),
        table.len()
    );
    for (name, mut c, generated) in cases {
        let mut logits = vec![0.0f32; table.len()];
        c.mask(&generated, &mut logits);
        let allowed = logits.iter().filter(|l| l.is_finite()).count();
        assert!(allowed > 0, "{name}: no token allowed");
        let reps = 20;
        let start = Instant::now();
        for _ in 0..reps {
            logits.fill(0.0);
            c.mask(&generated, &mut logits);
        }
        let per_step = start.elapsed() / reps;
        eprintln!("  {name}: {allowed} tokens allowed, mask {per_step:.2?} per step");
    }
}

#[test]
fn mask_time_per_step() {
    measure(&util::smollm2());
    measure(&util::gemma3());
}

/// A world written in an alphabet keeps the 1.5B (trained much on Chinese) from writing
/// Chinese: asked for Chinese words, unconstrained it writes them; under `Letters::Alphabet`
/// it writes a complete line without any, and a plan's activities likewise (greedy).
#[test]
fn qwen2_in_an_alphabet_writes_no_chinese_japanese_or_korean() {
    use humanoid::formats::script::is_east_asian;
    use humanoid::llm::constrain::Letters;
    let mut engine = Engine::load(&util::qwen2(), EngineOptions::default()).expect("load");
    let table = TokenTable::new(engine.tokenizer());
    let ask = "How do you write 'good morning' and 'pharmacy counter' in Chinese? One line.";
    // "Write your plan from 7 to 9 am in Chinese, one line an hour."
    let plan_ask = "用中文写你早上7点到9点的计划，每小时一行。";
    let times = || PlanTimes::Fixed(vec![420, 480, 540]);
    let requests: Vec<Request> = vec![
        request(&table, chat(PERSONA, ask), constrain::line(80), 60),
        request(
            &table,
            chat(PERSONA, ask),
            constrain::line(80).with_letters(Letters::Alphabet),
            60,
        ),
        request(
            &table,
            chat(PERSONA, plan_ask),
            constrain::plan(times(), 40),
            120,
        ),
        request(
            &table,
            chat(PERSONA, plan_ask),
            constrain::plan(times(), 40).with_letters(Letters::Alphabet),
            160,
        ),
    ];
    let out = run_twice(&mut engine, &requests);
    for g in &out {
        eprintln!("{:?}", g.text);
    }
    let cjk = |s: &str| s.chars().any(is_east_asian);
    assert!(
        cjk(&out[0].text),
        "the prompt draws Chinese: {:?}",
        out[0].text
    );
    assert!(
        cjk(&out[2].text),
        "the prompt draws Chinese: {:?}",
        out[2].text
    );
    check_line(&out[1].text, 80);
    assert!(!cjk(&out[1].text), "{:?}", out[1].text);
    assert!(!cjk(&out[3].text), "{:?}", out[3].text);
    assert_eq!(parse_plan(&out[3].text).len(), 3, "{:?}", out[3].text);
}

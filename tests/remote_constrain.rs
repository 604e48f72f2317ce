//! Constrained generation through a server: the simulation's constraints (a line, two emoji,
//! plans of fixed and of model-chosen times) sent to `serve-llm` (which runs them as
//! in-process) and to llama.cpp's server (as GBNF grammars).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use humanoid::llm::constrain::{ConstraintSpec, PlanTimes, TokenTable};
use humanoid::llm::{
    Engine, EngineOptions, GenerateRequest, Inference, Message, Prompt, Request, Response, Sampling,
};
use humanoid::remote::{ConstraintMethod, RemoteClient};

use crate::remote::{remote_config, serve_llm, Server};
use crate::util;

/// Starts the server `HUMANOID_LLAMA_SERVER` points to (built by
/// `benches/remote/llama-server.sh`, or llama-cpp-python's through
/// `benches/remote/llama-cpp-python-server.sh`); `None`, saying so, when it is not set.
pub fn llama_server(test: &str) -> Option<Server> {
    let Some(exe) = std::env::var_os("HUMANOID_LLAMA_SERVER") else {
        eprintln!(
            "{test}: skipped: HUMANOID_LLAMA_SERVER is not set (no prebuilt llama-server here; \
             `bash benches/remote/llama-server.sh` builds one)"
        );
        return None;
    };
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = Command::new(PathBuf::from(exe))
        .arg("-m")
        .arg(util::smollm2())
        .args(["--host", "127.0.0.1", "--port", &port.to_string()])
        .args(["-c", "8192", "-np", "4", "--jinja"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("llama-server starts");
    let server = Server {
        child,
        url: format!("http://127.0.0.1:{port}/v1"),
    };
    let up = (0..600).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        // llama-server answers /health; llama-cpp-python's server only /v1/models.
        ["health", "v1/models"].iter().any(|p| {
            ureq::get(&format!("http://127.0.0.1:{port}/{p}"))
                .call()
                .is_ok()
        })
    });
    assert!(up, "llama-server did not come up on {}", server.url);
    Some(server)
}

/// The simulation's kinds of constrained generation, on prompts like its own, each with
/// its spec; greedy and sampled (seeded) as the simulation samples.
fn constrained_requests(table: &std::sync::Arc<TokenTable>) -> Vec<(ConstraintSpec, Request)> {
    let sys = "You are Eddy Lin, a music student who lives with his parents in a small town.";
    let day = PlanTimes::Increasing {
        after: Some(345),
        last: 1305,
        min_lines: 4,
        max_lines: 8,
    };
    let cases = [
        (
            "In one line: what are you doing right now?",
            ConstraintSpec::line(80),
            None,
        ),
        (
            "Say one sentence to your mother about breakfast.",
            ConstraintSpec::line(120),
            None,
        ),
        // An agent's words: the reply begun with a quotation mark and ended at the next one.
        (
            "What does Eddy Lin say to his mother about breakfast? Write only his words.",
            ConstraintSpec::line(120),
            Some("\""),
        ),
        (
            "Describe your current activity with two emoji.",
            ConstraintSpec::Emoji { count: 2 },
            None,
        ),
        (
            "Plan the hours from 7 am to 10 am, one line per hour.",
            ConstraintSpec::plan(PlanTimes::Fixed(vec![420, 480, 540, 600]), 60),
            None,
        ),
        (
            "Write your plan for today, one line per activity, with times.",
            ConstraintSpec::plan(day, 60),
            None,
        ),
    ];
    let mut out = Vec::new();
    for (k, (q, spec, prefill)) in cases.into_iter().enumerate() {
        for sampled in [false, true] {
            let mut messages = vec![Message::system(sys), Message::user(q)];
            messages.extend(prefill.map(Message::assistant));
            // A plan's budget covers its longest complete reply (a token a character at worst,
            // as in digit runs): the test is about the constraint, not the model's verbosity.
            let budget = match &spec {
                ConstraintSpec::Plan {
                    times,
                    max_activity_chars,
                    ..
                } => {
                    let lines = match times {
                        PlanTimes::Fixed(t) => t.len(),
                        PlanTimes::Increasing { max_lines, .. } => *max_lines,
                    };
                    lines * (max_activity_chars + 12)
                }
                _ => 160,
            };
            let mut g = GenerateRequest::new(Prompt::Chat(messages), budget);
            if let Some(p) = prefill {
                g.stop = vec![p.to_string()];
            }
            if sampled {
                g.sampling = Sampling::temperature(0.7);
                g.sampling.top_p = 0.9;
                g.seed = 1000 + k as u64;
            }
            g.constrain(table, spec.clone());
            out.push((spec.clone(), Request::Generate(g)));
        }
    }
    out
}

fn texts(results: Vec<Result<Response, humanoid::llm::LlmError>>) -> Vec<String> {
    results
        .into_iter()
        .enumerate()
        .map(|(i, r)| match r {
            Ok(Response::Generated(g)) => g.text,
            other => panic!("request {i}: not a generation: {other:?}"),
        })
        .collect()
}

/// serve-llm takes the constraints themselves, so what it writes is what the engine writes
/// in-process, well-formed, token for token.
#[test]
fn constrained_generation_through_serve_llm_equals_in_process() {
    let server = serve_llm();
    let mut client = RemoteClient::connect(remote_config(&server.url)).unwrap();
    assert_eq!(client.constraint_method(), ConstraintMethod::Native);
    let mut engine = Engine::load(&util::smollm2(), EngineOptions::default()).unwrap();
    let table = TokenTable::new(engine.tokenizer());
    let cases = constrained_requests(&table);
    let requests: Vec<Request> = cases.iter().map(|(_, r)| r.clone()).collect();
    let remote = texts(client.run(requests, &mut |_| {}));
    // Fresh constraints for the engine: a constraint remembers the tokens it has seen.
    let requests: Vec<Request> = constrained_requests(&table)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    let local = texts(engine.run(requests, |_| {}));
    for (i, ((spec, _), (r, l))) in cases.iter().zip(remote.iter().zip(&local)).enumerate() {
        eprintln!("request {i} {spec:?}:\n  remote {r:?}\n  local  {l:?}");
        assert!(
            spec.is_complete(r),
            "request {i}: {r:?} is not complete under {spec:?}"
        );
        assert_eq!(r, l, "request {i}");
    }
    assert_eq!(client.unconstrained_generations(), 0);
    assert_eq!(client.cut_replies(), 0);
    // Told not to send them, the same server generates unconstrained, and the client counts it.
    client.set_constraint_method(ConstraintMethod::Unconstrained);
    let one: Vec<Request> = constrained_requests(&table)
        .into_iter()
        .map(|(_, r)| r)
        .take(1)
        .collect();
    texts(client.run(one, &mut |_| {}));
    assert_eq!(client.unconstrained_generations(), 1);
}

/// llama.cpp's server takes the constraints as GBNF grammars: every reply is complete and
/// well-formed under its machine, with nothing to cut.
#[test]
fn llama_server_writes_under_gbnf_grammars() {
    let Some(server) = llama_server("llama_server_writes_under_gbnf_grammars") else {
        return;
    };
    let mut client = RemoteClient::connect(remote_config(&server.url)).unwrap();
    assert_eq!(client.constraint_method(), ConstraintMethod::Grammar);
    let engine = Engine::load(&util::smollm2(), EngineOptions::default()).unwrap();
    let table = TokenTable::new(engine.tokenizer());
    let cases = constrained_requests(&table);
    let requests: Vec<Request> = cases.iter().map(|(_, r)| r.clone()).collect();
    let replies = texts(client.run(requests, &mut |_| {}));
    for (i, ((spec, _), text)) in cases.iter().zip(&replies).enumerate() {
        eprintln!("request {i} {spec:?}:\n  {text:?}");
        assert!(
            spec.is_complete(text),
            "request {i}: {text:?} is not complete"
        );
    }
    assert_eq!(client.cut_replies(), 0);
    assert_eq!(client.unconstrained_generations(), 0);
}

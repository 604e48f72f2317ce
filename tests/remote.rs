//! The remote backend: `humanoid serve-llm` as a real process (models, chat completions,
//! completions with echo + logprobs, `/v1/choose`, concurrent clients), `choose` through the
//! remote client against in-process `choose`, and a run of the Lin family through
//! `--backend openai`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use humanoid::llm::{
    ChooseRequest, Engine, EngineOptions, GenerateRequest, Inference, Message, Prompt, Request,
    Response,
};
use humanoid::remote::{ChooseMethod, RemoteClient, RemoteConfig};
use serde_json::{json, Value};

use crate::remote_constrain::llama_server;
use crate::sim::{bin, lin_family};
use crate::util;

/// A server process (`serve-llm`, or llama.cpp's), killed when dropped.
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:PORT/v1`.
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `humanoid serve-llm --port 0` on the default model and reads its address.
pub fn serve_llm() -> Server {
    serve_llm_with(&[])
}

/// [`serve_llm`] with more arguments.
pub fn serve_llm_with(args: &[&str]) -> Server {
    let mut child = bin()
        .args(["serve-llm", "--port", "0"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve-llm starts");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_string();
    Server { child, url }
}

/// `humanoid run` of the Lin family for `steps` steps into `out`, through the server at `url`.
pub fn remote_run(url: &str, steps: u64, out: &Path) -> Command {
    let mut c = bin();
    c.arg("run")
        .arg(lin_family())
        .args(["--steps", &steps.to_string(), "--out"])
        .arg(out)
        .args([
            "--backend",
            "openai",
            "--url",
            url,
            "--model",
            "smollm2-135m",
        ]);
    c
}

/// A client config for the default model at `url` (short timeouts for tests).
pub fn remote_config(url: &str) -> RemoteConfig {
    let mut cfg = RemoteConfig::new(url, "smollm2-135m", &util::smollm2().display().to_string());
    cfg.timeout_secs = 60.0;
    cfg.retries = 2;
    cfg
}

/// POSTs JSON; returns the status and the parsed body, or the transport error.
fn try_post(url: &str, body: &Value) -> Result<(u16, Value), ureq::Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut r = agent
        .post(url)
        .content_type("application/json")
        .send(body.to_string())?;
    let status = r.status().as_u16();
    let text = r.body_mut().read_to_string()?;
    Ok((
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    ))
}

/// POSTs JSON; returns the status and the parsed body.
pub fn post(url: &str, body: &Value) -> (u16, Value) {
    try_post(url, body).unwrap()
}

fn engine() -> Engine {
    Engine::load(&util::smollm2(), EngineOptions::default()).unwrap()
}

/// Ten `choose` questions as the agents ask them: yes/no, emotions, importance, places.
fn choose_requests() -> Vec<Request> {
    let sys =
        "You are John Lin, a pharmacy shopkeeper who loves his family. It is 07:00 am on Tuesday.";
    let emotions = [
        "neutral",
        "happy",
        "sad",
        "angry",
        "afraid",
        "surprised",
        "disgusted",
    ];
    let numbers: Vec<String> = (1..=10).map(|i| i.to_string()).collect();
    let places = ["Kitchen", "Bedroom", "Bathroom", "Living room", "Pharmacy"];
    let q: Vec<(&str, Vec<String>)> = vec![
        (
            "Does eating breakfast satisfy hunger? Answer yes or no.",
            vec!["yes".into(), "no".into()],
        ),
        (
            "Is the sky green? Answer yes or no.",
            vec!["yes".into(), "no".into()],
        ),
        (
            "Do you want to talk to Eddy now? Answer yes or no.",
            vec!["yes".into(), "no".into()],
        ),
        (
            "You just burnt your toast. How do you feel?",
            emotions.iter().map(|s| s.to_string()).collect(),
        ),
        (
            "Your son won a music prize. How do you feel?",
            emotions.iter().map(|s| s.to_string()).collect(),
        ),
        (
            "On a scale of 1 to 10, how important is brushing teeth?",
            numbers.clone(),
        ),
        (
            "On a scale of 1 to 10, how important is your son's wedding?",
            numbers,
        ),
        (
            "Where do you cook breakfast?",
            places.iter().map(|s| s.to_string()).collect(),
        ),
        (
            "Where do you sleep?",
            places.iter().map(|s| s.to_string()).collect(),
        ),
        (
            "Where do you sell medicine?",
            places.iter().map(|s| s.to_string()).collect(),
        ),
    ];
    q.into_iter()
        .map(|(question, options)| {
            Request::Choose(ChooseRequest::new(
                Prompt::Chat(vec![Message::system(sys), Message::user(question)]),
                options,
            ))
        })
        .collect()
}

#[test]
fn serve_llm_answers_models_chat_and_completions_with_logprobs() {
    let server = serve_llm();
    let models: Value = ureq::get(&format!("{}/models", server.url))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .map(|t| serde_json::from_str(&t).unwrap())
        .unwrap();
    assert_eq!(models["data"][0]["id"], "smollm2-135m", "{models}");
    // A greedy chat completion is the in-process engine's greedy reply.
    let q = "What is the capital of France?";
    let (status, v) = post(
        &format!("{}/chat/completions", server.url),
        &json!({"model": "smollm2-135m", "messages": [{"role": "user", "content": q}],
                "max_tokens": 12, "temperature": 0}),
    );
    assert_eq!(status, 200, "{v}");
    let want = engine()
        .generate(GenerateRequest::new(
            Prompt::Chat(vec![Message::user(q)]),
            12,
        ))
        .unwrap();
    assert_eq!(v["choices"][0]["message"]["content"], want.text.as_str());
    assert_eq!(v["usage"]["completion_tokens"], want.generated_tokens);
    // Completions with echo: one log-probability per prompt token, the first null.
    let (status, v) = post(
        &format!("{}/completions", server.url),
        &json!({"prompt": "The capital of France is Paris", "echo": true, "logprobs": 3,
                "max_tokens": 1, "temperature": 0}),
    );
    assert_eq!(status, 200, "{v}");
    let lp = &v["choices"][0]["logprobs"];
    let values = lp["token_logprobs"].as_array().unwrap();
    let n = v["usage"]["prompt_tokens"].as_u64().unwrap() as usize;
    assert_eq!(values.len(), n + 1, "{lp}");
    assert!(values[0].is_null());
    assert!(values[1..]
        .iter()
        .all(|x| x.as_f64().is_some_and(|x| x <= 0.0)));
    assert_eq!(lp["text_offset"][0], 0);
    let text = v["choices"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("The capital of France is Paris"), "{text}");
    // Bad requests: a 400 with a message, and the server keeps serving.
    for (path, body) in [
        ("chat/completions", json!({"messages": []})),
        (
            "chat/completions",
            json!({"messages": [{"role": "robot", "content": "hi"}]}),
        ),
        (
            "chat/completions",
            json!({"messages": [{"role": "user", "content": "hi"}], "temperature": -3}),
        ),
        ("completions", json!({"prompt": {"x": 1}})),
        ("completions", json!({"prompt": [1, 2, 99999999]})),
        ("completions", json!({"prompt": "hi", "logprobs": 99})),
        (
            "completions",
            json!({"prompt": "word ".repeat(5000), "max_tokens": 1}),
        ),
    ] {
        let (status, v) = post(&format!("{}/{path}", server.url), &body);
        assert_eq!(status, 400, "{path} {body}: {v}");
        assert!(
            v["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{v}"
        );
    }
    let (status, v) = post(
        &format!("{}/chat/completions", server.url),
        &json!({"model": "gpt-9", "messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(status, 404, "{v}");
    assert!(v["error"]["message"].as_str().unwrap().contains("gpt-9"));
    let (status, _) = post(
        &format!("{}/completions", server.url),
        &json!({"prompt": "Still there?", "max_tokens": 2}),
    );
    assert_eq!(status, 200);
}

/// serve-llm offers its own `/v1/choose` (detected first) and `echo`: both give in-process
/// `choose` through the server.
#[test]
fn remote_choose_agrees_with_in_process_choose() {
    let server = serve_llm();
    let mut client = RemoteClient::connect(remote_config(&server.url)).unwrap();
    assert_eq!(client.choose_method(), ChooseMethod::Native);
    let requests = choose_requests();
    let local = engine().run(requests.clone(), |_| {});
    for method in [ChooseMethod::Native, ChooseMethod::Echo] {
        client.set_choose_method(method);
        let remote = client.run(requests.clone(), &mut |_| {});
        for (i, (r, l)) in remote.into_iter().zip(&local).enumerate() {
            let (r, l) = match (r, l) {
                (Ok(Response::Chosen(r)), Ok(Response::Chosen(l))) => (r, l),
                other => panic!("{method:?} request {i}: not both choices: {other:?}"),
            };
            assert_eq!(
                r.index, l.index,
                "{method:?} request {i}: remote {:?} local {:?}",
                r.probs, l.probs
            );
            for (a, b) in r.probs.iter().zip(&l.probs) {
                assert!(
                    (a - b).abs() < 2e-3,
                    "{method:?} request {i}: remote {:?} local {:?}",
                    r.probs,
                    l.probs
                );
            }
            assert_eq!(r.prompt_tokens, l.prompt_tokens, "{method:?} request {i}");
        }
    }
    assert!(client.failure().is_none());
}

#[test]
fn concurrent_clients_each_get_their_own_answer() {
    let server = serve_llm();
    let questions: Vec<String> = [
        "Name a fruit.",
        "What is 2 + 2?",
        "Say hello in French.",
        "Name a colour.",
        "What do cats eat?",
        "Name a planet.",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let mut e = engine();
    let want: Vec<String> = questions
        .iter()
        .map(|q| {
            e.generate(GenerateRequest::new(
                Prompt::Chat(vec![Message::user(q.as_str())]),
                10,
            ))
            .unwrap()
            .text
        })
        .collect();
    let url = format!("{}/chat/completions", server.url);
    let got: Vec<String> =
        std::thread::scope(|s| {
            let handles: Vec<_> =
                questions
                    .iter()
                    .map(|q| {
                        let url = url.clone();
                        s.spawn(move || {
                    let (status, v) = post(
                        &url,
                        &json!({"messages": [{"role": "user", "content": q}], "max_tokens": 10,
                                "temperature": 0}),
                    );
                    assert_eq!(status, 200, "{v}");
                    v["choices"][0]["message"]["content"].as_str().unwrap().to_string()
                })
                    })
                    .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
    assert_eq!(got, want);
}

/// A run through serve-llm is the in-process run: `choose` through `/v1/choose` and
/// constrained generation through `humanoid_constraint`, with the request's seed, give the
/// engine's own answers, so the state files equal those of the in-process one-day run.
#[test]
fn a_lin_family_run_through_serve_llm_equals_the_in_process_run() {
    let server = serve_llm();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = remote_run(&server.url, 4, &out).output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("choose uses the server's own choose (/v1/choose"),
        "{stderr}"
    );
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("config.json")).unwrap()).unwrap();
    assert_eq!(cfg["backend"]["model"], "smollm2-135m");
    assert_eq!(cfg["device"], "remote");
    let check = bin().arg("check").arg(&out).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    assert_eq!(crate::sim::state_files(&out).len(), 4);
    // The server's answers were used: choices and generations in the event log, and the
    // server refused none (a refused request is an "invalid request" fallback).
    let events = std::fs::read_to_string(out.join("events.jsonl")).unwrap();
    assert!(events.contains("\"model_call\""));
    assert!(!events.contains("invalid request"), "{events}");
    crate::sim::same_files(&out, &crate::sim::one_day_dir(), 4);
}

/// Against a server that is not ours (built by `benches/remote/llama-server.sh`, pointed to
/// by `HUMANOID_LLAMA_SERVER`): detection, `choose` against in-process `choose`, and a short
/// run of the Lin family.
#[test]
fn llama_server_serves_choose_and_a_short_run() {
    let Some(server) = llama_server("llama_server_serves_choose_and_a_short_run") else {
        return;
    };
    let url = server.url.clone();
    // A short run first: it must work whatever the agreement of `choose` below.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = remote_run(&url, 2, &out).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let events = std::fs::read_to_string(out.join("events.jsonl")).unwrap();
    assert!(!events.contains("invalid request"), "{events}");
    let check = bin().arg("check").arg(&out).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let mut client = RemoteClient::connect(remote_config(&url)).unwrap();
    let method = client.choose_method();
    eprintln!("llama-server: choose uses {method}");
    let requests = choose_requests();
    let remote = client.run(requests.clone(), &mut |_| {});
    // Tokens scored per option: its own and the end of turn.
    let mut eng = engine();
    let option_tokens: Vec<Vec<usize>> = requests
        .iter()
        .map(|r| match r {
            Request::Choose(c) => c
                .options
                .iter()
                .map(|o| eng.tokenizer().encode(o, false).unwrap().len() + 1)
                .collect(),
            Request::Generate(_) => Vec::new(),
        })
        .collect();
    let local = eng.run(requests, |_| {});
    // Methods that score whole options compute what the engine computes, up to the kernels'
    // quantization noise (llama.cpp's logits differ from ours by up to about 1.0 on these
    // files, `../shared/reference/README.md`): option log-probabilities must be close (within
    // 1.0 per scored token, 0.5 on average over the options), and the answers must agree
    // wherever the engine's margin between its two best options is beyond that noise (0.5
    // nats; the server itself moves near-ties between runs, as its batches differ). The first
    // token's alternatives, and forced tokens on a server that drops forced end tokens (the
    // end of turn then bounded), only approximate: 7 of 10.
    let exact = matches!(
        method,
        ChooseMethod::Native
            | ChooseMethod::Echo
            | ChooseMethod::PromptLogprobs
            | ChooseMethod::ForcedTokens
    );
    let (mut same, mut beyond_noise, mut deltas) = (0, 0, Vec::new());
    for (i, (r, l)) in remote.into_iter().zip(local).enumerate() {
        let (r, l) = match (r, l) {
            (Ok(Response::Chosen(r)), Ok(Response::Chosen(l))) => (r, l),
            other => panic!("request {i}: not both choices: {other:?}"),
        };
        let mut sorted = l.logprobs.clone();
        sorted.sort_by(|a, b| b.total_cmp(a));
        let margin = sorted[0] - sorted[1];
        eprintln!(
            "request {i}: remote {} local {} (margin {margin:.3} nats)\n  log p remote {:?}\n  log p local  {:?}",
            r.index, l.index, r.logprobs, l.logprobs
        );
        same += usize::from(r.index == l.index);
        beyond_noise += usize::from(margin >= 0.5);
        if exact {
            assert!(
                r.index == l.index || margin < 0.5,
                "request {i}: remote picks {}, in-process {} by a margin of {margin:.3} nats",
                r.index,
                l.index
            );
            for (k, (a, b)) in r.logprobs.iter().zip(&l.logprobs).enumerate() {
                let n = option_tokens[i][k] as f32;
                assert!(
                    (a - b).abs() <= n,
                    "request {i} option {k}: log p {a} remote, {b} in-process ({n} tokens)"
                );
                deltas.push((a - b).abs());
            }
        }
    }
    assert!(
        beyond_noise >= 5,
        "too few clear-cut questions: {beyond_noise}"
    );
    let need = match method {
        ChooseMethod::Native
        | ChooseMethod::Echo
        | ChooseMethod::PromptLogprobs
        | ChooseMethod::ForcedTokens => beyond_noise,
        ChooseMethod::ForcedText | ChooseMethod::FirstToken => 7,
        ChooseMethod::Generate => 0,
    };
    assert!(
        same >= need,
        "{same} of 10 answers agree with in-process choose ({method})"
    );
    if exact {
        let max = deltas.iter().copied().fold(0f32, f32::max);
        let mean = deltas.iter().sum::<f32>() / deltas.len() as f32;
        eprintln!(
            "|log p remote - log p in-process| over {} options: mean {mean:.3}, max {max:.3}",
            deltas.len()
        );
        assert!(
            mean < 0.5,
            "option log-probabilities differ by {mean} on average"
        );
    }
}

/// `/v1/choose` answers and refuses as documented, and `bench sim` runs a town through the
/// server, reporting the simulation's batches.
#[test]
fn serve_llm_chooses_and_bench_sim_runs_through_it() {
    let server = serve_llm();
    let url = format!("{}/choose", server.url);
    let (status, v) = post(
        &url,
        &json!({"model": "smollm2-135m", "messages": [
            {"role": "user", "content": "Is the sun hot? Answer yes or no."}],
            "options": ["yes", "no"]}),
    );
    assert_eq!(status, 200, "{v}");
    let probs: Vec<f64> = v["probs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_f64().unwrap())
        .collect();
    assert_eq!(probs.len(), 2);
    assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-4, "{v}");
    let best = usize::from(probs[1] > probs[0]);
    assert_eq!(v["index"].as_u64(), Some(best as u64), "{v}");
    assert!(v["usage"]["prompt_tokens"].as_u64().unwrap() > 5);
    for (body, says) in [
        (json!({"prompt": "Q?", "options": []}), "options is empty"),
        (
            json!({"prompt": "Q?", "messages": [{"role": "user", "content": "Q?"}], "options": ["a"]}),
            "not both",
        ),
        (json!({"options": ["a"]}), "messages or prompt is needed"),
        (
            json!({"prompt": [999999999], "options": ["a"]}),
            "is not an id",
        ),
    ] {
        let (status, v) = post(&url, &body);
        assert_eq!(status, 400, "{body}: {v}");
        let msg = v["error"]["message"].as_str().unwrap_or_default();
        assert!(msg.contains(says), "{body}: {msg}");
    }
    let o = bin()
        .args(["bench", "sim", "--agents", "2", "--steps", "1", "--json"])
        .args([
            "--backend",
            "openai",
            "--url",
            &server.url,
            "--model",
            "smollm2-135m",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows: Value = serde_json::from_slice(&o.stdout).unwrap();
    let row = &rows[0];
    assert_eq!(row["agents"], 2);
    assert_eq!(row["steps"], 1);
    assert!(row["backend"]
        .as_str()
        .unwrap()
        .starts_with("remote http://127.0.0.1:"));
    assert!(row["calls_per_agent_step"].as_f64().unwrap() > 1.0, "{row}");
    let per_batch = row["requests_per_batch"].as_f64().unwrap();
    let largest = row["largest_batch"].as_u64().unwrap() as f64;
    assert!(per_batch >= 1.0 && largest >= per_batch, "{row}");
    // One step of 15 minutes: the simulated hour costs four times the step.
    let (secs, per_hour) = (
        row["seconds"].as_f64().unwrap(),
        row["seconds_per_sim_hour"].as_f64().unwrap(),
    );
    assert!((per_hour - 4.0 * secs).abs() < 1e-6 * per_hour, "{row}");
}

/// serve-llm's limits: a body over `--max-body-mib`, `max_tokens` past the context, more
/// than `--max-inflight` requests at once and a request past `--request-timeout` each get
/// an OpenAI-style JSON error (413, 400, 429, 504), and the server keeps answering.
#[test]
fn serve_llm_limits_are_json_errors() {
    let server = serve_llm_with(&[
        "--max-body-mib",
        "1",
        "--max-inflight",
        "1",
        "--request-timeout",
        "1",
    ]);
    let chat = format!("{}/chat/completions", server.url);
    // Just over the 1 MiB limit. The server answers 413 without reading the rest, so the
    // client can meet a broken pipe while it still sends (seen once in 2 suites, under load):
    // a few tries, and one must bring the 413.
    let big = json!({"messages": [{"role": "user", "content": "x".repeat(1_100_000)}]});
    let mut answer = try_post(&chat, &big);
    for _ in 1..5 {
        if answer.is_ok() {
            break;
        }
        answer = try_post(&chat, &big);
    }
    let (status, body) = answer.expect("no answer to the oversized request in 5 tries");
    assert_eq!(status, 413, "{body}");
    assert!(
        body["error"]["message"].as_str().unwrap().contains("bytes"),
        "{body}"
    );
    let (status, body) = post(
        &chat,
        &json!({"messages": [{"role": "user", "content": "hi"}], "max_tokens": 100000}),
    );
    assert_eq!(status, 400, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("max_tokens"),
        "{body}"
    );
    // A long generation holds the one slot, then times out; a request meanwhile is refused.
    // 256 options of about 60 tokens each: many seconds of scoring, whatever the model says.
    let options: Vec<String> = (0..256)
        .map(|i| {
            format!(
                "option {i}: {}",
                "a long and winding answer that goes on ".repeat(8)
            )
        })
        .collect();
    let long_url = format!("{}/choose", server.url);
    let long = std::thread::spawn(move || {
        post(
            &long_url,
            &json!({"prompt": "Pick one.", "options": options}),
        )
    });
    std::thread::sleep(std::time::Duration::from_millis(300));
    let (status, body) = post(
        &chat,
        &json!({"messages": [{"role": "user", "content": "hi"}]}),
    );
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"]["type"], "rate_limit_error", "{body}");
    let (status, body) = long.join().unwrap();
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["error"]["type"], "timeout", "{body}");
    // Still serving.
    let (status, _) = post(
        &format!("{}/choose", server.url),
        &json!({"prompt": "Yes or no?", "options": ["yes", "no"]}),
    );
    assert!(status == 200 || status == 504, "{status}");
}

//! The remote backend when the server is down, answers 500, answers garbage or hangs:
//! retries, then a clear error naming the server; a run stops without applying the step
//! that failed, keeps its last checkpoint, and `resume` finishes it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use humanoid::llm::{ChooseRequest, Inference, Message, Prompt, Request};
use humanoid::remote::RemoteClient;
use humanoid::sim::events::read_events;

use crate::remote::{remote_config, remote_run, serve_llm};
use crate::sim::{bin, state_files};

/// What the fake server in front of `serve-llm` does with a request.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Mode {
    Pass,
    Status500,
    Garbage,
    Hang,
}

/// A tiny HTTP server: forwards to `upstream`, or fails as its mode says.
struct Proxy {
    url: String,
    mode: Arc<Mutex<Mode>>,
    requests: Arc<AtomicUsize>,
}

impl Proxy {
    fn set(&self, m: Mode) {
        *self.mode.lock().unwrap() = m;
    }
}

fn read_request(stream: &mut TcpStream) -> Option<(String, String, Vec<u8>)> {
    let mut r = BufReader::new(stream.try_clone().ok()?);
    let mut line = String::new();
    r.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next()?.to_string(), parts.next()?.to_string());
    let mut len = 0;
    loop {
        let mut h = String::new();
        r.read_line(&mut h).ok()?;
        if h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; len];
    r.read_exact(&mut body).ok()?;
    Some((method, path, body))
}

fn respond(stream: &mut TcpStream, status: u16, body: &str) {
    let _ = write!(
        stream,
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}

fn proxy(upstream: &str) -> Proxy {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let mode = Arc::new(Mutex::new(Mode::Pass));
    let requests = Arc::new(AtomicUsize::new(0));
    let base = upstream.trim_end_matches("/v1").to_string();
    let (m, n) = (mode.clone(), requests.clone());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let (m, n, base) = (m.clone(), n.clone(), base.clone());
            std::thread::spawn(move || {
                let mut stream = stream;
                let Some((method, path, body)) = read_request(&mut stream) else {
                    return;
                };
                n.fetch_add(1, Ordering::SeqCst);
                let mode = *m.lock().unwrap();
                match mode {
                    Mode::Pass => {
                        let agent: ureq::Agent = ureq::Agent::config_builder()
                            .http_status_as_error(false)
                            .build()
                            .into();
                        let url = format!("{base}{path}");
                        let r = if method == "GET" {
                            agent.get(&url).call()
                        } else {
                            agent
                                .post(&url)
                                .content_type("application/json")
                                .send(&body[..])
                        };
                        match r {
                            Ok(mut r) => {
                                let status = r.status().as_u16();
                                let text = r.body_mut().read_to_string().unwrap_or_default();
                                respond(&mut stream, status, &text);
                            }
                            Err(_) => respond(&mut stream, 502, "{}"),
                        }
                    }
                    Mode::Status500 => respond(&mut stream, 500, r#"{"error":{"message":"boom"}}"#),
                    Mode::Garbage => respond(&mut stream, 200, "<html>not json at all"),
                    Mode::Hang => std::thread::sleep(Duration::from_secs(600)),
                }
            });
        }
    });
    Proxy {
        url,
        mode,
        requests,
    }
}

fn closed_port_url() -> String {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", l.local_addr().unwrap());
    drop(l);
    url
}

#[test]
fn a_server_that_is_down_is_a_clear_error_naming_it() {
    let url = closed_port_url();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let o = remote_run(&url, 1, &out)
        .args(["--retries", "2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    let host = url.trim_end_matches("/v1");
    assert!(stderr.contains(host), "{stderr}");
    assert!(stderr.contains("connection refused"), "{stderr}");
    assert!(
        stderr.contains("retry 2 of 2"),
        "retries are logged: {stderr}"
    );
    assert!(
        !out.exists(),
        "nothing written for a run that could not start"
    );
}

#[test]
fn errors_garbage_and_hangs_are_retried_then_fatal() {
    let server = serve_llm();
    let choose = Request::Choose(ChooseRequest::new(
        Prompt::Chat(vec![Message::user("Is water wet? Answer yes or no.")]),
        ["yes", "no"],
    ));
    for (mode, says) in [
        (Mode::Status500, "HTTP 500: boom"),
        (Mode::Garbage, "not JSON"),
        (Mode::Hang, "timed out"),
    ] {
        let p = proxy(&server.url);
        let mut cfg = remote_config(&p.url);
        cfg.timeout_secs = 2.0;
        let mut client = RemoteClient::connect(cfg).unwrap();
        assert!(client.failure().is_none());
        p.set(mode);
        let before = p.requests.load(Ordering::SeqCst);
        let t0 = Instant::now();
        let out = client.run(vec![choose.clone()], &mut |_| {});
        assert!(out[0].is_err(), "{mode:?}");
        let e = client
            .failure()
            .unwrap_or_else(|| panic!("{mode:?}: not fatal"));
        assert!(e.contains(p.url.trim_end_matches("/v1")), "{e}");
        assert!(e.contains(says), "{mode:?}: {e}");
        assert!(e.contains("humanoid resume"), "{e}");
        let tries = p.requests.load(Ordering::SeqCst) - before;
        assert!(
            tries >= 3,
            "{mode:?}: {tries} requests (1 + 2 retries expected)"
        );
        assert!(t0.elapsed() < Duration::from_secs(60), "{mode:?}");
        // Later calls fail at once, without more retries against a dead server.
        let n = p.requests.load(Ordering::SeqCst);
        assert!(client.run(vec![choose.clone()], &mut |_| {})[0].is_err());
        assert_eq!(p.requests.load(Ordering::SeqCst), n);
    }
}

/// Waits up to `limit` for `f`, polling every 20 ms; false if the limit passed first.
fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn activities_once(out: &Path, steps: u64) {
    let events = read_events(&out.join("events.jsonl")).unwrap();
    for step in 0..steps {
        let n = events
            .iter()
            .filter(|e| e.step == step && e.kind() == "activity")
            .count();
        assert_eq!(n, 2, "step {step} has {n} activity events");
    }
}

#[test]
fn a_run_whose_server_fails_keeps_its_last_step_and_resumes() {
    let server = serve_llm();
    let p = proxy(&server.url);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    // A long request timeout: under the suite's load one request of the first step can take
    // minutes, and this test is about a server that answers 500, not one that is slow.
    let mut child = remote_run(&p.url, 2, &out)
        .args(["--retries", "1", "--request-timeout", "900"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut exited = None;
    let first = wait_for(Duration::from_secs(1200), || {
        if let Ok(Some(status)) = child.try_wait() {
            exited = Some(status);
            return true;
        }
        out.exists() && !state_files(&out).is_empty()
    });
    if let Some(status) = exited {
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        // It may have finished the first step just before it ended, but it must not end alone.
        panic!("the run ended ({status}) before the server failed:\n{stderr}");
    }
    assert!(first, "the first step never finished");
    p.set(Mode::Status500);
    let o = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains(p.url.trim_end_matches("/v1")), "{stderr}");
    assert!(stderr.contains("retry 1 of 1"), "{stderr}");
    assert!(stderr.contains("step 2 of 2 was not applied"), "{stderr}");
    assert!(stderr.contains("humanoid resume"), "{stderr}");
    // The failed step left nothing: one state file, its events once, the checkpoint at 1.
    assert_eq!(state_files(&out).len(), 1);
    activities_once(&out, 1);
    let events = read_events(&out.join("events.jsonl")).unwrap();
    assert!(
        events.iter().all(|e| e.step < 1),
        "events of the failed step"
    );
    // Back up: resume reconnects to the recorded server and finishes.
    p.set(Mode::Pass);
    let r = bin().arg("resume").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_eq!(state_files(&out).len(), 2);
    activities_once(&out, 2);
    let check = bin().arg("check").arg(&out).output().unwrap();
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
}

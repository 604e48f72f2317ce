//! JSON over HTTP to the server: timeouts, retries with exponential backoff, and the line
//! between an error of one request (the caller falls back) and a server that is gone (the
//! run stops and resumes later).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::llm::error::ENGINE_STOPPED;

/// Why a call failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallError {
    /// This request was refused (e.g. 400: too long); other requests may still work.
    Request(String),
    /// The server is down, keeps failing, or refuses every request (auth, unknown model):
    /// nothing more can be done in this process.
    Fatal(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Request(m) | CallError::Fatal(m) => f.write_str(m),
        }
    }
}

/// A server's HTTP endpoint with its retry policy. Once a call has failed fatally every later
/// call fails at once with the same error (no more retries against a dead server).
pub struct Http {
    agent: ureq::Agent,
    base: String,
    api_key: Option<String>,
    retries: u32,
    backoff: Duration,
    dead: AtomicBool,
    fatal: Mutex<Option<String>>,
}

/// Largest response body read (a hostile server cannot exhaust memory).
const MAX_BODY: u64 = 64 << 20;

/// `url` without a trailing `/` or `/v1` (endpoints are appended as `/v1/...`).
pub fn base_url(url: &str) -> String {
    let mut u = url.trim().trim_end_matches('/').to_string();
    if u.ends_with("/v1") {
        u.truncate(u.len() - 3);
    }
    u
}

impl Http {
    /// An endpoint at `url` with a per-request `timeout` and `retries` retries.
    pub fn new(url: &str, api_key: Option<String>, timeout: Duration, retries: u32) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .timeout_connect(Some(timeout.min(Duration::from_secs(10))))
            .max_idle_connections_per_host(256)
            .build();
        Self {
            agent: ureq::Agent::new_with_config(config),
            base: base_url(url),
            api_key,
            retries,
            backoff: Duration::from_millis(250),
            dead: AtomicBool::new(false),
            fatal: Mutex::new(None),
        }
    }

    /// Sets the first retry's wait (it doubles with each retry, up to 8 s).
    pub fn with_backoff(mut self, first: Duration) -> Self {
        self.backoff = first;
        self
    }

    /// The server's base URL, as errors name it.
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The fatal error, once there was one.
    pub fn fatal(&self) -> Option<String> {
        self.fatal.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    fn trip(&self, msg: String) -> CallError {
        let mut f = self.fatal.lock().unwrap_or_else(|p| p.into_inner());
        if f.is_none() {
            *f = Some(msg.clone());
        }
        self.dead.store(true, Ordering::SeqCst);
        CallError::Fatal(f.clone().unwrap_or(msg))
    }

    /// GET `path` (e.g. `/v1/models`), parsed by `parse`.
    pub fn get<T>(
        &self,
        path: &str,
        parse: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, CallError> {
        self.call(path, None, parse, false)
    }

    /// POST a feature probe: only transport errors are retried (and fatal); any answer that
    /// is not a 2xx `parse` accepts means the server lacks the feature
    /// ([`CallError::Request`]).
    pub fn probe<T>(
        &self,
        path: &str,
        body: &Value,
        parse: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, CallError> {
        self.call(path, Some(body), parse, true)
    }

    /// POST `body` to `path`, parsed by `parse`; retried on transport errors, timeouts, 408,
    /// 429, 5xx and answers `parse` rejects (garbage).
    pub fn post<T>(
        &self,
        path: &str,
        body: &Value,
        parse: impl Fn(&Value) -> Result<T, String>,
    ) -> Result<T, CallError> {
        self.call(path, Some(body), parse, false)
    }

    fn call<T>(
        &self,
        path: &str,
        body: Option<&Value>,
        parse: impl Fn(&Value) -> Result<T, String>,
        probe: bool,
    ) -> Result<T, CallError> {
        let url = format!("{}{path}", self.base);
        let mut last = String::new();
        for attempt in 0..=self.retries {
            if self.dead.load(Ordering::SeqCst) {
                return Err(CallError::Fatal(self.fatal().unwrap_or_default()));
            }
            if attempt > 0 {
                let wait = self.backoff * 2u32.saturating_pow(attempt - 1);
                let wait = wait.min(Duration::from_secs(8));
                tracing::warn!(
                    "{url}: {last}; retry {attempt} of {} in {:.2} s",
                    self.retries,
                    wait.as_secs_f64()
                );
                std::thread::sleep(wait);
            }
            match self.once(&url, body) {
                Ok((status, text)) if probe => {
                    let v = serde_json::from_str::<Value>(&text).map_err(|e| e.to_string());
                    return match v.and_then(|v| parse(&v)) {
                        Ok(t) if (200..300).contains(&status) => Ok(t),
                        Ok(_) => Err(CallError::Request(format!(
                            "HTTP {status}: {}",
                            error_message(&text)
                        ))),
                        Err(e) => Err(CallError::Request(format!(
                            "HTTP {status}: {e}: {}",
                            error_message(&text)
                        ))),
                    };
                }
                Ok((status, text)) => match status {
                    200..=299 => match serde_json::from_str::<Value>(&text) {
                        Ok(v) => match parse(&v) {
                            Ok(t) => return Ok(t),
                            Err(e) => last = format!("unexpected answer ({e}): {}", excerpt(&text)),
                        },
                        Err(e) => last = format!("answer is not JSON ({e}): {}", excerpt(&text)),
                    },
                    503 if error_type(&text).as_deref() == Some(ENGINE_STOPPED) => {
                        let msg = format!(
                            "the model server at {} cannot answer any more: {}; restart it, then continue with `humanoid resume RUN_DIR`",
                            self.base,
                            error_message(&text)
                        );
                        return Err(self.trip(msg));
                    }
                    408 | 429 | 500..=599 => {
                        last = format!("HTTP {status}: {}", error_message(&text));
                    }
                    401 | 403 | 404 => {
                        let msg = format!(
                            "{url}: HTTP {status}: {} (every request would fail: check --url, --model and --api-key-env)",
                            error_message(&text)
                        );
                        return Err(self.trip(msg));
                    }
                    _ => {
                        return Err(CallError::Request(format!(
                            "{url}: HTTP {status}: {}",
                            error_message(&text)
                        )))
                    }
                },
                Err(e) => last = e,
            }
        }
        Err(self.trip(format!(
            "the model server at {} failed: {last} (after {} attempts); once it is back, continue with `humanoid resume RUN_DIR`",
            self.base,
            self.retries + 1
        )))
    }

    fn once(&self, url: &str, body: Option<&Value>) -> Result<(u16, String), String> {
        let result = match body {
            Some(b) => {
                let mut req = self.agent.post(url).content_type("application/json");
                if let Some(k) = &self.api_key {
                    req = req.header("Authorization", format!("Bearer {k}"));
                }
                req.send(b.to_string())
            }
            None => {
                let mut req = self.agent.get(url);
                if let Some(k) = &self.api_key {
                    req = req.header("Authorization", format!("Bearer {k}"));
                }
                req.call()
            }
        };
        let mut resp = result.map_err(describe)?;
        let status = resp.status().as_u16();
        let text = resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_string()
            .map_err(describe)?;
        Ok((status, text))
    }
}

fn describe(e: ureq::Error) -> String {
    match e {
        ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionRefused => {
            "connection refused (is the server running?)".into()
        }
        ureq::Error::Timeout(t) => format!("timed out ({t})"),
        ureq::Error::HostNotFound => "host not found".into(),
        other => other.to_string(),
    }
}

/// The first 200 characters of a body, for error messages.
fn excerpt(text: &str) -> String {
    let t: String = text.chars().take(200).collect();
    if text.chars().count() > 200 {
        format!("{t}...")
    } else {
        t
    }
}

/// The `error.message` of an OpenAI-style error body, else an excerpt of the body.
/// The OpenAI-style `error.type` of an answer, if it has one.
fn error_type(text: &str) -> Option<String> {
    serde_json::from_str::<Value>(text)
        .ok()?
        .pointer("/error/type")?
        .as_str()
        .map(str::to_string)
}

fn error_message(text: &str) -> String {
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("message"))
                .or_else(|| v.get("error"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| excerpt(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_lose_the_v1_suffix() {
        assert_eq!(base_url("http://h:1/v1/"), "http://h:1");
        assert_eq!(base_url("http://h:1"), "http://h:1");
        assert_eq!(base_url(" http://h:1/ "), "http://h:1");
    }

    #[test]
    fn error_bodies_are_summarised() {
        assert_eq!(
            error_message(r#"{"error":{"message":"too long"}}"#),
            "too long"
        );
        assert_eq!(error_message("plain"), "plain");
    }

    /// A server that answers every request with `status` and `body`, counting requests.
    fn canned_server(
        status: &'static str,
        body: &'static str,
    ) -> (u16, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
        use std::io::Write;
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let count = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let seen = count.clone();
        std::thread::spawn(move || {
            for mut c in l.incoming().take(8).flatten() {
                seen.fetch_add(1, Ordering::SeqCst);
                read_request(&mut c);
                let _ = write!(
                    c,
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        (port, count)
    }

    /// Reads one whole request (headers and a `content-length` body), so that closing the
    /// connection afterwards does not reset it under a client still sending its body.
    fn read_request(c: &mut std::net::TcpStream) {
        use std::io::Read;
        let mut got = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
                let body = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse::<usize>().ok())
                    .unwrap_or(0);
                if got.len() >= end + 4 + body {
                    return;
                }
            }
            match c.read(&mut buf) {
                Ok(0) | Err(_) => return,
                Ok(n) => got.extend_from_slice(&buf[..n]),
            }
        }
    }

    #[test]
    fn an_engine_stopped_503_is_fatal_at_once() {
        let (port, count) = canned_server(
            "503 Service Unavailable",
            r#"{"error":{"message":"the engine stopped: the engine panicked: boom","type":"engine_stopped"}}"#,
        );
        let http = Http::new(
            &format!("http://127.0.0.1:{port}/v1"),
            None,
            Duration::from_secs(5),
            4,
        )
        .with_backoff(Duration::from_millis(10));
        let e = http
            .post("/v1/choose", &serde_json::json!({}), |_| Ok(()))
            .unwrap_err();
        let CallError::Fatal(msg) = e else {
            panic!("not fatal: {e}")
        };
        assert!(msg.contains("boom") && msg.contains("resume"), "{msg}");
        assert_eq!(count.load(Ordering::SeqCst), 1, "no retries");
        // Any other 503 is a transient failure: retried.
        let (port, count) =
            canned_server("503 Service Unavailable", r#"{"error":{"message":"busy"}}"#);
        let http = Http::new(
            &format!("http://127.0.0.1:{port}/v1"),
            None,
            Duration::from_secs(5),
            2,
        )
        .with_backoff(Duration::from_millis(10));
        assert!(http
            .post("/v1/choose", &serde_json::json!({}), |_| Ok(()))
            .is_err());
        assert_eq!(count.load(Ordering::SeqCst), 3, "retried twice");
    }

    #[test]
    fn a_closed_port_is_a_fatal_error_naming_the_url() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        drop(l);
        let http = Http::new(
            &format!("http://127.0.0.1:{port}/v1"),
            None,
            Duration::from_secs(2),
            1,
        )
        .with_backoff(Duration::from_millis(10));
        let e = http.get("/v1/models", |_| Ok(())).unwrap_err();
        let CallError::Fatal(msg) = e else {
            panic!("not fatal: {e}")
        };
        assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");
        assert!(http.fatal().is_some());
    }
}

//! The viewer in headless Chromium (Debian's `chromium`, installed by `.ci/run`): the served
//! page of real runs and the self-contained report opened from disk, driven by real clicks,
//! with every network request the page makes recorded.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use headless_chrome::browser::tab::RequestPausedDecision;
use headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption;
use headless_chrome::{Browser, LaunchOptions, Tab};

use crate::viewer::{bin, runs};

fn chromium() -> PathBuf {
    let path = std::env::var_os("HUMANOID_CHROMIUM")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/usr/bin/chromium"));
    assert!(
        path.exists(),
        "{} not found: install Chromium (apt-get install chromium) or set HUMANOID_CHROMIUM",
        path.display()
    );
    path
}

fn browser() -> Browser {
    let args: Vec<&std::ffi::OsStr> = [
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--no-first-run",
    ]
    .iter()
    .map(std::ffi::OsStr::new)
    .collect();
    Browser::new(
        LaunchOptions::default_builder()
            .path(Some(chromium()))
            .headless(true)
            .sandbox(false)
            .window_size(Some((1280, 900)))
            .idle_browser_timeout(Duration::from_secs(300))
            .args(args)
            .build()
            .unwrap(),
    )
    .expect("chromium starts")
}

/// A tab that records the URL of every request it makes.
fn tab(browser: &Browser) -> (Arc<Tab>, Arc<Mutex<Vec<String>>>) {
    let tab = browser.new_tab().unwrap();
    tab.set_default_timeout(Duration::from_secs(30));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    tab.enable_request_interception(Arc::new(
        move |_, _, ev: headless_chrome::protocol::cdp::Fetch::events::RequestPausedEvent| {
            log.lock().unwrap().push(ev.params.request.url.clone());
            RequestPausedDecision::Continue(None)
        },
    ))
    .unwrap();
    tab.enable_fetch(None, None).unwrap();
    (tab, seen)
}

/// `humanoid serve` on a free port, stopped when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path) -> Self {
        let mut child = bin()
            .args(["serve", "--port", "0"])
            .arg(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {line:?}"))
            .to_string();
        Self { child, url }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.child.kill().ok();
        self.child.wait().ok();
    }
}

fn eval(tab: &Tab, js: &str) -> serde_json::Value {
    tab.evaluate(js, false)
        .unwrap_or_else(|e| panic!("{js}: {e}"))
        .value
        .unwrap_or(serde_json::Value::Null)
}

fn text(tab: &Tab, selector: &str) -> String {
    tab.wait_for_element(selector)
        .unwrap_or_else(|e| panic!("{selector}: {e}"))
        .get_inner_text()
        .unwrap()
}

fn screenshot(tab: &Tab, name: &str) -> PathBuf {
    let png = tab
        .capture_screenshot(CaptureScreenshotFormatOption::Png, None, None, true)
        .unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "a real screenshot"
    );
    let path = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    std::fs::write(&path, png).unwrap();
    path
}

/// Steps the slider, clicks an agent on the map, checks the status panel and a chart.
fn exercise_page(tab: &Tab, shot: &str) {
    tab.wait_for_element("body[data-ready='1']").unwrap();
    // Step the slider to the third state (06:30 am).
    let clock = eval(
        tab,
        "(() => { const s = document.querySelector('#time-slider'); s.value = 2; \
         s.dispatchEvent(new Event('input', {bubbles: true})); \
         return document.querySelector('#clock').textContent; })()",
    );
    assert!(clock.as_str().unwrap().contains("06:30 am"), "{clock}");
    // Click an agent marker with the mouse.
    tab.wait_for_element(".agent-marker[data-agent='John Lin']")
        .unwrap()
        .click()
        .unwrap();
    assert_eq!(text(tab, "#status-panel .status-name"), "John Lin");
    tab.wait_for_element("#status-panel .need-bar[data-need='fullness']")
        .unwrap();
    tab.wait_for_element("#status-panel .need-bar[data-need='energy']")
        .unwrap();
    screenshot(tab, &format!("{shot}-map.png"));
    tab.wait_for_element("#tab-dashboard")
        .unwrap()
        .click()
        .unwrap();
    tab.wait_for_element("svg.chart[data-chart='needs:John Lin']")
        .unwrap();
    tab.wait_for_element("svg.chart[data-chart='closeness']")
        .unwrap();
    tab.wait_for_element("svg.chart[data-chart='emotions']")
        .unwrap();
    screenshot(tab, &format!("{shot}-dashboard.png"));
    assert_eq!(
        eval(tab, "document.querySelector('#message').textContent.trim()"),
        ""
    );
}

fn assert_local(requests: &[String], origin: &str) {
    for url in requests {
        assert!(
            url.starts_with(origin) || url.starts_with("data:") || url.starts_with("file:"),
            "the page requested {url} (outside {origin})"
        );
    }
}

#[test]
fn served_page_replays_a_run_and_shows_problems() {
    let server = Server::start(runs());
    let browser = browser();
    let (tab, requests) = tab(&browser);
    tab.navigate_to(&format!("{}#run=lin", server.url)).unwrap();
    tab.wait_for_element("#run-select").unwrap();
    exercise_page(&tab, "served");
    // A broken run: a clear message in the page, and the server keeps serving.
    tab.navigate_to(&format!("{}#run=truncated", server.url))
        .unwrap();
    tab.reload(true, None).unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
    let message = text(&tab, "#message");
    assert!(message.contains("state_2023-01-03_06h15.json"), "{message}");
    assert_local(&requests.lock().unwrap(), &server.url);
    assert!(
        requests
            .lock()
            .unwrap()
            .iter()
            .any(|u| u.contains("/api/runs")),
        "the page used the API"
    );
}

#[test]
fn served_page_follows_a_run_in_progress() {
    // A run folder of its own: two states now, a third written while the page is open.
    let dir = tempfile::tempdir().unwrap();
    let live = dir.path().join("live");
    let lin = runs().join("lin");
    crate::util::copy_run(&lin, &live);
    std::fs::remove_file(live.join("summary.json")).unwrap();
    std::fs::remove_file(crate::util::state_path(
        &live,
        "state_2023-01-03_06h30.json",
    ))
    .unwrap();
    let server = Server::start(&live);
    let browser = browser();
    let (tab, _) = tab(&browser);
    tab.navigate_to(&server.url).unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
    let max = "Number(document.querySelector('#time-slider').max)";
    assert_eq!(eval(&tab, max), 1);
    std::fs::copy(
        crate::util::state_path(&lin, "state_2023-01-03_06h30.json"),
        crate::util::state_path(&live, "state_2023-01-03_06h30.json"),
    )
    .unwrap();
    let t0 = Instant::now();
    while eval(&tab, max) != 2 {
        assert!(
            t0.elapsed() < Duration::from_secs(20),
            "the new step never appeared"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn report_opens_from_disk_without_network() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("report.html");
    let o = bin()
        .arg("report")
        .arg(runs().join("lin"))
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let browser = browser();
    let (tab, requests) = tab(&browser);
    tab.navigate_to(&format!("file://{}", file.display()))
        .unwrap();
    exercise_page(&tab, "report");
    let requests = requests.lock().unwrap();
    assert!(
        requests
            .iter()
            .all(|u| u.starts_with("file:") || u.starts_with("data:")),
        "the report made requests: {requests:?}"
    );
}

/// A run directory for `world` whose state files place agents by `place(step, agent)` (the
/// viewer's layout does not depend on what the model wrote, only on the world and places).
fn synthetic_run(world: &humanoid::world::World, dir: &Path, steps: u32) {
    use humanoid::agent::AgentState;
    use humanoid::sim::{AgentSnapshot, StateFile, TurnSnapshot};
    use humanoid::world::clock;
    std::fs::create_dir_all(dir).unwrap();
    let config = humanoid::sim::RunConfig {
        version: "test".into(),
        world_file: "generated".into(),
        world_source: world.to_toml(),
        model: humanoid::sim::ModelInfo {
            spec: "none".into(),
            path: "none".into(),
            sha256: "none".into(),
        },
        embed_model: "none".into(),
        seed: 0,
        device: "cpu".into(),
        threads: 1,
        max_num_seqs: 1,
        max_batched_tokens: 1,
        context: 1,
        days: 1,
        steps: u64::from(steps),
        conditions: vec![],
        injections: Vec::new(),
        backend: None,
    };
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_string(&config).unwrap(),
    )
    .unwrap();
    let leaves = world.locations.leaves();
    for step in 0..steps {
        let minutes = world.day_start + step * world.step_minutes;
        let agents: Vec<AgentSnapshot> = world
            .agents
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut a = AgentState::from_spec(spec, false);
                a.location = leaves[(i * 7 + step as usize) % leaves.len()].clone();
                a.activity = format!("step {step} of {}", spec.name);
                AgentSnapshot::of(&a)
            })
            .collect();
        let place = humanoid::sim::state_file::place_key(&agents[0].location);
        let turn = |name: &str, text: &str| TurnSnapshot {
            name: name.into(),
            text: Some(text.into()),
            reaction: None,
        };
        let state = StateFile {
            date: clock::format_date(world.start_date),
            time: clock::format_time(minutes),
            conversations: [(
                place,
                vec![vec![
                    turn(&agents[0].name, "Hello <b>there</b>!"),
                    turn(&agents[1].name, "Hi."),
                ]],
            )]
            .into_iter()
            .collect(),
            agents,
            world: None,
        };
        let name = clock::state_file_name(world.start_date, minutes);
        std::fs::write(dir.join(name), serde_json::to_string(&state).unwrap()).unwrap();
    }
    std::fs::write(dir.join("summary.json"), "{}").unwrap();
}

#[test]
fn any_world_of_25_agents_is_laid_out_without_overlaps() {
    let world = humanoid::world::World::generated(25, 7);
    let dir = tempfile::tempdir().unwrap();
    synthetic_run(&world, &dir.path().join("town"), 3);
    let server = Server::start(&dir.path().join("town"));
    let browser = browser();
    let (tab, requests) = tab(&browser);
    tab.navigate_to(&server.url).unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
    let check = "(() => { \
        const map = document.querySelector('#map').getBoundingClientRect(); \
        const ms = [...document.querySelectorAll('.agent-marker')].map(m => { \
          const r = m.querySelector('circle.dot').getBoundingClientRect(); \
          return [r.x + r.width / 2, r.y + r.height / 2, r.width]; }); \
        let minDist = 1e9, inside = true; \
        for (const [x, y] of ms) inside = inside && x > map.left && x < map.right && y > map.top && y < map.bottom; \
        for (let i = 0; i < ms.length; i++) for (let j = i + 1; j < ms.length; j++) \
          minDist = Math.min(minDist, Math.hypot(ms[i][0] - ms[j][0], ms[i][1] - ms[j][1])); \
        const minSize = Math.min(...ms.map(m => m[2])); \
        return JSON.stringify({n: ms.length, inside, minDist, minSize, \
          bubbles: document.querySelectorAll('.conv-marker').length, \
          injected: document.querySelectorAll('#map b, #conv-list b').length}); })()";
    let v: serde_json::Value = serde_json::from_str(eval(&tab, check).as_str().unwrap()).unwrap();
    assert_eq!(v["n"], 25, "{v}");
    assert_eq!(v["inside"], true, "{v}");
    // Marker circles never sit on top of each other.
    assert!(
        v["minDist"].as_f64().unwrap() >= v["minSize"].as_f64().unwrap() * 0.9,
        "{v}"
    );
    assert_eq!(v["bubbles"], 1, "{v}");
    assert_eq!(
        v["injected"], 0,
        "model text is shown as text, never as markup: {v}"
    );
    screenshot(&tab, "town-25.png");
    assert_local(&requests.lock().unwrap(), &server.url);
}

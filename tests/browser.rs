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

/// `humanoid report` of run `name` of [`runs`]: the folder holding it (kept while in use) and
/// the file.
fn report_of(name: &str) -> (tempfile::TempDir, PathBuf) {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("report.html");
    let o = bin()
        .arg("report")
        .arg(runs().join(name))
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (out, file)
}

#[test]
fn report_opens_from_disk_without_network() {
    let (_out, file) = report_of("lin");
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

/// The seven emotions, in the order a synthetic run gives them out.
const EMOTIONS: [&str; 7] = [
    "neutral",
    "happy",
    "sad",
    "angry",
    "afraid",
    "surprised",
    "disgusted",
];

/// A run directory for `world` with a state per step except `missing`: agent i at leaf
/// `(7i + step) % leaves`, doing "step N of NAME", feeling `EMOTIONS[(i + step) % 7]`, and the
/// first two agents talking at every `talk_every`-th step (the viewer's layout does not depend
/// on what the model wrote, only on the world and places).
fn synthetic_run(
    world: &humanoid::world::World,
    dir: &Path,
    steps: u32,
    missing: &[u32],
    talk_every: u32,
) {
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
        weights: "quantized".into(),
        threads: 1,
        max_num_seqs: 1,
        max_batched_tokens: 1,
        context: 1,
        days: 1,
        steps: u64::from(steps),
        conditions: vec![],
        injections: Vec::new(),
        yes_threshold: Default::default(),
        backend: None,
    };
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_string(&config).unwrap(),
    )
    .unwrap();
    let leaves = world.locations.leaves();
    for step in (0..steps).filter(|s| !missing.contains(s)) {
        let minutes = world.day_start + step * world.step_minutes;
        let agents: Vec<AgentSnapshot> = world
            .agents
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut a = AgentState::from_spec(spec, false);
                a.location = leaves[(i * 7 + step as usize) % leaves.len()].clone();
                a.activity = format!("step {step} of {}", spec.name);
                let mut snap = AgentSnapshot::of(&a);
                snap.emotion = EMOTIONS[(i + step as usize) % EMOTIONS.len()].into();
                snap
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
            .filter(|_| step % talk_every == 0)
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
    synthetic_run(&world, &dir.path().join("town"), 3, &[], 1);
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
    // The labels under the markers (names, activities) never cover one another.
    let overlaps = eval(
        &tab,
        "(() => { \
        const rs = [...document.querySelectorAll('.agent-marker .name-label, .agent-marker .activity-label')] \
          .filter(t => t.textContent).map(t => [t.closest('.agent-marker').dataset.agent, t.getBoundingClientRect()]); \
        const bad = []; \
        for (let i = 0; i < rs.length; i++) for (let j = i + 1; j < rs.length; j++) { \
          const [a, p] = rs[i], [b, q] = rs[j]; \
          if (a === b) continue; \
          const w = Math.min(p.right, q.right) - Math.max(p.left, q.left), h = Math.min(p.bottom, q.bottom) - Math.max(p.top, q.top); \
          if (w > 1 && h > 1) bad.push(a + ' / ' + b); } \
        return JSON.stringify({labels: rs.length, bad}); })()",
    );
    let o: serde_json::Value = serde_json::from_str(overlaps.as_str().unwrap()).unwrap();
    assert!(o["labels"].as_u64().unwrap() >= 25, "{o}");
    assert_eq!(o["bad"], serde_json::json!([]), "{o}");
    screenshot(&tab, "town-25.png");
    assert_local(&requests.lock().unwrap(), &server.url);
}

/// The state file of the `lin` run at `name`, parsed.
fn lin_state(name: &str) -> humanoid::sim::StateFile {
    let path = crate::util::state_path(&runs().join("lin"), name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn map_markers_carry_activity_and_emotion_and_the_map_has_a_legend() {
    let server = Server::start(runs());
    let browser = browser();
    let (tab, _) = tab(&browser);
    // A link to the third step (06:30 am) of the real run.
    tab.navigate_to(&format!("{}#run=lin&step=3", server.url))
        .unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
    assert!(text(&tab, "#clock").contains("06:30 am"));
    let state = lin_state("state_2023-01-03_06h30.json");
    let legend = |key: &str| {
        eval(
            &tab,
            &format!(
                "(() => {{ const e = document.querySelector('#map-legend [data-legend=\"{key}\"]'); \
                 return e ? (e.querySelector('circle') ? e.querySelector('circle').getAttribute('stroke') : e.textContent) : null; }})()"
            ),
        )
    };
    for kind in ["building", "room", "open", "talking"] {
        assert!(legend(kind).is_string(), "no legend item for {kind}");
    }
    for e in EMOTIONS {
        assert!(
            legend(&format!("emotion:{e}")).is_string(),
            "no legend item for {e}"
        );
    }
    for agent in &state.agents {
        let got = eval(
            &tab,
            &format!(
                "(() => {{ const g = [...document.querySelectorAll('.agent-marker')].find(m => m.dataset.agent === {name}); \
                 return g ? JSON.stringify({{emotion: g.dataset.emotion, ring: g.querySelector('.ring').getAttribute('stroke'), \
                   name: g.querySelector('.name-label').textContent, \
                   activity: [...g.querySelectorAll('.activity-label tspan')].map(t => t.textContent).join(' ')}}) : null; }})()",
                name = serde_json::to_string(&agent.name).unwrap()
            ),
        );
        let m: serde_json::Value = serde_json::from_str(got.as_str().unwrap()).unwrap();
        assert_eq!(m["emotion"], agent.emotion.to_lowercase(), "{m}");
        // The ring has the emotion's colour, the one the legend gives it.
        assert_eq!(
            m["ring"],
            legend(&format!("emotion:{}", agent.emotion.to_lowercase())),
            "{m}"
        );
        assert_eq!(m["name"], agent.name.as_str(), "{m}");
        // The activity is written under the marker (cut with an ellipsis where it is long).
        let shown = m["activity"].as_str().unwrap();
        let words: Vec<&str> = agent.activity.split_whitespace().collect();
        let prefix = shown.trim_end_matches('…');
        assert!(
            !prefix.is_empty() && words.join(" ").starts_with(prefix.trim_end()),
            "{shown:?} is not the start of {:?}",
            agent.activity
        );
    }
    screenshot(&tab, "markers.png");
}

#[test]
fn a_report_of_an_unfinished_run_plays_from_the_start() {
    let (_out, file) = report_of("running");
    let browser = browser();
    let (tab, _) = tab(&browser);
    tab.navigate_to(&format!("file://{}", file.display()))
        .unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
    let status = text(&tab, "#run-status");
    assert!(
        status.contains("when this report was made") || status.contains("incomplete"),
        "{status}"
    );
    let value = "Number(document.querySelector('#time-slider').value)";
    assert_eq!(eval(&tab, value), 0, "a report opens at its first step");
    tab.wait_for_element("#play").unwrap().click().unwrap();
    let t0 = Instant::now();
    while eval(&tab, value) == 0 {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "Play did not move the replay"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn charts_have_titles_a_time_axis_with_gaps_the_closeness_scale_and_conversations() {
    // Eight steps of 15 minutes; the fourth is missing; agents 0 and 1 talk at every 4th step.
    let world = humanoid::world::World::generated(3, 11);
    let dir = tempfile::tempdir().unwrap();
    synthetic_run(&world, &dir.path().join("gaps"), 8, &[3], 4);
    let server = Server::start(&dir.path().join("gaps"));
    let browser = browser();
    let (tab, _) = tab(&browser);
    tab.navigate_to(&format!("{}#tab=dashboard", server.url))
        .unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
    let [a0, a1, a2] = [0, 1, 2].map(|i| world.agents[i].name.clone());
    tab.wait_for_element(&format!("svg.chart[data-chart='needs:{a0}']"))
        .unwrap();
    let probe = format!(
        "(() => {{ \
          const charts = [...document.querySelectorAll('svg.chart')]; \
          const chart = (c) => charts.find(s => s.dataset.chart === c); \
          const titles = charts.map(s => [s.dataset.chart, \
            (s.querySelector('.x-title') || {{}}).textContent || null, (s.querySelector('.y-title') || {{}}).textContent || null]); \
          const ticks = [...chart('closeness').querySelectorAll('.axis > text:not(.axis-title):not(.tick-label):not(.date-label)')].map(t => Number(t.textContent)); \
          const needs = chart('needs:' + {n0}); \
          const path = needs.querySelector('path.series[data-need=\"fullness\"]').getAttribute('d'); \
          const xs = [...path.matchAll(/[ML]([\\d.]+) /g)].map(m => Number(m[1])); \
          const marks = (c) => chart(c).querySelectorAll('.conv-mark').length; \
          return JSON.stringify({{titles, ticks, moves: (path.match(/M/g) || []).length, xs, \
            marks: [marks('needs:' + {n0}), marks('needs:' + {n1}), marks('needs:' + {n2}), marks('closeness')]}}); }})()",
        n0 = serde_json::to_string(&a0).unwrap(),
        n1 = serde_json::to_string(&a1).unwrap(),
        n2 = serde_json::to_string(&a2).unwrap(),
    );
    let v: serde_json::Value = serde_json::from_str(eval(&tab, &probe).as_str().unwrap()).unwrap();
    // Every chart has an x-axis title; the needs and closeness charts a y-axis title too.
    for t in v["titles"].as_array().unwrap() {
        assert!(t[1].as_str().unwrap().contains("time of day"), "{t}");
        let chart = t[0].as_str().unwrap();
        if chart.starts_with("needs:") {
            assert_eq!(t[2], "need (0–10)", "{t}");
        } else if chart == "closeness" {
            assert_eq!(t[2], "closeness (0–30)", "{t}");
        }
    }
    // Closeness is drawn on its whole scale, whatever the values.
    assert_eq!(
        v["ticks"],
        serde_json::json!([0, 5, 10, 15, 20, 25, 30]),
        "{v}"
    );
    // Seven states, a line broken at the missing step, which leaves a gap of two steps.
    let xs: Vec<f64> = v["xs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(xs.len(), 7, "{v}");
    assert_eq!(v["moves"], 2, "{v}");
    let step = xs[1] - xs[0];
    assert!(step > 0.0, "{v}");
    assert!(((xs[3] - xs[2]) / step - 2.0).abs() < 0.02, "{v}");
    assert!(((xs[6] - xs[5]) / step - 1.0).abs() < 0.02, "{v}");
    // Conversations at steps 0 and 4: marked on both talkers' charts and on closeness.
    assert_eq!(v["marks"], serde_json::json!([2, 2, 0, 2]), "{v}");
    screenshot(&tab, "gaps-dashboard.png");
}

/// Makes the tab's viewport `w`×`h` (a phone when `mobile`), then reloads the page.
fn viewport(tab: &Tab, w: u32, h: u32, mobile: bool) {
    use headless_chrome::protocol::cdp::Emulation::SetDeviceMetricsOverride;
    tab.call_method(SetDeviceMetricsOverride {
        width: w,
        height: h,
        device_scale_factor: if mobile { 2.0 } else { 1.0 },
        mobile,
        scale: None,
        screen_width: None,
        screen_height: None,
        position_x: None,
        position_y: None,
        dont_set_visible_size: None,
        screen_orientation: None,
        viewport: None,
        display_feature: None,
        device_posture: None,
    })
    .unwrap();
    tab.reload(true, None).unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
}

#[test]
fn the_layout_works_at_1024_px_and_on_a_phone() {
    let server = Server::start(runs());
    let browser = browser();
    let (tab, _) = tab(&browser);
    tab.navigate_to(&format!("{}#run=lin&step=2", server.url))
        .unwrap();
    tab.wait_for_element("body[data-ready='1']").unwrap();
    for (w, h, mobile, name) in [(1024, 768, false, "1024"), (390, 844, true, "phone")] {
        viewport(&tab, w, h, mobile);
        let layout = "(() => { \
            const box = (s) => { const r = document.querySelector(s).getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }; \
            return JSON.stringify({inner: [innerWidth, innerHeight], scroll: document.documentElement.scrollWidth, \
              play: box('#play'), slider: box('#time-slider'), tabs: box('.tabs'), clock: box('#clock'), map: box('#map-wrap')}); })()";
        let v: serde_json::Value =
            serde_json::from_str(eval(&tab, layout).as_str().unwrap()).unwrap();
        let width = v["inner"][0].as_f64().unwrap();
        assert!(
            v["scroll"].as_f64().unwrap() <= width,
            "{name}: the page scrolls sideways: {v}"
        );
        for part in ["play", "slider", "tabs", "clock", "map"] {
            let b = &v[part];
            assert!(
                b[0].as_f64().unwrap() >= 0.0 && b[2].as_f64().unwrap() <= width + 0.5,
                "{name}: {part} is outside the window: {v}"
            );
        }
        // Choosing an agent shows its status panel, with the agent list still in view.
        eval(
            &tab,
            "document.querySelector(\".agent-item[data-agent='John Lin']\").click()",
        );
        let seen = "(() => { \
            const r = (s) => document.querySelector(s).getBoundingClientRect(); \
            const inView = (b) => b.top >= 0 && b.bottom <= innerHeight; \
            return JSON.stringify({status: inView(r('#status-panel .status-name')), \
              agents: inView(r(\".agent-item[data-agent='Eddy Lin']\"))}); })()";
        let s: serde_json::Value =
            serde_json::from_str(eval(&tab, seen).as_str().unwrap()).unwrap();
        assert_eq!(s["status"], true, "{name}: {s}");
        if !mobile {
            assert_eq!(
                s["agents"], true,
                "{name}: the agent list left the view: {s}"
            );
        }
        screenshot(&tab, &format!("layout-{name}-map.png"));
        tab.wait_for_element("#tab-dashboard")
            .unwrap()
            .click()
            .unwrap();
        tab.wait_for_element("svg.chart[data-chart='closeness']")
            .unwrap();
        let charts = "(() => { \
            const cs = [...document.querySelectorAll('svg.chart')]; \
            const right = Math.max(...cs.map(c => c.getBoundingClientRect().right)); \
            const text = Math.min(...cs.map(c => c.querySelector('.tick-label').getBoundingClientRect().height)); \
            return JSON.stringify({n: cs.length, right, text, scroll: document.documentElement.scrollWidth}); })()";
        let c: serde_json::Value =
            serde_json::from_str(eval(&tab, charts).as_str().unwrap()).unwrap();
        assert!(c["n"].as_u64().unwrap() >= 4, "{name}: {c}");
        assert!(c["right"].as_f64().unwrap() <= width + 0.5, "{name}: {c}");
        assert!(c["scroll"].as_f64().unwrap() <= width, "{name}: {c}");
        // Axis labels keep a legible size (charts are drawn at their box's width, not shrunk).
        assert!(c["text"].as_f64().unwrap() >= 9.0, "{name}: {c}");
        screenshot(&tab, &format!("layout-{name}-dashboard.png"));
        tab.wait_for_element("#tab-map").unwrap().click().unwrap();
    }
}

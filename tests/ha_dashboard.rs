//! The ORIGINAL Humanoid Agents dashboard (`run_dashboard.py` of the `humanoidagents` 0.1.2
//! package on PyPI, installed into a venv by tests/dashboard/setup.sh) reads our run folders:
//! a short real run of the Lin family is opened with `run_dashboard.py --folder RUN/states`,
//! and the dashboard's Dash callbacks are called over HTTP the way its page calls them. For
//! every agent, the basic-needs graph has a series per need with the state files' values and
//! the closeness graph a series per other agent with the state files' closeness; each
//! conversation is shown at its step, crediting both participants, and its hover text lists
//! every turn (a silent participant's `"text": null` as `None`). Needs network to PyPI the
//! first time (the venv stays in the target dir).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Steps of the run the dashboard opens (06:00 to 09:45; under a minute on SmolLM2-135M).
const STEPS: usize = 16;

/// The world of that run: John and Eddy Lin in one room, so that they meet every step and
/// the run has conversations for the dashboard to show. (The suite's one-day run of the
/// bundled world on SmolLM2 is noise in its places and may keep them apart all day: on
/// 2026-12-04 it had no step with both in one place.)
const ONE_ROOM: &str = r#"
name = "Lin family at home"
start_date = "2023-01-03"
locations = ["Lin family's house/Kitchen"]
conversation_cooldown_minutes = 30

[[agents]]
name = "John Lin"
age = 45
traits = ["friendly", "kind", "patient"]
description = ["John Lin keeps the pharmacy counter at the market.", "John Lin is the father of Eddy Lin."]
example_day_plan = ["06:00 am: make breakfast for the family", "07:00 am: read the news over tea"]
location = "Lin family's house/Kitchen"

[agents.relationships."Eddy Lin"]
relationship = "son"
closeness = 15

[[agents]]
name = "Eddy Lin"
age = 19
traits = ["curious", "musical"]
description = ["Eddy Lin studies music at the college.", "Eddy Lin is the son of John Lin."]
example_day_plan = ["06:00 am: eat breakfast with his father", "07:00 am: hum a new tune"]
location = "Lin family's house/Kitchen"

[agents.relationships."John Lin"]
relationship = "father"
closeness = 15
"#;

/// The basic needs the dashboard graphs (the keys of `basic_needs`).
const NEEDS: [&str; 5] = ["fullness", "social", "fun", "health", "energy"];

/// The dashboard's default tooltip choice (its `tooltip-selection` radio items).
const TOOLTIP: &str = "one basic need value with activity detail and emotion";

/// Runs the dashboard script as `__main__` with its folder on `sys.path` (it does `from utils
/// import ...`), after making `Dash.run` serve on 127.0.0.1:PORT without debug or reloader
/// (the script calls `app.run(debug=True)` on the default port). Their file is not changed.
const WRAPPER: &str = r#"import os, runpy, sys
script, port = sys.argv[1], int(sys.argv[2])
import dash
_run = dash.Dash.run
def run(self, *args, **kwargs):
    kwargs.update(host="127.0.0.1", port=port, debug=False, use_reloader=False)
    return _run(self, **kwargs)
dash.Dash.run = run
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
sys.argv = [script] + sys.argv[3:]
runpy.run_path(script, run_name="__main__")
"#;

/// The venv with the original's package, made (or checked) by tests/dashboard/setup.sh.
fn setup_venv() -> PathBuf {
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ha-dashboard-venv");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/dashboard/setup.sh");
    let started = Instant::now();
    let out = Command::new("bash")
        .arg(&script)
        .arg(&venv)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("bash runs tests/dashboard/setup.sh");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "tests/dashboard/setup.sh {} failed ({}):\n{log}",
        venv.display(),
        out.status
    );
    eprintln!(
        "dashboard venv ready in {:.1} s:\n{}",
        started.elapsed().as_secs_f64(),
        log.lines()
            .filter(|l| l.starts_with("ha-dashboard setup:"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    venv
}

/// `VENV/lib/python3.*/site-packages/humanoidagents/run_dashboard.py`.
fn dashboard_script(venv: &Path) -> PathBuf {
    let lib = venv.join("lib");
    fs::read_dir(&lib)
        .unwrap_or_else(|e| panic!("{}: {e}", lib.display()))
        .flatten()
        .map(|e| {
            e.path()
                .join("site-packages/humanoidagents/run_dashboard.py")
        })
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no humanoidagents/run_dashboard.py under {}", lib.display()))
}

/// The state files of `folder` as the dashboard's `--mode all` finds them (every `*.json`),
/// by stamp `YYYY-MM-DDTHH:MM` taken from the file name `state_YYYY-MM-DD_HHhMM.json`.
fn read_states(folder: &Path) -> BTreeMap<String, Value> {
    let mut states = BTreeMap::new();
    for e in fs::read_dir(folder).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let stamp = name
            .strip_prefix("state_")
            .and_then(|s| s.strip_suffix(".json"))
            .and_then(|s| s.split_once('_'))
            .map(|(date, time)| format!("{date}T{}", time.replace('h', ":")))
            .unwrap_or_else(|| panic!("{name}: not state_YYYY-MM-DD_HHhMM.json"));
        let text = fs::read_to_string(e.path()).unwrap();
        let state: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        states.insert(stamp, state);
    }
    states
}

/// The agent called `name` in a state file.
fn agent<'a>(state: &'a Value, name: &str) -> &'a Value {
    state["agents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no agent {name} in a state file"))
}

/// A free port on 127.0.0.1 (bound and released).
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn http() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(60)))
        .build()
        .into()
}

/// The dashboard's process (in its own process group, killed with it on drop, also when a
/// test assertion fails) and its output, kept in files.
struct Dashboard {
    child: Child,
    port: u16,
    stdout: PathBuf,
    stderr: PathBuf,
    http: ureq::Agent,
}

impl Dashboard {
    /// Starts `script` through the wrapper on a free port with `args` (e.g. `--folder F`).
    fn start(python: &Path, script: &Path, work: &Path, args: &[&str]) -> Self {
        let wrapper = work.join("ha_dashboard_wrapper.py");
        fs::write(&wrapper, WRAPPER).unwrap();
        let (stdout, stderr) = (work.join("dashboard.out"), work.join("dashboard.err"));
        let port = free_port();
        let child = Command::new(python)
            .arg(&wrapper)
            .arg(script)
            .arg(port.to_string())
            .args(args)
            .current_dir(script.parent().unwrap())
            .env("PYTHONUNBUFFERED", "1")
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .stdin(Stdio::null())
            .stdout(fs::File::create(&stdout).unwrap())
            .stderr(fs::File::create(&stderr).unwrap())
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", python.display()));
        Dashboard {
            child,
            port,
            stdout,
            stderr,
            http: http(),
        }
    }

    /// What the dashboard printed so far (for failure messages).
    fn log(&self) -> String {
        let read = |p: &Path| fs::read_to_string(p).unwrap_or_default();
        format!(
            "--- dashboard stdout ---\n{}\n--- dashboard stderr ---\n{}",
            read(&self.stdout),
            read(&self.stderr)
        )
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Waits until the dashboard serves its layout (it loads the state files first).
    fn wait_ready(&mut self) {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "the dashboard exited ({status}) before serving:\n{}",
                    self.log()
                );
            }
            if let Ok(mut r) = self.http.get(&self.url("/_dash-layout")).call() {
                if r.status() == 200 {
                    let _ = r.body_mut().read_to_string();
                    eprintln!(
                        "dashboard serving on port {} after {:.1} s",
                        self.port,
                        started.elapsed().as_secs_f64()
                    );
                    return;
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the dashboard did not answer on port {} within 120 s:\n{}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }

    /// GET `path`: the body of a 200 answer.
    fn get(&self, path: &str) -> String {
        let mut r = self
            .http
            .get(&self.url(path))
            .call()
            .unwrap_or_else(|e| panic!("GET {path}: {e}\n{}", self.log()));
        let status = r.status().as_u16();
        let body = r.body_mut().read_to_string().unwrap();
        assert_eq!(status, 200, "GET {path}: {body}\n{}", self.log());
        body
    }

    /// Calls the callback whose output is `output` (`id.property`) with `inputs` (`id`,
    /// `property`, value) as the page does (POST /_dash-update-component); returns the
    /// output's new value.
    fn callback(&self, output: &str, inputs: &[(&str, &str, Value)]) -> Value {
        let (id, property) = output.split_once('.').unwrap();
        let body = json!({
            "output": output,
            "outputs": {"id": id, "property": property},
            "inputs": inputs
                .iter()
                .map(|(id, property, value)| json!({"id": id, "property": property, "value": value}))
                .collect::<Vec<_>>(),
            "state": [],
            "changedPropIds": [format!("{}.{}", inputs[0].0, inputs[0].1)],
        });
        let mut r = self
            .http
            .post(&self.url("/_dash-update-component"))
            .content_type("application/json")
            .send(body.to_string())
            .unwrap_or_else(|e| panic!("callback {output}: {e}\n{}", self.log()));
        let status = r.status().as_u16();
        let text = r.body_mut().read_to_string().unwrap();
        assert_eq!(
            status,
            200,
            "callback {output} with {inputs:?} answered {status}: {text}\n{}",
            self.log()
        );
        let answer: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("callback {output}: {e}: {text}\n{}", self.log()));
        let value = answer["response"][id][property].clone();
        assert!(
            !value.is_null(),
            "callback {output} with {inputs:?} returned no {output}: {text}\n{}",
            self.log()
        );
        value
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        // The whole process group (the script and anything it started), then the child.
        // SAFETY: kill(2) on the group this test created for the child.
        unsafe {
            libc::kill(-(self.child.id() as libc::pid_t), libc::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (with or without padding), as Plotly writes typed arrays.
fn base64(text: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in text.bytes().filter(|&c| c != b'=') {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => panic!("not base64: {text}"),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    out
}

/// A figure's numbers: a JSON array, or a Plotly typed array `{"dtype", "bdata"}` (Plotly 6
/// and later send numeric arrays base64-encoded, little-endian).
fn numbers(v: &Value) -> Vec<f64> {
    if let Some(a) = v.as_array() {
        return a.iter().map(|x| x.as_f64().unwrap_or(f64::NAN)).collect();
    }
    let dtype = v["dtype"]
        .as_str()
        .unwrap_or_else(|| panic!("not an array: {v}"));
    let bytes = base64(v["bdata"].as_str().unwrap());
    let size = match dtype {
        "i1" | "u1" => 1,
        "i2" | "u2" => 2,
        "i4" | "u4" | "f4" => 4,
        "i8" | "u8" | "f8" => 8,
        _ => panic!("unknown typed-array dtype {dtype}"),
    };
    bytes
        .chunks_exact(size)
        .map(|b| match dtype {
            "i1" => f64::from(b[0] as i8),
            "u1" => f64::from(b[0]),
            "i2" => f64::from(i16::from_le_bytes(b.try_into().unwrap())),
            "u2" => f64::from(u16::from_le_bytes(b.try_into().unwrap())),
            "i4" => f64::from(i32::from_le_bytes(b.try_into().unwrap())),
            "u4" => f64::from(u32::from_le_bytes(b.try_into().unwrap())),
            "f4" => f64::from(f32::from_le_bytes(b.try_into().unwrap())),
            "i8" => i64::from_le_bytes(b.try_into().unwrap()) as f64,
            "u8" => u64::from_le_bytes(b.try_into().unwrap()) as f64,
            _ => f64::from_le_bytes(b.try_into().unwrap()),
        })
        .collect()
}

/// One line of a figure: x as `YYYY-MM-DDTHH:MM`, y, and each point's customdata.
struct Series {
    x: Vec<String>,
    y: Vec<f64>,
    custom: Vec<Value>,
}

/// A figure's series by name (the legend: a need, or the other agent's name).
fn series(figure: &Value) -> BTreeMap<String, Series> {
    let mut out = BTreeMap::new();
    for trace in figure["data"].as_array().expect("figure.data") {
        let name = trace["name"].as_str().expect("trace name").to_string();
        let x = trace["x"]
            .as_array()
            .unwrap_or_else(|| panic!("{name}: x is not a list of times: {}", trace["x"]))
            .iter()
            .map(|t| {
                let t = t.as_str().expect("x is a time").replace(' ', "T");
                t.get(..16).unwrap_or(&t).to_string()
            })
            .collect();
        let custom = trace["customdata"].as_array().cloned().unwrap_or_default();
        let y = numbers(&trace["y"]);
        let prev = out.insert(name.clone(), Series { x, y, custom });
        assert!(prev.is_none(), "two series named {name}");
    }
    out
}

/// The names in a list of conversation turns.
fn names(turns: &Value) -> BTreeSet<String> {
    turns
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

/// Finds the component with `id` in a Dash layout tree.
fn component<'a>(node: &'a Value, id: &str) -> Option<&'a Value> {
    match node {
        Value::Object(o) => {
            if o.get("props").and_then(|p| p.get("id")) == Some(&json!(id)) {
                return Some(node);
            }
            o.values().find_map(|v| component(v, id))
        }
        Value::Array(a) => a.iter().find_map(|v| component(v, id)),
        _ => None,
    }
}

/// Seeds tried for a run with a conversation in its [`STEPS`] steps.
const SEEDS: u64 = 8;

/// The run directory (under `tmp`) of the first seed whose [`STEPS`] steps of `world` on the
/// fast model hold a conversation: SmolLM2 talks in about two of three seeds of this world
/// (seeds 0-5 at 7c4a4f1: 0, 1, 0, 4, 1, 1 conversations), so one seed alone fails by chance.
fn run_with_a_conversation(world: &Path, tmp: &Path) -> PathBuf {
    let steps = STEPS.to_string();
    for seed in 0..SEEDS {
        let run = tmp.join(format!("run-{seed}"));
        let out = crate::sim::bin()
            .arg("run")
            .arg(world)
            .arg("--out")
            .arg(&run)
            .args(["--steps", &steps, "--seed", &seed.to_string()])
            .output()
            .expect("humanoid runs");
        assert!(
            out.status.success(),
            "run failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let talked = read_states(&run.join("states")).values().any(|s| {
            s["conversations"]
                .as_object()
                .is_some_and(|c| !c.is_empty())
        });
        if talked {
            return run;
        }
    }
    panic!("no conversation in {STEPS} steps of any of {SEEDS} seeds");
}

#[test]
fn original_dashboard_reads_our_run_folders() {
    let started = Instant::now();
    let setup = std::thread::spawn(setup_venv);
    let tmp = tempfile::tempdir().unwrap();
    let world = tmp.path().join("one-room.toml");
    fs::write(&world, ONE_ROOM).unwrap();
    let run = run_with_a_conversation(&world, tmp.path());
    let venv = match setup.join() {
        Ok(v) => v,
        Err(e) => std::panic::resume_unwind(e),
    };
    let python = venv.join("bin/python");
    let script = dashboard_script(&venv);

    let folder = run.join("states");
    let states = read_states(&folder);
    assert_eq!(
        states.len(),
        STEPS,
        "{}: one state file per step of the day",
        folder.display()
    );
    assert_eq!(states.len(), crate::sim::state_files(&run).len());
    let first = states.values().next().unwrap();
    let agents: Vec<String> = first["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        agents.len() >= 2,
        "the Lin family has two agents: {agents:?}"
    );
    for a in first["agents"].as_array().unwrap() {
        let keys: BTreeSet<&str> = a["basic_needs"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, NEEDS.into_iter().collect(), "basic_needs keys");
    }
    // (stamp, place, turns) of each conversation the dashboard shows (it takes the first
    // conversation of each place).
    let conversations: Vec<(String, String, Value)> = states
        .iter()
        .flat_map(|(stamp, s)| {
            s["conversations"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(place, convs)| (stamp.clone(), place.clone(), convs[0].clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        !conversations.is_empty(),
        "the run has no conversation in its {STEPS} steps"
    );

    // Their date_range mode builds the names of 06:00-23:45 of each date: ours are among them.
    let dates: BTreeSet<&str> = states.keys().map(|s| &s[..10]).collect();
    let listing = Command::new(&python)
        .arg("-c")
        .arg(
            "import json, sys; import run_dashboard as d; \
             print(json.dumps(d.get_filename_list_by_dates_of_interest(sys.argv[2:], sys.argv[1])))",
        )
        .arg(&folder)
        .args(&dates)
        .current_dir(script.parent().unwrap())
        .output()
        .unwrap();
    assert!(
        listing.status.success(),
        "run_dashboard.get_filename_list_by_dates_of_interest failed: {}",
        String::from_utf8_lossy(&listing.stderr)
    );
    let their_names: Vec<String> = serde_json::from_slice(&listing.stdout).unwrap();
    for e in fs::read_dir(&folder).unwrap().flatten() {
        let ours = e.path().display().to_string();
        assert!(
            their_names.contains(&ours),
            "{ours} is not among the names of their date_range mode: {their_names:?}"
        );
    }

    let folder_arg = folder.display().to_string();
    let mut dash = Dashboard::start(&python, &script, tmp.path(), &["--folder", &folder_arg]);
    dash.wait_ready();
    let page = dash.get("/");
    assert!(page.contains("Humanoid Agent Analytics"), "{page}");
    let layout: Value = serde_json::from_str(&dash.get("/_dash-layout")).unwrap();
    let dropdown = component(&layout, "agent-selection").expect("the agent dropdown");
    let options: BTreeSet<String> =
        serde_json::from_value(dropdown["props"]["options"].clone()).unwrap();
    assert_eq!(
        options,
        agents.iter().cloned().collect(),
        "the agent dropdown offers every agent"
    );
    let stamps: Vec<String> = states.keys().cloned().collect();

    let mut silent_turns = 0;
    for name in &agents {
        // Basic needs: a series per need, a point per state file, the state files' values.
        let figure = dash.callback(
            "basic-status-graph.figure",
            &[
                ("agent-selection", "value", json!(name)),
                ("tooltip-selection", "value", json!(TOOLTIP)),
            ],
        );
        let needs = series(&figure);
        assert_eq!(
            needs.keys().map(String::as_str).collect::<BTreeSet<_>>(),
            NEEDS.into_iter().collect(),
            "{name}: the basic-needs graph's series"
        );
        for (need, s) in &needs {
            assert_eq!(s.x, stamps, "{name} {need}: one point per state file");
            assert_eq!(s.y.len(), stamps.len(), "{name} {need}: y");
            assert_eq!(s.custom.len(), stamps.len(), "{name} {need}: customdata");
            for (i, stamp) in stamps.iter().enumerate() {
                let a = agent(&states[stamp], name);
                assert_eq!(
                    s.y[i],
                    a["basic_needs"][need].as_f64().unwrap(),
                    "{name} {need} at {stamp}"
                );
                assert_eq!(s.custom[i][1], a["emotion"], "{name} emotion at {stamp}");
                assert_eq!(s.custom[i][2], a["activity"], "{name} activity at {stamp}");
            }
        }
        // Hovering a point shows its activity and emotion.
        let s = &needs["energy"];
        let hover = json!({"points": [{
            "curveNumber": 0, "pointNumber": 0, "pointIndex": 0,
            "x": s.x[0], "y": s.y[0], "customdata": s.custom[0],
        }]});
        let text = dash.callback(
            "hover-data.children",
            &[("basic-status-graph", "hoverData", hover)],
        );
        let emotion = agent(&states[&stamps[0]], name)["emotion"]
            .as_str()
            .unwrap();
        let text = text.as_str().expect("hover text");
        assert!(
            text.starts_with("*Activity*: ") && text.contains(&format!("*Emotion*: {emotion}")),
            "{name}: hover text {text:?}"
        );

        // Closeness: a series per other agent with the state files' closeness.
        let figure = dash.callback(
            "closeness-graph.figure",
            &[("agent-selection", "value", json!(name))],
        );
        let closeness = series(&figure);
        let others: BTreeSet<&str> = agents
            .iter()
            .map(String::as_str)
            .filter(|o| o != name)
            .collect();
        assert_eq!(
            closeness
                .keys()
                .map(String::as_str)
                .collect::<BTreeSet<_>>(),
            others,
            "{name}: the closeness graph's series"
        );
        for (other, s) in &closeness {
            assert_eq!(
                s.x, stamps,
                "{name} closeness to {other}: one point per state file"
            );
            for (i, stamp) in stamps.iter().enumerate() {
                let want = &agent(&states[stamp], name)["social_relationships"][other]["closeness"];
                match want.as_f64() {
                    Some(c) => assert_eq!(s.y[i], c, "{name} closeness to {other} at {stamp}"),
                    None => assert!(s.y[i].is_nan(), "{name} has no relationship to {other}"),
                }
            }
        }

        // Conversations: at its step, with its place, both participants and every turn.
        let s = closeness.values().next().unwrap();
        assert_eq!(s.custom.len(), stamps.len(), "{name}: closeness customdata");
        let mine: Vec<_> = conversations
            .iter()
            .filter(|(_, _, turns)| names(turns).contains(name))
            .collect();
        let shown = s.custom.iter().filter(|c| !c[0].is_null()).count();
        assert_eq!(
            shown,
            mine.len(),
            "{name}: conversations shown: {:?}",
            s.custom
        );
        for (stamp, place, turns) in mine {
            let i = stamps.iter().position(|t| t == stamp).unwrap();
            let c = &s.custom[i];
            assert_eq!(c[0], json!(place), "{name}: conversation place at {stamp}");
            let involved: BTreeSet<String> = serde_json::from_value(c[1].clone()).unwrap();
            assert_eq!(involved, names(turns), "{name}: agents involved at {stamp}");
            assert!(
                involved.len() >= 2,
                "{name} at {stamp}: the dashboard credits only {involved:?}"
            );
            assert_eq!(&c[2], turns, "{name}: conversation turns at {stamp}");
            let hover = json!({"points": [{
                "curveNumber": 0, "pointNumber": i, "pointIndex": i,
                "x": s.x[i], "y": s.y[i], "customdata": c,
            }]});
            let text = dash.callback(
                "hover-conversation-data.children",
                &[("closeness-graph", "hoverData", hover)],
            );
            let text = text.as_str().expect("hover text");
            assert!(text.starts_with(&format!("*Place*: {place}")), "{text:?}");
            // One block per turn; a silent turn's text (null) is shown as None.
            let blocks: Vec<&str> = text.split("-----------------------").skip(1).collect();
            assert_eq!(blocks.len(), turns.as_array().unwrap().len(), "{text:?}");
            for (turn, block) in turns.as_array().unwrap().iter().zip(&blocks) {
                let who = turn["name"].as_str().unwrap();
                assert!(
                    block.contains(&format!("name:\n{who}\n")),
                    "{who}: {text:?}"
                );
                if turn["text"].is_null() {
                    silent_turns += 1;
                    assert!(
                        block.contains("text:\nNone\n"),
                        "{who}'s silent turn: {text:?}"
                    );
                }
            }
        }
    }
    eprintln!(
        "dashboard read {} state files of {} agents, {} conversation(s), {silent_turns} silent \
         turn(s) shown as None (once per participant's graph); {:.1} s in all",
        stamps.len(),
        agents.len(),
        conversations.len(),
        started.elapsed().as_secs_f64()
    );
    let log = dash.log();
    assert!(
        !log.contains("Traceback"),
        "the dashboard logged an exception:\n{log}"
    );
}

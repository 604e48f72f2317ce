//! The run viewer: every endpoint of the router on a real run (and broken copies of it),
//! and `humanoid report` through the binary.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use humanoid::viewer::{server::router, RunSource};
use serde_json::Value;
use tower::ServiceExt;

use crate::util::ensure_model;

pub fn bin() -> Command {
    ensure_model("smollm2-135m");
    ensure_model("minilm-l6-v2");
    let mut c = Command::new(env!("CARGO_BIN_EXE_humanoid"));
    c.env(
        humanoid::model_store::CHAT_MODEL_ENV,
        crate::util::FAST_CHAT_MODEL,
    );
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

/// A folder of runs: `lin` (a real 3-step run of the Lin family), and copies of it with a
/// truncated state file, a missing one, a broken config, and one still "running".
pub fn runs() -> &'static Path {
    static RUNS: OnceLock<tempfile::TempDir> = OnceLock::new();
    RUNS.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let lin = dir.path().join("lin");
        let world = Path::new(env!("CARGO_MANIFEST_DIR")).join("worlds/lin-family.toml");
        let out = bin()
            .args(["run", world.to_str().unwrap(), "--steps", "3", "--out"])
            .arg(&lin)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let copy = |name: &str| -> PathBuf {
            let to = dir.path().join(name);
            crate::util::copy_run(&lin, &to);
            to
        };
        let truncated = copy("truncated");
        let f = crate::util::state_path(&truncated, "state_2023-01-03_06h15.json");
        let text = std::fs::read(&f).unwrap();
        std::fs::write(&f, &text[..text.len() / 2]).unwrap();
        let missing = copy("missing");
        std::fs::remove_file(crate::util::state_path(
            &missing,
            "state_2023-01-03_06h15.json",
        ))
        .unwrap();
        let broken = copy("broken");
        std::fs::write(broken.join("config.json"), "{\"version\": ").unwrap();
        let running = copy("running");
        std::fs::remove_file(running.join("summary.json")).unwrap();
        std::fs::remove_file(crate::util::state_path(
            &running,
            "state_2023-01-03_06h30.json",
        ))
        .unwrap();
        dir
    })
    .path()
}

async fn get(uri: &str) -> (StatusCode, String, Vec<u8>) {
    let app = router(RunSource::new(runs()));
    let resp = app
        .oneshot(Request::get(uri).body(Body::empty()).unwrap())
        .await
        .unwrap();
    let status = resp.status();
    let kind = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = resp
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (status, kind, body)
}

async fn get_json(uri: &str) -> (StatusCode, Value) {
    let (status, kind, body) = get(uri).await;
    assert!(kind.starts_with("application/json"), "{uri}: {kind}");
    (status, serde_json::from_slice(&body).unwrap())
}

/// Whether a page names any address outside its server (the SVG namespace is a name only).
fn links_outside(page: &str) -> bool {
    let page = page.replace("http://www.w3.org/2000/svg", "");
    page.contains("http://") || page.contains("https://") || page.contains("//cdn")
}

fn by_id<'a>(runs: &'a Value, id: &str) -> &'a Value {
    runs["runs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("run {id} listed"))
}

#[tokio::test]
async fn page_and_assets_are_served() {
    for (uri, kind) in [
        ("/", "text/html"),
        ("/viewer.js", "text/javascript"),
        ("/viewer.css", "text/css"),
    ] {
        let (status, k, body) = get(uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}");
        assert!(k.starts_with(kind), "{uri}: {k}");
        assert!(!body.is_empty(), "{uri}");
    }
    let (_, _, page) = get("/").await;
    assert!(!links_outside(&String::from_utf8(page).unwrap()));
}

#[tokio::test]
async fn runs_are_listed_with_their_status() {
    // A run being written: its event log changed just now.
    std::fs::File::options()
        .append(true)
        .open(runs().join("running/events.jsonl"))
        .unwrap()
        .set_modified(std::time::SystemTime::now())
        .unwrap();
    let (status, v) = get_json("/api/runs").await;
    assert_eq!(status, StatusCode::OK);
    let ids: Vec<&str> = v["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["broken", "lin", "missing", "running", "truncated"]);
    let lin = by_id(&v, "lin");
    assert_eq!(lin["status"], "complete");
    assert_eq!(lin["name"], "Lin family");
    assert_eq!(lin["steps_done"], 3);
    assert_eq!(lin["steps_total"], 3);
    assert!(lin["message"].is_null());
    assert_eq!(by_id(&v, "broken")["status"], "broken");
    assert!(by_id(&v, "broken")["message"]
        .as_str()
        .unwrap()
        .contains("config.json"));
    assert_eq!(by_id(&v, "running")["status"], "running");
    assert_eq!(by_id(&v, "running")["steps_done"], 2);
}

#[tokio::test]
async fn a_run_has_its_world_and_states() {
    let (status, d) = get_json("/api/runs/lin").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        d["world"]["agents"],
        serde_json::json!(["John Lin", "Eddy Lin"])
    );
    assert_eq!(d["world"]["step_minutes"], 15);
    let roots: Vec<&str> = d["world"]["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert!(roots.contains(&"Lin family's house"), "{roots:?}");
    assert_eq!(d["model"], "smollm2-135m");
    assert!(d["problems"].as_array().unwrap().is_empty());

    let (_, s) = get_json("/api/runs/lin/states?from=0").await;
    let states = s["states"].as_array().unwrap();
    assert_eq!(states.len(), 3);
    assert_eq!(s["next"], 3);
    assert_eq!(states[0]["step"], 0);
    assert_eq!(states[0]["file"], "state_2023-01-03_06h00.json");
    assert_eq!(states[0]["time"], "06:00 am");
    let agent = &states[0]["agents"][0];
    for field in ["name", "activity", "activity_emoji", "location", "emotion"] {
        assert!(!agent[field].is_null(), "{field}");
    }
    assert!(agent["basic_needs"]["fullness"].is_u64());
    // Following a run: only what is new.
    let (_, s) = get_json("/api/runs/lin/states?from=2").await;
    assert_eq!(s["states"].as_array().unwrap().len(), 1);
    assert_eq!(s["states"][0]["step"], 2);
    let (_, s) = get_json("/api/runs/lin/states?from=9").await;
    assert!(s["states"].as_array().unwrap().is_empty());
    assert_eq!(s["next"], 9);
}

#[tokio::test]
async fn bad_runs_report_problems_and_keep_serving() {
    let (_, s) = get_json("/api/runs/truncated/states").await;
    assert_eq!(s["states"].as_array().unwrap().len(), 2);
    let problems = s["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p["file"] == "state_2023-01-03_06h15.json"
                && p["message"].as_str().unwrap().contains("unreadable")),
        "{problems:?}"
    );
    let (_, d) = get_json("/api/runs/missing").await;
    assert_eq!(
        d["problems"][0],
        serde_json::json!({"file": "state_2023-01-03_06h15.json", "message": "missing state file"})
    );
    assert!(d["message"].as_str().unwrap().contains("problem"));
    let (status, d) = get_json("/api/runs/broken").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(d["status"], "broken");
    assert!(d["world"].is_null());
    let (_, s) = get_json("/api/runs/broken/states").await;
    assert_eq!(
        s["states"].as_array().unwrap().len(),
        3,
        "states still readable"
    );
    // The server still answers afterwards.
    let (status, _) = get_json("/api/runs").await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn unknown_runs_and_paths_are_404_and_nothing_escapes_the_folder() {
    for uri in [
        "/api/runs/nope",
        "/api/runs/nope/states",
        "/api/runs/..",
        "/api/runs/%2E%2E/states",
        "/api/runs/..%2F..%2Fetc/states",
        "/api/runs/lin%2F..%2Flin/states",
        "/api/runs/lin/config.json",
        "/api/runs/lin/../../etc/passwd",
        "/lin/config.json",
        "/../Cargo.toml",
        "/etc/passwd",
    ] {
        let (status, _, body) = get(uri).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{uri}");
        let text = String::from_utf8_lossy(&body);
        assert!(
            !text.contains("world_source") && !text.contains("root:"),
            "{uri}: {text}"
        );
    }
    let (status, v) = get_json("/api/runs/nope").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(v["error"].as_str().unwrap().contains("nope"));
}

#[test]
fn a_single_run_directory_is_one_run() {
    let src = RunSource::new(runs().join("lin"));
    let list = src.list();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].id, "lin");
    assert!(src.dir_of("lin").is_some());
    assert!(src.dir_of("../lin").is_none());
}

#[test]
fn report_is_one_self_contained_file() {
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("report.html");
    let o = bin()
        .args(["report"])
        .arg(runs())
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let page = std::fs::read_to_string(&file).unwrap();
    assert!(page.contains("id=\"humanoid-data\""));
    assert!(!page.contains("src=\"viewer.js\"") && !page.contains("href=\"viewer.css\""));
    assert!(!links_outside(&page));
    let start = page
        .find("id=\"humanoid-data\" type=\"application/json\">")
        .unwrap();
    let json_start = page[start..].find('>').unwrap() + start + 1;
    let json_end = page[json_start..].find("</script>").unwrap() + json_start;
    let data: Value = serde_json::from_str(&page[json_start..json_end]).unwrap();
    assert_eq!(data["runs"]["runs"].as_array().unwrap().len(), 5);
    assert_eq!(data["states"]["lin"]["states"].as_array().unwrap().len(), 3);
    assert_eq!(data["details"]["lin"]["world"]["name"], "Lin family");
    // No run here: a clear error, nothing written.
    let empty = out.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let o = bin()
        .args(["report"])
        .arg(&empty)
        .arg("-o")
        .arg(out.path().join("none.html"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("no run directory"));
    assert!(!out.path().join("none.html").exists());
}

/// A `config.json` whose `steps` is absurd (10^12) is reported in the page; the server does
/// not try to list that many state files and keeps answering.
#[tokio::test]
async fn an_absurd_step_count_is_a_problem_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let huge = dir.path().join("huge");
    crate::util::copy_run(&runs().join("lin"), &huge);
    let cfg = std::fs::read_to_string(huge.join("config.json")).unwrap();
    let mut v: Value = serde_json::from_str(&cfg).unwrap();
    v["steps"] = serde_json::json!(1_000_000_000_000u64);
    std::fs::write(huge.join("config.json"), v.to_string()).unwrap();
    let app = router(RunSource::new(dir.path()));
    let resp = app
        .clone()
        .oneshot(Request::get("/api/runs/huge").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    let d: Value = serde_json::from_slice(&body).unwrap();
    let problems = d["problems"].as_array().unwrap();
    assert!(
        problems.iter().any(|p| p["file"] == "config.json"
            && p["message"].as_str().unwrap().contains("steps")),
        "{problems:?}"
    );
    let resp = app
        .oneshot(Request::get("/api/runs").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

/// State files alone, as the original Humanoid Agents writes them (no config.json): the viewer
/// shows them with the places of their `world` key, and `check` wants a world to check them.
#[tokio::test]
async fn a_folder_of_state_files_alone_is_shown_and_checked_against_a_world() {
    let dir = tempfile::tempdir().unwrap();
    let lin = humanoid::sim::RunDir::new(runs().join("lin"));
    for f in lin.state_files().unwrap() {
        std::fs::copy(&f, dir.path().join(f.file_name().unwrap())).unwrap();
    }
    let src = RunSource::new(dir.path());
    let runs = src.runs();
    assert_eq!(runs.len(), 1, "{runs:?}");
    let id = &runs[0].0;
    let detail = serde_json::to_value(src.detail(id).unwrap()).unwrap();
    assert_eq!(detail["status"], "complete", "{detail}");
    assert!(
        detail["message"]
            .as_str()
            .unwrap()
            .contains("without config.json"),
        "{detail}"
    );
    let places: Vec<&str> = detail["world"]["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].as_str().unwrap())
        .collect();
    assert!(places.contains(&"Lin family's house"), "{detail}");
    assert_eq!(
        detail["world"]["agents"],
        serde_json::json!(["John Lin", "Eddy Lin"])
    );
    assert_eq!(src.states(id, 0).unwrap().states.len(), 3);

    let check = |world: Option<&str>| {
        let mut c = bin();
        c.arg("check").arg(dir.path());
        if let Some(w) = world {
            c.args(["--world", w]);
        }
        c.output().unwrap()
    };
    let o = check(None);
    assert!(!o.status.success());
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("without config.json") && err.contains("--world"),
        "{err}"
    );
    let o = check(Some("worlds/lin-family.toml"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("well-formed: 100.0% of 6 agent states"),
        "{out}"
    );
}

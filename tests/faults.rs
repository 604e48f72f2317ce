//! Faults a long run meets: SIGKILL at random points, a file-size limit (a full disk, as far
//! as the program can tell), and a second process on the same run folder.

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use humanoid::sim::events::read_events;
use rand::{Rng, SeedableRng};

use crate::sim::{bin, lin_family, one_day_dir, same_files};

fn state_files(dir: &Path) -> Vec<std::path::PathBuf> {
    if dir.exists() {
        crate::sim::state_files(dir)
    } else {
        Vec::new()
    }
}

const STEPS: usize = 8;

fn spawn(args: &[&str], out: &Path) -> Child {
    let mut c = bin();
    c.args(args)
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    c.spawn().unwrap()
}

fn start_run(out: &Path, steps: usize) -> Child {
    let world = lin_family();
    let steps = steps.to_string();
    spawn(
        &[
            "run",
            world.to_str().unwrap(),
            "--days",
            "1",
            "--steps",
            &steps,
            "--out",
        ],
        out,
    )
}

/// Waits until `f` holds (or the child exits); returns whether it held.
fn wait_until(child: &mut Child, limit: Duration, f: impl Fn() -> bool) -> bool {
    let t0 = Instant::now();
    while t0.elapsed() < limit {
        if f() {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return f();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Every line of the event log is whole JSON, each step's activities appear once per agent,
/// and the first `steps` state files equal those of the uninterrupted one-day run.
fn assert_intact(out: &Path, steps: usize) {
    let text = std::fs::read_to_string(out.join("events.jsonl")).unwrap();
    for (i, line) in text.lines().enumerate() {
        assert!(
            serde_json::from_str::<serde_json::Value>(line).is_ok(),
            "events.jsonl line {} is torn: {line:?}",
            i + 1
        );
    }
    let events = read_events(&out.join("events.jsonl")).unwrap();
    for step in 0..steps as u64 {
        let n = events
            .iter()
            .filter(|e| e.step == step && e.kind() == "activity")
            .count();
        assert_eq!(n, 2, "step {step} has {n} activity events");
    }
    assert_eq!(state_files(out).len(), steps);
    same_files(out, &one_day_dir(), steps);
}

/// Also the same-seed and kill-and-resume test: a second run of the same world and seed, killed
/// first between steps and then at random moments and resumed each time, has the one-day run's
/// state files byte for byte.
#[test]
fn repeated_kills_at_random_points_lose_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("killed");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
    let mut kills = Vec::new();
    let mut child = start_run(&out, STEPS);
    for round in 0.. {
        // Kill at the first checkpoint once (between steps), then at random moments: during
        // model batches, while files are written, or between steps.
        let done = state_files(&out).len();
        if round == 0 {
            wait_until(&mut child, Duration::from_secs(600), || {
                state_files(&out).len() > done
            });
        } else {
            let ms = rng.gen_range(200..6000);
            wait_until(&mut child, Duration::from_millis(ms), || false);
        }
        if child.try_wait().unwrap().is_some() || kills.len() == 4 {
            break;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        kills.push(state_files(&out).len());
        child = spawn(&["resume"], &out);
    }
    let status = child.wait_with_output().unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
    eprintln!("killed with {kills:?} state files written, then resumed each time");
    assert!(kills.len() >= 2, "only {} kills landed", kills.len());
    assert_intact(&out, STEPS);
}

#[test]
fn a_file_size_limit_is_a_clear_error_and_the_last_checkpoint_survives() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("limited");
    // At most 30 kB per file: the event log (about 6 kB a step) outgrows it within a few
    // steps, as a full disk would stop it.
    let mut cmd = bin();
    cmd.arg("run")
        .arg(lin_family())
        .args(["--days", "1", "--steps", "8", "--out"])
        .arg(&out);
    // SAFETY: only setrlimit, which is async-signal-safe, runs between fork and exec.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            let lim = libc::rlimit {
                rlim_cur: 30_000,
                rlim_max: 30_000,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let r = cmd.output().unwrap();
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(!r.status.success(), "the run fit in the limit: {err}");
    assert!(
        err.contains("File too large") && err.contains(out.to_str().unwrap()),
        "unclear error: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    let written = state_files(&out).len();
    assert!(written < STEPS, "{written} steps written");
    // Without the limit the run resumes from its last good checkpoint and ends intact.
    let r = bin().arg("resume").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_intact(&out, STEPS);
}

#[test]
fn a_second_process_on_the_same_run_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("busy");
    // Two steps: the refusal comes before any model work, and the resume after it is checked
    // in full.
    let mut first = start_run(&out, 2);
    assert!(wait_until(&mut first, Duration::from_secs(300), || out
        .join("config.json")
        .exists()));
    for args in [
        vec!["resume"],
        vec!["run", lin_family().to_str().unwrap(), "--out"],
    ] {
        let r = bin().args(&args).arg(&out).output().unwrap();
        let err = String::from_utf8_lossy(&r.stderr);
        assert!(!r.status.success(), "{args:?} ran beside the first");
        assert!(err.contains("another process"), "{args:?}: {err}");
    }
    first.kill().unwrap();
    first.wait().unwrap();
    // Once the holder is gone (killed: the lock goes with it), resume works.
    let r = bin().arg("resume").arg(&out).output().unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    assert_intact(&out, 2);
}

//! Runs of a world in child processes of this binary, for the commands that compare runs
//! (`experiment ablation`, `bench models`): each run is an ordinary run directory, its
//! peak memory is the child's own, and a comparison interrupted halfway continues where it
//! stopped (finished runs are kept, a partial one is resumed).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

use anyhow::{bail, Context, Result};

use super::ModelArgs;

/// One run to make.
pub struct RunSpec<'a> {
    pub world: &'a Path,
    pub out: PathBuf,
    pub seed: u64,
    pub days: Option<u32>,
    pub steps: Option<u64>,
    /// `--condition` values.
    pub conditions: Vec<String>,
    pub model: &'a ModelArgs,
}

/// How a run went.
pub struct ChildRun {
    /// Peak resident memory of the child, in bytes (`None` when reused or not measurable).
    pub peak_rss: Option<u64>,
    /// The run was already complete: nothing ran.
    pub reused: bool,
}

/// The `--model ...` flags that reproduce `m` in a child.
pub fn model_flags(m: &ModelArgs) -> Vec<String> {
    let mut f = Vec::new();
    if let Some(model) = &m.model {
        f.extend(["--model".into(), model.clone()]);
    }
    if let Some(t) = m.threads {
        f.extend(["--threads".into(), t.to_string()]);
    }
    f.extend([
        "--device".into(),
        m.device.to_string(),
        "--max-num-seqs".into(),
        m.max_num_seqs.to_string(),
        "--max-batched-tokens".into(),
        m.max_batched_tokens.to_string(),
        "--context".into(),
        m.context.to_string(),
        "--prefix-cache-mib".into(),
        m.prefix_cache_mib.to_string(),
        "--weights".into(),
        m.weights.as_str().into(),
    ]);
    f
}

/// `eval judge FILE --json` on the model of `m` in a child process: its report (one JSON
/// object).
pub fn judge_child(file: &Path, m: &ModelArgs) -> Result<serde_json::Value> {
    let out = Command::new(this_program()?)
        .args(["eval", "judge"])
        .arg(file)
        .arg("--json")
        .args(model_flags(m))
        .stderr(std::process::Stdio::inherit())
        .output()
        .context("starting `eval judge`")?;
    if !out.status.success() {
        bail!("`eval judge {}` failed ({})", file.display(), out.status);
    }
    serde_json::from_slice(&out.stdout).context("reading the report of `eval judge`")
}

/// Makes the run of `spec` in a child process: nothing when `spec.out` holds a finished
/// run, `resume` when it holds an interrupted one, else a new `run`.
pub fn run_child(spec: &RunSpec<'_>) -> Result<ChildRun> {
    let dir = spec.out.clone();
    let run = humanoid::sim::RunDir::new(&dir);
    if run.is_finished() {
        return Ok(ChildRun {
            peak_rss: None,
            reused: true,
        });
    }
    let mut cmd = Command::new(this_program()?);
    if run.is_run() {
        cmd.arg("resume").arg(&dir);
        if let Some(t) = spec.model.threads {
            cmd.args(["--threads", &t.to_string()]);
        }
    } else {
        cmd.arg("run")
            .arg(spec.world)
            .arg("--out")
            .arg(&dir)
            .args(["--seed", &spec.seed.to_string()]);
        if let Some(d) = spec.days {
            cmd.args(["--days", &d.to_string()]);
        }
        if let Some(s) = spec.steps {
            cmd.args(["--steps", &s.to_string()]);
        }
        for c in &spec.conditions {
            cmd.args(["--condition", c]);
        }
        cmd.args(model_flags(spec.model));
    }
    // The child's report goes to stderr with its progress: stdout stays the caller's.
    let mut child = cmd
        .stdout(std::process::Stdio::from(std::io::stderr()))
        .spawn()
        .with_context(|| format!("starting the run {}", dir.display()))?;
    let (status, peak_rss) = wait_with_peak(&mut child)?;
    if !status.success() {
        bail!(
            "the run {} failed ({status}); its output is above. Run the same command again to resume it",
            dir.display()
        );
    }
    Ok(ChildRun {
        peak_rss,
        reused: false,
    })
}

/// This program, even when its file was replaced or removed since it started (a rebuild
/// during a long comparison): on Linux the running image itself.
fn this_program() -> Result<PathBuf> {
    let own = Path::new("/proc/self/exe");
    if cfg!(target_os = "linux") && own.exists() {
        return Ok(own.to_path_buf());
    }
    std::env::current_exe().context("finding this program to start runs")
}

/// Waits for `child`, returning its status and peak resident memory (Linux: the kernel's
/// `ru_maxrss` of the child).
#[cfg(target_os = "linux")]
fn wait_with_peak(child: &mut std::process::Child) -> Result<(ExitStatus, Option<u64>)> {
    use std::os::unix::process::ExitStatusExt;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child, writing into locals that outlive the call.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid {
            let peak = u64::try_from(usage.ru_maxrss).ok().map(|kib| kib * 1024);
            return Ok((ExitStatus::from_raw(status), peak));
        }
        let err = std::io::Error::last_os_error();
        if err.kind() != std::io::ErrorKind::Interrupted {
            return Err(err).context("waiting for a run");
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn wait_with_peak(child: &mut std::process::Child) -> Result<(ExitStatus, Option<u64>)> {
    Ok((child.wait().context("waiting for a run")?, None))
}

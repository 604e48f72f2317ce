//! The library's layers point one way: a module imports only from the modules below it, in
//! the order `src/lib.rs` documents. Reads the sources; no model needed.

use std::path::{Path, PathBuf};

/// Lowest first, as in `src/lib.rs`.
const LAYERS: &[&str] = &[
    "formats",
    "model_store",
    "llm",
    "remote",
    "serve",
    "embed",
    "world",
    "memory",
    "agent",
    "sim",
    "report",
    "eval",
    "viewer",
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules named as `crate::NAME` in the code of `text` (comments, where a
/// doc may point anywhere, are skipped).
fn crate_imports(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let text = code.as_str();
    text.match_indices("crate::")
        .filter(|(i, _)| {
            // `crate::` itself, not e.g. `my_crate::`.
            !text[..*i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .map(|(i, m)| {
            text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).unwrap();
    for layer in LAYERS {
        assert!(
            lib.contains(&format!("pub mod {layer};")),
            "{layer} is not a module of lib.rs"
        );
    }
    let declared = lib.matches("pub mod ").count();
    assert_eq!(
        declared,
        LAYERS.len(),
        "a module of lib.rs has no layer here"
    );
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(&src).unwrap();
        let top = rel
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let top = top.trim_end_matches(".rs");
        let Some(level) = LAYERS.iter().position(|l| *l == top) else {
            continue; // lib.rs, main.rs and the command line sit above every layer
        };
        let text = std::fs::read_to_string(file).unwrap();
        for name in crate_imports(&text) {
            if let Some(dep) = LAYERS.iter().position(|l| *l == name) {
                if dep > level {
                    upward.push(format!("{} imports crate::{name}", rel.display()));
                }
            }
        }
    }
    assert!(files.len() > 100, "only {} source files found", files.len());
    upward.sort();
    upward.dedup();
    assert!(
        upward.is_empty(),
        "imports up the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn the_import_scan_sees_crate_paths() {
    let text = "use crate::sim::Run;\n//! see [`crate::viewer`]\nlet x = my_crate::y; crate::world::World::load(p)";
    assert_eq!(crate_imports(text), ["sim", "world"]);
}

//! The library's layers only look down, and no two files import each other in a circle.
//!
//! Reads `src/` as text (see `import_graph`: every `crate::a::b` path, comments and test
//! modules left out, resolved to the file that defines the module). Each file belongs to
//! a layer (the table below, the picture in `src/lib.rs`); an import from a lower layer
//! to a higher one, or a circle of imports between files (a module's own submodules
//! excepted: a `mod.rs` may re-export them), fails the test with the offending files.
//! `crates/rshmem-c/tests/layers.rs` runs the same circle check on the C ABI crate.

mod import_graph;
use import_graph::{find_circle, import_edges, own_child, paths_in, read_sources, strip_comments};
use std::path::Path;

/// Layers, bottom up: a file may import files of its own layer or of layers below.
const LAYERS: &[(&str, usize)] = &[
    ("error", 0),
    ("types", 0),
    ("config", 0),
    ("log", 0),
    ("bootstrap", 1),
    ("heap", 2),
    ("gpu", 3),
    ("transport", 4),
    ("runtime", 5),
    ("ctx", 6),
    ("sym", 6),
    ("ops", 7),
    ("coll", 7),
    ("team", 8),
    ("moe", 8),
    ("init", 9),
    ("device_header", 9),
    ("lib", 10),
    ("bin", 10),
];

fn layer_of(rel: &str) -> usize {
    let top = rel.split(['/', '.']).next().unwrap_or("");
    LAYERS.iter().find(|(name, _)| *name == top).map(|(_, l)| *l).unwrap_or_else(|| panic!("{rel}: no layer in tests/layers.rs"))
}

#[test]
fn layers_only_look_down_and_files_import_no_circles() {
    let edges = import_edges(&read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")));
    let mut upward = Vec::new();
    for (from, deps) in &edges {
        for to in deps {
            if !own_child(from, to) && layer_of(to) > layer_of(from) {
                upward.push(format!("{from} (layer {}) imports {to} (layer {})", layer_of(from), layer_of(to)));
            }
        }
    }
    assert!(upward.is_empty(), "imports from a lower layer to a higher one:\n{}", upward.join("\n"));
    let circle = find_circle(&edges);
    assert!(circle.is_none(), "files import each other in a circle: {}", circle.unwrap_or_default().join(" -> "));
    // The check sees the imports it should: the start-up file reaches every layer below.
    let init = &edges["init.rs"];
    for needed in ["bootstrap/mod.rs", "heap/mod.rs", "runtime/mod.rs", "ctx.rs", "config/mod.rs"] {
        assert!(init.contains(needed), "init.rs should import {needed}: {init:?}");
    }
}

#[test]
fn comments_are_no_imports_and_literals_are_no_comments() {
    let src = "use crate::a; // crate::b\n/* crate::c /* nested crate::d */ crate::e */ use crate::f;\n\
               let s = \"/* not a comment\"; let t = r#\"\"// nor this\"#; let q = '\"'; let l: &'static str = \"*/\";\n\
               /** doc crate::g */ use crate::h;";
    let code = strip_comments(src);
    for gone in ["crate::b", "crate::c", "crate::d", "crate::e", "crate::g"] {
        assert!(!code.contains(gone), "{gone} is in a comment: {code}");
    }
    for kept in ["crate::a", "crate::f", "crate::h", "\"/* not a comment\"", "r#\"\"// nor this\"#", "'\"'", "\"*/\""] {
        assert!(code.contains(kept), "{kept} is code: {code}");
    }
    assert_eq!(code.lines().count(), src.lines().count(), "comments keep the lines they held");
}

#[test]
fn paths_resolve_prefixes_and_groups() {
    let module = ["m".to_string(), "n".to_string()];
    let paths = paths_in("use crate::{x, y::z}; use super::w::{a as b}; self::q::r(); my_crate::no;", &module);
    let want: Vec<Vec<&str>> = vec![vec!["x"], vec!["y", "z"], vec!["m", "w", "a"], vec!["m", "w"], vec!["m", "n", "q", "r"]];
    assert_eq!(paths, want.iter().map(|p| p.iter().map(|s| s.to_string()).collect::<Vec<_>>()).collect::<Vec<_>>());
}

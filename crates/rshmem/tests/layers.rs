//! The library's layers only look down, and no two files import each other in a circle.
//!
//! Reads `src/` as text: every `crate::a::b` path (in `use` lines and in code, `super::`
//! and `self::` resolved), comments and test modules left out, resolved to the file that
//! defines the module. Each file belongs to a layer (the table below, the picture in
//! `src/lib.rs`); an import from a lower layer to a higher one, or a circle of imports
//! between files (a module's own submodules excepted: a `mod.rs` may re-export them),
//! fails the test with the offending files.

use std::collections::{BTreeMap, BTreeSet};
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

/// Module path of a source file (`coll/mod.rs` -> [coll], `coll/select.rs` -> [coll, select]).
fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod") | Some("lib")) {
        parts.pop();
    }
    parts
}

fn layer_of(rel: &str) -> usize {
    let top = rel.split(['/', '.']).next().unwrap_or("");
    LAYERS.iter().find(|(name, _)| *name == top).map(|(_, l)| *l).unwrap_or_else(|| panic!("{rel}: no layer in tests/layers.rs"))
}

/// The source without comments and without its `#[cfg(test)] mod tests`.
fn code_of(src: &str) -> String {
    let src = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
    src.lines().map(|l| l.split("//").next().unwrap_or("")).collect::<Vec<_>>().join("\n")
}

/// Every `crate::...` path the code names, with `super::`/`self::` made absolute and
/// `use a::{b, c::d}` groups expanded (one level, which is all the crate uses).
fn paths_in(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
    let bytes = code.as_bytes();
    let ident = |i: usize| bytes.get(i).is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_');
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let rest = &code[i..];
        let (base, skip) = if rest.starts_with("crate::") && (i == 0 || !ident(i - 1)) {
            (Vec::new(), 7)
        } else if rest.starts_with("super::") && (i == 0 || !ident(i - 1)) {
            (parent.clone(), 7)
        } else if rest.starts_with("self::") && (i == 0 || !ident(i - 1)) {
            (module.to_vec(), 6)
        } else {
            i += 1;
            continue;
        };
        // Read `a::b::c` (more super:: hops are not used in this crate).
        let mut j = i + skip;
        let mut path = base;
        loop {
            let start = j;
            while ident(j) {
                j += 1;
            }
            if j > start {
                path.push(code[start..j].to_string());
            }
            if code[j..].starts_with("::") && ident(j + 2) {
                j += 2;
            } else {
                break;
            }
        }
        if code[j..].starts_with("::{") {
            let end = code[j..].find('}').map_or(code.len(), |e| j + e);
            for item in code[j + 3..end].split(',') {
                let mut p = path.clone();
                p.extend(
                    item.split(" as ").next().unwrap_or("").trim().split("::").filter(|s| !s.is_empty() && *s != "self").map(String::from),
                );
                out.push(p);
            }
            j = end;
        }
        if !path.is_empty() {
            out.push(path);
        }
        i = j.max(i + 1);
    }
    out
}

#[test]
fn layers_only_look_down_and_files_import_no_circles() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(&root).expect("under src").to_string_lossy().into_owned();
                files.insert(rel, std::fs::read_to_string(&p).expect("readable"));
            }
        }
    }
    let modules: BTreeMap<Vec<String>, String> = files.keys().map(|rel| (module_of(rel), rel.clone())).collect();
    let resolve = |path: &[String]| (1..=path.len()).rev().find_map(|k| modules.get(&path[..k]).cloned());
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (rel, src) in &files {
        let module = module_of(rel);
        let deps = edges.entry(rel.clone()).or_default();
        for path in paths_in(&code_of(src), &module) {
            if let Some(target) = resolve(&path) {
                if &target != rel {
                    deps.insert(target);
                }
            }
        }
    }
    // A module file re-exporting its own submodules is not a dependency on them.
    let own_child = |from: &str, to: &str| {
        let (m, t) = (module_of(from), module_of(to));
        (from.ends_with("mod.rs") || from == "lib.rs") && t.len() > m.len() && t[..m.len()] == m[..]
    };
    let mut upward = Vec::new();
    for (from, deps) in &edges {
        for to in deps {
            if !own_child(from, to) && layer_of(to) > layer_of(from) {
                upward.push(format!("{from} (layer {}) imports {to} (layer {})", layer_of(from), layer_of(to)));
            }
        }
    }
    assert!(upward.is_empty(), "imports from a lower layer to a higher one:\n{}", upward.join("\n"));
    // Circles: depth-first search for a back edge, ignoring own-submodule edges.
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    fn visit<'a>(
        f: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<&'a str, u8>,
        trail: &mut Vec<&'a str>,
        skip: &dyn Fn(&str, &str) -> bool,
    ) -> Option<Vec<String>> {
        state.insert(f, 1);
        trail.push(f);
        for to in edges.get(f).into_iter().flatten() {
            if skip(f, to) {
                continue;
            }
            match state.get(to.as_str()) {
                Some(1) => {
                    let at = trail.iter().position(|t| *t == to.as_str()).unwrap_or(0);
                    return Some(trail[at..].iter().map(|s| s.to_string()).chain([to.clone()]).collect());
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(to, edges, state, trail, skip) {
                        return Some(c);
                    }
                }
            }
        }
        trail.pop();
        state.insert(f, 2);
        None
    }
    for f in edges.keys() {
        if !state.contains_key(f.as_str()) {
            let circle = visit(f, &edges, &mut state, &mut Vec::new(), &own_child);
            assert!(circle.is_none(), "files import each other in a circle: {}", circle.unwrap_or_default().join(" -> "));
        }
    }
    // The check sees the imports it should: the start-up file reaches every layer below.
    let init = &edges["init.rs"];
    for needed in ["bootstrap/mod.rs", "heap/mod.rs", "runtime/mod.rs", "ctx.rs", "config/mod.rs"] {
        assert!(init.contains(needed), "init.rs should import {needed}: {init:?}");
    }
}

//! The import graph between a crate's source files, read as text: shared by
//! `crates/rshmem/tests/layers.rs` and `crates/rshmem-c/tests/layers.rs` (included there
//! with `#[path]`).
//!
//! Every `crate::a::b` path (in `use` lines and in code, `super::` and `self::` resolved)
//! counts, comments (`//`, `/* */`, nested ones too) and `#[cfg(test)] mod tests` left
//! out, resolved to the file that defines the module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// For each file (relative to `src/`, `/`-separated), the files it imports.
pub type Edges = BTreeMap<String, BTreeSet<String>>;

/// Module path of a source file (`coll/mod.rs` -> [coll], `coll/select.rs` -> [coll, select]).
pub fn module_of(rel: &str) -> Vec<String> {
    let mut parts: Vec<String> = rel.trim_end_matches(".rs").split('/').map(String::from).collect();
    if matches!(parts.last().map(String::as_str), Some("mod") | Some("lib")) {
        parts.pop();
    }
    parts
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// Where the string literal whose opening quote is at `open` ends (one past its closing
/// quote). A raw string (`r"..."`, `r#"..."#`, `br`, `cr`) ends at a quote followed by as
/// many `#` as it opened with; any other at the first unescaped quote.
fn string_end(b: &[u8], open: usize) -> usize {
    let mut start = open;
    while start > 0 && b[start - 1] == b'#' {
        start -= 1;
    }
    let prefix_ok = |at: usize| at == 0 || !is_ident(b[at - 1]);
    let raw = start > 0
        && b[start - 1] == b'r'
        && (prefix_ok(start - 1) || (start >= 2 && matches!(b[start - 2], b'b' | b'c') && prefix_ok(start - 2)));
    let hashes = if raw { open - start } else { 0 };
    let mut i = open + 1;
    while i < b.len() {
        match b[i] {
            b'\\' if !raw => i += 2,
            b'"' if b[i + 1..].iter().take(hashes).filter(|&&c| c == b'#').count() == hashes => return i + 1 + hashes,
            _ => i += 1,
        }
    }
    b.len()
}

/// Where the character literal at `quote` ends, or `quote + 1` when the quote starts a
/// lifetime or label (`'a`).
fn char_end(src: &str, quote: usize) -> usize {
    let b = src.as_bytes();
    if b.get(quote + 1) == Some(&b'\\') {
        // An escape: '\n', '\'', '\u{1F600}'.
        let mut i = quote + 3;
        while i < b.len() && b[i] != b'\'' {
            i += 1;
        }
        return i + 1;
    }
    match src[quote + 1..].chars().next() {
        Some(c) if src[quote + 1 + c.len_utf8()..].starts_with('\'') => quote + 2 + c.len_utf8(),
        _ => quote + 1,
    }
}

/// `src` without its comments (`//` to the end of the line; `/* */`, nested ones too,
/// replaced by a space and the newlines they held). String and character literals are
/// kept as they are, and comment markers inside them are no comments.
pub fn strip_comments(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let (mut i, mut kept_from) = (0, 0);
    while i < b.len() {
        match b[i] {
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&src[kept_from..i]);
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                kept_from = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&src[kept_from..i]);
                out.push(' ');
                let mut depth = 0usize;
                while i < b.len() {
                    if b[i..].starts_with(b"/*") {
                        depth += 1;
                        i += 2;
                    } else if b[i..].starts_with(b"*/") {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        if b[i] == b'\n' {
                            out.push('\n');
                        }
                        i += 1;
                    }
                }
                kept_from = i;
            }
            b'"' => i = string_end(b, i),
            b'\'' => i = char_end(src, i),
            _ => i += 1,
        }
    }
    out.push_str(&src[kept_from.min(src.len())..]);
    out
}

/// The source without comments and without its `#[cfg(test)] mod tests`.
pub fn code_of(src: &str) -> String {
    let src = src.split("#[cfg(test)]\nmod tests").next().unwrap_or(src);
    strip_comments(src)
}

/// Every `crate::...` path the code names, with `super::`/`self::` made absolute and
/// `use a::{b, c::d}` and `use crate::{a, b}` groups expanded (one level, which is all
/// the crates use).
pub fn paths_in(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let parent: Vec<String> = module[..module.len().saturating_sub(1)].to_vec();
    let bytes = code.as_bytes();
    let ident = |i: usize| bytes.get(i).is_some_and(|c| is_ident(*c));
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        // Inside a multi-byte character (text in a string literal): no path starts here.
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
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
        // Read `a::b::c` (more super:: hops are not used in these crates).
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
        // A group after the path (`crate::a::{b, c}`) or right after the prefix (`crate::{a, b}`).
        let group = if code[j..].starts_with("::{") {
            Some(j + 3)
        } else if j == i + skip && code[j..].starts_with('{') {
            Some(j + 1)
        } else {
            None
        };
        if let Some(open) = group {
            let end = code[open..].find('}').map_or(code.len(), |e| open + e);
            for item in code[open..end].split(',') {
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

/// Every `.rs` file under `root`, by its path relative to `root`, with its text.
pub fn read_sources(root: &Path) -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("src readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(root).expect("under src").to_string_lossy().into_owned();
                files.insert(rel, std::fs::read_to_string(&p).expect("readable"));
            }
        }
    }
    files
}

/// The files each file of `files` imports (itself left out).
pub fn import_edges(files: &BTreeMap<String, String>) -> Edges {
    let modules: BTreeMap<Vec<String>, String> = files.keys().map(|rel| (module_of(rel), rel.clone())).collect();
    let resolve = |path: &[String]| (1..=path.len()).rev().find_map(|k| modules.get(&path[..k]).cloned());
    let mut edges = Edges::new();
    for (rel, src) in files {
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
    edges
}

/// Whether `to` is a submodule of `from` (a `mod.rs` or `lib.rs`): a module file
/// re-exporting its own submodules is not a dependency on them.
pub fn own_child(from: &str, to: &str) -> bool {
    let (m, t) = (module_of(from), module_of(to));
    (from.ends_with("mod.rs") || from == "lib.rs") && t.len() > m.len() && t[..m.len()] == m[..]
}

/// A circle of imports between files (own-submodule edges ignored), as the files along
/// it with the first one repeated at the end; None when there is none.
pub fn find_circle(edges: &Edges) -> Option<Vec<String>> {
    // Depth-first search for a back edge: 1 = on the current trail, 2 = done.
    fn visit<'a>(f: &'a str, edges: &'a Edges, state: &mut BTreeMap<&'a str, u8>, trail: &mut Vec<&'a str>) -> Option<Vec<String>> {
        state.insert(f, 1);
        trail.push(f);
        for to in edges.get(f).into_iter().flatten() {
            if own_child(f, to) {
                continue;
            }
            match state.get(to.as_str()) {
                Some(1) => {
                    let at = trail.iter().position(|t| *t == to.as_str()).unwrap_or(0);
                    return Some(trail[at..].iter().map(|s| s.to_string()).chain([to.clone()]).collect());
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(to, edges, state, trail) {
                        return Some(c);
                    }
                }
            }
        }
        trail.pop();
        state.insert(f, 2);
        None
    }
    let mut state: BTreeMap<&str, u8> = BTreeMap::new();
    for f in edges.keys() {
        if !state.contains_key(f.as_str()) {
            if let Some(c) = visit(f, edges, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

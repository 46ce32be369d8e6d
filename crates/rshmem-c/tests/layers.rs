//! No two files of `src/` import each other in a circle (a module's own submodules
//! excepted), read the way `crates/rshmem/tests/layers.rs` reads the rshmem crate: the
//! same parser, shared through `#[path]`.

#[path = "../../rshmem/tests/import_graph/mod.rs"]
mod import_graph;
use import_graph::{find_circle, import_edges, read_sources};
use std::path::Path;

#[test]
fn files_import_no_circles() {
    let edges = import_edges(&read_sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src")));
    let circle = find_circle(&edges);
    assert!(circle.is_none(), "files import each other in a circle: {}", circle.unwrap_or_default().join(" -> "));
    // The check sees the imports it should: the header generator reads the routine
    // modules (through `use crate::{...}`), and they the runtime state.
    for (from, to) in [("header.rs", "rma.rs"), ("header.rs", "table.rs"), ("rma.rs", "state.rs"), ("state.rs", "statics.rs")] {
        assert!(edges[from].contains(to), "{from} should import {to}: {:?}", edges[from]);
    }
}

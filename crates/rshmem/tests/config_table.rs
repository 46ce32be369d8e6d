//! The README's table of environment variables is the configuration table of the code
//! (`rshmem::config::markdown_table`), between its `env-table` markers. After a change to
//! the table, `RSHMEM_BLESS=1 cargo test -p rshmem --test config_table` rewrites it.

use std::path::Path;

const BEGIN: &str = "<!-- env-table:begin -->\n";
const END: &str = "<!-- env-table:end -->";

#[test]
fn the_readme_lists_every_variable_the_code_reads() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&path).expect("README.md");
    let (start, end) = match (readme.find(BEGIN), readme.find(END)) {
        (Some(s), Some(e)) if s < e => (s + BEGIN.len(), e),
        _ => panic!("README.md lacks the env-table markers"),
    };
    let want = rshmem::config::markdown_table();
    if std::env::var_os("RSHMEM_BLESS").is_some() {
        std::fs::write(&path, format!("{}{want}{}", &readme[..start], &readme[end..])).expect("write README.md");
        return;
    }
    assert!(
        readme[start..end] == want,
        "README.md's environment table differs from the code's: run `RSHMEM_BLESS=1 cargo test -p rshmem --test config_table`"
    );
    for v in rshmem::config::table() {
        assert!(readme[start..end].contains(&format!("`{}`", v.name)), "{} is not documented", v.name);
    }
}

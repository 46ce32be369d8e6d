//! `device/rshmem_device_types.cuh` is what `rshmem::device_header::generate` writes: the
//! device API's constants, structs and type tables come from the host's definitions.
//! After a change to those, `RSHMEM_BLESS=1 cargo test -p rshmem --test device_header`
//! rewrites the file.
#![cfg(feature = "cuda")]

use std::path::Path;

#[test]
fn the_generated_device_header_is_up_to_date() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rshmem::device_header::PATH);
    let want = rshmem::device_header::generate();
    if std::env::var_os("RSHMEM_BLESS").is_some() {
        std::fs::write(&path, &want).expect("write the header");
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(have == want, "{} is out of date: run `RSHMEM_BLESS=1 cargo test -p rshmem --test device_header`", path.display());
}

//! The checked-in headers are what the generator writes (`RSHMEM_BLESS=1` rewrites them).

use std::path::Path;

fn check(name: &str, text: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("include").join(name);
    if std::env::var_os("RSHMEM_BLESS").is_some() {
        std::fs::write(&path, text).expect("write header");
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(on_disk == text, "{} is stale: regenerate it with `RSHMEM_BLESS=1 cargo test -p rshmem-c --test header`", path.display());
}

#[test]
fn shmem_h_is_current() {
    check("shmem.h", &shmem::header::shmem_h());
}

#[test]
fn shmemx_h_is_current() {
    check("shmemx.h", &shmem::header::shmemx_h());
}

#[test]
fn pshmem_h_is_current() {
    check("pshmem.h", &shmem::header::pshmem_h());
}

#[test]
fn rshmemx_cuda_h_is_current() {
    check("rshmemx_cuda.h", &shmem::header::rshmemx_cuda_h());
}

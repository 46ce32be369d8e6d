//! The symmetric heap across real PEs (tests/pe/heap.rs): alignment, free and reuse,
//! zeroed allocations, growth far beyond RSHMEM_SYMMETRIC_SIZE (64 MiB on a 2 MiB start,
//! all of it written by a peer), HeapExhausted past RSHMEM_MAX_SYMMETRIC_SIZE with the
//! heap still working afterwards.

mod common;
use common::*;

const ENV: [(&str, &str); 2] = [("RSHMEM_SYMMETRIC_SIZE", "2M"), ("RSHMEM_MAX_SYMMETRIC_SIZE", "96M")];

fn heap_on(n: usize) {
    run_env(n, "pe_heap", &[], &ENV, 120).assert_all(n, &heap_checks());
}

#[test]
fn heap_on_2_pes() {
    heap_on(2);
}

#[test]
fn heap_on_4_pes() {
    heap_on(4);
}

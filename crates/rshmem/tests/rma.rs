//! RMA across real PEs: every type of the `rma_types!` table, the sized and mem forms,
//! strided transfers, `ptr`, zero-length transfers, on 2 and 4 PEs (tests/pe/rma.rs).

mod common;
use common::*;

#[test]
fn rma_on_2_pes() {
    run(2, "pe_rma", &[]).assert_all(2, &rma_checks());
}

#[test]
fn rma_on_4_pes() {
    run(4, "pe_rma", &[]).assert_all(4, &rma_checks());
}

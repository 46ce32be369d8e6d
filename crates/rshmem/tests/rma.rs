//! RMA across real PEs: every type of the `rma_types!` table, the sized and mem forms,
//! strided transfers, `ptr`, zero-length transfers, on 2 and 4 PEs (examples/pe_rma.rs).

mod common;
use common::*;

macro_rules! count {
    ($(($name:ident, $t:ty)),* $(,)?) => { [$(stringify!($name)),*].len() };
}

fn rma_on(n: usize) {
    let job = run(n, "pe_rma", &[]);
    job.assert_ok();
    let types = rshmem::rma_types!(count);
    assert!(job.stdout.contains(&format!("pe_rma: {types} RMA types on {n} PEs")), "every table entry is covered: {}", job.stdout);
    job.assert_rma_passed(n);
}

#[test]
fn rma_on_2_pes() {
    rma_on(2);
}

#[test]
fn rma_on_4_pes() {
    rma_on(4);
}

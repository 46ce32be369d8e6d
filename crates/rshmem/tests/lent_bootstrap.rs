//! A second runtime started over a first one's lent bootstrap (`Ctx::lend_bootstrap`), as
//! NVSHMEM's GPU PEs start over an OpenSHMEM library's CPU PEs: the same PEs in both, two
//! heaps that do not see each other's data, and the second finalized before the first.

use rshmem::config::Device;
use rshmem::{Config, InitOptions};

/// The settings of the second runtime: CPU PEs (CI has no GPU), as read from the environment.
fn cpu_config() -> Config {
    let mut config = Config::from_env().expect("the environment's settings");
    config.device = Device::Cpu;
    config
}

#[test]
fn a_second_runtime_runs_over_the_first_ones_bootstrap() {
    let n = 3;
    let out = rshmem::run_pes(n, |first| -> rshmem::Result<(u64, u64)> {
        let (me, n) = (first.my_pe(), first.n_pes());
        let second =
            rshmem::init_with(InitOptions { bootstrap: Some(first.lend_bootstrap()), config: Some(cpu_config()), ..Default::default() })?;
        assert_eq!((second.my_pe(), second.n_pes()), (me, n), "the second runtime has the same PEs");
        let a = first.alloc::<u64>(64)?;
        let b = second.alloc::<u64>(64)?;
        // Collectives of the two runtimes interleave in program order on every PE.
        let right = (me + 1) % n;
        first.put(&a, 0, &[100 + me as u64; 64], right)?;
        second.put(&b, 0, &[200 + me as u64; 64], right)?;
        first.barrier_all()?;
        second.barrier_all()?;
        let left = ((me + n - 1) % n) as u64;
        assert_eq!(a.to_vec()?, vec![100 + left; 64], "PE {me}: the first runtime's heap holds its own puts");
        assert_eq!(b.to_vec()?, vec![200 + left; 64], "PE {me}: the second runtime's heap holds its own puts");
        // Each runtime's heap is its own: a put through one does not land in the other.
        second.put(&b, 0, &[7; 64], me)?;
        second.barrier_all()?;
        assert_eq!(a.to_vec()?, vec![100 + left; 64], "PE {me}: the first heap changed through the second runtime");
        // Every PE has checked before the counters below change PE 0's words.
        first.barrier_all()?;
        first.atomic_add(&a, 63, 1, 0)?;
        second.atomic_add(&b, 63, 1, 0)?;
        first.barrier_all()?;
        second.barrier_all()?;
        let (got_a, got_b) = (a.read(63)?, b.read(63)?);
        drop((a, b));
        second.finalize()?;
        // The first runtime's bootstrap still works after the second's finalize.
        first.barrier_all()?;
        first.finalize()?;
        Ok((got_a, got_b))
    })
    .expect("the job ran");
    for (pe, r) in out.into_iter().enumerate() {
        let (a, b) = r.unwrap_or_else(|e| panic!("PE {pe}: {e}"));
        if pe == 0 {
            // PE 0's word 63 got PE n-1's put, then one increment from every PE.
            assert_eq!((a, b), (100 + (n as u64 - 1) + n as u64, 7 + n as u64), "PE 0's counters");
        }
    }
}

#[test]
fn the_lent_bootstrap_refuses_exchanges_once_its_owner_is_finalized() {
    let out = rshmem::run_pes(2, |first| -> rshmem::Result<String> {
        let second =
            rshmem::init_with(InitOptions { bootstrap: Some(first.lend_bootstrap()), config: Some(cpu_config()), ..Default::default() })?;
        first.finalize()?;
        Ok(second.finalize().expect_err("the second finalize needs the owner's bootstrap").to_string())
    })
    .expect("the job ran");
    for (pe, r) in out.into_iter().enumerate() {
        let msg = r.unwrap_or_else(|e| panic!("PE {pe}: {e}"));
        assert!(msg.contains("was finalized"), "PE {pe}'s error says why: {msg}");
    }
}

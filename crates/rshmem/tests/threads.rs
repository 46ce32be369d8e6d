//! PEs as threads of one process (`rshmem::run_pes`): the whole API works between them as
//! between processes, a panicking PE fails the job instead of hanging it, and an
//! allocation of one PE is refused by another PE's handle.

use rshmem::{Cmp, ReduceOp, SignalOp, Team};
use std::time::Duration;

#[test]
fn thread_pes_pass_data_around_a_ring_and_reduce() {
    let n = 4;
    let sums = rshmem::run_pes(n, |ctx| -> rshmem::Result<(u64, f64)> {
        let (me, n) = (ctx.my_pe(), ctx.n_pes());
        let inbox = ctx.alloc::<u64>(1024)?;
        ctx.put(&inbox, 0, &vec![me as u64 + 1; 1024], (me + 1) % n)?;
        ctx.barrier_all()?;
        let got = inbox.to_vec()?;
        let left = ((me + n - 1) % n) as u64 + 1;
        assert!(got.iter().all(|&v| v == left), "PE {me} got {:?} from its left neighbour", &got[..4]);
        let src = ctx.alloc_from(&[me as f64 + 0.5; 8])?;
        let dst = ctx.alloc::<f64>(8)?;
        ctx.reduce(Team::WORLD, &dst, &src, 8, ReduceOp::Sum)?;
        let total = ctx.atomic_fetch_add(&inbox, 0, 1, 0)?;
        ctx.barrier_all()?;
        Ok((total, dst.read(3)?))
    })
    .expect("the job ran");
    let want_sum: f64 = (0..n).map(|p| p as f64 + 0.5).sum();
    for (pe, r) in sums.into_iter().enumerate() {
        let (_, s) = r.unwrap_or_else(|e| panic!("PE {pe}: {e}"));
        assert_eq!(s, want_sum, "PE {pe}'s all-reduce");
    }
}

#[test]
fn thread_pes_signal_each_other_and_wait() {
    let out = rshmem::run_pes(2, |ctx| -> rshmem::Result<u64> {
        let me = ctx.my_pe();
        let data = ctx.alloc::<u64>(16)?;
        let sig = ctx.alloc::<u64>(1)?;
        let peer = 1 - me;
        for round in 1..=200u64 {
            if (round as usize) % 2 == me {
                ctx.put_signal(&data, 0, &[round; 16], &sig, 0, round, SignalOp::Set, peer)?;
            } else {
                ctx.signal_wait_until_timeout(&sig, 0, Cmp::Ge, round, Duration::from_secs(30))?;
                assert_eq!(data.to_vec()?, vec![round; 16], "PE {me}, round {round}");
            }
        }
        ctx.barrier_all()?;
        sig.load(0)
    })
    .expect("the job ran");
    assert_eq!(out.into_iter().map(|r| r.expect("no PE failed")).collect::<Vec<_>>(), vec![199, 200]);
}

#[test]
fn a_panicking_thread_pe_fails_the_job_instead_of_hanging_it() {
    let start = std::time::Instant::now();
    let r = rshmem::run_pes(3, |ctx| -> rshmem::Result<()> {
        if ctx.my_pe() == 1 {
            panic!("PE 1 gives up");
        }
        // The others wait in a barrier PE 1 never reaches.
        ctx.barrier_all()
    });
    let e = r.expect_err("the job fails").to_string();
    assert!(e.contains("panicked") || e.contains("failed"), "{e}");
    assert!(start.elapsed() < Duration::from_secs(60), "ended in {:?}", start.elapsed());
}

#[test]
fn an_allocation_of_one_pe_is_refused_by_another_pe() {
    let (tx, rx) = std::sync::mpsc::channel();
    let rx = std::sync::Mutex::new(rx);
    let out = rshmem::run_pes(2, |ctx| -> rshmem::Result<Option<String>> {
        let a = ctx.alloc::<u64>(4)?;
        if ctx.my_pe() == 0 {
            tx.send(a.addr()).expect("send");
            ctx.barrier_all()?;
            Ok(None)
        } else {
            let foreign = rx.lock().expect("lock").recv().expect("PE 0's address");
            // PE 0's allocation, named by its address in PE 0's heap, is not in this PE's heap.
            let e = ctx.putmem(foreign, &[1u8; 8], 0).expect_err("refused");
            ctx.barrier_all()?;
            Ok(Some(e.to_string()))
        }
    })
    .expect("the job ran");
    let msg = out[1].as_ref().expect("PE 1 ran").clone().expect("an error");
    assert!(msg.contains("putmem") && msg.contains("not in the symmetric heap"), "{msg}");
}

//! The bootstrap of PEs that are threads of one process ([`crate::run_pes`]): exchanges
//! through shared memory of the process, guarded by one lock and one condition variable.
//!
//! Every exchange is a numbered round: each PE deposits its contribution for its next
//! round and waits until all `n` have; it then takes copies (descriptors are duplicated,
//! never passed through a socket), and the last PE to take them frees the round. A PE
//! that fails (its thread panicked, or it called [`Bootstrap::fail`]) marks the job
//! failed: every PE waiting in an exchange, now or later, gets an error naming it, and
//! the runtime's own waits end the same way through the job's [`JobFailure`].

use super::Bootstrap;
use crate::error::{Error, Result};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Why a job of thread PEs failed, visible to every PE's waits.
#[derive(Debug, Default)]
pub struct JobFailure {
    failed: AtomicBool,
    why: Mutex<Option<String>>,
}

impl JobFailure {
    /// Records the first failure of the job (later ones are dropped).
    pub fn set(&self, why: String) {
        let mut w = self.why.lock().unwrap_or_else(|p| p.into_inner());
        w.get_or_insert(why);
        self.failed.store(true, Ordering::Release);
    }

    /// The failure, if the job has failed (one atomic load when it has not).
    pub fn get(&self) -> Option<String> {
        if !self.failed.load(Ordering::Acquire) {
            return None;
        }
        self.why.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// One round's contributions.
#[derive(Default)]
struct Round {
    bytes: Vec<Option<Vec<u8>>>,
    fds: Vec<Option<OwnedFd>>,
    taken: usize,
}

#[derive(Default)]
struct Rounds {
    open: HashMap<u64, Round>,
}

/// What the PEs of one in-process job share.
pub struct ThreadJob {
    n: usize,
    rounds: Mutex<Rounds>,
    changed: Condvar,
    /// The job's failure, also watched by every PE's waits.
    pub failure: Arc<JobFailure>,
}

impl std::fmt::Debug for ThreadJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadJob").field("n", &self.n).finish()
    }
}

impl ThreadJob {
    /// A job of `n` PEs.
    pub fn new(n: usize) -> Arc<ThreadJob> {
        Arc::new(ThreadJob { n, rounds: Mutex::default(), changed: Condvar::new(), failure: Arc::default() })
    }

    /// The bootstrap of PE `rank` of this job.
    pub fn member(self: &Arc<Self>, rank: usize) -> ThreadBootstrap {
        ThreadBootstrap { job: self.clone(), rank, next_round: 0 }
    }

    fn lock(&self) -> MutexGuard<'_, Rounds> {
        self.rounds.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks the job failed and wakes every waiting PE.
    pub fn fail(&self, why: String) {
        self.failure.set(why);
        let _guard = self.lock();
        self.changed.notify_all();
    }
}

/// What an exchange returns: every PE's bytes and (duplicated) descriptor, in PE order.
type Gathered = (Vec<Vec<u8>>, Vec<Option<OwnedFd>>);

/// The bootstrap of one thread PE.
#[derive(Debug)]
pub struct ThreadBootstrap {
    job: Arc<ThreadJob>,
    rank: usize,
    next_round: u64,
}

impl ThreadBootstrap {
    /// Deposits this PE's contribution to its next round, waits for every PE's, and
    /// returns copies of all of them (bytes, and duplicated descriptors when given).
    fn exchange(&mut self, bytes: &[u8], fd: Option<BorrowedFd<'_>>) -> Result<Gathered> {
        let job = self.job.clone();
        let (n, me) = (job.n, self.rank);
        let round = self.next_round;
        self.next_round += 1;
        let dup = |f: BorrowedFd<'_>| f.try_clone_to_owned().map_err(|e| Error::os("duplicate a descriptor", e));
        let mine = fd.map(dup).transpose()?;
        let mut g = job.lock();
        {
            let r = g.open.entry(round).or_default();
            if r.bytes.is_empty() {
                r.bytes = (0..n).map(|_| None).collect();
                r.fds = (0..n).map(|_| None).collect();
            }
            r.bytes[me] = Some(bytes.to_vec());
            r.fds[me] = mine;
        }
        job.changed.notify_all();
        loop {
            if let Some(why) = job.failure.get() {
                return Err(Error::Bootstrap(format!("PE {me}: the job failed: {why}")));
            }
            let r = g.open.get(&round).expect("the round stays open until every PE took it");
            if r.bytes.iter().all(Option::is_some) {
                break;
            }
            g = job.changed.wait(g).unwrap_or_else(|p| p.into_inner());
        }
        let r = g.open.get_mut(&round).expect("open");
        let all: Vec<Vec<u8>> = r.bytes.iter().map(|b| b.clone().unwrap_or_default()).collect();
        let fds = r.fds.iter().map(|f| f.as_ref().map(|f| dup(f.as_fd())).transpose()).collect::<Result<Vec<_>>>()?;
        r.taken += 1;
        if r.taken == n {
            g.open.remove(&round);
        }
        Ok((all, fds))
    }
}

impl Bootstrap for ThreadBootstrap {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.job.n
    }

    fn allgather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.exchange(mine, None).map(|(all, _)| all)
    }

    fn allgather_fd(&mut self, fd: BorrowedFd<'_>) -> Result<Vec<OwnedFd>> {
        let me = self.rank;
        let (_, fds) = self.exchange(&[], Some(fd))?;
        fds.into_iter()
            .enumerate()
            .map(|(pe, f)| f.ok_or_else(|| Error::Bootstrap(format!("PE {me}: PE {pe} gave no descriptor to a descriptor exchange"))))
            .collect()
    }

    fn fail(&mut self, why: &str) {
        self.job.fail(why.to_string());
    }

    fn job_failure(&self) -> Option<Arc<JobFailure>> {
        Some(self.job.failure.clone())
    }

    fn abort(&mut self, code: i32, msg: &str) -> ! {
        // The job is this process: ending it ends every PE (OpenSHMEM's global_exit).
        crate::log::always_warn(&format!("rshmem: PE {}: ending the job ({code}): {msg}", self.rank));
        std::process::exit(code)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exchanges_gather_in_rank_order_round_after_round() {
        let job = ThreadJob::new(3);
        let handles: Vec<_> = (0..3)
            .map(|r| {
                let mut b = job.member(r);
                std::thread::spawn(move || {
                    let mut seen = Vec::new();
                    for round in 0..50u8 {
                        seen.push(b.allgather(&[r as u8, round]).unwrap());
                    }
                    seen
                })
            })
            .collect();
        for h in handles {
            let seen = h.join().unwrap();
            for (round, all) in seen.iter().enumerate() {
                assert_eq!(all, &vec![vec![0, round as u8], vec![1, round as u8], vec![2, round as u8]]);
            }
        }
        assert!(job.lock().open.is_empty(), "every round was freed");
    }

    #[test]
    fn a_failed_job_ends_the_waits_with_the_reason() {
        let job = ThreadJob::new(2);
        let mut waiting = job.member(0);
        let t = std::thread::spawn(move || waiting.barrier());
        std::thread::sleep(std::time::Duration::from_millis(50));
        job.member(1).fail("PE 1 panicked");
        let e = t.join().unwrap().unwrap_err().to_string();
        assert!(e.contains("the job failed: PE 1 panicked"), "{e}");
    }

    #[test]
    fn descriptors_are_duplicated_for_every_pe() {
        let job = ThreadJob::new(2);
        let hs: Vec<_> = (0..2)
            .map(|r| {
                let mut b = job.member(r);
                std::thread::spawn(move || {
                    let fd = rustix::fs::memfd_create(format!("t{r}"), rustix::fs::MemfdFlags::CLOEXEC).unwrap();
                    rustix::fs::ftruncate(&fd, 4096 * (r as u64 + 1)).unwrap();
                    let all = b.allgather_fd(rustix::fd::AsFd::as_fd(&fd)).unwrap();
                    all.iter().map(|f| rustix::fs::fstat(f).unwrap().st_size).collect::<Vec<_>>()
                })
            })
            .collect();
        for h in hs {
            assert_eq!(h.join().unwrap(), vec![4096, 8192]);
        }
    }
}

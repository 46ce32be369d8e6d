//! A bootstrap lent by a running runtime, so that a second runtime of the same PEs starts
//! over it ([`crate::Ctx::lend_bootstrap`]): an OpenSHMEM library's CPU PEs and, on top of
//! them, NVSHMEM's GPU PEs (`nvshmemx_init_attr(NVSHMEMX_INIT_WITH_SHMEM)`).
//!
//! Every call goes to the owner runtime's bootstrap under its lock. Sharing one bootstrap
//! between two runtimes is sound because their collective calls (init, allocation,
//! barriers, team splits, finalize) happen in program order on every PE: each PE makes the
//! same sequence of exchanges on the one bootstrap, whichever runtime makes them, so the
//! exchanges of one runtime never meet those of the other. A program that drives the two
//! runtimes' collectives from different threads at once breaks that order, as it would
//! with any OpenSHMEM collective.

use super::Runtime;
use crate::bootstrap::status::Board;
use crate::bootstrap::threads::JobFailure;
use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use rustix::fd::{BorrowedFd, OwnedFd};
use std::sync::Arc;

/// The bootstrap of a running runtime (the owner), lent to another runtime of the same PEs.
///
/// It keeps the owner's state alive while the borrower runs. Its [`Bootstrap::finalize`]
/// does not finalize the owner's bootstrap (the owner does, at its own finalize); finalize
/// the borrower first. Once the owner is finalized, exchanges fail with an error that says so.
pub struct LentBootstrap {
    owner: Arc<Runtime>,
}

impl std::fmt::Debug for LentBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LentBootstrap").field("pe", &self.owner.my_pe).field("n_pes", &self.owner.n_pes).finish()
    }
}

impl LentBootstrap {
    /// The bootstrap of `owner`, lent.
    pub(crate) fn new(owner: Arc<Runtime>) -> LentBootstrap {
        LentBootstrap { owner }
    }

    /// Fails `call` when the owner runtime was finalized (its bootstrap said goodbye).
    fn check_owner(&self, call: &'static str) -> Result<()> {
        if self.owner.is_finalized() {
            return Err(Error::Bootstrap(format!(
                "{call}: PE {}: the runtime that lent this bootstrap was finalized; finalize the runtime started over it first",
                self.owner.my_pe
            )));
        }
        Ok(())
    }
}

impl Bootstrap for LentBootstrap {
    fn rank(&self) -> usize {
        self.owner.my_pe
    }
    fn size(&self) -> usize {
        self.owner.n_pes
    }
    fn allgather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.check_owner("bootstrap allgather")?;
        self.owner.boot().allgather(mine)
    }
    fn alltoall(&mut self, chunks: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        self.check_owner("bootstrap alltoall")?;
        self.owner.boot().alltoall(chunks)
    }
    fn barrier(&mut self) -> Result<()> {
        self.check_owner("bootstrap barrier")?;
        self.owner.boot().barrier()
    }
    fn allgather_fd(&mut self, fd: BorrowedFd<'_>) -> Result<Vec<OwnedFd>> {
        self.check_owner("bootstrap allgather_fd")?;
        self.owner.boot().allgather_fd(fd)
    }
    fn allgather_fd_from(&mut self, fd: BorrowedFd<'_>, from: &[bool]) -> Result<Vec<Option<OwnedFd>>> {
        self.check_owner("bootstrap allgather_fd_from")?;
        self.owner.boot().allgather_fd_from(fd, from)
    }
    /// Nothing: the owner's bootstrap says goodbye at the owner's finalize.
    fn finalize(&mut self) -> Result<()> {
        Ok(())
    }
    fn abort(&mut self, code: i32, msg: &str) -> ! {
        self.owner.abort(code, msg)
    }
    fn fail(&mut self, why: &str) {
        self.owner.boot().fail(why)
    }
    fn job_failure(&self) -> Option<Arc<JobFailure>> {
        self.owner.boot().job_failure()
    }
    fn status_board(&self) -> Option<Arc<Board>> {
        self.owner.boot().status_board()
    }
}

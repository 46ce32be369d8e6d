//! Bootstrap: who am I, how many are we, exchange these bytes, wait for everyone, abort.
//!
//! Nothing else lives here but the launcher's rendezvous ([`launcher`], the server side
//! that `rshmemrun` runs, and [`launched`], the PE side). The trait is deliberately small
//! so that other implementations slot in beside it: [`pmix`] joins jobs started by
//! PMIx launchers such as Open MPI's `mpirun`.

pub mod launched;
pub mod launcher;
pub mod pmix;
pub mod protocol;
pub mod single;

use crate::error::{Error, Result};
use rustix::fd::{BorrowedFd, OwnedFd};

/// Process-management services a runtime needs from whatever started the job.
pub trait Bootstrap: Send {
    /// This process's rank (PE number) in `0..size()`.
    fn rank(&self) -> usize;
    /// Number of processes in the job.
    fn size(&self) -> usize;
    /// Every rank contributes bytes (lengths may differ); every rank gets all, in rank order.
    fn allgather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>>;
    /// Rank `i` sends `chunks[j]` to rank `j`; returns what each rank sent to this one.
    fn alltoall(&mut self, chunks: &[Vec<u8>]) -> Result<Vec<Vec<u8>>> {
        if chunks.len() != self.size() {
            return Err(Error::Bootstrap(format!("alltoall: {} chunks for {} ranks", chunks.len(), self.size())));
        }
        let me = self.rank();
        let all = self.allgather(&protocol::encode_list(chunks))?;
        all.iter()
            .map(|enc| {
                protocol::decode_list(enc).map_err(|e| Error::Bootstrap(format!("alltoall: {e}"))).map(|mut l| std::mem::take(&mut l[me]))
            })
            .collect()
    }
    /// Returns once every rank has called it.
    fn barrier(&mut self) -> Result<()> {
        self.allgather(&[]).map(|_| ())
    }
    /// Every rank contributes one descriptor; every rank gets a duplicate of each, in rank
    /// order. Only bootstraps that can pass descriptors between processes implement it.
    fn allgather_fd(&mut self, _fd: BorrowedFd<'_>) -> Result<Vec<OwnedFd>> {
        Err(Error::Unsupported { call: "bootstrap allgather_fd", detail: "this bootstrap cannot pass descriptors".into() })
    }
    /// [`Bootstrap::allgather_fd`] where this rank takes only the descriptors of the ranks
    /// marked in `from` (its own always): the others are `None`. Ranks on other machines
    /// are left out this way, since a descriptor cannot cross machines. Collective, with
    /// each rank's own `from`.
    fn allgather_fd_from(&mut self, fd: BorrowedFd<'_>, from: &[bool]) -> Result<Vec<Option<OwnedFd>>> {
        let me = self.rank();
        Ok(self
            .allgather_fd(fd)?
            .into_iter()
            .enumerate()
            .map(|(r, f)| (r == me || from.get(r).copied().unwrap_or(false)).then_some(f))
            .collect())
    }
    /// Says this rank finished cleanly; called once, after the runtime's final barrier.
    fn finalize(&mut self) -> Result<()> {
        Ok(())
    }
    /// Ends the whole job with `code`, printing `msg`. Does not return.
    fn abort(&mut self, code: i32, msg: &str) -> !;
}

/// Picks the bootstrap from the environment: the launcher's when `RSHMEM_LAUNCHER_SOCK`
/// is set; PMIx's when a PMIx launcher (`mpirun`, `prterun`, `srun --mpi=pmix`) set
/// `PMIX_RANK` or `PMIX_NAMESPACE`; otherwise a single PE. When the environment says a
/// multi-process launcher started us (`OMPI_COMM_WORLD_SIZE` of `mpirun`,
/// `SLURM_STEP_NUM_TASKS` of `srun` without `--mpi=pmix`) but PMIx cannot be used, it
/// fails rather than run as one of N unconnected single PEs.
pub fn from_env() -> Result<Box<dyn Bootstrap>> {
    if let Some(path) = std::env::var_os("RSHMEM_LAUNCHER_SOCK") {
        return Ok(Box::new(launched::LaunchedBootstrap::connect(path.as_ref())?));
    }
    if std::env::var_os("PMIX_RANK").is_some() || std::env::var_os("PMIX_NAMESPACE").is_some() {
        return Ok(Box::new(pmix::PmixBootstrap::init()?));
    }
    let ompi_size = std::env::var("OMPI_COMM_WORLD_SIZE").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(1);
    if ompi_size > 1 {
        return Err(Error::Bootstrap(format!(
            "OMPI_COMM_WORLD_SIZE={ompi_size} says mpirun started {ompi_size} processes, but PMIX_RANK and \
             PMIX_NAMESPACE are not set, so there is no PMIx server to join; use an Open MPI built with PMIx \
             (4.x or newer) or start the job with rshmemrun"
        )));
    }
    let slurm_size = std::env::var("SLURM_STEP_NUM_TASKS").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(1);
    if slurm_size > 1 {
        return Err(Error::Bootstrap(format!(
            "SLURM_STEP_NUM_TASKS={slurm_size} says srun started {slurm_size} tasks, but PMIX_RANK and \
             PMIX_NAMESPACE are not set, so there is no PMIx server to join; start the job with \
             `srun --mpi=pmix` (or set MpiDefault=pmix in slurm.conf)"
        )));
    }
    Ok(Box::new(single::SinglePe))
}

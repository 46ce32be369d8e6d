//! Bootstrap: who am I, how many are we, exchange these bytes, wait for everyone, abort.
//!
//! Nothing else lives here but the launcher's rendezvous ([`launcher`], the server side
//! that `rshmemrun` runs, and [`launched`], the PE side). The trait is deliberately small
//! so that other implementations slot in beside it: [`pmix`] joins jobs started by
//! PMIx launchers such as Open MPI's `mpirun`, [`tcp`] jobs that meet over TCP (torchrun's
//! environment, or a unique id the program hands around); `runtime::lent` lends a running
//! runtime's bootstrap to a second runtime of the same PEs.

pub mod binding;
pub(crate) mod launched;
pub mod launcher;
pub(crate) mod peer_fd;
pub(crate) mod pmix;
pub(crate) mod protocol;
pub(crate) mod single;
pub(crate) mod status;
pub mod tcp;
pub(crate) mod threads;

use crate::config::Config;
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
    /// Says this PE failed (its thread is unwinding from a panic) without ending the
    /// process: the job of thread PEs ([`threads`]) fails every PE's exchanges and waits
    /// with `why` and lets the program see the panic. Other bootstraps end the job.
    fn fail(&mut self, why: &str) {
        self.abort(1, why)
    }
    /// The failure every PE of this job watches in its waits, when the job can fail
    /// without ending the process (thread PEs); `None` otherwise.
    fn job_failure(&self) -> Option<std::sync::Arc<threads::JobFailure>> {
        None
    }
    /// The job's status board, where a launcher that watches the job reads what this
    /// PE's long waits wait for (see [`status`]); `None` when nobody watches.
    fn status_board(&self) -> Option<std::sync::Arc<status::Board>> {
        None
    }
}

/// Picks the bootstrap the configuration (the environment, read at init) names: the
/// launcher's when `RSHMEM_LAUNCHER_SOCK` is set; PMIx's when a PMIx launcher (`mpirun`,
/// `prterun`, `srun --mpi=pmix`) set `PMIX_RANK` or `PMIX_NAMESPACE`; TCP when torchrun's
/// environment is set (`RANK` and `WORLD_SIZE` above 1, with `MASTER_ADDR` and
/// `MASTER_PORT`); otherwise a single PE. When the environment says a multi-process launcher started us
/// (`OMPI_COMM_WORLD_SIZE` of `mpirun`, `SLURM_STEP_NUM_TASKS` of `srun` without
/// `--mpi=pmix`) but PMIx cannot be used, it fails rather than run as one of N
/// unconnected single PEs.
///
/// Under `rshmemrun --pes-per-process K` the process hosts K PEs, the first numbered
/// `RSHMEM_PE`: `local_index` says which (`None`: the next one no thread of this process
/// has taken yet).
pub fn from_config(config: &Config, local_index: Option<usize>) -> Result<Box<dyn Bootstrap>> {
    if let Some(path) = &config.launcher_sock {
        let missing = |name: &str| Error::Bootstrap(format!("{name} is not set although RSHMEM_LAUNCHER_SOCK is"));
        let first = config.launcher_pe.ok_or_else(|| missing("RSHMEM_PE"))?;
        let rank = first + launched::local_index(local_index, config.launcher_local_pes.unwrap_or(1))?;
        let size = config.launcher_npes.ok_or_else(|| missing("RSHMEM_NPES"))?;
        let key = config.job_key.as_deref().ok_or_else(|| missing("RSHMEM_JOB_KEY"))?;
        return Ok(Box::new(launched::LaunchedBootstrap::connect(path, rank, size, key)?));
    }
    if config.pmix_rank || config.pmix_namespace {
        return Ok(Box::new(pmix::PmixBootstrap::init()?));
    }
    if tcp::torchrun_env_present(config) {
        return Ok(Box::new(tcp::TcpBootstrap::from_torchrun_env(config)?));
    }
    let ompi_size = config.ompi_size.unwrap_or(1);
    if ompi_size > 1 {
        return Err(Error::Bootstrap(format!(
            "OMPI_COMM_WORLD_SIZE={ompi_size} says mpirun started {ompi_size} processes, but PMIX_RANK and \
             PMIX_NAMESPACE are not set, so there is no PMIx server to join; use an Open MPI built with PMIx \
             (4.x or newer) or start the job with rshmemrun"
        )));
    }
    let slurm_size = config.slurm_tasks.unwrap_or(1);
    if slurm_size > 1 {
        return Err(Error::Bootstrap(format!(
            "SLURM_STEP_NUM_TASKS={slurm_size} says srun started {slurm_size} tasks, but PMIX_RANK and \
             PMIX_NAMESPACE are not set, so there is no PMIx server to join; start the job with \
             `srun --mpi=pmix` (or set MpiDefault=pmix in slurm.conf)"
        )));
    }
    Ok(Box::new(single::SinglePe))
}

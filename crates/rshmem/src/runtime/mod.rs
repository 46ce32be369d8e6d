//! The state of one PE: [`Runtime`], a plain value built once by `init` and shared by
//! every handle ([`crate::Ctx`]) and allocation ([`crate::Sym`]) of that PE.
//!
//! It owns what lies below it (bootstrap, heap, transports, GPU) and the PE's tables
//! (teams, hosts, contexts, locks); the operations in `ops`, `coll` and `team` are
//! functions over it. Nothing here imports those layers, and there is no process-wide
//! state: two runtimes in one process are independent.

pub(crate) mod context;
pub(crate) mod hosts;
pub(crate) mod lent;
pub(crate) mod teams;

use crate::bootstrap::status::Watcher;
use crate::bootstrap::Bootstrap;
use crate::config::{Config, Forced};
use crate::error::{Error, Result};
use crate::heap::SymmetricHeap;
use crate::transport::notify::{Drive, SpinLearner, WaitPolicy};
use crate::transport::{Transport, TransportTable};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use teams::TeamTable;

/// State shared by every handle of one PE's runtime.
pub(crate) struct Runtime {
    pub(crate) my_pe: usize,
    pub(crate) n_pes: usize,
    pub(crate) config: Config,
    boot: Mutex<Box<dyn Bootstrap>>,
    pub(crate) heap: SymmetricHeap,
    pub(crate) transports: TransportTable,
    /// The host (shared-memory domain) of every PE: PEs with the same number reach each
    /// other through mapped memory.
    pub(crate) host_of: Vec<usize>,
    /// More PEs run on this host than this process may use CPUs: waits yield the CPU
    /// while they poll (see [`WaitPolicy::oversubscribed`]).
    pub(crate) oversubscribed: bool,
    /// Transports this PE's polling waits drive themselves (see `notify::Drive`).
    drive: Vec<Arc<dyn Drive>>,
    /// How long this PE's waits poll before they sleep, learned from the earlier ones.
    spin_learner: SpinLearner,
    pub(crate) teams: TeamTable,
    /// Collective algorithms forced by `RSHMEM_COLL_ALGO`.
    pub(crate) forced: Forced,
    /// Number of the next communication context (0 is the default context).
    pub(crate) next_ctx_id: AtomicU32,
    /// Distributed locks this PE holds.
    pub(crate) locks: HeldLocks,
    /// Where this PE's long waits report: the launcher's status board, the hang limit.
    pub(crate) watcher: Watcher,
    #[cfg(feature = "cuda")]
    pub(crate) gpu: Option<std::sync::Arc<crate::gpu::Gpu>>,
    /// The GPU PE's host proxy, when some peers are reached through it.
    #[cfg(feature = "cuda")]
    pub(crate) proxy: Option<crate::transport::proxy::Proxy>,
    finalized: AtomicBool,
}

/// What [`Runtime::new`] assembles.
pub(crate) struct RuntimeParts {
    pub(crate) config: Config,
    pub(crate) boot: Box<dyn Bootstrap>,
    pub(crate) heap: SymmetricHeap,
    pub(crate) transports: TransportTable,
    pub(crate) host_of: Vec<usize>,
    pub(crate) teams: TeamTable,
    pub(crate) forced: Forced,
    pub(crate) watcher: Watcher,
    #[cfg(feature = "cuda")]
    pub(crate) gpu: Option<std::sync::Arc<crate::gpu::Gpu>>,
    #[cfg(feature = "cuda")]
    pub(crate) proxy: Option<crate::transport::proxy::Proxy>,
}

/// Whether a PE's waits must yield while they poll: more PEs on the host (`here`) than
/// CPUs for them (`cpus`), or fewer CPUs of its own (`own`, its affinity) than its
/// helper threads (`helpers`: progress thread, GPU proxy) plus itself.
fn waits_share_cpus(here: usize, cpus: usize, own: usize, helpers: usize) -> bool {
    here > cpus || (helpers > 0 && own <= helpers)
}

impl Runtime {
    /// The runtime of the PE whose parts `init` built.
    pub(crate) fn new(p: RuntimeParts) -> Runtime {
        let my_host = p.host_of.get(p.boot.rank()).copied();
        let here = p.host_of.iter().filter(|&&h| Some(h) == my_host).count();
        // The CPUs the host's PEs share: the launcher's (a bound PE sees only its own).
        let own = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cpus = p.config.host_cpus.unwrap_or(own);
        // Threads of this PE that need a CPU while it waits: a remote transport's progress
        // thread (it carries out the peers' operations on this PE's memory) and the GPU
        // proxy. They share the PE's CPUs (a bound PE's one core): with no CPU left over
        // for them, a PE that polled without yielding would hold them off until its time
        // slice ended (measured over UCX tcp with PEs bound a core each: a put of 8 B
        // took 620 us, the progress thread waiting for the PE's spin to give way).
        #[cfg(feature = "cuda")]
        let proxy = usize::from(p.proxy.is_some());
        #[cfg(not(feature = "cuda"))]
        let proxy = 0;
        // A transport that a polling wait drives itself (UCX's worker, see
        // `notify::Drive`) needs no CPU of its own while the PE polls; it does while the PE
        // sleeps, and then the PE's core is free.
        let distinct = p.transports.distinct();
        let drive: Vec<Arc<dyn Drive>> = distinct.iter().filter_map(|t| t.driver()).collect();
        let undriven = distinct.iter().any(|t| !t.caps().mapped && t.driver().is_none());
        let helpers = usize::from(undriven) + proxy;
        let oversubscribed = waits_share_cpus(here, cpus, own, helpers);
        Runtime {
            my_pe: p.boot.rank(),
            n_pes: p.boot.size(),
            config: p.config,
            boot: Mutex::new(p.boot),
            heap: p.heap,
            transports: p.transports,
            oversubscribed,
            drive,
            spin_learner: SpinLearner::default(),
            host_of: p.host_of,
            teams: p.teams,
            forced: p.forced,
            next_ctx_id: AtomicU32::new(1),
            locks: HeldLocks::default(),
            watcher: p.watcher,
            #[cfg(feature = "cuda")]
            gpu: p.gpu,
            #[cfg(feature = "cuda")]
            proxy: p.proxy,
            finalized: AtomicBool::new(false),
        }
    }

    /// The bootstrap (exchanges, barriers, abort).
    pub(crate) fn boot(&self) -> MutexGuard<'_, Box<dyn Bootstrap>> {
        self.boot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether [`Runtime::finalize`] ran (or began).
    pub(crate) fn is_finalized(&self) -> bool {
        self.finalized.load(Ordering::SeqCst)
    }

    /// The transport that reaches `pe`.
    #[inline]
    pub(crate) fn to(&self, pe: usize) -> &dyn Transport {
        self.transports.to(pe)
    }

    /// How waits behave: spin count, hang warning, optional deadline.
    #[inline]
    pub(crate) fn wait_policy(&self, timeout: Option<Duration>) -> WaitPolicy<'_> {
        WaitPolicy {
            spin: self.config.spin,
            oversubscribed: self.oversubscribed,
            deadline: timeout.map(|t| Instant::now() + t),
            warn_after: self.config.wait_warn,
            watcher: &self.watcher,
            drive: &self.drive,
            learner: &self.spin_learner,
        }
    }

    /// Completes every operation of the default context's transports.
    pub(crate) fn quiet_all(&self) -> Result<()> {
        for t in self.transports.distinct() {
            t.quiet(None).map_err(|e| e.during("quiet"))?;
        }
        Ok(())
    }

    /// Whether `pe`'s heap is reachable by load and store from this process.
    pub(crate) fn mapped(&self, pe: usize) -> bool {
        self.to(pe).caps().mapped
    }

    /// Finalizes once (collective): completes this PE's operations, meets every PE in the
    /// bootstrap's barrier, stops the GPU proxy and lets the transports and the bootstrap
    /// say goodbye. Later calls return `Ok` at once.
    pub(crate) fn finalize(&self) -> Result<()> {
        if self.finalized.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        self.quiet_all()?;
        self.boot().barrier()?;
        // The proxy finishes what kernels left in its ring before the transports close.
        #[cfg(feature = "cuda")]
        if let Some(p) = &self.proxy {
            p.stop();
        }
        let mut boot = self.boot();
        self.heap.finalize_hook(&mut **boot)?;
        boot.finalize()
    }

    /// Ends the whole job with `code`, saying `why`.
    pub(crate) fn abort(&self, code: i32, why: &str) -> ! {
        // The process exits next: no progress thread may still be inside UCX then.
        self.heap.stop_hook_threads();
        self.boot().abort(code, why)
    }

    /// An error for `call` about an argument of this PE.
    pub(crate) fn invalid(&self, call: &'static str, arg: &'static str, detail: impl Into<String>) -> Error {
        Error::InvalidArgument { call, arg, detail: detail.into(), pe: self.my_pe }
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        if !self.finalized.load(Ordering::SeqCst) {
            if std::thread::panicking() {
                // Ends the job, or (thread PEs) fails every PE's waits and lets the
                // program see the panic; either way there is nothing to finalize.
                let msg = format!("PE {} panicked before finalize", self.my_pe);
                self.boot().fail(&msg);
                return;
            }
            if let Err(e) = self.finalize() {
                crate::log::always_warn(&format!("rshmem: PE {}: finalize failed: {e}", self.my_pe));
            }
        }
    }
}

/// What this PE is doing with a lock (see `ops::lock`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LockState {
    /// Queued, waiting for the predecessor's hand-over.
    Acquiring,
    /// Held.
    Held,
    /// Being handed to the successor.
    Releasing,
}

/// The locks this PE holds or is acquiring, by heap offset of the lock word.
#[derive(Debug, Default)]
pub(crate) struct HeldLocks(Mutex<HashMap<usize, LockState>>);

impl HeldLocks {
    /// The table, locked.
    pub(crate) fn map(&self) -> MutexGuard<'_, HashMap<usize, LockState>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::waits_share_cpus;

    #[test]
    fn a_pe_bound_to_one_core_yields_when_a_progress_thread_shares_it() {
        assert!(!waits_share_cpus(2, 2, 1, 0), "2 PEs bound a core each, shared memory only");
        assert!(waits_share_cpus(2, 2, 1, 1), "the same with a UCX progress thread on each core");
        assert!(!waits_share_cpus(2, 2, 2, 1), "a PE with 2 CPUs leaves one to its progress thread");
        assert!(waits_share_cpus(8, 2, 2, 0), "8 PEs on 2 CPUs");
    }
}

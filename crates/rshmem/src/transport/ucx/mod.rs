//! The remote transport over UCX (libucp, loaded at run time).
//!
//! One UCP context and one worker (thread mode multi) per PE, an endpoint to every peer it
//! serves, and the PE's heap registered region by region as the heap adds segments: at
//! init ([`UcxTransport::new`] exchanges worker addresses and heap bases through the
//! bootstrap) and inside every collective allocation that grows the heap (the heap calls
//! [`SegmentHook::segment_added`], which maps the new segment with `ucp_mem_map`, packs
//! its rkey and exchanges rkeys with an allgather).
//!
//! What each operation promises:
//! * `put` returns when the source buffer may be reused (UCX local completion); the data
//!   is at the target after `quiet` (a worker flush, or an endpoint flush for one PE).
//! * `get`, `load_word` and every atomic return with the value (they wait for the reply).
//! * Atomics are UCX atomics on 4- and 8-byte words (`ucp_atomic_op_nbx`: add, and, or,
//!   xor, swap, cswap; fetch is add 0, set is swap); 1- and 2-byte words are emulated by a
//!   compare-and-swap loop on the aligned 4-byte word that holds them. `store_word` is an
//!   atomic swap, so a signal or `p` never tears.
//! * `fence` is `ucp_worker_fence`.
//!
//! A progress thread drives the worker so that this PE serves its peers' operations
//! (UCX carries out RMA and atomics over tcp, and atomics over shared memory, on the
//! target's worker) while the application computes or sleeps in a wait. It blocks on the
//! worker's event descriptor between events (with a 1 ms ceiling) and, after progress
//! delivered something, wakes this PE's waiters (a remote store does not call the
//! target's futex wake, as the local transport's stores do). Stores UCX delivers without
//! the target's help (shared-memory puts through CMA) are seen when the waiter's futex
//! sleep slice ends, which this transport shortens to 1 ms ([`notify::set_sleep_slice`]).

pub mod ffi;
mod signal;
pub mod staged;
mod standby;

use super::notify;
use super::{AmoOp, Caps, Transport};
use crate::bootstrap::status::{WaitWatch, Watcher};
use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use crate::heap::SegmentHook;
use ffi::{classify, Started, Ucp};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// One registered piece of the heap (the same offsets on every PE) and its keys.
struct Region {
    offset: usize,
    len: usize,
    memh: ffi::ucp_mem_h,
    /// Unpacked remote key of each PE's copy of the region (null for PEs not served).
    rkeys: Vec<ffi::ucp_rkey_h>,
}

/// State shared with the progress thread.
pub(crate) struct Worker {
    pub(crate) ucp: Ucp,
    context: ffi::ucp_context_h,
    pub(crate) worker: ffi::ucp_worker_h,
    efd: Option<c_int>,
    pub(crate) my_pe: usize,
    my_base: usize,
    pub(crate) stop: AtomicBool,
    /// Application threads now driving the worker while they wait, and the progress
    /// thread's standing back meanwhile.
    pub(crate) standby: standby::Standby,
    /// How long a thread keeps polling the worker after activity before it sleeps on the
    /// event descriptor (`RSHMEM_UCX_POLL_US`).
    poll_window: Duration,
    /// Where this PE's long waits report (status board, hang limit).
    watcher: Watcher,
    /// Where the progress thread runs ([`Waits::helper_cpus`]).
    helper_cpus: Vec<usize>,
    /// Taken around every call into the worker (see [`Worker::gated`]).
    gate: std::sync::Mutex<()>,
}

/// What [`Worker::idle`] keeps of one polling wait: when it last saw an event.
pub(crate) struct Pace {
    rounds: u32,
    event: bool,
    last_event: Instant,
}

impl Pace {
    /// Rounds of progress between two looks at the clock.
    const ROUNDS: u32 = 16;

    /// A wait that starts now.
    pub(crate) fn new() -> Pace {
        Pace { rounds: 0, event: false, last_event: Instant::now() }
    }
}

// SAFETY: the worker is created in UCS_THREAD_MODE_MULTI, so UCX serializes concurrent
// calls on it; the context is only used for memory mapping, which UCX locks internally.
unsafe impl Send for Worker {}
// SAFETY: as above.
unsafe impl Sync for Worker {}

impl Worker {
    /// Runs `f`, a call into the worker, holding the worker's gate. UCX's own lock of a
    /// multi-thread worker is a spin lock: with the progress thread and the PE's thread
    /// on one core (a PE bound to a core), a thread that found it taken spun until the
    /// holder's core came back to it, a whole time slice (a quarter of the progress
    /// thread's time went to `pthread_spin_lock` under a fetch_add loop over tcp). The
    /// gate sleeps instead. The message handlers that run inside progress never call
    /// into the worker, so it is never taken twice by one thread.
    #[inline]
    pub(crate) fn gated<R>(&self, f: impl FnOnce() -> R) -> R {
        let _held = self.gate.lock().unwrap_or_else(|p| p.into_inner());
        f()
    }

    /// One round of progress; wakes this PE's waiters when something was delivered.
    pub(crate) fn progress(&self) -> u32 {
        // SAFETY: the worker is live until `Drop` for UcxTransport, which joins the
        // progress thread first.
        let n = self.gated(|| unsafe { (self.ucp.ucp_worker_progress)(self.worker) });
        if n > 0 && !self.stop.load(Ordering::Acquire) {
            notify::wake(self.my_base);
        }
        n
    }

    /// Sleeps until the worker has an event or `ceiling` passes: arms the worker and,
    /// when it is armed (`UCS_OK`), polls its event descriptor for input. Returns at once
    /// when arming reports pending events (`UCS_ERR_BUSY`: progress again). Without an
    /// event descriptor, sleeps a short while instead.
    fn sleep_on_events(&self, ceiling: &rustix::time::Timespec) {
        let Some(fd) = self.efd else {
            std::thread::sleep(Duration::from_micros(50));
            return;
        };
        // SAFETY: the worker is live (see `progress`).
        let st = self.gated(|| unsafe { (self.ucp.ucp_worker_arm)(self.worker) });
        if st != ffi::UCS_OK {
            // UCS_ERR_BUSY: events are pending; anything else: do not trust the descriptor.
            if st != ffi::UCS_ERR_BUSY {
                std::thread::yield_now();
            }
            return;
        }
        // SAFETY: `fd` is the worker's event descriptor, open while the worker lives.
        let bfd = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
        let mut fds = [rustix::event::PollFd::new(&bfd, rustix::event::PollFlags::IN)];
        let _ = rustix::event::poll(&mut fds, Some(ceiling));
    }

    /// For a thread waiting on the worker: `found` events were just progressed; once
    /// none came for `poll_window`, sleeps on the event descriptor (100 us ceiling, so
    /// that completions UCX reports without an event are still seen soon) instead of
    /// taking a core from the peer that must answer. Looks at the clock only every
    /// [`Pace::ROUNDS`] rounds (a round of progress over tcp is a few hundred
    /// nanoseconds, and reading the clock on every one cost a twentieth of a fetch_add
    /// loop); returns true on those rounds, when the caller's [`WaitWatch`] is due a tick.
    pub(crate) fn idle(&self, found: u32, pace: &mut Pace) -> bool {
        pace.rounds = pace.rounds.wrapping_add(1);
        pace.event |= found > 0;
        if !pace.rounds.is_multiple_of(Pace::ROUNDS) {
            return false;
        }
        let now = Instant::now();
        if std::mem::take(&mut pace.event) {
            pace.last_event = now;
        } else if now.duration_since(pace.last_event) >= self.poll_window {
            self.sleep_on_events(&rustix::time::Timespec { tv_sec: 0, tv_nsec: 100_000 });
        }
        true
    }

    /// The progress thread's loop: drain events (and whatever `extra` finds to do after
    /// them: the staged protocol's requests), keep polling for `poll_window` after the last
    /// event, then arm and sleep on the event descriptor (1 ms ceiling).
    pub(crate) fn run(&self, extra: &dyn Fn() -> u32) {
        // Off its PE's core where the launcher left cores free: there it would share the
        // core with the PE's thread (spinning on its GPU, or computing) whenever a peer's
        // request arrives. GPU proxy over UCX tcp, 2 thread PEs on an H100 host: with
        // the proxy thread moved but this one not, put 8 B + quiet 31-32 us, unbound 27-30.
        match crate::bootstrap::binding::move_helper_thread(&self.helper_cpus) {
            Ok(cpus) => tracing::debug!(pe = self.my_pe, "UCX progress thread on CPUs {cpus:?}"),
            Err(e) => {
                tracing::debug!(pe = self.my_pe, "UCX progress thread stays on its PE's CPUs (CPUs {:?} refused: {e})", self.helper_cpus)
            }
        }
        let ceiling = rustix::time::Timespec { tv_sec: 0, tv_nsec: 1_000_000 };
        let mut last_event = Instant::now();
        let mut pause = standby::FIRST;
        while !self.stop.load(Ordering::Acquire) {
            // An application thread waiting for a request drives the worker itself;
            // polling beside it would only contend for the worker's lock and a core.
            if self.standby.stand_back(&mut pause) {
                continue;
            }
            if self.progress() + extra() > 0 {
                last_event = Instant::now();
                continue;
            }
            // Traffic comes in bursts (a request, then the next one a round trip later):
            // keep polling briefly after an event before sleeping on the descriptor. On a
            // machine with more runnable threads than cores a longer spin only takes the
            // core from the thread that would send the next request.
            if last_event.elapsed() < self.poll_window {
                std::thread::yield_now();
                continue;
            }
            self.sleep_on_events(&ceiling);
            // Whatever woke us (or the ceiling) starts a new polling window only when
            // progress finds something.
        }
    }

    /// Waits for what a `*_nbx` call started; `what` names it in the failure message.
    /// Drives the worker itself, polling and sleeping as [`Worker::idle`] says.
    pub(crate) fn wait(&self, started: *mut c_void, what: impl Fn() -> String) -> Result<()> {
        match classify(started) {
            Started::Done => Ok(()),
            Started::Failed(st) => Err(self.failure(st, what)),
            Started::Request(req) => {
                let _driving = self.standby.drive();
                let mut pace = Pace::new();
                let mut watch = WaitWatch::new(&self.watcher);
                let describe = || format!("UCX {} on PE {}", what(), self.my_pe);
                loop {
                    // SAFETY: `req` is a live request returned by UCX, freed only below.
                    let st = self.gated(|| unsafe { (self.ucp.ucp_request_check_status)(req) });
                    if st != ffi::UCS_INPROGRESS {
                        // SAFETY: completed requests are released exactly once.
                        self.gated(|| unsafe { (self.ucp.ucp_request_free)(req) });
                        if st != ffi::UCS_OK {
                            return Err(self.failure(st, what));
                        }
                        return Ok(());
                    }
                    let found = self.progress();
                    if !self.idle(found, &mut pace) {
                        continue;
                    }
                    if let Err(end) = watch.tick(&describe) {
                        // The request stays with UCX, which may still complete it: it
                        // is not freed here (a leak of one request on a failing job).
                        return Err(Error::Transport { call: "ucx", detail: watch.end_message(&end, &describe()), pe: self.my_pe });
                    }
                }
            }
        }
    }

    /// Closes every non-null endpoint of `eps`: waiting for each peer's acknowledgement,
    /// or (`force`, for a failed job whose peers may be gone) with a bounded wait.
    pub(crate) fn close_endpoints(&self, eps: &[ffi::ucp_ep_h], force: bool) {
        let mut param = ffi::ucp_request_param_t::empty();
        if force {
            param.op_attr_mask = ffi::UCP_OP_ATTR_FIELD_FLAGS;
            param.flags = ffi::UCP_EP_CLOSE_FLAG_FORCE;
        }
        for (pe, &ep) in eps.iter().enumerate().filter(|(_, e)| !e.is_null()) {
            // SAFETY: a live endpoint, closed once (callers close each list once).
            let started = self.gated(|| unsafe { (self.ucp.ucp_ep_close_nbx)(ep, &param) });
            if !force {
                if let Err(e) = self.wait(started, || format!("close of the endpoint to PE {pe}")) {
                    tracing::warn!("{e}");
                }
            } else if let Started::Request(req) = classify(started) {
                for _ in 0..100_000 {
                    // SAFETY: a live request, released below.
                    if self.gated(|| unsafe { (self.ucp.ucp_request_check_status)(req) }) != ffi::UCS_INPROGRESS {
                        break;
                    }
                    self.progress();
                }
                // SAFETY: released once.
                self.gated(|| unsafe { (self.ucp.ucp_request_free)(req) });
            }
        }
    }

    /// Destroys the worker, then the context.
    ///
    /// # Safety
    /// Called once, when no thread uses the worker any more and its endpoints are closed.
    pub(crate) unsafe fn destroy(&self) {
        // SAFETY: the caller's promise above.
        unsafe {
            (self.ucp.ucp_worker_destroy)(self.worker);
            (self.ucp.ucp_cleanup)(self.context);
        }
    }

    /// The error for a UCX operation (`what`) that ended with status `st`.
    pub(crate) fn failure(&self, st: ffi::ucs_status_t, what: impl Fn() -> String) -> Error {
        Error::Transport { call: "ucx", detail: format!("{} failed: {}", what(), self.ucp.status_text(st)), pe: self.my_pe }
    }

    pub(crate) fn check(&self, call: &'static str, st: ffi::ucs_status_t) -> Result<()> {
        if st == ffi::UCS_OK {
            Ok(())
        } else {
            Err(Error::Transport { call, detail: self.ucp.status_text(st), pe: self.my_pe })
        }
    }
}

/// Transport to peers through UCX.
pub struct UcxTransport {
    w: Arc<Worker>,
    n_pes: usize,
    /// Endpoint to each PE (null for PEs this transport does not serve).
    eps: Vec<ffi::ucp_ep_h>,
    /// Address of each PE's heap base in that PE's own process.
    peer_bases: Vec<u64>,
    regions: RwLock<Vec<Region>>,
    progress: std::sync::Mutex<Option<JoinHandle<()>>>,
    closed: AtomicBool,
    /// Per PE: puts issued to it so far (counted once each `ucp_put_nbx` was issued).
    puts: Vec<AtomicU64>,
    /// Per PE: the put count a completed flush of its endpoint covers. Quiet flushes only
    /// endpoints with puts beyond it (a flush is a round trip to the peer; gets and
    /// atomics are complete when they return and need none).
    flushed: Vec<AtomicU64>,
    /// Requests still in flight (`get_nbi`, posted atomic sets): `quiet` waits for them.
    in_flight: std::sync::Mutex<Vec<InFlight>>,
    /// Where peers' signalled puts land ([`Transport::signal_put`]); boxed, since the
    /// worker's message handler holds its address.
    sink: Box<signal::Sink>,
}

/// A request left in flight until the next `quiet`.
struct InFlight {
    /// The PE it goes to.
    pe: usize,
    /// The UCX request (a raw pointer, kept as an address).
    req: usize,
    /// The operand and reply of a posted swap, owned here until the request completes.
    _words: Option<Box<[[u8; 8]; 2]>>,
}

// SAFETY: endpoints and rkeys are used through the thread-safe worker (multi mode);
// the region list is behind a lock; nothing is tied to the creating thread.
unsafe impl Send for UcxTransport {}
// SAFETY: as above.
unsafe impl Sync for UcxTransport {}

impl std::fmt::Debug for UcxTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UcxTransport").field("my_pe", &self.w.my_pe).field("n_pes", &self.n_pes).finish()
    }
}

/// Whether libucp can be loaded here (tests use it to decide whether to run).
pub fn available() -> std::result::Result<(), String> {
    Ucp::load().map(|_| ())
}

impl UcxTransport {
    /// Collective: opens UCX, exchanges worker addresses and heap bases with every PE and
    /// connects to the PEs in `serve` (the others get no endpoint). `my_base` is this PE's
    /// heap base; `waits` says how waits behave. Registers no memory yet: see
    /// [`SegmentHook`].
    pub fn new(boot: &mut dyn Bootstrap, my_base: usize, serve: &[bool], waits: Waits) -> Result<UcxTransport> {
        let features = ffi::UCP_FEATURE_RMA | ffi::UCP_FEATURE_AMO32 | ffi::UCP_FEATURE_AMO64 | ffi::UCP_FEATURE_AM;
        let sink = Box::new(signal::Sink::new(my_base));
        let (w, eps, peer_bases) = connect(boot, my_base, serve, waits, features, |w| sink.register(w))?;
        let n_pes = eps.len();
        let my_pe = w.my_pe;
        let w = Arc::new(w);
        let t = UcxTransport {
            w: w.clone(),
            n_pes,
            eps,
            peer_bases,
            regions: RwLock::new(Vec::new()),
            progress: std::sync::Mutex::new(None),
            closed: AtomicBool::new(false),
            puts: (0..n_pes).map(|_| AtomicU64::new(0)).collect(),
            flushed: (0..n_pes).map(|_| AtomicU64::new(0)).collect(),
            in_flight: std::sync::Mutex::new(Vec::new()),
            sink,
        };
        let handle = std::thread::Builder::new()
            .name(format!("rshmem-ucx-progress-pe{my_pe}"))
            .spawn(move || w.run(&|| 0))
            .map_err(|e| Error::os("start the UCX progress thread", e))?;
        *t.progress.lock().unwrap_or_else(|p| p.into_inner()) = Some(handle);
        notify::set_sleep_slice(Duration::from_millis(1));
        tracing::debug!(pe = my_pe, "UCX transport up");
        Ok(t)
    }
}

/// Collective: opens UCX with `features` (plus wakeup), lets `before_exchange` set the
/// worker up (active message handlers must be in place before any peer can send), then
/// exchanges worker addresses and heap bases with every PE and connects to the PEs in
/// `serve`. Returns the worker, the endpoints (null for PEs not served) and every PE's
/// heap base in its own process.
pub(crate) fn connect(
    boot: &mut dyn Bootstrap,
    my_base: usize,
    serve: &[bool],
    waits: Waits,
    features: u64,
    before_exchange: impl FnOnce(&Worker) -> Result<()>,
) -> Result<(Worker, Vec<ffi::ucp_ep_h>, Vec<u64>)> {
    let (my_pe, n_pes) = (boot.rank(), boot.size());
    // Every PE joins the exchanges below even when its own set-up failed, so that the
    // others learn of it instead of waiting.
    let opened = open(my_pe, my_base, waits, features).and_then(|(w, addr)| before_exchange(&w).map(|_| (w, addr)));
    let mut mine = Vec::new();
    match &opened {
        Ok((_, addr)) => {
            mine.push(1u8);
            mine.extend_from_slice(&(my_base as u64).to_le_bytes());
            mine.extend_from_slice(addr);
        }
        Err(_) => mine.push(0),
    }
    let all = boot.allgather(&mine)?;
    let (w, _) = opened?;
    if let Some(pe) = all.iter().position(|b| b.first() != Some(&1)) {
        return Err(Error::Transport { call: "init", detail: format!("UCX set-up failed on PE {pe}"), pe: my_pe });
    }
    let peer_bases = all.iter().map(|b| b[1..9].iter().rev().fold(0u64, |v, &byte| (v << 8) | u64::from(byte))).collect();
    let mut eps = vec![std::ptr::null_mut(); n_pes];
    for (pe, blob) in all.iter().enumerate() {
        if !serve[pe] {
            continue;
        }
        let mut params: ffi::ucp_ep_params_t = zeroed();
        params.field_mask = ffi::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS;
        params.address = blob[9..].as_ptr().cast();
        // SAFETY: live worker; `params` points at the peer's address blob, which UCX
        // copies what it needs from before returning.
        let st = unsafe { (w.ucp.ucp_ep_create)(w.worker, &params, &mut eps[pe]) };
        w.check("init: ucp_ep_create", st)?;
    }
    wire_up(&w, &eps)?;
    Ok((w, eps, peer_bases))
}

/// Finishes every endpoint's connection before init returns: a flush of each endpoint,
/// waited for, completes only once the endpoint's wire-up exchange with its peer is done.
///
/// Left to the first operation, a connection to a PE that ends right after init (with or
/// without finalize) could still be in wire-up when that PE's socket closes, and UCX 1.13
/// then aborts the whole process in an assertion (`ucp_request.c:684 ... got REQ
/// message`; removed upstream by openucx/ucx#8175) instead of failing the endpoint.
fn wire_up(w: &Worker, eps: &[ffi::ucp_ep_h]) -> Result<()> {
    let param = ffi::ucp_request_param_t::empty();
    let started: Vec<_> = eps
        .iter()
        .enumerate()
        .filter(|(_, ep)| !ep.is_null())
        // SAFETY: a live endpoint just created on this worker.
        .map(|(pe, &ep)| (pe, w.gated(|| unsafe { (w.ucp.ucp_ep_flush_nbx)(ep, &param) })))
        .collect();
    let mut outcome = Ok(());
    // Every started flush is waited for (its request is freed there); the first failure
    // is reported.
    for (pe, s) in started {
        if let Err(e) = w.wait(s, || format!("init: connection to PE {pe}")) {
            outcome = outcome.and(Err(e));
        }
    }
    outcome
}

/// How a UCX worker's waits behave: `RSHMEM_UCX_POLL_US` (see [`Worker::idle`]) and where
/// long waits report.
#[derive(Debug, Clone)]
pub struct Waits {
    /// How long to keep polling after the last event before sleeping.
    pub poll_window: Duration,
    /// This PE's status board record and hang limit.
    pub watcher: Watcher,
    /// The CPUs the progress thread moves to (`RSHMEM_SPARE_CPUS`, which rshmemrun sets
    /// when it binds every PE and cores are left); empty: it stays on its PE's CPUs.
    pub helper_cpus: Vec<usize>,
}

/// Loads libucp, creates the context and worker; returns them and the worker address.
fn open(my_pe: usize, my_base: usize, waits: Waits, features: u64) -> Result<(Worker, Vec<u8>)> {
    let ucp = Ucp::load().map_err(|e| Error::Unsupported {
        call: "init",
        detail: format!("RSHMEM_TRANSPORT=ucx (or a remote peer) needs UCX, but {e}; install UCX (Debian: libucx0)"),
    })?;
    let mut config: *mut ffi::ucp_config_t = std::ptr::null_mut();
    // SAFETY: reads UCX_* variables into a config that we release below.
    let st = unsafe { (ucp.ucp_config_read)(std::ptr::null(), std::ptr::null(), &mut config) };
    let err = |call: &'static str, st| Error::Transport { call, detail: ucp.status_text(st), pe: my_pe };
    if st != ffi::UCS_OK {
        return Err(err("init: ucp_config_read", st));
    }
    let mut params: ffi::ucp_params_t = zeroed();
    params.field_mask = ffi::UCP_PARAM_FIELD_FEATURES | ffi::UCP_PARAM_FIELD_MT_WORKERS_SHARED;
    params.features = features | ffi::UCP_FEATURE_WAKEUP;
    params.mt_workers_shared = 1;
    let mut context: ffi::ucp_context_h = std::ptr::null_mut();
    // SAFETY: valid params and config; the API version is the one the structs mirror.
    let st = unsafe { (ucp.ucp_init_version)(1, 13, &params, config, &mut context) };
    // SAFETY: the config came from ucp_config_read and is released once.
    unsafe { (ucp.ucp_config_release)(config) };
    if st != ffi::UCS_OK {
        return Err(err("init: ucp_init", st));
    }
    let mut wparams: ffi::ucp_worker_params_t = zeroed();
    wparams.field_mask = ffi::UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wparams.thread_mode = ffi::UCS_THREAD_MODE_MULTI;
    let mut worker: ffi::ucp_worker_h = std::ptr::null_mut();
    // SAFETY: live context, valid params.
    let st = unsafe { (ucp.ucp_worker_create)(context, &wparams, &mut worker) };
    if st != ffi::UCS_OK {
        // SAFETY: the context is live and has no workers.
        unsafe { (ucp.ucp_cleanup)(context) };
        return Err(err("init: ucp_worker_create", st));
    }
    let mut fd: c_int = -1;
    // SAFETY: live worker created with the wakeup feature.
    let efd = (unsafe { (ucp.ucp_worker_get_efd)(worker, &mut fd) } == ffi::UCS_OK).then_some(fd);
    let mut addr: *mut ffi::ucp_address_t = std::ptr::null_mut();
    let mut len = 0usize;
    // SAFETY: live worker; the address is copied, then released.
    let st = unsafe { (ucp.ucp_worker_get_address)(worker, &mut addr, &mut len) };
    let Waits { poll_window, watcher, helper_cpus } = waits;
    let w = Worker {
        ucp,
        context,
        worker,
        efd,
        my_pe,
        my_base,
        stop: AtomicBool::new(false),
        standby: standby::Standby::new(),
        poll_window,
        watcher,
        helper_cpus,
        gate: std::sync::Mutex::new(()),
    };
    w.check("init: ucp_worker_get_address", st)?;
    // SAFETY: UCX returned `len` readable bytes at `addr`.
    let blob = unsafe { std::slice::from_raw_parts(addr as *const u8, len) }.to_vec();
    // SAFETY: released once, with the worker that gave it.
    unsafe { (w.ucp.ucp_worker_release_address)(worker, addr) };
    Ok((w, blob))
}

impl UcxTransport {
    /// The endpoint, remote address and rkey for `len` bytes at `offset` of `pe`'s heap,
    /// split at region boundaries: calls `f(ep, raddr, rkey, start, n)` per piece.
    fn pieces(
        &self,
        pe: usize,
        offset: usize,
        len: usize,
        mut f: impl FnMut(ffi::ucp_ep_h, u64, ffi::ucp_rkey_h, usize, usize) -> Result<()>,
    ) -> Result<()> {
        let refuse = |detail: String| Error::Transport { call: "ucx", detail, pe: self.w.my_pe };
        if self.closed.load(Ordering::Relaxed) {
            return Err(refuse(format!("operation to PE {pe} after finalize")));
        }
        let ep = self.eps[pe];
        if ep.is_null() {
            return Err(refuse(format!("the UCX transport does not serve PE {pe}")));
        }
        let regions = self.regions.read().unwrap_or_else(|p| p.into_inner());
        let mut done = 0usize;
        while done < len.max(1) {
            let at = offset + done;
            let r = regions
                .iter()
                .find(|r| at >= r.offset && at < r.offset + r.len)
                .ok_or_else(|| refuse(format!("offset {at:#x} of PE {pe}'s heap is not registered with UCX")))?;
            let n = (len - done).min(r.offset + r.len - at);
            f(ep, self.peer_bases[pe] + at as u64, r.rkeys[pe], done, n)?;
            done += n.max(1);
        }
        Ok(())
    }

    /// One UCX atomic on a 4- or 8-byte word; returns the old value.
    fn atomic(&self, pe: usize, offset: usize, width: usize, op: ffi::ucp_atomic_op_t, operand: u64, compare: u64) -> Result<u64> {
        debug_assert!(width == 4 || width == 8);
        // CSWAP compares the word with `buffer` and writes the reply buffer's value
        // (UCX's table: "if (X == Y) then Y = Z", X in buffer, Z in reply_buffer).
        let (value, mut reply) = if op == ffi::UCP_ATOMIC_OP_CSWAP {
            (compare.to_le_bytes(), operand.to_le_bytes())
        } else {
            (operand.to_le_bytes(), 0u64.to_le_bytes())
        };
        let mut param = ffi::ucp_request_param_t::empty();
        param.op_attr_mask = ffi::UCP_OP_ATTR_FIELD_DATATYPE | ffi::UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        param.datatype = ffi::dt_contig(width);
        param.reply_buffer = reply.as_mut_ptr().cast();
        self.pieces(pe, offset, width, |ep, raddr, rkey, _, _| {
            // SAFETY: `value` and `reply` hold `width` bytes (little endian: the low bytes
            // of the u64) and outlive the wait below; ep and rkey are live.
            let started = self.w.gated(|| unsafe { (self.w.ucp.ucp_atomic_op_nbx)(ep, op, value.as_ptr().cast(), 1, raddr, rkey, &param) });
            self.w.wait(started, || format!("{width}-byte atomic {op} on PE {pe} at offset {offset:#x}"))
        })?;
        let old = u64::from_le_bytes(reply);
        Ok(if width == 4 { old & 0xffff_ffff } else { old })
    }

    /// A non-fetching atomic on a 4- or 8-byte word: no reply buffer, so UCX completes
    /// it locally (the target applies it later; a flush, that is `quiet`, waits for it).
    fn atomic_post(&self, pe: usize, offset: usize, width: usize, op: ffi::ucp_atomic_op_t, operand: u64) -> Result<()> {
        self.atomic_post_uncounted(pe, offset, width, op, operand)?;
        // Counted like a put: the next quiet flushes the endpoint.
        self.puts[pe].fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// [`UcxTransport::atomic_post`] that no quiet waits for ([`Transport::signal_post`]).
    fn atomic_post_uncounted(&self, pe: usize, offset: usize, width: usize, op: ffi::ucp_atomic_op_t, operand: u64) -> Result<()> {
        debug_assert!((width == 4 || width == 8) && op != ffi::UCP_ATOMIC_OP_CSWAP && op != ffi::UCP_ATOMIC_OP_SWAP);
        let value = operand.to_le_bytes();
        let mut param = ffi::ucp_request_param_t::empty();
        param.op_attr_mask = ffi::UCP_OP_ATTR_FIELD_DATATYPE;
        param.datatype = ffi::dt_contig(width);
        self.pieces(pe, offset, width, |ep, raddr, rkey, _, _| {
            // SAFETY: `value` holds `width` bytes (little endian) and outlives the wait for
            // local completion below; ep and rkey are live.
            let started = self.w.gated(|| unsafe { (self.w.ucp.ucp_atomic_op_nbx)(ep, op, value.as_ptr().cast(), 1, raddr, rkey, &param) });
            self.w.wait(started, || format!("{width}-byte atomic {op} posted to PE {pe} at offset {offset:#x}"))
        })
    }

    /// An atomic set of a 4- or 8-byte word that does not wait for the target: a swap
    /// whose reply lands in a buffer of the transport's, left in flight until `quiet`
    /// (UCX has no non-fetching swap, and waiting for the reply made every set a round
    /// trip: a stream of sets ran at the rate of fetch_add, not of add).
    fn swap_post(&self, pe: usize, offset: usize, width: usize, operand: u64) -> Result<()> {
        // The operand and the reply, both kept until the request completes.
        let mut words = Box::new([operand.to_le_bytes(), [0u8; 8]]);
        let mut param = ffi::ucp_request_param_t::empty();
        param.op_attr_mask = ffi::UCP_OP_ATTR_FIELD_DATATYPE | ffi::UCP_OP_ATTR_FIELD_REPLY_BUFFER;
        param.datatype = ffi::dt_contig(width);
        param.reply_buffer = words[1].as_mut_ptr().cast();
        let value = words[0].as_ptr();
        self.pieces(pe, offset, width, |ep, raddr, rkey, _, _| {
            // SAFETY: the boxed operand and reply stay alive, at the same address, until
            // the request completes: kept with it in `in_flight`, or dropped here only
            // when it completed at once. ep and rkey are live.
            let started = self
                .w
                .gated(|| unsafe { (self.w.ucp.ucp_atomic_op_nbx)(ep, ffi::UCP_ATOMIC_OP_SWAP, value.cast(), 1, raddr, rkey, &param) });
            match classify(started) {
                Started::Done => Ok(()),
                Started::Failed(st) => {
                    Err(self.w.failure(st, || format!("{width}-byte atomic set posted to PE {pe} at offset {offset:#x}")))
                }
                Started::Request(req) => {
                    let r = InFlight { pe, req: req as usize, _words: Some(std::mem::take(&mut words)) };
                    self.in_flight.lock().unwrap_or_else(|p| p.into_inner()).push(r);
                    Ok(())
                }
            }
        })
    }

    /// An atomic on a 1- or 2-byte word: compare-and-swap on the aligned 4-byte word
    /// that holds it until no other update came between.
    fn narrow_amo(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64, compare: u64) -> Result<u64> {
        let word = offset & !3;
        let shift = (offset - word) * 8;
        let mask = ((1u64 << (width * 8)) - 1) << shift;
        let mut cur = self.atomic(pe, word, 4, ffi::UCP_ATOMIC_OP_ADD, 0, 0)?;
        loop {
            let old = (cur & mask) >> shift;
            let new = match op {
                AmoOp::Fetch => return Ok(old),
                AmoOp::Set | AmoOp::Swap => operand,
                AmoOp::CompareSwap if old != compare & (mask >> shift) => return Ok(old),
                AmoOp::CompareSwap => operand,
                AmoOp::FetchAdd => old.wrapping_add(operand),
                AmoOp::FetchAnd => old & operand,
                AmoOp::FetchOr => old | operand,
                AmoOp::FetchXor => old ^ operand,
            };
            let next = (cur & !mask) | ((new << shift) & mask);
            let seen = self.atomic(pe, word, 4, ffi::UCP_ATOMIC_OP_CSWAP, next, cur)?;
            if seen == cur {
                return Ok(old);
            }
            cur = seen;
        }
    }

    /// Flushes, closes every endpoint (waiting for the peers to acknowledge), then meets
    /// every PE, so that no PE tears its worker down while a peer still talks to it.
    fn close(&self, boot: &mut dyn Bootstrap) -> Result<()> {
        if self.closed.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let flushed = self.quiet(None);
        self.w.close_endpoints(&self.eps, false);
        flushed?;
        boot.barrier()
    }
}

pub(crate) fn zeroed<T>() -> T {
    // SAFETY: only used for the ffi parameter structs, whose fields are integers and raw
    // pointers (valid when zero).
    unsafe { std::mem::zeroed() }
}

fn ucx_op(op: AmoOp) -> ffi::ucp_atomic_op_t {
    match op {
        AmoOp::Fetch | AmoOp::FetchAdd => ffi::UCP_ATOMIC_OP_ADD,
        AmoOp::Set | AmoOp::Swap => ffi::UCP_ATOMIC_OP_SWAP,
        AmoOp::CompareSwap => ffi::UCP_ATOMIC_OP_CSWAP,
        AmoOp::FetchAnd => ffi::UCP_ATOMIC_OP_AND,
        AmoOp::FetchOr => ffi::UCP_ATOMIC_OP_OR,
        AmoOp::FetchXor => ffi::UCP_ATOMIC_OP_XOR,
    }
}

impl Transport for UcxTransport {
    fn name(&self) -> &'static str {
        "ucx"
    }

    fn caps(&self) -> Caps {
        Caps { mapped: false }
    }

    fn put(&self, pe: usize, offset: usize, src: &[u8]) -> Result<()> {
        if src.is_empty() {
            return Ok(());
        }
        let param = ffi::ucp_request_param_t::empty();
        self.pieces(pe, offset, src.len(), |ep, raddr, rkey, start, n| {
            // SAFETY: `src[start..start+n]` is readable and outlives the wait (local
            // completion: UCX is done with the buffer when the request completes).
            let started = self.w.gated(|| unsafe { (self.w.ucp.ucp_put_nbx)(ep, src[start..].as_ptr().cast(), n, raddr, rkey, &param) });
            self.w.wait(started, || format!("put of {n} bytes to PE {pe} at offset {:#x}", offset + start))
        })?;
        // Counted after it was issued: a flush started after a quiet read this count
        // covers the put.
        self.puts[pe].fetch_add(1, Ordering::Release);
        Ok(())
    }

    fn get(&self, pe: usize, offset: usize, dst: &mut [u8]) -> Result<()> {
        if dst.is_empty() {
            return Ok(());
        }
        let param = ffi::ucp_request_param_t::empty();
        let base = dst.as_mut_ptr();
        self.pieces(pe, offset, dst.len(), |ep, raddr, rkey, start, n| {
            // SAFETY: `base+start..+n` lies in `dst`, writable and alive until the
            // request completes (waited for here).
            let started = self.w.gated(|| unsafe { (self.w.ucp.ucp_get_nbx)(ep, base.add(start).cast(), n, raddr, rkey, &param) });
            self.w.wait(started, || format!("get of {n} bytes from PE {pe} at offset {:#x}", offset + start))
        })
    }

    unsafe fn get_nbi(&self, pe: usize, offset: usize, dst: *mut u8, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        let param = ffi::ucp_request_param_t::empty();
        self.pieces(pe, offset, len, |ep, raddr, rkey, start, n| {
            // SAFETY: `dst+start..+n` lies in the caller's buffer, which stays valid until
            // the quiet that waits for this request (the caller's promise).
            let started = self.w.gated(|| unsafe { (self.w.ucp.ucp_get_nbx)(ep, dst.add(start).cast(), n, raddr, rkey, &param) });
            match classify(started) {
                Started::Done => Ok(()),
                Started::Failed(st) => Err(self.w.failure(st, || format!("get of {n} bytes from PE {pe} at offset {:#x}", offset + start))),
                Started::Request(req) => {
                    self.in_flight.lock().unwrap_or_else(|p| p.into_inner()).push(InFlight { pe, req: req as usize, _words: None });
                    Ok(())
                }
            }
        })
    }

    fn store_word(&self, pe: usize, offset: usize, width: usize, value: u64) -> Result<()> {
        self.amo(pe, offset, width, AmoOp::Set, value, 0).map(|_| ())
    }

    fn load_word(&self, pe: usize, offset: usize, width: usize) -> Result<u64> {
        self.amo(pe, offset, width, AmoOp::Fetch, 0, 0)
    }

    fn amo(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64, compare: u64) -> Result<u64> {
        match width {
            4 | 8 => {
                let operand = if op == AmoOp::Fetch { 0 } else { operand };
                self.atomic(pe, offset, width, ucx_op(op), operand, compare)
            }
            1 | 2 => self.narrow_amo(pe, offset, width, op, operand, compare),
            w => Err(Error::Transport { call: "ucx atomic", detail: format!("word width {w} is not 1, 2, 4 or 8"), pe: self.w.my_pe }),
        }
    }

    fn amo_post(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64) -> Result<()> {
        match (width, op) {
            // UCX posts add, and, or and xor; a swap (set) needs its reply buffer.
            (4 | 8, AmoOp::FetchAdd | AmoOp::FetchAnd | AmoOp::FetchOr | AmoOp::FetchXor) => {
                self.atomic_post(pe, offset, width, ucx_op(op), operand)
            }
            (4 | 8, AmoOp::Set) => self.swap_post(pe, offset, width, operand),
            _ => self.amo(pe, offset, width, op, operand, 0).map(drop),
        }
    }

    fn signal_post(&self, pe: usize, offset: usize, width: usize, op: AmoOp, operand: u64) -> Result<()> {
        match (width, op) {
            (8, AmoOp::Set | AmoOp::FetchAdd) => self.signal_put(pe, 0, &[], offset, op, operand),
            (4 | 8, AmoOp::FetchAdd | AmoOp::FetchAnd | AmoOp::FetchOr | AmoOp::FetchXor) => {
                self.atomic_post_uncounted(pe, offset, width, ucx_op(op), operand)
            }
            (4, AmoOp::Set) => self.swap_post(pe, offset, width, operand),
            _ => self.amo(pe, offset, width, op, operand, 0).map(drop),
        }
    }

    fn signal_put(&self, pe: usize, offset: usize, data: &[u8], sig_offset: usize, op: AmoOp, value: u64) -> Result<()> {
        match signal::op_code(op) {
            Some(code) if data.len() <= signal::MAX_DATA => {
                if self.closed.load(Ordering::Relaxed) {
                    return Err(Error::Transport { call: "ucx", detail: format!("operation to PE {pe} after finalize"), pe: self.w.my_pe });
                }
                signal::send(&self.w, self.eps[pe], pe, &signal::encode(offset, data, sig_offset, value, code))
            }
            _ => {
                self.put(pe, offset, data)?;
                self.fence()?;
                self.signal_post(pe, sig_offset, 8, op, value)
            }
        }
    }

    fn fence(&self) -> Result<()> {
        // SAFETY: live worker.
        let st = self.w.gated(|| unsafe { (self.w.ucp.ucp_worker_fence)(self.w.worker) });
        if st != ffi::UCS_OK {
            return Err(self.w.failure(st, || "fence".into()));
        }
        Ok(())
    }

    fn quiet(&self, pe: Option<usize>) -> Result<()> {
        let param = ffi::ucp_request_param_t::empty();
        let pes = match pe {
            Some(pe) => pe..pe + 1,
            None => 0..self.n_pes,
        };
        // Start a flush on every endpoint with puts no completed flush covers, then wait
        // for all of them (the round trips overlap). Another thread's flush still in
        // flight covers nothing yet, so two threads' quiets may both flush: never neither.
        let mut started = Vec::new();
        for pe in pes.filter(|&pe| !self.eps[pe].is_null()) {
            let issued = self.puts[pe].load(Ordering::Acquire);
            if self.flushed[pe].load(Ordering::Acquire) < issued {
                // SAFETY: live endpoint.
                started.push((pe, issued, self.w.gated(|| unsafe { (self.w.ucp.ucp_ep_flush_nbx)(self.eps[pe], &param) })));
            }
        }
        let mut outcome = Ok(());
        // Gets and sets left in flight (to the PEs this quiet covers) complete here too.
        let left: Vec<InFlight> = {
            let mut all = self.in_flight.lock().unwrap_or_else(|p| p.into_inner());
            let (mine, rest) = all.drain(..).partition(|r| pe.is_none_or(|q| q == r.pe));
            *all = rest;
            mine
        };
        for r in left {
            if let Err(e) = self.w.wait(r.req as *mut c_void, || format!("non-blocking get or atomic set to PE {}", r.pe)) {
                outcome = outcome.and(Err(e));
            }
        }
        for (pe, issued, s) in started {
            match self.w.wait(s, || format!("flush of the endpoint to PE {pe}")) {
                Ok(()) => {
                    self.flushed[pe].fetch_max(issued, Ordering::Release);
                }
                // Every started flush is waited for; the first failure is reported.
                Err(e) => outcome = outcome.and(Err(e)),
            }
        }
        outcome
    }

    fn direct_address(&self, _pe: usize, _offset: usize) -> Option<usize> {
        None
    }

    fn driver(&self) -> Option<Arc<dyn notify::Drive>> {
        Some(self.w.clone())
    }
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("my_pe", &self.my_pe).finish_non_exhaustive()
    }
}

/// A thread of this PE polling in a wait progresses the worker itself, and the progress
/// thread stands back meanwhile (as it does for [`Worker::wait`]).
impl notify::Drive for Worker {
    fn enter(&self) {
        self.standby.enter();
    }

    #[inline]
    fn drive(&self) {
        self.progress();
    }

    fn leave(&self, to_sleep: bool) {
        self.standby.leave(to_sleep);
    }
}

impl SegmentHook for UcxTransport {
    fn segment_added(&self, boot: &mut dyn Bootstrap, offset: usize, len: usize) -> Result<()> {
        let w = &self.w;
        let mut mp: ffi::ucp_mem_map_params_t = zeroed();
        mp.field_mask = ffi::UCP_MEM_MAP_PARAM_FIELD_ADDRESS | ffi::UCP_MEM_MAP_PARAM_FIELD_LENGTH;
        mp.address = (w.my_base + offset) as *mut c_void;
        mp.length = len;
        let mut memh: ffi::ucp_mem_h = std::ptr::null_mut();
        // SAFETY: the range is this PE's mapped heap segment, which stays mapped while the
        // registration lives (unmapped in Drop, before the heap goes).
        let st = unsafe { (w.ucp.ucp_mem_map)(w.context, &mp, &mut memh) };
        let mapped = w.check("symmetric heap registration: ucp_mem_map", st);
        let mut packed = Vec::new();
        if mapped.is_ok() {
            let mut buf: *mut c_void = std::ptr::null_mut();
            let mut size = 0usize;
            // SAFETY: live context and memh; the buffer is copied, then released.
            let st = unsafe { (w.ucp.ucp_rkey_pack)(w.context, memh, &mut buf, &mut size) };
            if st == ffi::UCS_OK {
                packed.push(1u8);
                // SAFETY: UCX returned `size` readable bytes at `buf`.
                packed.extend_from_slice(unsafe { std::slice::from_raw_parts(buf as *const u8, size) });
                // SAFETY: released once.
                unsafe { (w.ucp.ucp_rkey_buffer_release)(buf) };
            }
        }
        if packed.is_empty() {
            packed.push(0);
        } else {
            // Before the exchange: a peer may send into it as soon as it has the key.
            self.sink.add_segment(offset, len);
        }
        let all = boot.allgather(&packed)?;
        mapped?;
        if let Some(pe) = all.iter().position(|b| b.first() != Some(&1)) {
            return Err(Error::Transport {
                call: "symmetric heap registration",
                detail: format!("PE {pe} could not register its segment at offset {offset:#x} with UCX"),
                pe: w.my_pe,
            });
        }
        let mut rkeys = vec![std::ptr::null_mut(); self.n_pes];
        for (pe, blob) in all.iter().enumerate() {
            if !self.eps[pe].is_null() {
                // SAFETY: live endpoint to `pe`; `blob` is the rkey `pe` packed.
                let st = w.gated(|| unsafe { (w.ucp.ucp_ep_rkey_unpack)(self.eps[pe], blob[1..].as_ptr().cast(), &mut rkeys[pe]) });
                w.check("symmetric heap registration: ucp_ep_rkey_unpack", st)?;
            }
        }
        let mut regions = self.regions.write().unwrap_or_else(|p| p.into_inner());
        regions.push(Region { offset, len, memh, rkeys });
        regions.sort_by_key(|r| r.offset);
        Ok(())
    }

    fn finalize(&self, boot: &mut dyn Bootstrap) -> Result<()> {
        self.close(boot)
    }

    fn heap_closing(&self) {
        self.stop_progress();
    }
}

impl UcxTransport {
    /// Ends the progress thread (it wakes waiters in the heap, which is about to go).
    fn stop_progress(&self) {
        self.w.stop.store(true, Ordering::Release);
        if let Some(h) = self.progress.lock().unwrap_or_else(|p| p.into_inner()).take() {
            end_thread(h, self.w.my_pe);
        }
    }
}

/// Waits for a progress thread told to stop (it sees the flag within a millisecond), for
/// at most a second: a thread stuck inside UCX is left behind with a warning rather than
/// hanging finalize or `global_exit`. Called from the thread itself, returns at once.
pub(crate) fn end_thread(h: JoinHandle<()>, pe: usize) {
    if h.thread().id() == std::thread::current().id() {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(1);
    while !h.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    if h.is_finished() {
        let _ = h.join();
    } else {
        tracing::warn!(pe, "the UCX progress thread did not stop within 1 s; leaving it");
    }
}

impl Drop for UcxTransport {
    fn drop(&mut self) {
        self.stop_progress();
        let w = &self.w;
        let regions = std::mem::take(&mut *self.regions.write().unwrap_or_else(|p| p.into_inner()));
        for r in regions {
            for k in r.rkeys.into_iter().filter(|k| !k.is_null()) {
                // SAFETY: unpacked once, destroyed once.
                unsafe { (w.ucp.ucp_rkey_destroy)(k) };
            }
            // SAFETY: mapped once, unmapped once; nothing uses it after this.
            unsafe { (w.ucp.ucp_mem_unmap)(w.context, r.memh) };
        }
        if !self.closed.swap(true, Ordering::SeqCst) {
            // Not finalized (a failed init or a panic): close the endpoints without
            // waiting for peers that may be gone.
            w.close_endpoints(&self.eps, true);
        }
        // SAFETY: no thread uses the worker any more (progress thread joined, endpoints
        // closed).
        unsafe { w.destroy() };
    }
}

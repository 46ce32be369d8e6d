//! The host proxy of a GPU PE: carries out the device API's operations on peers the GPU
//! cannot address (`rshmem_device_proxy.cuh` describes the device half of the protocol).
//!
//! Kernels write requests into a ring in pinned, device-mapped host memory; one host
//! thread per PE takes them strictly in ticket order and carries each out through the
//! PE's transport table (for such peers, the staged UCX transport): puts from device
//! memory are first copied device to host into a pinned staging buffer, gets land there
//! and are copied host to device, atomics go to the transport (whose target runs them as a
//! one-thread kernel on its GPU). Results of requests a thread waits for go back in the
//! slot's completion words. After a burst (or every [`QUIET_EVERY`] requests) the proxy
//! quiets the transports and publishes how many requests are complete, which is what the
//! device's quiet waits for.
//!
//! Engine-explicit requests (`rshmem_device_engines.cuh`) share the ring: remote-engine
//! puts, gets and atomics (flag `FLAG_REMOTE`) go over the remote transport even to mapped
//! peers; copy-engine copies (`KIND_CE_*`) are issued with `Cuda::copy_engine_async` on the proxy's
//! own stream between mapped device addresses, each followed by an event; a batch
//! (`KIND_BATCH`) points at several such requests in device memory. A ticket counts as
//! complete (control word 0) once the transports have been quieted after it and every
//! copy-engine copy of it and before it has fired its event; control word 2 says up to
//! which ticket the copy-engine copies are complete.
//!
//! A request the proxy cannot carry out (out of range, a failed copy, a transport error)
//! ends the proxy with a message on stderr and status 2 in the control words: every
//! device wait on the proxy then traps with a message instead of hanging.

use super::{AmoOp, Transport, TransportTable};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::gpu::cuda::{DevPtr, Event, PinnedHost, Stream};
use crate::gpu::Gpu;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Slots in the request ring (a power of two).
pub const SLOTS: usize = 1024;
/// Bytes of device memory the proxy needs in the heap: the ticket counter and the engines'
/// bookkeeping words (`RSHMEMI_PXW_*`), one reach byte per PE, then one u64 per PE (the
/// last remote-engine ticket to it), each part rounded up to 256 bytes.
pub fn device_area_size(n_pes: usize) -> usize {
    256 + crate::heap::align_up(n_pes, 256) + crate::heap::align_up(8 * n_pes, 256)
}
/// The proxy quiets and reports completion at least this often while busy.
pub const QUIET_EVERY: u64 = 256;
/// Puts of up to this many bytes that stand next to each other in the ring, to one PE, go
/// out together ([`Transport::put_gather`]: one message for many over the staged protocol).
const GATHER_PIECE: usize = 64 << 10;
/// The most requests one gathered run takes.
const GATHER_MAX: usize = 256;
/// Pieces of a large put in flight at once: while one piece goes out over the transport,
/// the next ones are copied from the GPU into the other parts of the staging buffer.
const PIPELINE: usize = 4;

const KIND_PUT: u32 = 1;
const KIND_GET: u32 = 2;
const KIND_AMO: u32 = 3;
const KIND_CE_PUT: u32 = 4;
const KIND_CE_GET: u32 = 5;
const KIND_BATCH: u32 = 6;
const KIND_CE_PUT2D: u32 = 7;
const KIND_CE_GET2D: u32 = 8;
const KIND_RELAY_PUT: u32 = 9;
const KIND_RELAY_GET: u32 = 10;
const FLAG_WAIT: u32 = 1;
const FLAG_REMOTE: u32 = 2;
const INLINE: usize = 64;
/// Reach flags of a PE (`RSHMEMI_REACH_*`).
const REACH_PROXY: u8 = 1;
const REACH_REMOTE: u8 = 2;
const REACH_CE: u8 = 4;
/// The most entries one batch may carry.
pub const MAX_BATCH: usize = 1 << 16;

/// Must match `rshmemi_proxy_slot` in `rshmem_device_proxy.cuh`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Slot {
    ready: u64,
    kind: u32,
    pe: i32,
    offset: u64,
    len: u64,
    local: u64,
    operand: u64,
    compare: u64,
    amo: u32,
    flags: u32,
    data: [u64; 8],
}

/// Must match `rshmemi_proxy_done`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
struct Done {
    ticket: u64,
    value: u64,
    released: u64,
    pad: u64,
}

/// One request of a batch; must match `rshmemx_batch_entry` in `rshmem_device_engines.cuh`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct BatchEntry {
    kind: u32,
    pe: i32,
    offset: u64,
    local: u64,
    len: u64,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 128 && std::mem::size_of::<Done>() == 32 && std::mem::size_of::<BatchEntry>() == 32);

/// Control word indices.
const CTRL_COMPLETED: usize = 0;
const CTRL_STATUS: usize = 1;
const CTRL_CE_DONE_UPTO: usize = 2;
const STATUS_RUNNING: u64 = 1;
const STATUS_GONE: u64 = 2;

struct Inner {
    gpu: Arc<Gpu>,
    ring: PinnedHost,
    done: PinnedHost,
    control: PinnedHost,
    transports: TransportTable,
    /// The transport of remote-engine requests (reaching the PEs of `reach_remote`), if any.
    remote: Option<Arc<dyn Transport>>,
    /// Every transport a completion quiets (the table's and the remote engine's).
    quiet_set: Vec<Arc<dyn Transport>>,
    /// Per PE: reached through this proxy.
    through: Vec<bool>,
    /// Per PE: reachable by remote-engine requests.
    reach_remote: Vec<bool>,
    my_pe: usize,
    n_pes: usize,
    /// Transport offset of the device heap's first byte (the host runtime area's size).
    host_offset: usize,
    /// Bytes of the pinned staging buffer (`RSHMEM_PROXY_STAGING`): gets and relayed
    /// transfers go in pieces of this size, large puts in [`PIPELINE`] parts of it.
    staging: usize,
    /// The host's CPUs that no PE is bound to (`RSHMEM_SPARE_CPUS`): the thread runs there
    /// when there are any.
    spare_cpus: Vec<usize>,
    /// Bytes of one PE's device heap span; requests beyond it are refused.
    span: usize,
    stop: AtomicBool,
    /// Requests carried out (the next ticket).
    carried: AtomicU64,
}

/// One GPU PE's proxy thread and its ring.
pub struct Proxy {
    inner: Arc<Inner>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy").field("pe", &self.inner.my_pe).field("carried", &self.inner.carried.load(Ordering::Relaxed)).finish()
    }
}

impl Proxy {
    /// Sets up the ring, tells the device which PEs (`through[pe]`) go through it and which
    /// the remote engine reaches (through `remote`, the PEs it serves), and starts the
    /// thread. `device_area` is [`device_area_size`] bytes of this PE's device heap;
    /// `host_offset` is the transport offset of the device heap's first byte. From `config`:
    /// the staging buffer's size (`RSHMEM_PROXY_STAGING`) and the CPUs the thread runs on
    /// (`RSHMEM_SPARE_CPUS`).
    pub fn start(
        gpu: Arc<Gpu>,
        transports: TransportTable,
        through: &[bool],
        remote: Option<(Arc<dyn Transport>, Vec<bool>)>,
        device_area: DevPtr,
        host_offset: usize,
        config: &Config,
    ) -> Result<Proxy> {
        let cuda = gpu.cuda.clone();
        cuda.bind()?;
        let my_pe = cuda.pe();
        let n_pes = through.len();
        let ring = cuda.pinned_host(SLOTS * std::mem::size_of::<Slot>())?;
        let done = cuda.pinned_host(SLOTS * std::mem::size_of::<Done>())?;
        let control = cuda.pinned_host(64)?;
        let reach_remote: Vec<bool> = match &remote {
            Some((_, serves)) => (0..n_pes).map(|pe| pe != my_pe && serves.get(pe).copied().unwrap_or(false)).collect(),
            None => vec![false; n_pes],
        };
        let flags: Vec<u8> = (0..n_pes)
            .map(|pe| {
                let through = through[pe] && pe != my_pe;
                let mut f = if through { REACH_PROXY } else { REACH_CE };
                if reach_remote[pe] {
                    f |= REACH_REMOTE;
                }
                f
            })
            .collect();
        let remote = remote.map(|(t, _)| t);
        let mut quiet_set = transports.distinct();
        if let Some(r) = &remote {
            if !quiet_set.iter().any(|t| Arc::ptr_eq(t, r)) {
                quiet_set.push(r.clone());
            }
        }
        cuda.zero(device_area, device_area_size(n_pes))?;
        cuda.htod(device_area + 256, &flags)?;
        let span = gpu.heap.stride();
        let inner = Arc::new(Inner {
            gpu: gpu.clone(),
            ring,
            done,
            control,
            transports,
            remote,
            quiet_set,
            through: flags.iter().map(|&f| f & REACH_PROXY != 0).collect(),
            reach_remote,
            my_pe,
            n_pes,
            host_offset,
            staging: config.proxy_staging,
            spare_cpus: crate::bootstrap::binding::configured_spare_cpus(config),
            span,
            stop: AtomicBool::new(false),
            carried: AtomicU64::new(0),
        });
        inner.control_word(CTRL_STATUS).store(STATUS_RUNNING, Ordering::Release);
        let (r, d, c) = (inner.ring.device(), inner.done.device(), inner.control.device());
        gpu.update_state(|st| {
            st.proxy_ring = r;
            st.proxy_done = d;
            st.proxy_control = c;
            st.proxy_head = device_area;
            st.proxy_peers = device_area + 256;
            st.proxy_slots = SLOTS as u64;
            st.proxied = flags.iter().filter(|&&f| f & REACH_PROXY != 0).count() as i32;
        })?;
        let t = inner.clone();
        let handle = std::thread::Builder::new()
            .name(format!("rshmem-gpu-proxy-pe{my_pe}"))
            .spawn(move || t.run())
            .map_err(|e| Error::os("start the GPU proxy thread", e))?;
        tracing::debug!(
            pe = my_pe,
            "GPU proxy up: {} peers through it, {} reachable by the remote engine",
            flags.iter().filter(|&&f| f & REACH_PROXY != 0).count(),
            flags.iter().filter(|&&f| f & REACH_REMOTE != 0).count()
        );
        Ok(Proxy { inner, thread: Mutex::new(Some(handle)) })
    }

    /// Whether the device API reaches `pe` through this proxy.
    pub fn serves(&self, pe: usize) -> bool {
        self.inner.through.get(pe).copied().unwrap_or(false)
    }

    /// Whether remote-engine requests reach `pe`.
    pub fn reaches_remote(&self, pe: usize) -> bool {
        self.inner.reach_remote.get(pe).copied().unwrap_or(false)
    }

    /// The remote engine's transport, if this PE has one.
    pub(crate) fn remote_engine(&self) -> Option<&dyn Transport> {
        self.inner.remote.as_deref()
    }

    /// Carries out what is in the ring, completes it, and ends the thread. Idempotent.
    pub fn stop(&self) {
        self.inner.stop.store(true, Ordering::Release);
        if let Some(h) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = h.join();
        }
        // Kernels that still wait on the proxy now trap instead of hanging.
        if self.inner.control_word(CTRL_STATUS).load(Ordering::Acquire) == STATUS_RUNNING {
            self.inner.control_word(CTRL_STATUS).store(STATUS_GONE, Ordering::Release);
        }
        let _ = self.inner.gpu.update_state(|st| st.proxy_ring = 0);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.stop();
    }
}

impl Inner {
    fn control_word(&self, i: usize) -> &AtomicU64 {
        assert!(i < 8);
        // SAFETY: the control block is 64 bytes of pinned memory owned by self, 8-aligned
        // (page-aligned allocation); the device reads it with volatile loads only.
        unsafe { &*(self.control.host() as *const AtomicU64).add(i) }
    }

    fn slot_ready(&self, idx: usize) -> &AtomicU64 {
        // SAFETY: idx < SLOTS; `ready` is the first word of the 128-byte slot, aligned.
        unsafe { &*(self.ring.host() as *const Slot).add(idx).cast::<AtomicU64>() }
    }

    fn read_slot(&self, idx: usize) -> Slot {
        // SAFETY: idx < SLOTS, inside the ring; the device finished writing this slot
        // before it stored `ready` (read with acquire by the caller), and does not touch
        // it again until the slot is released.
        unsafe { std::ptr::read_volatile((self.ring.host() as *const Slot).add(idx)) }
    }

    fn done_word(&self, idx: usize, field: usize) -> &AtomicU64 {
        assert!(idx < SLOTS && field < 4);
        // SAFETY: inside the done array (32-byte entries of u64 words), aligned.
        unsafe { &*(self.done.host() as *const AtomicU64).add(idx * 4 + field) }
    }

    fn run(self: Arc<Self>) {
        // The idle loop naps for 20 us; with Linux's default timer slack of 50 us for this
        // thread a nap took 93 us on the 2-core VM (40 us with 1 ns of slack: the rest is
        // the wake-up itself), and a request posted meanwhile waited for all of it.
        let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
        match crate::bootstrap::binding::move_helper_thread(&self.spare_cpus) {
            Ok(cpus) => tracing::debug!(pe = self.my_pe, "GPU proxy thread on CPUs {cpus:?}"),
            Err(e) => tracing::debug!(pe = self.my_pe, "GPU proxy thread stays on its PE's CPUs (CPUs {:?} refused: {e})", self.spare_cpus),
        }
        if let Err(e) = self.gpu.cuda.bind() {
            crate::log::line(&format!("rshmem: PE {}: the GPU proxy cannot use the GPU: {e}", self.my_pe));
            self.control_word(CTRL_STATUS).store(STATUS_GONE, Ordering::Release);
            return;
        }
        let msg = match self.serve() {
            Ok(()) => return,
            Err(m) => m,
        };
        crate::log::line(&format!("rshmem: PE {}: the GPU proxy stopped: {msg}", self.my_pe));
        self.control_word(CTRL_STATUS).store(STATUS_GONE, Ordering::Release);
    }

    /// The loop: take tickets in order, carry them out, complete after each burst.
    fn serve(&self) -> std::result::Result<(), String> {
        let mut staging = self.gpu.cuda.pinned_host(self.staging).map_err(|e| format!("no pinned staging buffer: {e}"))?;
        let stream = self.gpu.cuda.stream().map_err(|e| format!("no stream for copy-engine copies: {e}"))?;
        let stage = self.gpu.cuda.stream().map_err(|e| format!("no stream for staging copies: {e}"))?;
        let events = (0..PIPELINE)
            .map(|_| Event::new(self.my_pe))
            .collect::<Result<Vec<_>>>()
            .map_err(|e| format!("no events for staging copies: {e}"))?;
        let mut w = Work {
            staging: staging.as_mut_slice(),
            stage,
            events,
            ce: CopyQueue { stream, in_flight: VecDeque::new(), spare: Vec::new() },
            spent: StagedTime::default(),
        };
        let up = Instant::now();
        let mut next = 0u64;
        let mut pending = 0u64;
        let mut marks = Marks::default();
        let mut idle_since: Option<Instant> = None;
        loop {
            let idx = (next as usize) & (SLOTS - 1);
            if self.slot_ready(idx).load(Ordering::Acquire) == next + 1 {
                let taken = self.carry_out_run(next, &mut w)?;
                next += taken;
                pending += taken;
                self.carried.store(next, Ordering::Relaxed);
                if pending >= QUIET_EVERY {
                    self.complete(next, &mut marks, &w.ce)?;
                    pending = 0;
                }
                if w.ce.retire()? {
                    self.publish(next, &marks, &w.ce);
                }
                idle_since = None;
                continue;
            }
            if pending > 0 {
                self.complete(next, &mut marks, &w.ce)?;
                pending = 0;
            }
            if w.ce.retire()? {
                self.publish(next, &marks, &w.ce);
            }
            if self.stop.load(Ordering::Acquire) {
                w.ce.stream.synchronize().map_err(|e| format!("copy-engine copies at stop: {e}"))?;
                w.ce.retire()?;
                self.publish(next, &marks, &w.ce);
                w.spent.report(self.my_pe, up);
                return Ok(());
            }
            // Spin briefly after activity (requests come in bursts) and while copies are
            // in flight, then nap.
            let since = *idle_since.get_or_insert_with(Instant::now);
            if !w.ce.in_flight.is_empty() || since.elapsed() < Duration::from_micros(50) {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }

    /// Quiets every transport, then reports the requests before `next` complete (as far
    /// as the copy engine's copies allow).
    fn complete(&self, next: u64, marks: &mut Marks, ce: &CopyQueue) -> std::result::Result<(), String> {
        for t in &self.quiet_set {
            t.quiet(None).map_err(|e| format!("quiet after request {next}: {e}"))?;
        }
        marks.quiet_upto = next;
        self.publish(next, marks, ce);
        Ok(())
    }

    /// Publishes completion: every ticket below the first copy still in flight, and below
    /// the transports' last quiet, is complete; copy-engine copies are complete below the
    /// first in flight (all taken so far, `next`, when none is).
    fn publish(&self, next: u64, marks: &Marks, ce: &CopyQueue) {
        let first = ce.in_flight.front().map(|(t, _)| *t);
        let completed = first.map_or(marks.quiet_upto, |f| f.min(marks.quiet_upto));
        self.control_word(CTRL_CE_DONE_UPTO).store(first.unwrap_or(next), Ordering::Release);
        self.control_word(CTRL_COMPLETED).store(completed, Ordering::Release);
    }

    /// The transport of a request: the remote engine's when `remote`, else the table's.
    fn transport_for(&self, pe: usize, remote: bool) -> std::result::Result<&dyn Transport, String> {
        if !remote {
            return Ok(self.transports.to(pe));
        }
        match &self.remote {
            Some(t) if self.reach_remote[pe] => Ok(&**t),
            _ => Err(format!("no remote transport reaches PE {pe} (RSHMEM_REMOTE_ENGINE=ucx builds one to every peer)")),
        }
    }

    /// The transport that relays through `relay` (the table's, or the remote engine's).
    fn relay_transport(&self, relay: usize) -> Result<&dyn Transport> {
        self.transports.relay_path(relay, self.remote.as_deref()).ok_or_else(|| Error::Unsupported {
            call: "rshmemx_relay",
            detail: format!("no staged UCX path reaches the relay PE {relay} (a relay on another host, or RSHMEM_REMOTE_ENGINE=ucx)"),
        })
    }

    /// A relayed put or get of `len` bytes between device memory at `local` and transport
    /// offset `at` on `pe`, through `relay`, staged through host memory in pieces.
    #[allow(clippy::too_many_arguments)]
    fn relayed_rma(&self, put: bool, relay: usize, pe: usize, at: usize, local: u64, len: usize, staging: &mut [u8]) -> Result<()> {
        let t = self.relay_transport(relay)?;
        let cuda = &self.gpu.cuda;
        let most = staging.len();
        for done in (0..len).step_by(most) {
            let buf = &mut staging[..(len - done).min(most)];
            if put {
                cuda.dtoh(buf, local + done as u64)?;
                t.relay_put(relay, pe, at + done, buf)?;
            } else {
                t.relay_get(relay, pe, at + done, buf)?;
                cuda.htod(local + done as u64, buf)?;
            }
        }
        Ok(())
    }

    /// A bulk put (`put`) or get of `len` bytes between device memory at `local` and
    /// transport offset `at` on `pe`, staged through host memory in pieces.
    #[allow(clippy::too_many_arguments)]
    fn staged_rma(&self, t: &dyn Transport, put: bool, pe: usize, at: usize, local: u64, len: usize, w: &mut Work) -> Result<()> {
        if put {
            return self.staged_put(t, pe, at, local, len, w);
        }
        let cuda = &self.gpu.cuda;
        let mut done = 0;
        while done < len {
            let n = (len - done).min(w.staging.len());
            let buf = &mut w.staging[..n];
            t.get(pe, at + done, buf)?;
            cuda.htod(local + done as u64, buf)?;
            done += n;
        }
        Ok(())
    }

    /// A bulk put from device memory, pipelined: the staging buffer is [`PIPELINE`] parts,
    /// and while one part goes out over the transport the GPU copies the next pieces into
    /// the others.
    fn staged_put(&self, t: &dyn Transport, pe: usize, at: usize, local: u64, len: usize, w: &mut Work) -> Result<()> {
        let Work { staging, stage, events, spent, .. } = w;
        let began = Instant::now();
        let piece = staging.len() / PIPELINE;
        let mut parts: Vec<&mut [u8]> = staging.chunks_mut(piece).collect();
        let pieces = len.div_ceil(piece);
        let size = |k: usize| (len - k * piece).min(piece);
        let issue = |k: usize, parts: &mut [&mut [u8]]| -> Result<()> {
            let part = &mut parts[k % PIPELINE][..size(k)];
            // SAFETY: part k % PIPELINE is read (by the put of piece k) only once its event,
            // recorded right after this copy, has fired, and written again (by the copy of
            // piece k + PIPELINE) only after that put has returned: the transport is done
            // with its bytes when `put` returns.
            unsafe { self.gpu.cuda.dtoh_async(part, local + (k * piece) as u64, stage) }?;
            events[k % PIPELINE].record(stage)
        };
        for k in 0..pieces.min(PIPELINE) {
            issue(k, &mut parts)?;
        }
        for k in 0..pieces {
            let t0 = Instant::now();
            events[k % PIPELINE].wait()?;
            let t1 = Instant::now();
            t.put(pe, at + k * piece, &parts[k % PIPELINE][..size(k)])?;
            spent.copy_wait += t1 - t0;
            spent.transport += t1.elapsed();
            if k + PIPELINE < pieces {
                issue(k + PIPELINE, &mut parts)?;
            }
        }
        spent.puts += 1;
        spent.bytes += len as u64;
        spent.busy += began.elapsed();
        Ok(())
    }

    /// Carries out the request of ticket `first` and, when it is a small put, the puts to
    /// the same PE that stand ready right behind it, together; returns how many tickets
    /// it took.
    fn carry_out_run(&self, first: u64, w: &mut Work) -> std::result::Result<u64, String> {
        let idx = (first as usize) & (SLOTS - 1);
        let s = self.read_slot(idx);
        let gatherable = |n: &Slot| n.kind == KIND_PUT && n.flags & FLAG_REMOTE == 0 && n.len as usize <= GATHER_PIECE;
        if !gatherable(&s) {
            self.carry_out(first, idx, &s, w)?;
            return Ok(1);
        }
        let mut run = vec![(first, idx, s)];
        let mut bytes = s.len as usize;
        while run.len() < GATHER_MAX {
            let ticket = first + run.len() as u64;
            let i = (ticket as usize) & (SLOTS - 1);
            if self.slot_ready(i).load(Ordering::Acquire) != ticket + 1 {
                break;
            }
            let n = self.read_slot(i);
            if !gatherable(&n) || n.pe != s.pe || bytes + n.len as usize > self.staging {
                break;
            }
            bytes += n.len as usize;
            run.push((ticket, i, n));
        }
        if run.len() == 1 {
            self.carry_out(first, idx, &s, w)?;
            return Ok(1);
        }
        self.put_run(&run, w)?;
        Ok(run.len() as u64)
    }

    /// Puts a run of small puts to one PE (tickets in order) as one gathered put: payloads
    /// copied into the staging buffer (from the slot, or from the GPU with one
    /// synchronization for all), then [`Transport::put_gather`].
    fn put_run(&self, run: &[(u64, usize, Slot)], w: &mut Work) -> std::result::Result<(), String> {
        let what = describe;
        let mut ranges = Vec::with_capacity(run.len());
        let (mut pos, mut from_gpu, mut pe) = (0usize, false, 0usize);
        for (ticket, _, s) in run {
            let (p, offset, len) = self.target(s.pe, s.offset, s.len).map_err(|m| format!("{}: {m}", what(*ticket, s)))?;
            pe = p;
            let part = &mut w.staging[pos..pos + len];
            if s.local == 0 {
                if len > INLINE {
                    return Err(format!("{}: inline payload over {INLINE} bytes", what(*ticket, s)));
                }
                part.copy_from_slice(&inline_bytes(s)[..len]);
            } else {
                // SAFETY: these staging bytes are left alone until the stream is synchronized
                // below, before anything reads them.
                unsafe { self.gpu.cuda.dtoh_async(part, s.local, &w.stage) }.map_err(|e| format!("{}: {e}", what(*ticket, s)))?;
                from_gpu = true;
            }
            ranges.push((self.host_offset + offset, pos, len));
            pos += len;
        }
        let (first, last) = (run[0].0, run[run.len() - 1].0);
        let gathered = |e: Error| format!("requests {first} to {last} (puts to PE {pe}, gathered): {e}");
        if from_gpu {
            w.stage.synchronize().map_err(gathered)?;
        }
        let pieces: Vec<(usize, &[u8])> = ranges.iter().map(|&(at, p, len)| (at, &w.staging[p..p + len])).collect();
        let t = self.transport_for(pe, false).map_err(|m| format!("requests {first} to {last}: {m}"))?;
        t.put_gather(pe, &pieces).map_err(gathered)?;
        for (ticket, idx, s) in run {
            self.answer(*ticket, *idx, s.flags, 0);
        }
        Ok(())
    }

    /// Issues a copy-engine copy (`put`: local to `pe`, else `pe` to local) of ticket
    /// `ticket`; its event is recorded by the caller ([`CopyQueue::mark`]).
    fn ce_copy(&self, ce: &CopyQueue, put: bool, pe: usize, offset: usize, local: u64, len: usize) -> Result<()> {
        let peer = self.gpu.heap.base(pe) + offset as u64;
        let (dst, src) = if put { (peer, local) } else { (local, peer) };
        self.gpu.cuda.copy_engine_async(dst, src, len, &ce.stream)
    }

    /// Checks a request's PE and heap range.
    fn target(&self, pe: i32, offset: u64, len: u64) -> std::result::Result<(usize, usize, usize), String> {
        let pe = usize::try_from(pe).ok().filter(|&p| p < self.n_pes).ok_or("no such PE")?;
        let (offset, len) = (offset as usize, len as usize);
        if offset.checked_add(len).is_none_or(|end| end > self.span) {
            return Err("outside the symmetric heap".into());
        }
        Ok((pe, offset, len))
    }

    /// Carries out a batch of `count` entries at device address `entries`; answers the
    /// waiting thread once they are read (its storage is then free).
    fn carry_out_batch(&self, ticket: u64, idx: usize, s: &Slot, w: &mut Work) -> std::result::Result<(), String> {
        let count = s.len as usize;
        if count == 0 || count > MAX_BATCH {
            return Err(format!("batch of ticket {ticket}: {count} entries (1 to {MAX_BATCH} allowed)"));
        }
        let mut raw = vec![0u8; count * std::mem::size_of::<BatchEntry>()];
        self.gpu.cuda.dtoh(&mut raw, s.local).map_err(|e| format!("batch of ticket {ticket}: reading its entries: {e}"))?;
        let entries: Vec<BatchEntry> = raw
            .chunks_exact(std::mem::size_of::<BatchEntry>())
            .map(|c| {
                let word = |i: usize| u64::from_le_bytes(c[i..i + 8].try_into().expect("8 bytes"));
                BatchEntry {
                    kind: u32::from_le_bytes(c[0..4].try_into().expect("4 bytes")),
                    pe: i32::from_le_bytes(c[4..8].try_into().expect("4 bytes")),
                    offset: word(8),
                    local: word(16),
                    len: word(24),
                }
            })
            .collect();
        self.answer(ticket, idx, s.flags, 0);
        let mut copies = false;
        for (i, e) in entries.iter().enumerate() {
            let what = || {
                format!(
                    "batch of ticket {ticket}, entry {i} (kind {}, PE {}, {} bytes at heap offset {:#x})",
                    e.kind, e.pe, e.len, e.offset
                )
            };
            let (pe, offset, len) = self.target(e.pe, e.offset, e.len).map_err(|m| format!("{}: {m}", what()))?;
            match e.kind {
                KIND_PUT | KIND_GET => {
                    let t = self.transport_for(pe, true).map_err(|m| format!("{}: {m}", what()))?;
                    self.staged_rma(t, e.kind == KIND_PUT, pe, self.host_offset + offset, e.local, len, w)
                        .map_err(|err| format!("{}: {err}", what()))?;
                }
                KIND_CE_PUT | KIND_CE_GET => {
                    if self.through[pe] {
                        return Err(format!("{}: the copy engine reaches mapped peers only", what()));
                    }
                    self.ce_copy(&w.ce, e.kind == KIND_CE_PUT, pe, offset, e.local, len).map_err(|err| format!("{}: {err}", what()))?;
                    copies = true;
                }
                k => return Err(format!("{}: unknown kind {k} in a batch", what())),
            }
        }
        if copies {
            w.ce.mark(ticket, self.my_pe).map_err(|e| format!("batch of ticket {ticket}: {e}"))?;
        }
        Ok(())
    }

    /// Answers a request: its value to a waiting thread, or the slot released.
    fn answer(&self, ticket: u64, idx: usize, flags: u32, value: u64) {
        let round = ticket / SLOTS as u64;
        if flags & FLAG_WAIT != 0 {
            self.done_word(idx, 1).store(value, Ordering::Relaxed);
            self.done_word(idx, 0).store(ticket + 1, Ordering::Release);
        } else {
            self.done_word(idx, 2).store(round + 1, Ordering::Release);
        }
    }

    fn carry_out(&self, ticket: u64, idx: usize, s: &Slot, w: &mut Work) -> std::result::Result<(), String> {
        let s = *s;
        if s.kind == KIND_BATCH {
            return self.carry_out_batch(ticket, idx, &s, w);
        }
        let what = || describe(ticket, &s);
        let (pe, offset, len) = self.target(s.pe, s.offset, s.len).map_err(|m| format!("{}: {m}", what()))?;
        if s.kind == KIND_RELAY_PUT || s.kind == KIND_RELAY_GET {
            return self.carry_out_relay(ticket, idx, &s, (pe, offset, len), w).map_err(|e| format!("{}: {e}", what()));
        }
        let t = self.transport_for(pe, s.flags & FLAG_REMOTE != 0).map_err(|m| format!("{}: {m}", what()))?;
        let at = self.host_offset + offset;
        let moved = |e: Error| format!("{}: {e}", what());
        let value = match s.kind {
            KIND_PUT if s.local == 0 => {
                if len > INLINE {
                    return Err(format!("{}: inline payload over {INLINE} bytes", what()));
                }
                t.put(pe, at, &inline_bytes(&s)[..len]).map_err(moved)?;
                0
            }
            KIND_PUT => {
                self.staged_rma(t, true, pe, at, s.local, len, w).map_err(moved)?;
                0
            }
            KIND_GET if s.local == 0 => {
                if len > 8 {
                    return Err(format!("{}: a value get of more than 8 bytes", what()));
                }
                let mut b = [0u8; 8];
                t.get(pe, at, &mut b[..len]).map_err(moved)?;
                u64::from_le_bytes(b)
            }
            KIND_GET => {
                self.staged_rma(t, false, pe, at, s.local, len, w).map_err(moved)?;
                0
            }
            KIND_AMO => {
                let op = AmoOp::from_code(s.amo.into()).ok_or_else(|| format!("{}: unknown atomic {}", what(), s.amo))?;
                if len != 4 && len != 8 {
                    return Err(format!("{}: atomic width must be 4 or 8", what()));
                }
                t.amo(pe, at, len, op, s.operand, s.compare).map_err(moved)?
            }
            KIND_CE_PUT | KIND_CE_GET => {
                if self.through[pe] {
                    return Err(format!("{}: the copy engine reaches mapped peers only", what()));
                }
                self.ce_copy(&w.ce, s.kind == KIND_CE_PUT, pe, offset, s.local, len).map_err(moved)?;
                w.ce.mark(ticket, self.my_pe).map_err(moved)?;
                0
            }
            KIND_CE_PUT2D | KIND_CE_GET2D => {
                // len: row bytes; operand: rows; compare: destination pitch << 32 | source pitch.
                let put = s.kind == KIND_CE_PUT2D;
                let (rows, dp, sp) = (s.operand as usize, (s.compare >> 32) as usize, (s.compare & 0xffff_ffff) as usize);
                let pitch = if put { dp } else { sp };
                let extent = rows.checked_sub(1).and_then(|r| r.checked_mul(pitch)).and_then(|e| e.checked_add(len));
                if self.through[pe] || rows == 0 || extent.is_none_or(|e| offset + e > self.span) {
                    return Err(format!("{}: a 2-D copy of {rows} rows (pitches {dp}/{sp}) outside the mapped heap", what()));
                }
                let peer = self.gpu.heap.base(pe) + offset as u64;
                let (dst, src) = if put { (peer, s.local) } else { (s.local, peer) };
                self.gpu.cuda.copy2d_async(dst, dp, src, sp, len, rows, &w.ce.stream).map_err(moved)?;
                w.ce.mark(ticket, self.my_pe).map_err(moved)?;
                0
            }
            k => return Err(format!("{}: unknown kind {k}", what())),
        };
        self.answer(ticket, idx, s.flags, value);
        Ok(())
    }

    /// Carries out a relayed put or get (`s.operand`: the relay PE) to `pe`'s heap range.
    fn carry_out_relay(&self, ticket: u64, idx: usize, s: &Slot, (pe, offset, len): (usize, usize, usize), w: &mut Work) -> Result<()> {
        let relay = usize::try_from(s.operand).ok().filter(|&r| r < self.n_pes && r != pe && r != self.my_pe && pe != self.my_pe);
        let relay = relay.ok_or_else(|| Error::InvalidArgument {
            call: "rshmemx_relay",
            arg: "relay_pe",
            detail: format!("relay PE {} for final PE {pe}: the two must differ and neither may be this PE", s.operand),
            pe: self.my_pe,
        })?;
        let at = self.host_offset + offset;
        if s.kind == KIND_RELAY_PUT && s.local == 0 {
            if len > INLINE {
                return Err(Error::InvalidArgument {
                    call: "rshmemx_relay",
                    arg: "n",
                    detail: format!("inline payload over {INLINE} bytes"),
                    pe: self.my_pe,
                });
            }
            self.relay_transport(relay)?.relay_put(relay, pe, at, &inline_bytes(s)[..len])?;
        } else {
            self.relayed_rma(s.kind == KIND_RELAY_PUT, relay, pe, at, s.local, len, w.staging)?;
        }
        self.answer(ticket, idx, s.flags, 0);
        Ok(())
    }
}

/// How error messages name the request of `ticket` in slot `s`.
fn describe(ticket: u64, s: &Slot) -> String {
    format!("request {ticket} (kind {}, PE {}, {} bytes at heap offset {:#x})", s.kind, s.pe, s.len, s.offset)
}

/// The inline payload of a slot, as bytes.
fn inline_bytes(s: &Slot) -> [u8; INLINE] {
    let mut b = [0u8; INLINE];
    for (chunk, word) in b.chunks_exact_mut(8).zip(s.data) {
        chunk.copy_from_slice(&word.to_le_bytes());
    }
    b
}

/// What the proxy loop owns: the staging buffer, the stream of its copies from the GPU
/// with an event per pipelined part, and the copy engine's queue.
struct Work<'a> {
    staging: &'a mut [u8],
    stage: Stream,
    events: Vec<Event>,
    ce: CopyQueue,
    /// Where the staged puts' time went (logged at debug level when the proxy stops).
    spent: StagedTime,
}

/// Where the time of the proxy's staged puts went: waiting for the GPU's copies into the
/// staging buffer, and in the transport's puts of its parts. Logged when the proxy stops
/// (`RSHMEM_LOG=debug`), beside the thread's CPU time and its CPUs: a proxy thread that
/// shares a core with a spinning thread shows a CPU time well below its busy time.
#[derive(Debug, Default)]
struct StagedTime {
    puts: u64,
    bytes: u64,
    copy_wait: Duration,
    transport: Duration,
    busy: Duration,
}

impl StagedTime {
    fn report(&self, pe: usize, since: Instant) {
        if self.puts == 0 {
            return;
        }
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let cpu = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        let cpu = Duration::new(cpu.tv_sec as u64, cpu.tv_nsec as u32);
        tracing::debug!(
            pe,
            "GPU proxy: {} staged puts, {:.1} MiB in {:.1} ms (waiting for staging copies {:.1} ms, in transport puts {:.1} ms); thread CPU {:.1} ms of {:.1} ms up, CPUs allowed {:?}",
            self.puts,
            self.bytes as f64 / (1 << 20) as f64,
            ms(self.busy),
            ms(self.copy_wait),
            ms(self.transport),
            ms(cpu),
            ms(since.elapsed()),
            crate::bootstrap::binding::allowed_cpus()
        );
    }
}

/// Completion marks of the loop.
#[derive(Debug, Default)]
struct Marks {
    /// Tickets below this were followed by a quiet of every transport.
    quiet_upto: u64,
}

/// The copy engine's stream and its copies in flight: (ticket, event recorded after it),
/// in ticket order; fired events are kept for reuse.
struct CopyQueue {
    stream: Stream,
    in_flight: VecDeque<(u64, Event)>,
    spare: Vec<Event>,
}

impl CopyQueue {
    /// Records an event after the copies of `ticket` issued so far.
    fn mark(&mut self, ticket: u64, pe: usize) -> Result<()> {
        let ev = match self.spare.pop() {
            Some(e) => e,
            None => Event::new(pe)?,
        };
        ev.record(&self.stream)?;
        self.in_flight.push_back((ticket, ev));
        Ok(())
    }

    /// Drops the copies whose events fired; whether any did.
    fn retire(&mut self) -> std::result::Result<bool, String> {
        let mut any = false;
        while let Some((t, ev)) = self.in_flight.front() {
            if !ev.done().map_err(|e| format!("copy-engine copy of request {t}: {e}"))? {
                break;
            }
            let (_, ev) = self.in_flight.pop_front().expect("front exists");
            self.spare.push(ev);
            any = true;
        }
        Ok(any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_device_header() {
        assert_eq!(std::mem::offset_of!(Slot, kind), 8);
        assert_eq!(std::mem::offset_of!(Slot, offset), 16);
        assert_eq!(std::mem::offset_of!(Slot, amo), 56);
        assert_eq!(std::mem::offset_of!(Slot, data), 64);
        assert_eq!(std::mem::offset_of!(Done, released), 16);
        assert!(SLOTS.is_power_of_two());
        let hdr = include_str!("../../device/rshmem_device_proxy.cuh");
        assert!(hdr.contains("#define RSHMEMI_PX_INLINE 64u") && INLINE == 64);
        for (name, v) in [
            ("PX_PUT", KIND_PUT),
            ("PX_GET", KIND_GET),
            ("PX_AMO", KIND_AMO),
            ("PX_CE_PUT", KIND_CE_PUT),
            ("PX_CE_GET", KIND_CE_GET),
            ("PX_BATCH", KIND_BATCH),
            ("PX_CE_PUT2D", KIND_CE_PUT2D),
            ("PX_CE_GET2D", KIND_CE_GET2D),
            ("PX_RELAY_PUT", KIND_RELAY_PUT),
            ("PX_RELAY_GET", KIND_RELAY_GET),
            ("PX_WAIT", FLAG_WAIT),
            ("PX_REMOTE", FLAG_REMOTE),
            ("REACH_PROXY", REACH_PROXY.into()),
            ("REACH_REMOTE", REACH_REMOTE.into()),
            ("REACH_CE", REACH_CE.into()),
        ] {
            assert!(hdr.contains(&format!("#define RSHMEMI_{name} {v}u")), "RSHMEMI_{name} differs from the header");
        }
        assert!(hdr.contains("#define RSHMEMI_PXC_CE_DONE_UPTO 2") && CTRL_CE_DONE_UPTO == 2);
        assert!(hdr.contains("#define RSHMEMI_PXC_COMPLETED 0") && CTRL_COMPLETED == 0);
        let eng = include_str!("../../device/rshmem_device_engines.cuh");
        assert!(eng.contains("struct rshmemx_batch_entry {\n    unsigned kind;"));
        assert_eq!(std::mem::offset_of!(BatchEntry, offset), 8);
        assert_eq!(std::mem::offset_of!(BatchEntry, len), 24);
    }
}

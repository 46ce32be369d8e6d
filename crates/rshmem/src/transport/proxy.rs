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
//! A request the proxy cannot carry out (out of range, a failed copy, a transport error)
//! ends the proxy with a message on stderr and status 2 in the control words: every
//! device wait on the proxy then traps with a message instead of hanging.

use super::{AmoOp, TransportTable};
use crate::error::{Error, Result};
use crate::gpu::cuda::{DevPtr, PinnedHost};
use crate::gpu::Gpu;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Slots in the request ring (a power of two).
pub const SLOTS: usize = 1024;
/// The pinned staging buffer's size: larger transfers go in pieces of this size.
pub const STAGING: usize = 1 << 20;
/// Bytes of device memory the proxy needs in the heap: the ticket counter, then one byte
/// per PE (through the proxy or not), rounded up.
pub fn device_area_size(n_pes: usize) -> usize {
    256 + crate::heap::align_up(n_pes, 256)
}
/// The proxy quiets and reports completion at least this often while busy.
pub const QUIET_EVERY: u64 = 256;

const KIND_PUT: u32 = 1;
const KIND_GET: u32 = 2;
const KIND_AMO: u32 = 3;
const FLAG_WAIT: u32 = 1;
const INLINE: usize = 64;

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

const _: () = assert!(std::mem::size_of::<Slot>() == 128 && std::mem::size_of::<Done>() == 32);

/// Control word indices.
const CTRL_COMPLETED: usize = 0;
const CTRL_STATUS: usize = 1;
const STATUS_RUNNING: u64 = 1;
const STATUS_GONE: u64 = 2;

struct Inner {
    gpu: Arc<Gpu>,
    ring: PinnedHost,
    done: PinnedHost,
    control: PinnedHost,
    transports: TransportTable,
    /// Per PE: reached through this proxy.
    through: Vec<bool>,
    my_pe: usize,
    n_pes: usize,
    /// Transport offset of the device heap's first byte (the host runtime area's size).
    host_offset: usize,
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
    /// Sets up the ring, tells the device which PEs (`through[pe]`) go through it, and
    /// starts the thread. `device_area` is [`device_area_size`] bytes of this PE's device
    /// heap; `host_offset` is the transport offset of the device heap's first byte.
    pub fn start(gpu: Arc<Gpu>, transports: TransportTable, through: &[bool], device_area: DevPtr, host_offset: usize) -> Result<Proxy> {
        let cuda = gpu.cuda.clone();
        cuda.bind()?;
        let my_pe = cuda.pe();
        let n_pes = through.len();
        let ring = cuda.pinned_host(SLOTS * std::mem::size_of::<Slot>())?;
        let done = cuda.pinned_host(SLOTS * std::mem::size_of::<Done>())?;
        let control = cuda.pinned_host(64)?;
        let flags: Vec<u8> = through.iter().enumerate().map(|(pe, &t)| u8::from(t && pe != my_pe)).collect();
        cuda.zero(device_area, device_area_size(n_pes))?;
        cuda.htod(device_area + 256, &flags)?;
        let span = gpu.heap.stride();
        let inner = Arc::new(Inner {
            gpu: gpu.clone(),
            ring,
            done,
            control,
            transports,
            through: flags.iter().map(|&f| f == 1).collect(),
            my_pe,
            n_pes,
            host_offset,
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
        })?;
        let t = inner.clone();
        let handle = std::thread::Builder::new()
            .name(format!("rshmem-gpu-proxy-pe{my_pe}"))
            .spawn(move || t.run())
            .map_err(|e| Error::os("start the GPU proxy thread", e))?;
        tracing::debug!(pe = my_pe, "GPU proxy up for {} peers", flags.iter().filter(|&&f| f == 1).count());
        Ok(Proxy { inner, thread: Mutex::new(Some(handle)) })
    }

    /// Whether the device API reaches `pe` through this proxy.
    pub fn serves(&self, pe: usize) -> bool {
        self.inner.through.get(pe).copied().unwrap_or(false)
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
        if let Err(e) = self.gpu.cuda.bind() {
            eprintln!("rshmem: PE {}: the GPU proxy cannot use the GPU: {e}", self.my_pe);
            self.control_word(CTRL_STATUS).store(STATUS_GONE, Ordering::Release);
            return;
        }
        let msg = match self.serve() {
            Ok(()) => return,
            Err(m) => m,
        };
        eprintln!("rshmem: PE {}: the GPU proxy stopped: {msg}", self.my_pe);
        self.control_word(CTRL_STATUS).store(STATUS_GONE, Ordering::Release);
    }

    /// The loop: take tickets in order, carry them out, complete after each burst.
    fn serve(&self) -> std::result::Result<(), String> {
        let mut staging = self.gpu.cuda.pinned_host(STAGING).map_err(|e| format!("no pinned staging buffer: {e}"))?;
        let staging = staging.as_mut_slice();
        let mut next = 0u64;
        let mut pending = 0u64;
        let mut idle_since: Option<Instant> = None;
        loop {
            let idx = (next as usize) & (SLOTS - 1);
            if self.slot_ready(idx).load(Ordering::Acquire) == next + 1 {
                self.carry_out(next, idx, staging)?;
                next += 1;
                pending += 1;
                self.carried.store(next, Ordering::Relaxed);
                if pending >= QUIET_EVERY {
                    self.complete(next)?;
                    pending = 0;
                }
                idle_since = None;
                continue;
            }
            if pending > 0 {
                self.complete(next)?;
                pending = 0;
            }
            if self.stop.load(Ordering::Acquire) {
                return Ok(());
            }
            // Spin briefly after activity (requests come in bursts), then nap.
            let since = *idle_since.get_or_insert_with(Instant::now);
            if since.elapsed() < Duration::from_micros(50) {
                std::hint::spin_loop();
            } else {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }

    /// Quiets every transport, then reports `next` requests complete.
    fn complete(&self, next: u64) -> std::result::Result<(), String> {
        for t in self.transports.distinct() {
            t.quiet(None).map_err(|e| format!("quiet after request {next}: {e}"))?;
        }
        self.control_word(CTRL_COMPLETED).store(next, Ordering::Release);
        Ok(())
    }

    fn carry_out(&self, ticket: u64, idx: usize, staging: &mut [u8]) -> std::result::Result<(), String> {
        let s = self.read_slot(idx);
        let round = ticket / SLOTS as u64;
        let what = || format!("request {ticket} (kind {}, PE {}, {} bytes at heap offset {:#x})", s.kind, s.pe, s.len, s.offset);
        let pe = usize::try_from(s.pe).ok().filter(|&p| p < self.n_pes).ok_or_else(|| format!("{}: no such PE", what()))?;
        let (offset, len) = (s.offset as usize, s.len as usize);
        if offset.checked_add(len).is_none_or(|end| end > self.span) {
            return Err(format!("{}: outside the symmetric heap", what()));
        }
        let t = self.transports.to(pe);
        let at = self.host_offset + offset;
        let cuda = &self.gpu.cuda;
        let moved = |e: Error| format!("{}: {e}", what());
        let value = match s.kind {
            KIND_PUT if s.local == 0 => {
                if len > INLINE {
                    return Err(format!("{}: inline payload over {INLINE} bytes", what()));
                }
                let bytes: Vec<u8> = s.data.iter().flat_map(|w| w.to_le_bytes()).take(len).collect();
                t.put(pe, at, &bytes).map_err(moved)?;
                0
            }
            KIND_PUT => {
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(STAGING);
                    let buf = &mut staging[..n];
                    cuda.dtoh(buf, s.local + done as u64)
                        .map_err(|e| format!("{}: copy of the source out of device memory: {e}", what()))?;
                    t.put(pe, at + done, buf).map_err(moved)?;
                    done += n;
                }
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
                let mut done = 0;
                while done < len {
                    let n = (len - done).min(STAGING);
                    let buf = &mut staging[..n];
                    t.get(pe, at + done, buf).map_err(moved)?;
                    cuda.htod(s.local + done as u64, buf).map_err(|e| format!("{}: copy into device memory: {e}", what()))?;
                    done += n;
                }
                0
            }
            KIND_AMO => {
                let op = AmoOp::from_code(s.amo.into()).ok_or_else(|| format!("{}: unknown atomic {}", what(), s.amo))?;
                if len != 4 && len != 8 {
                    return Err(format!("{}: atomic width must be 4 or 8", what()));
                }
                t.amo(pe, at, len, op, s.operand, s.compare).map_err(moved)?
            }
            k => return Err(format!("{}: unknown kind {k}", what())),
        };
        if s.flags & FLAG_WAIT != 0 {
            self.done_word(idx, 1).store(value, Ordering::Relaxed);
            self.done_word(idx, 0).store(ticket + 1, Ordering::Release);
        } else {
            self.done_word(idx, 2).store(round + 1, Ordering::Release);
        }
        Ok(())
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
        assert!(
            hdr.contains("#define RSHMEMI_PX_PUT 1u")
                && hdr.contains("#define RSHMEMI_PX_GET 2u")
                && hdr.contains("#define RSHMEMI_PX_AMO 3u")
        );
    }
}

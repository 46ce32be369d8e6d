//! The symmetric heap.
//!
//! Each PE reserves one virtual range with room for every mapped peer's heap, one
//! `stride` apart: peer `j`'s heap appears at `reservation + j * stride` in every PE. A
//! PE's heap starts with the runtime's own area ([`layout::SysLayout`]: wake words, team
//! synchronization slots), followed by the user heap. Memory comes in segments (memfd
//! files that every local peer maps at the same offset); the heap grows by a new segment
//! when a collective allocation needs room, up to `RSHMEM_MAX_SYMMETRIC_SIZE`.
//!
//! This is the only module that turns a local symmetric address into a peer's:
//! [`SymmetricHeap::translate`].

pub mod allocator;
mod last_hit;
pub mod layout;
pub mod mapping;
pub mod words;

use crate::bootstrap::Bootstrap;
use crate::error::{Error, Result};
use allocator::FirstFit;
use arc_swap::ArcSwap;
use last_hit::LastHits;
use layout::SysLayout;
use mapping::Reservation;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// Rounds `v` up to a multiple of the power of two `a`.
pub const fn align_up(v: usize, a: usize) -> usize {
    (v + a - 1) & !(a - 1)
}

/// Granularity of segments and of the per-PE stride.
pub const SEGMENT_ALIGN: usize = 2 << 20;

/// Smallest alignment of every allocation (so any type fits).
pub const MIN_ALIGN: usize = 16;

/// A mapped piece of the heap, in offsets from a PE's heap base.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    /// Offset of its first byte.
    pub offset: usize,
    /// Its length.
    pub len: usize,
}

/// A program's static data (C globals) made symmetric: `len` bytes at `start` in every
/// PE, backed by the shared file `fd` (see the C ABI). Every peer maps every PE's file
/// after its heap, so globals are reached like heap memory.
#[derive(Debug)]
pub struct StaticSegment {
    /// Page-aligned first address of the range in this PE.
    pub start: usize,
    /// Page-multiple length (the same on every PE).
    pub len: usize,
    /// The shared file now backing the range.
    pub fd: rustix::fd::OwnedFd,
}

/// Memory outside the host reservation that holds the user heap (GPU memory): the heap
/// asks it to commit each user segment on every PE and where each PE's user heap starts.
/// The GPU driver layer implements it (`gpu::memory::DeviceHeap`); the heap knows nothing
/// of CUDA.
pub trait DeviceMemory: Send + Sync + std::fmt::Debug {
    /// Collective: commits `len` more bytes at user offset `offset` on every PE (and maps
    /// the mapped peers' new bytes here).
    fn commit(&self, boot: &mut dyn Bootstrap, offset: usize, len: usize) -> Result<()>;
    /// Address (in this process) of `pe`'s user heap.
    fn user_base(&self, pe: usize) -> usize;
}

/// Where the user heap's memory lives.
#[derive(Debug, Clone)]
pub enum UserMemory {
    /// Host memory: memfd segments in the same reservation as the runtime area.
    Host,
    /// Device memory (GPU PEs): segments committed by the device layer.
    #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
    Device(Arc<dyn DeviceMemory>),
}

/// A transport that must learn of every piece of this PE's heap (to register it for
/// remote access): told of the segments present when it is installed
/// ([`SymmetricHeap::set_segment_hook`]) and of each segment added later, inside the
/// collective allocation that adds it (so it may exchange keys through the bootstrap).
pub trait SegmentHook: Send + Sync {
    /// Collective: `len` bytes at `offset` from every PE's heap base are now mapped.
    fn segment_added(&self, boot: &mut dyn Bootstrap, offset: usize, len: usize) -> Result<()>;
    /// Collective, at finalize before the bootstrap says goodbye: finish remote traffic.
    fn finalize(&self, boot: &mut dyn Bootstrap) -> Result<()>;
    /// The heap is being unmapped, or the job finalized: stop touching its memory
    /// (progress threads end here). May be called more than once.
    fn heap_closing(&self);
}

/// Snapshot of live allocations (user offsets, sorted) for lock-free bounds checks.
type AllocTable = Vec<(usize, usize)>;

/// The live allocations as one publication made them, with that publication's number
/// (unique in the process, across heaps).
#[derive(Debug)]
struct Published {
    version: u64,
    table: AllocTable,
}

/// Numbers of publications, process-wide, so that a version names one table of one heap.
static NEXT_VERSION: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// The table this thread checked ranges against last. The range check of every RMA
    /// and AMO reads it when the heap's version still matches: one plain load of the
    /// version instead of an `ArcSwap` load (whose debt slot costs a full barrier).
    static TABLE_CACHE: RefCell<Option<Arc<Published>>> = const { RefCell::new(None) };
}

/// The symmetric heap of one PE and its mapped view of every local peer's heap.
pub struct SymmetricHeap {
    my_pe: usize,
    n_pes: usize,
    sys: SysLayout,
    stride: usize,
    max_user: usize,
    /// (start in this PE, length) of the static segment, if any; it is mapped at offset
    /// `sys.size + max_user` of every PE's heap.
    statics: Option<(usize, usize)>,
    user: UserMemory,
    reservation: Reservation,
    state: Mutex<HeapState>,
    table: ArcSwap<Published>,
    /// The version of `table` (stored after it, so a reader that sees a version finds
    /// that table or a newer one).
    version: AtomicU64,
    hook: Mutex<Option<Arc<dyn SegmentHook>>>,
    /// Whether each PE's heap is mapped here (peers of this host; see `ctx::Hosts`).
    mapped: Vec<bool>,
    /// The allocations the last range checks found (see [`last_hit`]).
    last_hit: LastHits,
    /// How many allocations have been freed: a handle made when it read `n` still names
    /// a live allocation while it reads `n` (see [`SymmetricHeap::frees`]).
    frees: AtomicU64,
}

struct HeapState {
    alloc: FirstFit,
    segments: Vec<Segment>,
}

impl std::fmt::Debug for SymmetricHeap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymmetricHeap")
            .field("my_pe", &self.my_pe)
            .field("n_pes", &self.n_pes)
            .field("base", &format_args!("{:#x}", self.base(self.my_pe)))
            .field("stride", &self.stride)
            .finish()
    }
}

impl SymmetricHeap {
    /// Creates the heap collectively: reserves the range, creates this PE's first segment
    /// (runtime area plus `initial_user` bytes) and maps the peers marked in `mapped`
    /// (the others' places in the range stay reserved and inaccessible).
    /// With `statics`, the program's static data is mapped after every PE's heap.
    pub fn create(
        boot: &mut dyn Bootstrap,
        sys: SysLayout,
        initial_user: usize,
        max_user: usize,
        statics: Option<StaticSegment>,
        user: UserMemory,
        mapped: Vec<bool>,
    ) -> Result<SymmetricHeap> {
        let (my_pe, n_pes) = (boot.rank(), boot.size());
        let max_user = align_up(max_user.max(initial_user), SEGMENT_ALIGN);
        let static_len = statics.as_ref().map_or(0, |s| s.len);
        check_same(boot, "init", &[("static data size", static_len as u64)])?;
        let stride = align_up(sys.size + max_user + static_len, SEGMENT_ALIGN);
        let total = stride.checked_mul(n_pes).ok_or_else(|| Error::InvalidArgument {
            call: "init",
            arg: "RSHMEM_MAX_SYMMETRIC_SIZE",
            detail: format!("{n_pes} PEs x {stride} bytes overflows the address space"),
            pe: my_pe,
        })?;
        let reservation = Reservation::new(total)?;
        let initial_user = align_up(initial_user.max(SEGMENT_ALIGN), SEGMENT_ALIGN).min(max_user);
        let heap = SymmetricHeap {
            my_pe,
            n_pes,
            sys,
            stride,
            max_user,
            statics: statics.as_ref().map(|s| (s.start, s.len)),
            user,
            reservation,
            state: Mutex::new(HeapState { alloc: FirstFit::new(initial_user), segments: Vec::new() }),
            table: ArcSwap::from_pointee(Published { version: 0, table: Vec::new() }),
            version: AtomicU64::new(0),
            hook: Mutex::new(None),
            mapped,
            last_hit: LastHits::default(),
            frees: AtomicU64::new(0),
        };
        heap.add_segment(boot, Segment { offset: 0, len: sys.size })?;
        let first = Segment { offset: sys.size, len: initial_user };
        heap.add_user_segment(boot, first)?;
        heap.state.lock().expect("heap lock").segments.push(first);
        if let Some(st) = statics {
            let fds = boot.allgather_fd_from(rustix::fd::AsFd::as_fd(&st.fd), &heap.mapped)?;
            for (pe, fd) in fds.iter().enumerate() {
                if let Some(fd) = fd {
                    heap.reservation.map_shared(pe * heap.stride + heap.static_offset(), st.len, fd)?;
                }
            }
        }
        Ok(heap)
    }

    /// Collective: installs `hook`, telling it of every segment mapped now (runtime area,
    /// user segments, static data); later segments are reported as they are added.
    /// On a GPU heap the segments are device memory: only a hook that registers nothing
    /// with UCX (the staged protocol, `transport::ucx::staged`) belongs there.
    pub fn set_segment_hook(&self, boot: &mut dyn Bootstrap, hook: Arc<dyn SegmentHook>) -> Result<()> {
        let st = self.state.lock().expect("heap lock");
        hook.segment_added(boot, 0, self.sys.size)?;
        for seg in &st.segments {
            hook.segment_added(boot, seg.offset, seg.len)?;
        }
        if let Some((_, len)) = self.statics {
            hook.segment_added(boot, self.static_offset(), len)?;
        }
        *self.hook.lock().expect("hook lock") = Some(hook);
        Ok(())
    }

    /// Collective: lets the segment hook, if any, finish its remote traffic, then stops
    /// its threads. A runtime that outlives its finalize (the C library's lives until the
    /// process exits) must not have a progress thread inside UCX while UCX's own exit
    /// handlers tear it down: that aborted 1 job in ~2000 ("failed to modify <fd> event
    /// handler to UCS_EVENT_SET_EVREAD: No such element").
    pub fn finalize_hook(&self, boot: &mut dyn Bootstrap) -> Result<()> {
        let hook = self.hook.lock().expect("hook lock").clone();
        match hook {
            Some(h) => {
                let done = h.finalize(boot);
                h.heap_closing();
                done
            }
            None => Ok(()),
        }
    }

    /// Maps a new piece of the user heap (offsets from the heap base) on every PE.
    fn add_user_segment(&self, boot: &mut dyn Bootstrap, seg: Segment) -> Result<()> {
        match &self.user {
            UserMemory::Host => {
                self.add_segment(boot, seg)?;
                let hook = self.hook.lock().expect("hook lock").clone();
                match hook {
                    Some(h) => h.segment_added(boot, seg.offset, seg.len),
                    None => Ok(()),
                }
            }
            UserMemory::Device(d) => d.commit(boot, seg.offset - self.sys.size, seg.len),
        }
    }

    /// Whether the user heap lives in GPU memory.
    pub fn is_device(&self) -> bool {
        !matches!(self.user, UserMemory::Host)
    }

    /// Bytes of user heap mapped now (grows with the heap).
    pub fn capacity(&self) -> usize {
        self.state.lock().expect("heap lock").alloc.capacity()
    }

    fn add_segment(&self, boot: &mut dyn Bootstrap, seg: Segment) -> Result<()> {
        let name = format!("rshmem-pe{}-seg{:x}", self.my_pe, seg.offset);
        let fd = mapping::create_segment(&name, seg.len)?;
        self.reservation.map_shared(self.my_pe * self.stride + seg.offset, seg.len, &fd)?;
        let fds = boot.allgather_fd_from(rustix::fd::AsFd::as_fd(&fd), &self.mapped)?;
        for (pe, peer_fd) in fds.iter().enumerate() {
            if let (true, Some(peer_fd)) = (pe != self.my_pe, peer_fd) {
                self.reservation.map_shared(pe * self.stride + seg.offset, seg.len, peer_fd)?;
            }
        }
        Ok(())
    }

    /// This PE.
    pub fn my_pe(&self) -> usize {
        self.my_pe
    }

    /// Address-space distance between two consecutive PEs' heaps.
    pub fn stride(&self) -> usize {
        self.stride
    }

    /// The runtime area's layout.
    pub fn sys(&self) -> &SysLayout {
        &self.sys
    }

    /// Base address (in this process) of `pe`'s heap.
    #[inline]
    pub fn base(&self, pe: usize) -> usize {
        debug_assert!(pe < self.n_pes);
        self.reservation.base() + pe * self.stride
    }

    /// Whether `pe`'s heap is mapped here (this PE's always is).
    pub fn is_mapped(&self, pe: usize) -> bool {
        pe == self.my_pe || self.mapped.get(pe).copied().unwrap_or(false)
    }

    /// Every PE's heap base, in PE order (a peer's is usable only if it is mapped).
    pub fn bases(&self) -> Vec<usize> {
        (0..self.n_pes).map(|pe| self.base(pe)).collect()
    }

    /// First address of this PE's user heap.
    #[inline]
    pub fn user_base(&self) -> usize {
        self.user_base_of(self.my_pe)
    }

    /// First address (in this process) of `pe`'s user heap.
    #[inline]
    pub fn user_base_of(&self, pe: usize) -> usize {
        match &self.user {
            UserMemory::Host => self.base(pe) + self.sys.size,
            UserMemory::Device(d) => d.user_base(pe),
        }
    }

    /// End of the address range this PE's user heap may ever occupy.
    #[inline]
    pub fn user_limit(&self) -> usize {
        self.user_base() + self.max_user
    }

    /// Offset of the static segment from a heap base.
    #[inline]
    fn static_offset(&self) -> usize {
        self.sys.size + self.max_user
    }

    /// Offset of `addr` from this PE's heap base, if it lies in the user heap's range or
    /// in the static segment.
    #[inline]
    pub fn offset_of(&self, addr: usize) -> Option<usize> {
        if addr >= self.user_base() && addr < self.user_limit() {
            return Some(self.sys.size + (addr - self.user_base()));
        }
        match self.statics {
            Some((start, len)) if addr >= start && addr < start + len => Some(self.static_offset() + (addr - start)),
            _ => None,
        }
    }

    /// Whether `addr` lies in the static segment.
    fn in_statics(&self, addr: usize) -> Option<(usize, usize)> {
        self.statics.filter(|&(s, l)| addr >= s && addr < s + l)
    }

    /// Checks that `[addr, addr + len)` lies inside one live allocation of this PE's user
    /// heap, and returns its offset from the heap base. `call`, `arg` and `pe` only shape
    /// the error.
    #[inline(always)]
    pub fn check_range(&self, call: &'static str, arg: &'static str, addr: usize, len: usize, pe: usize) -> Result<usize> {
        // The most common case, inlined into every caller: a range inside the allocation
        // a recent check found (in the user heap, whose offsets start at `sys.size`).
        let (base, limit) = (self.user_base(), self.user_limit());
        if addr >= base && addr < limit {
            let user_off = addr - base;
            if self.last_hit.covers(self.version.load(Ordering::Acquire), user_off, len) {
                return Ok(self.sys.size + user_off);
            }
        }
        self.check_range_lookup(call, arg, addr, len, pe)
    }

    /// [`SymmetricHeap::check_range`] past its remembered allocations: the table lookup,
    /// then the full path with the errors.
    #[inline(never)]
    fn check_range_lookup(&self, call: &'static str, arg: &'static str, addr: usize, len: usize, pe: usize) -> Result<usize> {
        if let Some(off) = self.offset_of(addr).filter(|&o| o < self.static_offset()) {
            let user_off = off - self.sys.size;
            let version = self.version.load(Ordering::Acquire);
            let hit = self.with_table(|table| {
                let idx = table.partition_point(|&(s, _)| s <= user_off);
                idx.checked_sub(1).map(|i| table[i]).filter(|&(s, l)| user_off.checked_add(len).is_some_and(|e| e <= s + l))
            });
            if let Some((s, l)) = hit {
                // Tagged with the version read before the table: a newer table read
                // meanwhile only makes the tag stale, so the hint is never trusted
                // past the publication that could have changed it.
                self.last_hit.remember(version, s, l);
                return Ok(off);
            }
        }
        self.check_range_full(call, arg, addr, len, pe)
    }

    /// [`SymmetricHeap::check_range`] in full, with the errors.
    #[cold]
    #[inline(never)]
    fn check_range_full(&self, call: &'static str, arg: &'static str, addr: usize, len: usize, pe: usize) -> Result<usize> {
        if let Some((s, l)) = self.in_statics(addr) {
            return if addr + len <= s + l {
                Ok(self.static_offset() + (addr - s))
            } else {
                Err(Error::OutOfBounds { call, arg, addr, len, detail: format!("runs past the end of the static data ({s:#x}+{l})"), pe })
            };
        }
        let Some(off) = self.offset_of(addr).filter(|&o| o < self.static_offset()) else {
            return Err(Error::NotSymmetric { call, arg, addr, base: self.user_base(), end: self.user_limit(), pe });
        };
        let user_off = off - self.sys.size;
        let found = self.with_table(|table| {
            let idx = table.partition_point(|&(s, _)| s <= user_off);
            idx.checked_sub(1).map(|i| table[i]).filter(|&(s, l)| user_off < s + l.max(1))
        });
        match found {
            Some((s, l)) if user_off.checked_add(len).is_some_and(|e| e <= s + l) => Ok(off),
            Some((s, l)) => Err(Error::OutOfBounds {
                call,
                arg,
                addr,
                len,
                detail: format!(
                    "runs {} bytes past the end of its {l}-byte allocation at {:#x}",
                    user_off.saturating_add(len) - (s + l),
                    self.user_base() + s
                ),
                pe,
            }),
            None if len == 0 => Ok(off),
            None => Err(Error::OutOfBounds { call, arg, addr, len, detail: "is not inside a live symmetric allocation".into(), pe }),
        }
    }

    /// Collective allocation of `size` bytes aligned to `align`; every PE must pass the
    /// same arguments (checked: a PE that differs from PE 0 gets an error naming both).
    /// Returns the allocation's address in this PE.
    pub fn alloc(&self, boot: &mut dyn Bootstrap, call: &'static str, size: usize, align: usize) -> Result<usize> {
        // Compare the arguments before judging them: a PE that returned early on a bad
        // argument would leave its peers in the exchange, out of step for good.
        let align = if align.is_power_of_two() || align == 0 { align.max(MIN_ALIGN) } else { align };
        check_same(boot, call, &[("size", size as u64), ("alignment", align as u64)])?;
        if !align.is_power_of_two() {
            return Err(Error::InvalidArgument {
                call,
                arg: "alignment",
                detail: format!("{align} is not a power of two"),
                pe: self.my_pe,
            });
        }
        let mut st = self.state.lock().expect("heap lock");
        let off = match st.alloc.alloc(size, align) {
            Some(off) => off,
            None => {
                let need = st.alloc.shortfall(size, align);
                let cap = st.alloc.capacity();
                // `cap <= max_user`, so this is the room left; comparing before adding
                // keeps huge requests (sizes or alignments near 2^64) from overflowing.
                let room = self.max_user - cap;
                if need > room {
                    return Err(Error::HeapExhausted {
                        call,
                        requested: size,
                        in_use: st.alloc.in_use(),
                        limit: self.max_user,
                        pe: self.my_pe,
                    });
                }
                let new_cap = cap + align_up(need.max(cap), SEGMENT_ALIGN).min(room);
                let seg = Segment { offset: self.sys.size + cap, len: new_cap - cap };
                self.add_user_segment(boot, seg)?;
                st.segments.push(seg);
                st.alloc.grow(new_cap);
                tracing::debug!(pe = self.my_pe, new_cap, "symmetric heap grew");
                st.alloc.alloc(size, align).expect("grown to fit")
            }
        };
        self.publish(&st);
        Ok(self.user_base() + off)
    }

    /// Collective free of the allocation at `addr` (every PE must free the same one).
    pub fn free(&self, boot: &mut dyn Bootstrap, call: &'static str, addr: usize) -> Result<()> {
        // As in `alloc`: exchange first (an address off the heap counts as offset
        // u64::MAX), so that every PE returns the same verdict.
        let user_off = self.offset_of(addr).filter(|&o| o < self.static_offset()).map(|o| o - self.sys.size);
        check_same(boot, call, &[("ptr (heap offset)", user_off.map_or(u64::MAX, |o| o as u64))])?;
        let off = user_off.ok_or(Error::NotSymmetric {
            call,
            arg: "ptr",
            addr,
            base: self.user_base(),
            end: self.user_limit(),
            pe: self.my_pe,
        })?;
        let mut st = self.state.lock().expect("heap lock");
        st.alloc.free(off).ok_or_else(|| Error::InvalidArgument {
            call,
            arg: "ptr",
            detail: format!("{addr:#x} is not the start of a live symmetric allocation"),
            pe: self.my_pe,
        })?;
        self.publish(&st);
        self.frees.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// How many allocations this heap has freed so far. Allocations only ever end by a
    /// free (a resize allocates anew and frees), so a range that lay inside a live
    /// allocation when this read `n` still does while it reads `n`: typed handles
    /// ([`crate::Sym`]) skip the range check then.
    #[inline]
    pub fn frees(&self) -> u64 {
        self.frees.load(Ordering::Acquire)
    }

    /// Size of the live allocation starting at `addr`.
    pub fn size_of(&self, addr: usize) -> Option<usize> {
        let off = self.offset_of(addr)? - self.sys.size;
        self.state.lock().expect("heap lock").alloc.size_of(off)
    }

    /// Bytes of the user heap in live allocations.
    pub fn in_use(&self) -> usize {
        self.state.lock().expect("heap lock").alloc.in_use()
    }

    fn publish(&self, st: &HeapState) {
        let version = NEXT_VERSION.fetch_add(1, Ordering::Relaxed);
        self.table.store(Arc::new(Published { version, table: st.alloc.allocations().collect() }));
        self.version.store(version, Ordering::Release);
    }

    /// Runs `f` on the live allocations: this thread's cached table while the heap's
    /// version matches it, else the current one (then cached).
    #[inline]
    fn with_table<R>(&self, f: impl FnOnce(&AllocTable) -> R) -> R {
        let version = self.version.load(Ordering::Acquire);
        let mut f = Some(f);
        let cached = TABLE_CACHE.try_with(|c| {
            let mut c = c.borrow_mut();
            if c.as_ref().is_none_or(|p| p.version != version) {
                *c = Some(self.table.load_full());
            }
            (f.take().expect("called once"))(&c.as_ref().expect("just filled").table)
        });
        match cached {
            Ok(r) => r,
            // This thread is exiting and its cache is gone: read the table directly.
            Err(_) => (f.take().expect("not called"))(&self.table.load().table),
        }
    }
}

impl SymmetricHeap {
    /// Stops the segment hook's threads (its progress threads) without finalizing: for a
    /// job that ends without finalize, so that no thread is inside UCX while the process
    /// runs its exit handlers.
    pub fn stop_hook_threads(&self) {
        let hook = self.hook.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(h) = hook {
            h.heap_closing();
        }
    }
}

impl Drop for SymmetricHeap {
    fn drop(&mut self) {
        if let Some(h) = self.hook.lock().unwrap_or_else(|p| p.into_inner()).take() {
            h.heap_closing();
        }
    }
}

/// Checks that every PE passed the same values for a collective call's arguments.
/// All PEs get the same verdict, so they stay in step.
pub fn check_same(boot: &mut dyn Bootstrap, call: &'static str, args: &[(&'static str, u64)]) -> Result<()> {
    let mine: Vec<u8> = args.iter().flat_map(|(_, v)| v.to_le_bytes()).collect();
    let all = boot.allgather(&mine)?;
    for (pe, theirs) in all.iter().enumerate().skip(1) {
        for (i, (name, _)) in args.iter().enumerate() {
            let get = |b: &Vec<u8>| b.get(i * 8..i * 8 + 8).map(|s| u64::from_le_bytes(s.try_into().expect("8")));
            let (v0, v) = (get(&all[0]), get(theirs));
            if v0 != v {
                let show = |v: Option<u64>| v.map(|x| x.to_string()).unwrap_or_else(|| "nothing".into());
                return Err(Error::CollectiveMismatch { call, arg: name, pe, value: show(v), reference_pe: 0, reference: show(v0) });
            }
        }
    }
    Ok(())
}

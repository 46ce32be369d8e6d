//! The deprecated active-set collectives (`shmem_barrier`, `shmem_sync`,
//! `shmem_broadcast32/64`, `shmem_collect32/64`, `shmem_fcollect32/64`,
//! `shmem_alltoall32/64`, `shmem_alltoalls32/64`, `shmem_TYPENAME_OP_to_all`).
//!
//! An active set (`PE_start`, `logPE_stride`, `PE_size`) is called only by its members,
//! so it cannot borrow a team: making one is collective over a parent that holds PEs
//! outside the set. These routines use what the interface gives them instead, the
//! caller's `pSync` array (symmetric, `SHMEM_SYNC_VALUE` on entry, not in use by another
//! collective): a dissemination barrier over the set keeps its counters in `pSync[0..32]`
//! (a round adds 1 to the partner's counter, waits for its own, subtracts the 1 it saw, so
//! `pSync` is back at its original values on return, as the specification requires, even
//! when the next barrier's signal arrives early), and `pSync[32]` carries each member's
//! element count for `collect`. Data moves by one-sided gets between two barriers; the
//! reductions combine in member order with the reduction table's operators
//! (`rshmem::ReduceType`), so every member computes the same result. `pWrk` is not needed.

use crate::state::{bad_arg, rt, OrExit};
use rshmem::{Cmp, Ctx, ReduceOp, ReduceType};
use std::ffi::{c_int, c_long, c_void};

/// Counters of the barrier (enough rounds for 2^32 PEs).
const ROUNDS: usize = 32;
/// Index of the element-count word of `collect`.
const COUNT_WORD: usize = ROUNDS;
/// Length of every pSync array (`SHMEM_SYNC_SIZE` and its per-routine twins).
pub const SYNC_SIZE: usize = ROUNDS + 2;

/// The members of an active set, in world PE numbers.
struct ActiveSet {
    start: usize,
    stride: usize,
    size: usize,
    me: usize,
}

impl ActiveSet {
    fn new(call: &str, c: &Ctx, start: c_int, log_stride: c_int, size: c_int) -> ActiveSet {
        if start < 0 {
            bad_arg(call, "PE_start", format_args!("{start} is negative"));
        }
        if !(0..31).contains(&log_stride) {
            bad_arg(call, "logPE_stride", format_args!("{log_stride} is not in 0..31"));
        }
        if size < 1 {
            bad_arg(call, "PE_size", format_args!("{size} is not at least 1"));
        }
        let (start, stride, size) = (start as usize, 1usize << log_stride, size as usize);
        let last = start + (size - 1) * stride;
        if last >= c.n_pes() {
            bad_arg(call, "PE_size", format_args!("the set's last PE, {last}, is not below {} PEs", c.n_pes()));
        }
        let me = c.my_pe();
        let idx = me.checked_sub(start).filter(|d| d % stride == 0 && d / stride < size).map(|d| d / stride);
        let Some(me) = idx else {
            bad_arg(call, "PE_start", format_args!("PE {me} is not in the active set {start}, {}, ... ({size} PEs)", start + stride))
        };
        ActiveSet { start, stride, size, me }
    }

    fn pe(&self, i: usize) -> usize {
        self.start + i * self.stride
    }
}

/// The dissemination barrier over the set on `pSync`'s counters.
fn barrier(call: &str, c: &Ctx, set: &ActiveSet, psync: *mut c_long) {
    if psync.is_null() {
        bad_arg(call, "pSync", "null pointer");
    }
    let me = c.my_pe();
    let mut dist = 1;
    let mut round = 0;
    while dist < set.size {
        // SAFETY: only the address is computed; `pSync` holds SYNC_SIZE longs (the
        // routine's contract) and the runtime checks the word is symmetric.
        let word = unsafe { psync.add(round) } as usize;
        c.atomic_add_addr::<i64>(word, 1, set.pe((set.me + dist) % set.size)).or_exit(call);
        c.wait_until_addr::<i64>(word, Cmp::Ge, 1, None).or_exit(call);
        c.atomic_add_addr::<i64>(word, -1, me).or_exit(call);
        dist *= 2;
        round += 1;
    }
}

c_fn!(barrier_fn, "barrier"; fn (pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) = |call| {
    let c = rt(call);
    let set = ActiveSet::new(call, c, pe_start, log_pe_stride, pe_size);
    c.quiet();
    barrier(call, c, &set, psync)
});

c_fn!(sync_fn, "sync"; fn (pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) = |call| {
    let c = rt(call);
    let set = ActiveSet::new(call, c, pe_start, log_pe_stride, pe_size);
    barrier(call, c, &set, psync)
});

/// Copies `bytes` from `src` on world PE `pe` into local memory at `dest`.
///
/// # Safety
/// `dest` has room for `bytes` bytes.
unsafe fn get(call: &str, c: &Ctx, dest: *mut c_void, src: usize, bytes: usize, pe: usize) {
    // SAFETY: the caller passes room for `bytes` bytes.
    let d = unsafe { crate::state::local_mut(call, "dest", dest, bytes) };
    c.getmem(d, src, pe).or_exit(call)
}

fn nelems_arg(call: &str, n: usize, size: usize) -> usize {
    crate::state::bytes_of(call, n, size)
}

unsafe fn broadcast(
    call: &str,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    root: c_int,
    start: c_int,
    log: c_int,
    n: c_int,
    psync: *mut c_long,
) {
    let c = rt(call);
    let set = ActiveSet::new(call, c, start, log, n);
    if root < 0 || root as usize >= set.size {
        bad_arg(call, "PE_root", format_args!("{root} is not in 0..{}", set.size));
    }
    let bytes = nelems_arg(call, nelems, size);
    barrier(call, c, &set, psync);
    if set.me != root as usize {
        // SAFETY: `dest` holds `nelems` elements.
        unsafe { get(call, c, dest, source as usize, bytes, set.pe(root as usize)) };
    }
    barrier(call, c, &set, psync);
}

unsafe fn fcollect(
    call: &str,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    start: c_int,
    log: c_int,
    n: c_int,
    psync: *mut c_long,
) {
    let c = rt(call);
    let set = ActiveSet::new(call, c, start, log, n);
    let bytes = nelems_arg(call, nelems, size);
    barrier(call, c, &set, psync);
    for i in 0..set.size {
        // SAFETY: `dest` holds `nelems` elements per member.
        unsafe { get(call, c, (dest as *mut u8).add(i * bytes) as *mut c_void, source as usize, bytes, set.pe(i)) };
    }
    barrier(call, c, &set, psync);
}

unsafe fn collect(
    call: &str,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    start: c_int,
    log: c_int,
    n: c_int,
    psync: *mut c_long,
) {
    let c = rt(call);
    let set = ActiveSet::new(call, c, start, log, n);
    let bytes = nelems_arg(call, nelems, size);
    if psync.is_null() {
        bad_arg(call, "pSync", "null pointer");
    }
    // SAFETY: pSync holds SYNC_SIZE longs; only the address is formed here.
    let count = unsafe { psync.add(COUNT_WORD) } as usize;
    // This PE's element count, readable by the others after the barrier.
    c.p_addr::<i64>(count, nelems as i64, c.my_pe()).or_exit(call);
    barrier(call, c, &set, psync);
    let mut at = 0usize;
    for i in 0..set.size {
        let theirs = c.g_addr::<i64>(count, set.pe(i)).or_exit(call) as usize * size;
        // SAFETY: `dest` holds the sum of every member's elements.
        unsafe { get(call, c, (dest as *mut u8).add(at) as *mut c_void, source as usize, theirs, set.pe(i)) };
        at += theirs;
    }
    let _ = bytes;
    barrier(call, c, &set, psync);
    // Every member has read this PE's count: restore the word.
    c.p_addr::<i64>(count, 0, c.my_pe()).or_exit(call);
}

unsafe fn alltoall(
    call: &str,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
    start: c_int,
    log: c_int,
    n: c_int,
    psync: *mut c_long,
) {
    let c = rt(call);
    let set = ActiveSet::new(call, c, start, log, n);
    let (dst, sst) = (crate::state::stride_arg(call, "dst", dst), crate::state::stride_arg(call, "sst", sst));
    barrier(call, c, &set, psync);
    let block = nelems_arg(call, nelems, size);
    for i in 0..set.size {
        // Member i's block for this PE: elements me*nelems.. of its source (stride sst),
        // into elements i*nelems.. of dest (stride dst).
        let src = source as usize + set.me * nelems * sst * size;
        let out = (dest as usize + i * nelems * dst * size) as *mut c_void;
        let span = if nelems == 0 { 0 } else { ((nelems - 1) * dst + 1) * size };
        // SAFETY: `dest` holds every member's strided block.
        let d = unsafe { crate::state::local_mut(call, "dest", out, span) };
        c.igetmem(d, src, size, dst, sst, nelems, set.pe(i)).or_exit(call);
    }
    let _ = block;
    barrier(call, c, &set, psync);
}

c_fn!(broadcast32, "broadcast32";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| broadcast(call, dest, source, nelems, 4, pe_root, pe_start, log_pe_stride, pe_size, psync));
c_fn!(broadcast64, "broadcast64";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| broadcast(call, dest, source, nelems, 8, pe_root, pe_start, log_pe_stride, pe_size, psync));
c_fn!(fcollect32, "fcollect32";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| fcollect(call, dest, source, nelems, 4, pe_start, log_pe_stride, pe_size, psync));
c_fn!(fcollect64, "fcollect64";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| fcollect(call, dest, source, nelems, 8, pe_start, log_pe_stride, pe_size, psync));
c_fn!(collect32, "collect32";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| collect(call, dest, source, nelems, 4, pe_start, log_pe_stride, pe_size, psync));
c_fn!(collect64, "collect64";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| collect(call, dest, source, nelems, 8, pe_start, log_pe_stride, pe_size, psync));
c_fn!(alltoall32, "alltoall32";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| alltoall(call, dest, source, 1, 1, nelems, 4, pe_start, log_pe_stride, pe_size, psync));
c_fn!(alltoall64, "alltoall64";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| alltoall(call, dest, source, 1, 1, nelems, 8, pe_start, log_pe_stride, pe_size, psync));
c_fn!(alltoalls32, "alltoalls32";
    fn (dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| alltoall(call, dest, source, dst, sst, nelems, 4, pe_start, log_pe_stride, pe_size, psync));
c_fn!(alltoalls64, "alltoalls64";
    fn (dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, psync: *mut c_long) =
    |call| alltoall(call, dest, source, dst, sst, nelems, 8, pe_start, log_pe_stride, pe_size, psync));
/// `TYPENAME_OP_to_all`: every member's `dest` becomes `op` over the members' `source`.
pub(crate) unsafe fn to_all<T: ReduceType>(
    call: &str,
    dest: *mut T,
    source: *const T,
    nreduce: c_int,
    start: c_int,
    log: c_int,
    n: c_int,
    psync: *mut c_long,
    op: ReduceOp,
) {
    let c = rt(call);
    let set = ActiveSet::new(call, c, start, log, n);
    if nreduce < 0 {
        bad_arg(call, "nreduce", format_args!("{nreduce} is negative"));
    }
    let count = nreduce as usize;
    let bytes = nelems_arg(call, count, std::mem::size_of::<T>());
    barrier(call, c, &set, psync);
    let mut acc = vec![T::zeroed(); count];
    let mut theirs = vec![T::zeroed(); count];
    for i in 0..set.size {
        let buf = if i == 0 { &mut acc } else { &mut theirs };
        c.getmem(bytemuck::cast_slice_mut(buf), source as usize, set.pe(i)).or_exit(call);
        if i > 0 {
            T::combine(op, &mut acc, &theirs);
        }
    }
    // Every member has read every source before any dest (which may be a source) changes.
    barrier(call, c, &set, psync);
    if count > 0 {
        // SAFETY: `dest` holds `nreduce` elements of this PE.
        let d = unsafe { crate::state::local_mut(call, "dest", dest as *mut c_void, bytes) };
        d.copy_from_slice(bytemuck::cast_slice(&acc));
    }
}

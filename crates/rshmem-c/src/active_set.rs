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
//! reductions combine in member order (`crate::reduce`), so every member computes the
//! same result, large ones one piece per member (`to_all_in_pieces`). `pWrk` is not
//! needed.
//!
//! An active set that is the whole world (in world order) is the world team: there each
//! routine is the team collective on `SHMEM_TEAM_WORLD` (barrier_all, sync_all,
//! broadcastmem leaving the root's `dest` alone, fcollectmem, collectmem, alltoalls,
//! TYPENAME_OP_reduce), with its algorithms, and leaves `pSync` untouched; not under
//! `SHMEM_THREAD_MULTIPLE` (see `ActiveSet::as_world`).

use crate::reduce::{fold_members, write_local, Reducible};
use crate::routine::Routine;
use crate::state::{bad_arg, rt, OrExit};
use rshmem::{Cmp, Ctx, ReduceOp, Team};
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

    /// Whether the call runs as the same collective on the world team: the set is every
    /// PE in world order, and not under `SHMEM_THREAD_MULTIPLE` (there two threads may run
    /// active-set collectives at once on distinct `pSync` arrays, which one team cannot).
    /// A null `pSync` is an error on either path.
    fn as_world(&self, call: &str, c: &Ctx, psync: *mut c_long) -> bool {
        if psync.is_null() {
            bad_arg(call, "pSync", "null pointer");
        }
        self.start == 0
            && (self.stride == 1 || self.size == 1)
            && self.size == c.n_pes()
            && crate::state::thread_level() != crate::setup::THREAD_MULTIPLE
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

c_fn!(barrier_fn, "barrier"; fn (PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = |call| {
    let c = rt(call);
    let set = ActiveSet::new(call, c, PE_start, logPE_stride, PE_size);
    if set.as_world(call, c, pSync) {
        return c.barrier_all().or_exit(call);
    }
    c.quiet().or_exit(call);
    barrier(call, c, &set, pSync)
});

c_fn!(sync_fn, "sync"; fn (PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) = |call| {
    let c = rt(call);
    let set = ActiveSet::new(call, c, PE_start, logPE_stride, PE_size);
    if set.as_world(call, c, pSync) {
        return c.sync_all().or_exit(call);
    }
    barrier(call, c, &set, pSync)
});

/// Copies `bytes` from `src` on world PE `pe` into local memory at `dest`.
///
/// # Safety
/// `dest` has room for `bytes` bytes.
unsafe fn get(call: &str, c: &Ctx, dest: *mut c_void, src: usize, bytes: usize, pe: usize) {
    if bytes == 0 {
        return;
    }
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
    if set.as_world(call, c, psync) {
        return c.broadcastmem_to_others(Team::WORLD, dest as usize, source as usize, bytes, root as usize).or_exit(call);
    }
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
    if set.as_world(call, c, psync) {
        return c.fcollectmem(Team::WORLD, dest as usize, source as usize, bytes).or_exit(call);
    }
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
    if set.as_world(call, c, psync) {
        return c.collectmem(Team::WORLD, dest as usize, source as usize, bytes).or_exit(call);
    }
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
    let block = nelems_arg(call, nelems, size);
    if set.as_world(call, c, psync) {
        return c.alltoalls_addr(Team::WORLD, dest as usize, source as usize, dst, sst, nelems, size).or_exit(call);
    }
    barrier(call, c, &set, psync);
    for i in (0..set.size).filter(|_| block > 0) {
        // Member i's block for this PE: elements me*nelems.. of its source (stride sst),
        // into elements i*nelems.. of dest (stride dst).
        let src = source as usize + set.me * nelems * sst * size;
        let out = (dest as usize + i * nelems * dst * size) as *mut c_void;
        if dst == 1 && sst == 1 {
            // SAFETY: `dest` holds every member's block.
            unsafe { get(call, c, out, src, block, set.pe(i)) };
            continue;
        }
        let span = ((nelems - 1) * dst + 1) * size;
        // SAFETY: `dest` holds every member's strided block.
        let d = unsafe { crate::state::local_mut(call, "dest", out, span) };
        c.igetmem(d, src, size, dst, sst, nelems, set.pe(i)).or_exit(call);
    }
    barrier(call, c, &set, psync);
}

/// The sized active-set collectives of one width.
macro_rules! active_set_sized {
    ($(($m:ident, $bits:literal, $size:literal)),*) => { $(
        pub(crate) mod $m {
            use super::*;
            c_fn!(broadcast, concat!("broadcast", $bits);
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, PE_root: c_int, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) =
                |call| broadcast(call, dest, source, nelems, $size, PE_root, PE_start, logPE_stride, PE_size, pSync));
            c_fn!(collect, concat!("collect", $bits);
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) =
                |call| collect(call, dest, source, nelems, $size, PE_start, logPE_stride, PE_size, pSync));
            c_fn!(fcollect, concat!("fcollect", $bits);
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) =
                |call| fcollect(call, dest, source, nelems, $size, PE_start, logPE_stride, PE_size, pSync));
            c_fn!(alltoall_fn, concat!("alltoall", $bits);
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) =
                |call| alltoall(call, dest, source, 1, 1, nelems, $size, PE_start, logPE_stride, PE_size, pSync));
            c_fn!(alltoalls, concat!("alltoalls", $bits);
                fn (dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pSync: *mut c_long) =
                |call| alltoall(call, dest, source, dst, sst, nelems, $size, PE_start, logPE_stride, PE_size, pSync));
            pub(crate) const ROUTINES: &[Routine] = routines![broadcast, collect, fcollect, alltoall_fn, alltoalls];
        }
    )* };
}
active_set_sized!((w32, 32, 4), (w64, 64, 8));

/// Smallest reduction, in bytes, that the active-set form splits into one piece per
/// member (below it, every member folds every source whole: one round trip fewer).
const PIECES_MIN_BYTES: usize = 8 << 10;

/// `TYPENAME_OP_to_all`: every member's `dest` becomes `op` over the members' `source`
/// (on the world set: `shmem_TYPENAME_OP_reduce` on `SHMEM_TEAM_WORLD`).
pub(crate) unsafe fn to_all<T: Reducible>(
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
    if set.as_world(call, c, psync) {
        T::reduce(call, crate::handle::team_handle(Team::WORLD), dest, source, count, op);
        return;
    }
    barrier(call, c, &set, psync);
    if set.size > 1 && bytes >= PIECES_MIN_BYTES {
        // SAFETY: `dest` and `source` hold `nreduce` elements (the routine's contract).
        unsafe { to_all_in_pieces(call, c, &set, dest, source, count, op, psync) };
        return;
    }
    let acc = fold_members(call, c, (0..set.size).map(|i| set.pe(i)), source as usize, count, |a, x| T::combine(call, op, a, x));
    // Every member has read every source before any dest (which may be a source) changes.
    barrier(call, c, &set, psync);
    // SAFETY: `dest` holds `nreduce` elements of this PE.
    unsafe { write_local(call, dest, &acc.unwrap_or_default()) };
}

/// The body of a large `to_all` after its first barrier: member `k` folds piece `k` of
/// every member's `source` into piece `k` of its own `dest` (its own contribution first,
/// then the others' in member order; one member computes each piece, so every member
/// ends with the same values); after a barrier each member reads the other pieces from
/// their owners' `dest`, and a last barrier keeps every `dest` unchanged until all have
/// read it. Each member moves about `2 * count` elements whatever the set's size, where
/// folding whole sources moves `size * count`. When `dest` is `source`, a member's first
/// write (its own piece) is one no other member reads before the second barrier. The
/// others' pieces land in a buffer kept per thread, so repeated calls take no page
/// faults.
///
/// # Safety
/// `dest` and `source` hold `count` elements.
#[allow(clippy::too_many_arguments)]
unsafe fn to_all_in_pieces<T: Reducible>(
    call: &str,
    c: &Ctx,
    set: &ActiveSet,
    dest: *mut T,
    source: *const T,
    count: usize,
    op: ReduceOp,
    psync: *mut c_long,
) {
    thread_local! {
        /// The piece of another member being combined (16-byte words: aligned for every
        /// element type).
        static THEIRS: std::cell::RefCell<Vec<u128>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let elem = std::mem::size_of::<T>();
    let per = count.div_ceil(set.size);
    let piece = |k: usize| (k * per).min(count)..((k + 1) * per).min(count);
    let mine = piece(set.me);
    let at = mine.start * elem;
    let len = mine.len() * elem;
    // SAFETY: piece `mine` lies inside `dest`'s and `source`'s `count` elements.
    let acc = unsafe { crate::state::local_mut(call, "dest", (dest as *mut u8).add(at) as *mut c_void, len) };
    if !std::ptr::eq(dest, source) {
        // SAFETY: as above, for `source`; the routine's arrays do not partly overlap.
        acc.copy_from_slice(unsafe { crate::state::local(call, "source", (source as *const u8).add(at) as *const c_void, len) });
    }
    THEIRS.with_borrow_mut(|buf| {
        buf.resize(len.div_ceil(16), 0);
        let theirs = &mut bytemuck::cast_slice_mut::<u128, u8>(buf)[..len];
        for k in (0..set.size).filter(|&k| k != set.me) {
            c.getmem(theirs, source as usize + at, set.pe(k)).or_exit(call);
            T::combine(call, op, bytemuck::cast_slice_mut(acc), bytemuck::cast_slice(theirs));
        }
    });
    barrier(call, c, set, psync);
    for k in (0..set.size).filter(|&k| k != set.me) {
        let theirs = piece(k);
        let at = theirs.start * elem;
        // SAFETY: piece `k` lies inside `dest`'s `count` elements.
        unsafe { get(call, c, (dest as *mut u8).add(at) as *mut c_void, dest as usize + at, theirs.len() * elem, set.pe(k)) };
    }
    barrier(call, c, set, psync);
}

/// Expands the first body for the TYPENAMEs the deprecated `and/or/xor_to_all` have, the
/// second for the others: the one list of them.
macro_rules! if_to_all_bitwise {
    (short, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (int, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (long, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (longlong, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    ($other:ident, {$($yes:tt)*} else {$($no:tt)*}) => { $($no)* };
}

/// Expands the first body for the TYPENAMEs the deprecated `max/min_to_all` have (the
/// bitwise ones, the real ones), the second for the others.
macro_rules! if_to_all_minmax {
    (float, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (double, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (longdouble, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    ($other:ident, {$($yes:tt)*} else {$($no:tt)*}) => { if_to_all_bitwise!($other, {$($yes)*} else {$($no)*}); };
}

/// Expands the first body for the TYPENAMEs the deprecated `sum/prod_to_all` have (those
/// of max/min and the complex ones), the second for the others.
macro_rules! if_to_all_arith {
    (complexf, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (complexd, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    ($other:ident, {$($yes:tt)*} else {$($no:tt)*}) => { if_to_all_minmax!($other, {$($yes)*} else {$($no)*}); };
}

/// `$n_OP_to_all` for the listed operators, and their `ROUTINES`.
macro_rules! to_all_fns {
    ($n:ident, $(($m:ident, $s:literal, $op:expr)),*) => {
        $(
        c_fn!($m, $n => $s, no_generic;
            fn (dest: *mut T, source: *const T, nreduce: c_int, PE_start: c_int, logPE_stride: c_int, PE_size: c_int, pWrk: *mut T, pSync: *mut c_long) =
            |call| { let _ = pWrk; to_all::<T>(call, dest, source, nreduce, PE_start, logPE_stride, PE_size, pSync, $op) });
        )*
        pub(crate) const ROUTINES: &[Routine] = routines![$($m),*];
    };
}

/// The deprecated active-set reductions of one type list, each operator where the type
/// has it.
macro_rules! to_all {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            #[allow(unused_imports)]
            use super::*;
            #[allow(dead_code)] // types with no deprecated form
            type T = $t;
            /// MAX and MIN.
            pub(crate) mod minmax {
                use super::*;
                if_to_all_minmax!($n, {
                    to_all_fns!($n, (max, "max_to_all", ReduceOp::Max), (min, "min_to_all", ReduceOp::Min));
                } else {
                    pub(crate) const ROUTINES: &[Routine] = &[];
                });
            }
            /// SUM and PROD.
            pub(crate) mod arith {
                use super::*;
                if_to_all_arith!($n, {
                    to_all_fns!($n, (sum, "sum_to_all", ReduceOp::Sum), (prod, "prod_to_all", ReduceOp::Prod));
                } else {
                    pub(crate) const ROUTINES: &[Routine] = &[];
                });
            }
            /// AND, OR and XOR.
            pub(crate) mod bitwise {
                use super::*;
                if_to_all_bitwise!($n, {
                    to_all_fns!($n, (and, "and_to_all", ReduceOp::And), (or, "or_to_all", ReduceOp::Or), (xor, "xor_to_all", ReduceOp::Xor));
                } else {
                    pub(crate) const ROUTINES: &[Routine] = &[];
                });
            }
        }
        )*
        /// The bitwise forms of every type of this list.
        pub(crate) const BITWISE: &[&[Routine]] = &[$($n::bitwise::ROUTINES),*];
        /// The max, min, sum and prod forms of every type of this list.
        pub(crate) const ARITH: &[&[Routine]] = &[$($n::minmax::ROUTINES, $n::arith::ROUTINES),*];
    };
}

/// The deprecated active-set reductions of the types Rust computes.
pub(crate) mod to_all_rust {
    use super::*;
    rshmem::reduce_minmax_types!(to_all);
}

/// The deprecated active-set reductions of the types C computes.
pub(crate) mod to_all_c_only {
    use super::*;
    crate::c_only_reduce_arith_types!(to_all);
}

/// The untyped routines of this module, in header order.
pub(crate) const ROUTINES: &[&[Routine]] = &[routines![barrier_fn, sync_fn], w32::ROUTINES, w64::ROUTINES];

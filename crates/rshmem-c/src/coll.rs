//! Team-based collectives: broadcast, collect, fcollect, alltoall, alltoalls (typed from
//! the type table, and `mem` forms), the reductions `TYPENAME_OP_reduce` over the
//! reduction tables, the 1.6 sum scans, and the deprecated `TYPENAME_OP_to_all` (an
//! active-set routine; see `active_set`). Team routines return 0, or nonzero for
//! `SHMEM_TEAM_INVALID`.

use crate::state::{bad_arg, bytes_of, rt, stride_arg, OrExit, TeamHandle};
use crate::teams::team_of;
use rshmem::{Ctx, ReduceOp, ReduceType, Team};
use std::ffi::{c_int, c_long, c_void};

/// Runs a collective on the team behind `h`: 0, or -1 for `SHMEM_TEAM_INVALID`.
fn on_team(call: &str, h: TeamHandle, f: impl FnOnce(&Ctx, Team) -> rshmem::Result<()>) -> c_int {
    let c = rt(call);
    let Some(t) = team_of(h) else { return -1 };
    f(c, t).or_exit(call);
    0
}

fn broadcast(call: &str, team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, size: usize, root: c_int) -> c_int {
    if root < 0 {
        bad_arg(call, "PE_root", format_args!("{root} is negative"));
    }
    let bytes = bytes_of(call, nelems, size);
    on_team(call, team, |c, t| c.broadcastmem(t, dest as usize, source as usize, bytes, root as usize))
}

fn collect(call: &str, team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, size: usize, fixed: bool) -> c_int {
    let bytes = bytes_of(call, nelems, size);
    on_team(call, team, |c, t| {
        if fixed {
            c.fcollectmem(t, dest as usize, source as usize, bytes)
        } else {
            c.collectmem(t, dest as usize, source as usize, bytes)
        }
    })
}

fn alltoall(call: &str, team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, size: usize) -> c_int {
    let bytes = bytes_of(call, nelems, size);
    on_team(call, team, |c, t| c.alltoallmem(t, dest as usize, source as usize, bytes))
}

fn alltoalls(
    call: &str,
    team: TeamHandle,
    dest: *mut c_void,
    source: *const c_void,
    dst: isize,
    sst: isize,
    nelems: usize,
    size: usize,
) -> c_int {
    let (dst, sst) = (stride_arg(call, "dst", dst), stride_arg(call, "sst", sst));
    on_team(call, team, |c, t| c.alltoalls_addr(t, dest as usize, source as usize, dst, sst, nelems, size))
}

macro_rules! coll_typed {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            const SIZE: usize = std::mem::size_of::<$t>();
            c_fn!(broadcast, concat!(stringify!($n), "_broadcast");
                fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int) -> c_int =
                |call| broadcast(call, team, dest, source, nelems, SIZE, pe_root));
            c_fn!(collect, concat!(stringify!($n), "_collect");
                fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
                |call| collect(call, team, dest, source, nelems, SIZE, false));
            c_fn!(fcollect, concat!(stringify!($n), "_fcollect");
                fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
                |call| collect(call, team, dest, source, nelems, SIZE, true));
            c_fn!(alltoall, concat!(stringify!($n), "_alltoall");
                fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
                |call| alltoall(call, team, dest, source, nelems, SIZE));
            c_fn!(alltoalls, concat!(stringify!($n), "_alltoalls");
                fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize) -> c_int =
                |call| alltoalls(call, team, dest, source, dst, sst, nelems, SIZE));
        }
    )* };
}

/// Typed collectives of every RMA type.
pub(crate) mod typed {
    use super::*;
    rshmem::rma_types!(coll_typed);
    crate::c_only_rma_types!(coll_typed);
}

c_fn!(broadcastmem, "broadcastmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, pe_root: c_int) -> c_int =
    |call| broadcast(call, team, dest, source, nelems, 1, pe_root));
c_fn!(collectmem, "collectmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
    |call| collect(call, team, dest, source, nelems, 1, false));
c_fn!(fcollectmem, "fcollectmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
    |call| collect(call, team, dest, source, nelems, 1, true));
c_fn!(alltoallmem, "alltoallmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
    |call| alltoall(call, team, dest, source, nelems, 1));
c_fn!(alltoallsmem, "alltoallsmem";
    fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize) -> c_int =
    |call| alltoalls(call, team, dest, source, dst, sst, nelems, 1));

/// `TYPENAME_OP_reduce`.
fn reduce<T: ReduceType>(call: &str, team: TeamHandle, dest: *mut T, source: *const T, nreduce: usize, op: ReduceOp) -> c_int {
    on_team(call, team, |c, t| c.reduce_addr(t, dest as usize, source as usize, nreduce, T::DTYPE, op))
}

/// `TYPENAME_sum_inscan` / `_exscan`.
fn scan<T: ReduceType>(call: &str, team: TeamHandle, dest: *mut T, source: *const T, nelems: usize, exclusive: bool) -> c_int {
    on_team(call, team, |c, t| c.sum_scan_addr(t, dest as usize, source as usize, nelems, T::DTYPE, exclusive))
}

macro_rules! reduce_fns {
    (@ops $t:ty, $n:ident, $(($m:ident, $s:literal, $op:expr)),*) => { $(
        c_fn!($m, concat!(stringify!($n), $s); fn (team: TeamHandle, dest: *mut $t, source: *const $t, nreduce: usize) -> c_int =
            |call| reduce::<$t>(call, team, dest, source, nreduce, $op));
    )* };
}

macro_rules! reduce_bitwise {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            reduce_fns!(@ops $t, $n, (and, "_and_reduce", ReduceOp::And), (or, "_or_reduce", ReduceOp::Or), (xor, "_xor_reduce", ReduceOp::Xor));
        }
    )* };
}

macro_rules! reduce_minmax {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            reduce_fns!(@ops $t, $n, (max, "_max_reduce", ReduceOp::Max), (min, "_min_reduce", ReduceOp::Min));
        }
    )* };
}

macro_rules! reduce_arith {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            reduce_fns!(@ops $t, $n, (sum, "_sum_reduce", ReduceOp::Sum), (prod, "_prod_reduce", ReduceOp::Prod));
            c_fn!(inscan, concat!(stringify!($n), "_sum_inscan"); fn (team: TeamHandle, dest: *mut $t, source: *const $t, nelems: usize) -> c_int =
                |call| scan::<$t>(call, team, dest, source, nelems, false));
            c_fn!(exscan, concat!(stringify!($n), "_sum_exscan"); fn (team: TeamHandle, dest: *mut $t, source: *const $t, nelems: usize) -> c_int =
                |call| scan::<$t>(call, team, dest, source, nelems, true));
        }
    )* };
}

/// AND, OR, XOR reductions.
pub(crate) mod bitwise {
    use super::*;
    rshmem::reduce_bitwise_types!(reduce_bitwise);
}

/// MAX, MIN reductions.
pub(crate) mod minmax {
    use super::*;
    rshmem::reduce_minmax_types!(reduce_minmax);
}

/// SUM, PROD reductions and the sum scans.
pub(crate) mod arith {
    use super::*;
    rshmem::reduce_arith_types!(reduce_arith);
}

/// Expands `$($body)*` only for the TYPENAMEs the deprecated `and/or/xor_to_all` have.
macro_rules! if_to_all_bitwise {
    (short, $($body:tt)*) => { $($body)* };
    (int, $($body:tt)*) => { $($body)* };
    (long, $($body:tt)*) => { $($body)* };
    (longlong, $($body:tt)*) => { $($body)* };
    ($other:ident, $($body:tt)*) => {};
}

/// Expands `$($body)*` only for the TYPENAMEs the deprecated `max/min/sum/prod_to_all`
/// have (of those Rust can compute: not `long double` or the complex types).
macro_rules! if_to_all_arith {
    (float, $($body:tt)*) => { $($body)* };
    (double, $($body:tt)*) => { $($body)* };
    ($other:ident, $($body:tt)*) => { if_to_all_bitwise!($other, $($body)*); };
}

macro_rules! to_all_fns {
    (@ops $t:ty, $n:ident, $(($m:ident, $s:literal, $op:expr)),*) => { $(
        c_fn!($m, concat!(stringify!($n), $s);
            fn (dest: *mut $t, source: *const $t, nreduce: c_int, pe_start: c_int, log_pe_stride: c_int, pe_size: c_int, pwrk: *mut $t, psync: *mut c_long) =
            |call| { let _ = pwrk; crate::active_set::to_all::<$t>(call, dest, source, nreduce, pe_start, log_pe_stride, pe_size, psync, $op) });
    )* };
}

macro_rules! to_all {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            #[allow(unused_imports)]
            use super::*;
            if_to_all_arith!($n, to_all_fns!(@ops $t, $n, (max, "_max_to_all", ReduceOp::Max), (min, "_min_to_all", ReduceOp::Min),
                (sum, "_sum_to_all", ReduceOp::Sum), (prod, "_prod_to_all", ReduceOp::Prod)););
            if_to_all_bitwise!($n, to_all_fns!(@ops $t, $n, (and, "_and_to_all", ReduceOp::And), (or, "_or_to_all", ReduceOp::Or),
                (xor, "_xor_to_all", ReduceOp::Xor)););
        }
    )* };
}

/// The deprecated active-set reductions.
pub(crate) mod to_all {
    use super::*;
    rshmem::reduce_minmax_types!(to_all);
}

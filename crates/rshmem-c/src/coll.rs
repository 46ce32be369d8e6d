//! Team-based collectives: broadcast, collect, fcollect, alltoall, alltoalls (typed from
//! the type table, and `mem` forms), the reductions `TYPENAME_OP_reduce` over the
//! reduction tables and the 1.6 sum scans (`crate::reduce` says how each type is
//! computed). Team routines return 0, or nonzero for `SHMEM_TEAM_INVALID`.

use crate::handle::TeamHandle;
use crate::reduce::{on_team, Reducible};
use crate::routine::Routine;
use crate::state::{bad_arg, bytes_of, stride_arg};
use rshmem::ReduceOp;
use std::ffi::{c_int, c_void};

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
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const SIZE: usize = std::mem::size_of::<T>();
            c_fn!(broadcast, $n => "broadcast";
                fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize, PE_root: c_int) -> c_int =
                |call| broadcast(call, team, dest.cast(), source.cast(), nelems, SIZE, PE_root));
            c_fn!(collect, $n => "collect"; fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize) -> c_int =
                |call| collect(call, team, dest.cast(), source.cast(), nelems, SIZE, false));
            c_fn!(fcollect, $n => "fcollect"; fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize) -> c_int =
                |call| collect(call, team, dest.cast(), source.cast(), nelems, SIZE, true));
            c_fn!(alltoall, $n => "alltoall"; fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize) -> c_int =
                |call| alltoall(call, team, dest.cast(), source.cast(), nelems, SIZE));
            c_fn!(alltoalls, $n => "alltoalls";
                fn (team: TeamHandle, dest: *mut T, source: *const T, dst: isize, sst: isize, nelems: usize) -> c_int =
                |call| alltoalls(call, team, dest.cast(), source.cast(), dst, sst, nelems, SIZE));
            pub(crate) const ROUTINES: &[Routine] = routines![broadcast, collect, fcollect, alltoall, alltoalls];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

/// Typed collectives of every RMA type Rust has.
pub(crate) mod typed {
    use super::*;
    rshmem::rma_types!(coll_typed);
}

/// Typed collectives of the RMA types only C has.
pub(crate) mod typed_c_only {
    use super::*;
    crate::c_only_rma_types!(coll_typed);
}

c_fn!(broadcastmem, "broadcastmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize, PE_root: c_int) -> c_int =
    |call| broadcast(call, team, dest, source, nelems, 1, PE_root));
c_fn!(collectmem, "collectmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
    |call| collect(call, team, dest, source, nelems, 1, false));
c_fn!(fcollectmem, "fcollectmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
    |call| collect(call, team, dest, source, nelems, 1, true));
c_fn!(alltoallmem, "alltoallmem"; fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, nelems: usize) -> c_int =
    |call| alltoall(call, team, dest, source, nelems, 1));
c_fn!(alltoallsmem, "alltoallsmem";
    fn (team: TeamHandle, dest: *mut c_void, source: *const c_void, dst: isize, sst: isize, nelems: usize) -> c_int =
    |call| alltoalls(call, team, dest, source, dst, sst, nelems, 1));

/// The byte collectives.
pub(crate) const ROUTINES: &[Routine] = routines![broadcastmem, collectmem, fcollectmem, alltoallmem, alltoallsmem];

/// The reductions `$n_OP_reduce` of one type for the listed operators.
macro_rules! reduce_fns {
    ($n:ident, $(($m:ident, $s:literal, $op:expr)),*) => { $(
        c_fn!($m, $n => $s; fn (team: TeamHandle, dest: *mut T, source: *const T, nreduce: usize) -> c_int =
            |call| T::reduce(call, team, dest, source, nreduce, $op));
    )* };
}

macro_rules! reduce_bitwise {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            reduce_fns!($n, (and, "and_reduce", ReduceOp::And), (or, "or_reduce", ReduceOp::Or), (xor, "xor_reduce", ReduceOp::Xor));
            pub(crate) const ROUTINES: &[Routine] = routines![and, or, xor];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

macro_rules! reduce_minmax {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            reduce_fns!($n, (max, "max_reduce", ReduceOp::Max), (min, "min_reduce", ReduceOp::Min));
            pub(crate) const ROUTINES: &[Routine] = routines![max, min];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

macro_rules! reduce_arith {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            reduce_fns!($n, (sum, "sum_reduce", ReduceOp::Sum), (prod, "prod_reduce", ReduceOp::Prod));
            c_fn!(inscan, $n => "sum_inscan", shmemx; fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize) -> c_int =
                |call| T::scan(call, team, dest, source, nelems, false));
            c_fn!(exscan, $n => "sum_exscan", shmemx; fn (team: TeamHandle, dest: *mut T, source: *const T, nelems: usize) -> c_int =
                |call| T::scan(call, team, dest, source, nelems, true));
            pub(crate) const ROUTINES: &[Routine] = routines![sum, prod, inscan, exscan];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

/// AND, OR, XOR reductions.
pub(crate) mod bitwise {
    use super::*;
    rshmem::reduce_bitwise_types!(reduce_bitwise);
}

/// MAX, MIN reductions of the types Rust computes.
pub(crate) mod minmax {
    use super::*;
    rshmem::reduce_minmax_types!(reduce_minmax);
}

/// MAX, MIN reductions of the types C computes.
pub(crate) mod minmax_c_only {
    use super::*;
    crate::c_only_reduce_minmax_types!(reduce_minmax);
}

/// SUM, PROD reductions and the sum scans of the types Rust computes.
pub(crate) mod arith {
    use super::*;
    rshmem::reduce_arith_types!(reduce_arith);
}

/// SUM, PROD reductions and the sum scans of the types C computes.
pub(crate) mod arith_c_only {
    use super::*;
    crate::c_only_reduce_arith_types!(reduce_arith);
}

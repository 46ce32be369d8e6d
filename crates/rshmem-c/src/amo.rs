//! Atomic memory operations: the `shmem_atomic_*` routines (blocking and non-blocking
//! fetching forms, with context twins) over the AMO type tables, and the deprecated
//! `shmem_TYPENAME_fetch/set/swap/cswap/finc/inc/fadd/add` names.

use crate::ctx::with_ctx;
use crate::handle::{CtxHandle, DEFAULT};
use crate::routine::Routine;
use crate::state::{bad_arg, pe_arg, OrExit};
use rshmem::Ctx;
use std::ffi::c_int;

/// Runs one atomic on (context-relative) `pe`.
#[inline]
pub(crate) fn amo<R>(call: &str, h: CtxHandle, pe: c_int, f: impl FnOnce(&Ctx, usize) -> rshmem::Result<R>) -> R {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        f(c, pe).or_exit(call)
    })
}

/// Writes a fetched value to the caller's `fetch` argument.
///
/// # Safety
/// `fetch` is null or points to a `T` the caller owns.
#[inline]
pub(crate) unsafe fn store<T>(call: &str, fetch: *mut T, v: T) {
    if fetch.is_null() {
        bad_arg(call, "fetch", "null pointer");
    }
    // SAFETY: non-null, the caller's variable.
    unsafe { fetch.write(v) }
}

/// Expands the first body for the TYPENAMEs the deprecated extended names
/// (`shmem_TYPENAME_fetch/set/swap`) had, the second for the others: the one list of them.
macro_rules! if_deprecated_extended {
    (int, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (long, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (longlong, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (float, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (double, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    ($other:ident, {$($yes:tt)*} else {$($no:tt)*}) => { $($no)* };
}

/// Expands the first body for the TYPENAMEs the deprecated standard names
/// (`shmem_TYPENAME_cswap/finc/inc/fadd/add`) had, the second for the others.
macro_rules! if_deprecated_standard {
    (int, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (long, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    (longlong, {$($yes:tt)*} else {$($no:tt)*}) => { $($yes)* };
    ($other:ident, {$($yes:tt)*} else {$($no:tt)*}) => { $($no)* };
}

/// fetch, set, swap (standard and extended types).
macro_rules! amo_extended {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            c_pair!(fetch, $n => "atomic_fetch"; fn (source: *const T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_fetch_addr::<T>(source as usize, pe)));
            c_pair!(set, $n => "atomic_set"; fn (dest: *mut T, value: T, pe: c_int) =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_set_addr(dest as usize, value, pe)));
            c_pair!(swap, $n => "atomic_swap"; fn (dest: *mut T, value: T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_swap_addr(dest as usize, value, pe)));
            c_pair!(fetch_nbi, $n => "atomic_fetch_nbi"; fn (fetch: *mut T, source: *const T, pe: c_int) =
                |call, ctx| {
                    let mut v = <T as rshmem::WordType>::from_bits(0);
                    amo(call, ctx, pe, |c, pe| c.atomic_fetch_nbi_addr(&mut v, source as usize, pe));
                    store(call, fetch, v)
                });
            c_pair!(swap_nbi, $n => "atomic_swap_nbi"; fn (fetch: *mut T, dest: *mut T, value: T, pe: c_int) =
                |call, ctx| {
                    let mut v = <T as rshmem::WordType>::from_bits(0);
                    amo(call, ctx, pe, |c, pe| c.atomic_swap_nbi_addr(&mut v, dest as usize, value, pe));
                    store(call, fetch, v)
                });
            pub(crate) const ROUTINES: &[Routine] = routines![fetch, set, swap, fetch_nbi, swap_nbi];
            /// The deprecated names of this type.
            pub(crate) mod deprecated {
                use super::*;
                if_deprecated_extended!($n, {
                    c_fn!(old_fetch, $n => "fetch"; fn (source: *const T, pe: c_int) -> T =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_fetch_addr::<T>(source as usize, pe)));
                    c_fn!(old_set, $n => "set"; fn (dest: *mut T, value: T, pe: c_int) =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_set_addr(dest as usize, value, pe)));
                    c_fn!(old_swap, $n => "swap"; fn (dest: *mut T, value: T, pe: c_int) -> T =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_swap_addr(dest as usize, value, pe)));
                    pub(crate) const ROUTINES: &[Routine] = routines![old_fetch, old_set, old_swap];
                } else {
                    pub(crate) const ROUTINES: &[Routine] = &[];
                });
            }
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
        /// Their deprecated names.
        pub(crate) const DEPRECATED: &[&[Routine]] = &[$($n::deprecated::ROUTINES),*];
    };
}

/// compare_swap, fetch_inc, inc, fetch_add, add (standard types).
macro_rules! amo_standard {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const ZERO: T = 0 as T;
            c_pair!(compare_swap, $n => "atomic_compare_swap"; fn (dest: *mut T, cond: T, value: T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_compare_swap_addr(dest as usize, cond, value, pe)));
            c_pair!(compare_swap_nbi, $n => "atomic_compare_swap_nbi";
                fn (fetch: *mut T, dest: *mut T, cond: T, value: T, pe: c_int) =
                |call, ctx| {
                    let mut v = ZERO;
                    amo(call, ctx, pe, |c, pe| c.atomic_compare_swap_nbi_addr(&mut v, dest as usize, cond, value, pe));
                    store(call, fetch, v)
                });
            c_pair!(fetch_inc, $n => "atomic_fetch_inc"; fn (dest: *mut T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_fetch_inc_addr::<T>(dest as usize, pe)));
            c_pair!(fetch_inc_nbi, $n => "atomic_fetch_inc_nbi"; fn (fetch: *mut T, dest: *mut T, pe: c_int) =
                |call, ctx| {
                    let mut v = ZERO;
                    amo(call, ctx, pe, |c, pe| c.atomic_fetch_inc_nbi_addr(&mut v, dest as usize, pe));
                    store(call, fetch, v)
                });
            c_pair!(inc, $n => "atomic_inc"; fn (dest: *mut T, pe: c_int) =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_inc_addr::<T>(dest as usize, pe)));
            c_pair!(fetch_add, $n => "atomic_fetch_add"; fn (dest: *mut T, value: T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_fetch_add_addr(dest as usize, value, pe)));
            c_pair!(fetch_add_nbi, $n => "atomic_fetch_add_nbi"; fn (fetch: *mut T, dest: *mut T, value: T, pe: c_int) =
                |call, ctx| {
                    let mut v = ZERO;
                    amo(call, ctx, pe, |c, pe| c.atomic_fetch_add_nbi_addr(&mut v, dest as usize, value, pe));
                    store(call, fetch, v)
                });
            c_pair!(add, $n => "atomic_add"; fn (dest: *mut T, value: T, pe: c_int) =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_add_addr(dest as usize, value, pe)));
            pub(crate) const ROUTINES: &[Routine] =
                routines![compare_swap, compare_swap_nbi, fetch_inc, fetch_inc_nbi, inc, fetch_add, fetch_add_nbi, add];
            /// The deprecated names of this type.
            pub(crate) mod deprecated {
                use super::*;
                if_deprecated_standard!($n, {
                    c_fn!(old_cswap, $n => "cswap"; fn (dest: *mut T, cond: T, value: T, pe: c_int) -> T =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_compare_swap_addr(dest as usize, cond, value, pe)));
                    c_fn!(old_finc, $n => "finc"; fn (dest: *mut T, pe: c_int) -> T =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_fetch_inc_addr::<T>(dest as usize, pe)));
                    c_fn!(old_inc, $n => "inc"; fn (dest: *mut T, pe: c_int) =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_inc_addr::<T>(dest as usize, pe)));
                    c_fn!(old_fadd, $n => "fadd"; fn (dest: *mut T, value: T, pe: c_int) -> T =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_fetch_add_addr(dest as usize, value, pe)));
                    c_fn!(old_add, $n => "add"; fn (dest: *mut T, value: T, pe: c_int) =
                        |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_add_addr(dest as usize, value, pe)));
                    pub(crate) const ROUTINES: &[Routine] = routines![old_cswap, old_finc, old_inc, old_fadd, old_add];
                } else {
                    pub(crate) const ROUTINES: &[Routine] = &[];
                });
            }
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
        /// Their deprecated names.
        pub(crate) const DEPRECATED: &[&[Routine]] = &[$($n::deprecated::ROUTINES),*];
    };
}

/// fetch_and/or/xor and and/or/xor (bitwise types).
macro_rules! amo_bitwise {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const ZERO: T = 0 as T;
            amo_bitwise!(@op $n, and, fetch_and, fetch_and_nbi, atomic_fetch_and_addr, atomic_fetch_and_nbi_addr, atomic_and_addr,
                "atomic_fetch_and", "atomic_fetch_and_nbi", "atomic_and");
            amo_bitwise!(@op $n, or, fetch_or, fetch_or_nbi, atomic_fetch_or_addr, atomic_fetch_or_nbi_addr, atomic_or_addr,
                "atomic_fetch_or", "atomic_fetch_or_nbi", "atomic_or");
            amo_bitwise!(@op $n, xor, fetch_xor, fetch_xor_nbi, atomic_fetch_xor_addr, atomic_fetch_xor_nbi_addr, atomic_xor_addr,
                "atomic_fetch_xor", "atomic_fetch_xor_nbi", "atomic_xor");
            pub(crate) const ROUTINES: &[Routine] =
                routines![fetch_and, fetch_and_nbi, and, fetch_or, fetch_or_nbi, or, fetch_xor, fetch_xor_nbi, xor];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
    (@op $n:ident, $upd:ident, $fetch:ident, $nbi:ident, $fetch_m:ident, $nbi_m:ident, $upd_m:ident,
        $fetch_s:literal, $nbi_s:literal, $upd_s:literal) => {
        c_pair!($fetch, $n => $fetch_s; fn (dest: *mut T, value: T, pe: c_int) -> T =
            |call, ctx| amo(call, ctx, pe, |c, pe| c.$fetch_m(dest as usize, value, pe)));
        c_pair!($nbi, $n => $nbi_s; fn (fetch: *mut T, dest: *mut T, value: T, pe: c_int) =
            |call, ctx| {
                let mut v = ZERO;
                amo(call, ctx, pe, |c, pe| c.$nbi_m(&mut v, dest as usize, value, pe));
                store(call, fetch, v)
            });
        c_pair!($upd, $n => $upd_s; fn (dest: *mut T, value: T, pe: c_int) =
            |call, ctx| amo(call, ctx, pe, |c, pe| c.$upd_m(dest as usize, value, pe)));
    };
}

/// fetch/set/swap of every standard type.
pub(crate) mod extended {
    use super::*;
    rshmem::amo_standard_types!(amo_extended);
}

/// fetch/set/swap of the extended (floating-point) types.
pub(crate) mod extended_float {
    use super::*;
    rshmem::amo_extended_types!(amo_extended);
}

/// The standard (integer) atomics.
pub(crate) mod standard {
    use super::*;
    rshmem::amo_standard_types!(amo_standard);
}

/// The bitwise atomics.
pub(crate) mod bitwise {
    use super::*;
    rshmem::amo_bitwise_types!(amo_bitwise);
}

//! Atomic memory operations: the `shmem_atomic_*` routines (blocking and non-blocking
//! fetching forms, with context twins) over the AMO type tables, and the deprecated
//! `shmem_TYPENAME_fetch/set/swap/cswap/finc/inc/fadd/add` names.

use crate::ctx::with_ctx;
use crate::state::{bad_arg, pe_arg, CtxHandle, OrExit, DEFAULT};
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

/// Expands `$($body)*` only for the TYPENAMEs the deprecated extended names had.
macro_rules! if_deprecated_extended {
    (int, $($body:tt)*) => { $($body)* };
    (long, $($body:tt)*) => { $($body)* };
    (longlong, $($body:tt)*) => { $($body)* };
    (float, $($body:tt)*) => { $($body)* };
    (double, $($body:tt)*) => { $($body)* };
    ($other:ident, $($body:tt)*) => {};
}

/// Expands `$($body)*` only for the TYPENAMEs the deprecated standard names had.
macro_rules! if_deprecated_standard {
    (int, $($body:tt)*) => { $($body)* };
    (long, $($body:tt)*) => { $($body)* };
    (longlong, $($body:tt)*) => { $($body)* };
    ($other:ident, $($body:tt)*) => {};
}

/// fetch, set, swap (standard and extended types).
macro_rules! amo_extended {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            c_pair!(fetch, concat!(stringify!($n), "_atomic_fetch"); fn (source: *const T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_fetch_addr::<T>(source as usize, pe)));
            c_pair!(set, concat!(stringify!($n), "_atomic_set"); fn (dest: *mut T, value: T, pe: c_int) =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_set_addr(dest as usize, value, pe)));
            c_pair!(swap, concat!(stringify!($n), "_atomic_swap"); fn (dest: *mut T, value: T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_swap_addr(dest as usize, value, pe)));
            c_pair!(fetch_nbi, concat!(stringify!($n), "_atomic_fetch_nbi"); fn (fetch: *mut T, source: *const T, pe: c_int) =
                |call, ctx| {
                    let mut v = <T as rshmem::WordType>::from_bits(0);
                    amo(call, ctx, pe, |c, pe| c.atomic_fetch_nbi_addr(&mut v, source as usize, pe));
                    store(call, fetch, v)
                });
            c_pair!(swap_nbi, concat!(stringify!($n), "_atomic_swap_nbi"); fn (fetch: *mut T, dest: *mut T, value: T, pe: c_int) =
                |call, ctx| {
                    let mut v = <T as rshmem::WordType>::from_bits(0);
                    amo(call, ctx, pe, |c, pe| c.atomic_swap_nbi_addr(&mut v, dest as usize, value, pe));
                    store(call, fetch, v)
                });
            if_deprecated_extended!($n,
                c_fn!(old_fetch, concat!(stringify!($n), "_fetch"); fn (source: *const T, pe: c_int) -> T =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_fetch_addr::<T>(source as usize, pe)));
                c_fn!(old_set, concat!(stringify!($n), "_set"); fn (dest: *mut T, value: T, pe: c_int) =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_set_addr(dest as usize, value, pe)));
                c_fn!(old_swap, concat!(stringify!($n), "_swap"); fn (dest: *mut T, value: T, pe: c_int) -> T =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_swap_addr(dest as usize, value, pe)));
            );
        }
    )* };
}

/// compare_swap, fetch_inc, inc, fetch_add, add (standard types).
macro_rules! amo_standard {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const ZERO: T = 0 as T;
            c_pair!(compare_swap, concat!(stringify!($n), "_atomic_compare_swap"); fn (dest: *mut T, cond: T, value: T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_compare_swap_addr(dest as usize, cond, value, pe)));
            c_pair!(compare_swap_nbi, concat!(stringify!($n), "_atomic_compare_swap_nbi");
                fn (fetch: *mut T, dest: *mut T, cond: T, value: T, pe: c_int) =
                |call, ctx| {
                    let mut v = ZERO;
                    amo(call, ctx, pe, |c, pe| c.atomic_compare_swap_nbi_addr(&mut v, dest as usize, cond, value, pe));
                    store(call, fetch, v)
                });
            c_pair!(fetch_inc, concat!(stringify!($n), "_atomic_fetch_inc"); fn (dest: *mut T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_fetch_inc_addr::<T>(dest as usize, pe)));
            c_pair!(fetch_inc_nbi, concat!(stringify!($n), "_atomic_fetch_inc_nbi"); fn (fetch: *mut T, dest: *mut T, pe: c_int) =
                |call, ctx| {
                    let mut v = ZERO;
                    amo(call, ctx, pe, |c, pe| c.atomic_fetch_inc_nbi_addr(&mut v, dest as usize, pe));
                    store(call, fetch, v)
                });
            c_pair!(inc, concat!(stringify!($n), "_atomic_inc"); fn (dest: *mut T, pe: c_int) =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_inc_addr::<T>(dest as usize, pe)));
            c_pair!(fetch_add, concat!(stringify!($n), "_atomic_fetch_add"); fn (dest: *mut T, value: T, pe: c_int) -> T =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_fetch_add_addr(dest as usize, value, pe)));
            c_pair!(fetch_add_nbi, concat!(stringify!($n), "_atomic_fetch_add_nbi"); fn (fetch: *mut T, dest: *mut T, value: T, pe: c_int) =
                |call, ctx| {
                    let mut v = ZERO;
                    amo(call, ctx, pe, |c, pe| c.atomic_fetch_add_nbi_addr(&mut v, dest as usize, value, pe));
                    store(call, fetch, v)
                });
            c_pair!(add, concat!(stringify!($n), "_atomic_add"); fn (dest: *mut T, value: T, pe: c_int) =
                |call, ctx| amo(call, ctx, pe, |c, pe| c.atomic_add_addr(dest as usize, value, pe)));
            if_deprecated_standard!($n,
                c_fn!(old_cswap, concat!(stringify!($n), "_cswap"); fn (dest: *mut T, cond: T, value: T, pe: c_int) -> T =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_compare_swap_addr(dest as usize, cond, value, pe)));
                c_fn!(old_finc, concat!(stringify!($n), "_finc"); fn (dest: *mut T, pe: c_int) -> T =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_fetch_inc_addr::<T>(dest as usize, pe)));
                c_fn!(old_inc, concat!(stringify!($n), "_inc"); fn (dest: *mut T, pe: c_int) =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_inc_addr::<T>(dest as usize, pe)));
                c_fn!(old_fadd, concat!(stringify!($n), "_fadd"); fn (dest: *mut T, value: T, pe: c_int) -> T =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_fetch_add_addr(dest as usize, value, pe)));
                c_fn!(old_add, concat!(stringify!($n), "_add"); fn (dest: *mut T, value: T, pe: c_int) =
                    |call| amo(call, DEFAULT, pe, |c, pe| c.atomic_add_addr(dest as usize, value, pe)));
            );
        }
    )* };
}

/// fetch_and/or/xor and and/or/xor (bitwise types).
macro_rules! amo_bitwise {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const ZERO: T = 0 as T;
            amo_bitwise!(@op $n, T, ZERO, and, fetch_and, fetch_and_nbi, atomic_fetch_and_addr, atomic_fetch_and_nbi_addr, atomic_and_addr,
                "_atomic_fetch_and", "_atomic_fetch_and_nbi", "_atomic_and");
            amo_bitwise!(@op $n, T, ZERO, or, fetch_or, fetch_or_nbi, atomic_fetch_or_addr, atomic_fetch_or_nbi_addr, atomic_or_addr,
                "_atomic_fetch_or", "_atomic_fetch_or_nbi", "_atomic_or");
            amo_bitwise!(@op $n, T, ZERO, xor, fetch_xor, fetch_xor_nbi, atomic_fetch_xor_addr, atomic_fetch_xor_nbi_addr, atomic_xor_addr,
                "_atomic_fetch_xor", "_atomic_fetch_xor_nbi", "_atomic_xor");
        }
    )* };
    (@op $n:ident, $T:ty, $zero:expr, $upd:ident, $fetch:ident, $nbi:ident, $fetch_m:ident, $nbi_m:ident, $upd_m:ident,
        $fetch_s:literal, $nbi_s:literal, $upd_s:literal) => {
        c_pair!($fetch, concat!(stringify!($n), $fetch_s); fn (dest: *mut $T, value: $T, pe: c_int) -> $T =
            |call, ctx| amo(call, ctx, pe, |c, pe| c.$fetch_m(dest as usize, value, pe)));
        c_pair!($nbi, concat!(stringify!($n), $nbi_s); fn (fetch: *mut $T, dest: *mut $T, value: $T, pe: c_int) =
            |call, ctx| {
                let mut v = $zero;
                amo(call, ctx, pe, |c, pe| c.$nbi_m(&mut v, dest as usize, value, pe));
                store(call, fetch, v)
            });
        c_pair!($upd, concat!(stringify!($n), $upd_s); fn (dest: *mut $T, value: $T, pe: c_int) =
            |call, ctx| amo(call, ctx, pe, |c, pe| c.$upd_m(dest as usize, value, pe)));
    };
}

/// fetch/set/swap of every standard and extended type.
pub(crate) mod extended {
    use super::*;
    rshmem::amo_standard_types!(amo_extended);
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

//! Point-to-point synchronization: `wait_until`, `test` and their array forms
//! (`_all`, `_any`, `_some`, `_vector`), plus the deprecated `wait`, typed from the
//! type table.

use crate::state::{bad_arg, rt, OrExit};
use rshmem::{Cmp, SyncWord, WaitMode};
use std::ffi::c_int;

/// The `cmp` argument.
pub(crate) fn cmp_arg(call: &str, cmp: c_int) -> Cmp {
    Cmp::from_raw(cmp).unwrap_or_else(|| bad_arg(call, "cmp", format_args!("{cmp} is not one of SHMEM_CMP_EQ, _NE, _GT, _GE, _LT, _LE")))
}

/// Waits until `*ivar <cmp> value`.
pub(crate) fn wait_until<T: SyncWord>(call: &str, ivar: *mut T, cmp: c_int, value: T) {
    let cmp = cmp_arg(call, cmp);
    rt(call).wait_until_addr(ivar as usize, cmp, value, None).or_exit(call)
}

/// Whether `*ivar <cmp> value` holds now.
pub(crate) fn test<T: SyncWord>(call: &str, ivar: *mut T, cmp: c_int, value: T) -> c_int {
    let cmp = cmp_arg(call, cmp);
    rt(call).test_addr(ivar as usize, cmp, value).or_exit(call) as c_int
}

/// The comparison values of an array routine: one for all, or one per element.
pub(crate) enum Values<T> {
    One(T),
    Each(*const T),
}

/// The engine of the array forms: returns the satisfied indices (see `Ctx::wait_many_addr`)
/// and the number of elements not excluded by `status`.
///
/// # Safety
/// `status` (when not null) and `Values::Each` point to `nelems` values.
pub(crate) unsafe fn many<T: SyncWord>(
    call: &'static str,
    ivars: *mut T,
    nelems: usize,
    status: *const c_int,
    cmp: c_int,
    values: Values<T>,
    mode: WaitMode,
    block: bool,
) -> (Vec<usize>, usize) {
    let cmp = cmp_arg(call, cmp);
    let c = rt(call);
    if nelems == 0 {
        return (Vec::new(), 0);
    }
    // SAFETY: the caller passes `nelems` status words when `status` is not null.
    let status = (!status.is_null()).then(|| unsafe { std::slice::from_raw_parts(status, nelems) });
    let one;
    let values: &[T] = match values {
        Values::One(v) => {
            one = [v];
            &one
        }
        Values::Each(p) if p.is_null() => bad_arg(call, "cmp_values", format_args!("null pointer for {nelems} values")),
        // SAFETY: the caller passes `nelems` comparison values.
        Values::Each(p) => unsafe { std::slice::from_raw_parts(p, nelems) },
    };
    let active = status.map_or(nelems, |s| s.iter().filter(|&&x| x == 0).count());
    let done = c.wait_many_addr(call, ivars as usize, nelems, status, cmp, values, mode, None, block).or_exit(call);
    (done, active)
}

/// Writes `found` to `indices` and returns how many.
///
/// # Safety
/// `indices` has room for `nelems` entries (at least `found.len()`).
pub(crate) unsafe fn write_indices(call: &str, indices: *mut usize, found: &[usize]) -> usize {
    if !found.is_empty() {
        if indices.is_null() {
            bad_arg(call, "indices", "null pointer");
        }
        // SAFETY: the caller promises room for every element's index.
        unsafe { std::ptr::copy_nonoverlapping(found.as_ptr(), indices, found.len()) };
    }
    found.len()
}

macro_rules! sync_fns {
    ($(($n:ident, $t:ty)),* $(,)?) => { $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            c_fn!(wait_until, concat!(stringify!($n), "_wait_until");
                fn (ivar: *mut T, cmp: c_int, value: T) = |call| wait_until(call, ivar, cmp, value));
            c_fn!(wait, concat!(stringify!($n), "_wait");
                fn (ivar: *mut T, cmp_value: T) = |call| wait_until(call, ivar, Cmp::Ne as c_int, cmp_value));
            c_fn!(test, concat!(stringify!($n), "_test");
                fn (ivar: *mut T, cmp: c_int, value: T) -> c_int = |call| test(call, ivar, cmp, value));
            c_fn!(wait_until_all, concat!(stringify!($n), "_wait_until_all");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, value: T) =
                |call| { many(call, ivars, nelems, status, cmp, Values::One(value), WaitMode::All, true); });
            c_fn!(wait_until_any, concat!(stringify!($n), "_wait_until_any");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, value: T) -> usize =
                |call| many(call, ivars, nelems, status, cmp, Values::One(value), WaitMode::Any, true).0.first().copied().unwrap_or(usize::MAX));
            c_fn!(wait_until_some, concat!(stringify!($n), "_wait_until_some");
                fn (ivars: *mut T, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, value: T) -> usize =
                |call| write_indices(call, indices, &many(call, ivars, nelems, status, cmp, Values::One(value), WaitMode::Some, true).0));
            c_fn!(wait_until_all_vector, concat!(stringify!($n), "_wait_until_all_vector");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, values: *const T) =
                |call| { many(call, ivars, nelems, status, cmp, Values::Each(values), WaitMode::All, true); });
            c_fn!(wait_until_any_vector, concat!(stringify!($n), "_wait_until_any_vector");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, values: *const T) -> usize =
                |call| many(call, ivars, nelems, status, cmp, Values::Each(values), WaitMode::Any, true).0.first().copied().unwrap_or(usize::MAX));
            c_fn!(wait_until_some_vector, concat!(stringify!($n), "_wait_until_some_vector");
                fn (ivars: *mut T, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, values: *const T) -> usize =
                |call| write_indices(call, indices, &many(call, ivars, nelems, status, cmp, Values::Each(values), WaitMode::Some, true).0));
            c_fn!(test_all, concat!(stringify!($n), "_test_all");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, value: T) -> c_int =
                |call| { let (d, a) = many(call, ivars, nelems, status, cmp, Values::One(value), WaitMode::All, false); (d.len() == a) as c_int });
            c_fn!(test_any, concat!(stringify!($n), "_test_any");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, value: T) -> usize =
                |call| many(call, ivars, nelems, status, cmp, Values::One(value), WaitMode::Any, false).0.first().copied().unwrap_or(usize::MAX));
            c_fn!(test_some, concat!(stringify!($n), "_test_some");
                fn (ivars: *mut T, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, value: T) -> usize =
                |call| write_indices(call, indices, &many(call, ivars, nelems, status, cmp, Values::One(value), WaitMode::Some, false).0));
            c_fn!(test_all_vector, concat!(stringify!($n), "_test_all_vector");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, values: *const T) -> c_int =
                |call| { let (d, a) = many(call, ivars, nelems, status, cmp, Values::Each(values), WaitMode::All, false); (d.len() == a) as c_int });
            c_fn!(test_any_vector, concat!(stringify!($n), "_test_any_vector");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, values: *const T) -> usize =
                |call| many(call, ivars, nelems, status, cmp, Values::Each(values), WaitMode::Any, false).0.first().copied().unwrap_or(usize::MAX));
            c_fn!(test_some_vector, concat!(stringify!($n), "_test_some_vector");
                fn (ivars: *mut T, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, values: *const T) -> usize =
                |call| write_indices(call, indices, &many(call, ivars, nelems, status, cmp, Values::Each(values), WaitMode::Some, false).0));
        }
    )* };
}

/// Typed routines of every synchronization type.
pub(crate) mod typed {
    use super::*;
    rshmem::sync_types!(sync_fns);
}

// The deprecated untyped `long` forms.
c_fn!(wait_long, "wait"; fn (ivar: *mut i64, cmp_value: i64) = |call| wait_until(call, ivar, Cmp::Ne as c_int, cmp_value));
c_fn!(wait_until_long, "wait_until"; fn (ivar: *mut i64, cmp: c_int, value: i64) = |call| wait_until(call, ivar, cmp, value));

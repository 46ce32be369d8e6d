//! Point-to-point synchronization: `wait_until`, `test` and their array forms
//! (`_all`, `_any`, `_some`, `_vector`), plus the deprecated `wait`, typed from the
//! type table.

use crate::routine::Routine;
use crate::state::{bad_arg, rt, OrExit};
use rshmem::{Cmp, SyncWord, WaitMode};
use std::collections::HashMap;
use std::ffi::{c_int, c_long};
use std::sync::{LazyLock, Mutex};

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

/// The index each array last returned from an `_any` routine, by the address of its
/// `ivars`.
static LAST_ANY: LazyLock<Mutex<HashMap<usize, usize>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

/// Of the satisfied indices `found` (ascending), the first after the one the last `_any`
/// call on the same `ivars` returned, wrapping around; and remembers it. A series of calls
/// thereby returns every satisfied index in turn, as OpenSHMEM requires of
/// `test_any`/`wait_until_any`, instead of the lowest one forever.
fn next_fairly(ivars: usize, found: &[usize]) -> usize {
    let mut last = LAST_ANY.lock().unwrap_or_else(|p| p.into_inner());
    let after = last.get(&ivars).copied();
    let pick = after.and_then(|a| found.iter().copied().find(|&i| i > a)).unwrap_or(found[0]);
    last.insert(ivars, pick);
    pick
}

/// The `_any` forms: one satisfied index (`SIZE_MAX` when none, or when every element is
/// excluded), chosen fairly.
///
/// # Safety
/// As [`many`].
pub(crate) unsafe fn any<T: SyncWord>(
    call: &'static str,
    ivars: *mut T,
    nelems: usize,
    status: *const c_int,
    cmp: c_int,
    values: Values<T>,
    block: bool,
) -> usize {
    // SAFETY: the caller's contract is `many`'s.
    let (found, _) = unsafe { many(call, ivars, nelems, status, cmp, values, WaitMode::Some, block) };
    if found.is_empty() {
        usize::MAX
    } else {
        next_fairly(ivars as usize, &found)
    }
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

/// `wait_until_FORM` (blocking) and `test_FORM` (not) from one body, which sees which as
/// `$block`.
macro_rules! wait_and_test {
    ($n:ident, ($wait:ident, $wait_s:literal), ($test:ident, $test_s:literal);
        fn ($($arg:ident : $ty:ty),*) -> $ret:ty = |$call:ident, $block:ident| $body:expr) => {
        c_fn!($wait, $n => $wait_s; fn ($($arg : $ty),*) -> $ret = |$call| { let $block = true; $body });
        c_fn!($test, $n => $test_s; fn ($($arg : $ty),*) -> $ret = |$call| { let $block = false; $body });
    };
}

macro_rules! sync_fns {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            c_fn!(wait_until, $n => "wait_until"; fn (ivar: *mut T, cmp: c_int, cmp_value: T) = |call| wait_until(call, ivar, cmp, cmp_value));
            c_fn!(wait, $n => "wait"; fn (ivar: *mut T, cmp_value: T) = |call| wait_until(call, ivar, Cmp::Ne as c_int, cmp_value));
            c_fn!(test, $n => "test"; fn (ivar: *mut T, cmp: c_int, cmp_value: T) -> c_int = |call| test(call, ivar, cmp, cmp_value));
            c_fn!(wait_until_all, $n => "wait_until_all";
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: T) =
                |call| { many(call, ivars, nelems, status, cmp, Values::One(cmp_value), WaitMode::All, true); });
            wait_and_test!($n, (wait_until_any, "wait_until_any"), (test_any, "test_any");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: T) -> usize =
                |call, block| any(call, ivars, nelems, status, cmp, Values::One(cmp_value), block));
            wait_and_test!($n, (wait_until_some, "wait_until_some"), (test_some, "test_some");
                fn (ivars: *mut T, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, cmp_value: T) -> usize =
                |call, block| write_indices(call, indices, &many(call, ivars, nelems, status, cmp, Values::One(cmp_value), WaitMode::Some, block).0));
            c_fn!(wait_until_all_vector, $n => "wait_until_all_vector";
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, cmp_values: *const T) =
                |call| { many(call, ivars, nelems, status, cmp, Values::Each(cmp_values), WaitMode::All, true); });
            wait_and_test!($n, (wait_until_any_vector, "wait_until_any_vector"), (test_any_vector, "test_any_vector");
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, cmp_values: *const T) -> usize =
                |call, block| any(call, ivars, nelems, status, cmp, Values::Each(cmp_values), block));
            wait_and_test!($n, (wait_until_some_vector, "wait_until_some_vector"), (test_some_vector, "test_some_vector");
                fn (ivars: *mut T, nelems: usize, indices: *mut usize, status: *const c_int, cmp: c_int, cmp_values: *const T) -> usize =
                |call, block| write_indices(call, indices, &many(call, ivars, nelems, status, cmp, Values::Each(cmp_values), WaitMode::Some, block).0));
            c_fn!(test_all, $n => "test_all";
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, cmp_value: T) -> c_int =
                |call| { let (d, a) = many(call, ivars, nelems, status, cmp, Values::One(cmp_value), WaitMode::All, false); (d.len() == a) as c_int });
            c_fn!(test_all_vector, $n => "test_all_vector";
                fn (ivars: *mut T, nelems: usize, status: *const c_int, cmp: c_int, cmp_values: *const T) -> c_int =
                |call| { let (d, a) = many(call, ivars, nelems, status, cmp, Values::Each(cmp_values), WaitMode::All, false); (d.len() == a) as c_int });
            pub(crate) const ROUTINES: &[Routine] = routines![
                wait_until, wait, test, wait_until_all, wait_until_any, wait_until_some, wait_until_all_vector, wait_until_any_vector,
                wait_until_some_vector, test_all, test_any, test_some, test_all_vector, test_any_vector, test_some_vector
            ];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

/// Typed routines of every synchronization type.
pub(crate) mod typed {
    use super::*;
    rshmem::sync_types!(sync_fns);
}

// The deprecated untyped `long` forms.
c_fn!(wait_long, "wait"; fn (ivar: *mut c_long, cmp_value: c_long) = |call| wait_until(call, ivar, Cmp::Ne as c_int, cmp_value));
c_fn!(wait_until_long, "wait_until"; fn (ivar: *mut c_long, cmp: c_int, cmp_value: c_long) = |call| wait_until(call, ivar, cmp, cmp_value));

/// The untyped routines of this module.
pub(crate) const ROUTINES: &[Routine] = routines![wait_long, wait_until_long];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_hands_out_every_satisfied_index_in_turn() {
        let key = 0x1000;
        let picks: Vec<usize> = (0..6).map(|_| next_fairly(key, &[1, 4, 5])).collect();
        assert_eq!(picks, [1, 4, 5, 1, 4, 5]);
        // A new set starts after the last pick, wrapping around.
        assert_eq!(next_fairly(key, &[0, 2]), 0);
        assert_eq!(next_fairly(key, &[0, 2]), 2);
        assert_eq!(next_fairly(0x2000, &[3]), 3, "each array keeps its own place");
    }
}

//! How the C ABI reduces each element type: the types Rust computes go to rshmem's team
//! reductions and scans; the types only C computes (`long double`, the complex types)
//! are reduced by gathering: every member reads the sources it needs, in member order,
//! and combines them with C's arithmetic (`crate::c_arith`), so every member computes the
//! same result. The deprecated active-set reductions use the same combining.

use crate::c_arith::CArith;
use crate::handle::{team_of, TeamHandle};
use crate::state::{bad_arg, local_mut, rt, OrExit};
use crate::table::{ComplexD, ComplexF, LongDouble};
use rshmem::{Ctx, ReduceOp, ReduceType};
use std::ffi::{c_int, c_void};

/// An element type of the reductions and scans.
pub(crate) trait Reducible: bytemuck::Pod {
    /// `dest` on every member of `team` becomes `op` over the members' `source`
    /// (`nreduce` elements): 0, or -1 for `SHMEM_TEAM_INVALID`.
    fn reduce(call: &str, team: TeamHandle, dest: *mut Self, source: *const Self, nreduce: usize, op: ReduceOp) -> c_int;
    /// The sum scans: member `i`'s `dest` becomes the sum over members `0..=i` (`0..i`
    /// when `exclusive`; zero on member 0).
    fn scan(call: &str, team: TeamHandle, dest: *mut Self, source: *const Self, nelems: usize, exclusive: bool) -> c_int;
    /// `acc[i] = acc[i] <op> x[i]` (for the active-set reductions).
    fn combine(call: &str, op: ReduceOp, acc: &mut [Self], x: &[Self]);
}

/// Runs a collective on the team behind `h`: 0, or -1 for `SHMEM_TEAM_INVALID`.
pub(crate) fn on_team(call: &str, h: TeamHandle, f: impl FnOnce(&Ctx, rshmem::Team) -> rshmem::Result<()>) -> c_int {
    let c = rt(call);
    let Some(t) = team_of(h) else { return -1 };
    f(c, t).or_exit(call);
    0
}

impl<T: ReduceType> Reducible for T {
    fn reduce(call: &str, team: TeamHandle, dest: *mut T, source: *const T, nreduce: usize, op: ReduceOp) -> c_int {
        on_team(call, team, |c, t| c.reduce_addr(t, dest as usize, source as usize, nreduce, T::DTYPE, op))
    }
    fn scan(call: &str, team: TeamHandle, dest: *mut T, source: *const T, nelems: usize, exclusive: bool) -> c_int {
        on_team(call, team, |c, t| c.sum_scan_addr(t, dest as usize, source as usize, nelems, T::DTYPE, exclusive))
    }
    fn combine(_call: &str, op: ReduceOp, acc: &mut [T], x: &[T]) {
        T::combine(op, acc, x)
    }
}

/// Which members' sources a gathering reduction combines.
enum Gather {
    /// Every member's, with this operator.
    Reduce(ReduceOp),
    /// Those of members `0..=me` (`0..me` when exclusive), summed.
    Scan { exclusive: bool },
}

/// A reduction or scan of a type only C computes, on the team behind `h`: the members
/// sync (every source is ready), each reads and combines the sources it needs, the
/// members sync again (a member's `dest` may be its `source`, which others read), and
/// each writes its `dest`.
fn gather_on_team<T: Reducible>(call: &str, h: TeamHandle, dest: *mut T, source: *const T, n: usize, what: Gather) -> c_int {
    on_team(call, h, |c, t| {
        if n == 0 {
            return Ok(());
        }
        let (start, stride, size) = c.team_layout(t)?;
        let me = c.team_my_pe(t)?;
        let (members, op) = match what {
            Gather::Reduce(op) => (0..size, op),
            Gather::Scan { exclusive } => (0..if exclusive { me } else { me + 1 }, ReduceOp::Sum),
        };
        c.sync(t)?;
        let result = fold_members(call, c, members.map(|i| start + i * stride), source as usize, n, |acc, x| T::combine(call, op, acc, x));
        c.sync(t)?;
        // SAFETY: `dest` holds `n` elements (the routine's contract).
        unsafe { write_local(call, dest, &result.unwrap_or_else(|| vec![T::zeroed(); n])) };
        Ok(())
    })
}

/// Reads `count` elements of `T` at the symmetric address `source` of each of `pes`, in
/// that order, and folds them with `combine` (`acc = acc <op> theirs`); `None` when
/// `pes` is empty.
pub(crate) fn fold_members<T: bytemuck::Pod>(
    call: &str,
    c: &Ctx,
    pes: impl IntoIterator<Item = usize>,
    source: usize,
    count: usize,
    mut combine: impl FnMut(&mut [T], &[T]),
) -> Option<Vec<T>> {
    let mut acc: Option<Vec<T>> = None;
    let mut theirs = vec![T::zeroed(); count];
    for pe in pes {
        if count > 0 {
            c.getmem(bytemuck::cast_slice_mut(&mut theirs), source, pe).or_exit(call);
        }
        match acc.as_mut() {
            None => acc = Some(theirs.clone()),
            Some(a) => combine(a, &theirs),
        }
    }
    acc
}

/// Writes `values` to the caller's local array `dest`.
///
/// # Safety
/// `dest` holds `values.len()` elements.
pub(crate) unsafe fn write_local<T: bytemuck::Pod>(call: &str, dest: *mut T, values: &[T]) {
    let bytes: &[u8] = bytemuck::cast_slice(values);
    // SAFETY: the caller promises room for `values.len()` elements at `dest`.
    unsafe { local_mut(call, "dest", dest as *mut c_void, bytes.len()) }.copy_from_slice(bytes);
}

macro_rules! gathered {
    ($($t:ty),*) => { $(
        impl Reducible for $t {
            fn reduce(call: &str, team: TeamHandle, dest: *mut Self, source: *const Self, nreduce: usize, op: ReduceOp) -> c_int {
                gather_on_team(call, team, dest, source, nreduce, Gather::Reduce(op))
            }
            fn scan(call: &str, team: TeamHandle, dest: *mut Self, source: *const Self, nelems: usize, exclusive: bool) -> c_int {
                gather_on_team(call, team, dest, source, nelems, Gather::Scan { exclusive })
            }
            fn combine(call: &str, op: ReduceOp, acc: &mut [Self], x: &[Self]) {
                if !<Self as CArith>::combine(op, acc, x) {
                    bad_arg(call, "op", format_args!("{} is not defined on this type", op.name()));
                }
            }
        }
    )* };
}
gathered!(LongDouble, ComplexF, ComplexD);

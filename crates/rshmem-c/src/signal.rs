//! Signals: put-with-signal (typed, sized, mem; blocking and nbi; with context twins),
//! `signal_fetch`, `signal_wait_until`, and the 1.6 `signal_add`/`signal_set`.

use crate::ctx::with_ctx;
use crate::handle::CtxHandle;
use crate::p2p::cmp_arg;
use crate::routine::Routine;
use crate::state::{bad_arg, bytes_of, local, pe_arg, rt, OrExit};
use rshmem::SignalOp;
use std::ffi::{c_int, c_void};

/// The `sig_op` argument.
fn op_arg(call: &str, op: c_int) -> SignalOp {
    SignalOp::from_raw(op).unwrap_or_else(|| bad_arg(call, "sig_op", format_args!("{op} is not SHMEM_SIGNAL_SET or SHMEM_SIGNAL_ADD")))
}

/// Put `nelems` elements of `size` bytes, then update the signal word (only the signal
/// when `nelems` is 0, whatever `dest` and `source` are).
pub(crate) unsafe fn put_signal(
    call: &str,
    h: CtxHandle,
    dest: *mut c_void,
    source: *const c_void,
    nelems: usize,
    size: usize,
    sig_addr: *mut u64,
    signal: u64,
    sig_op: c_int,
    pe: c_int,
    nbi: bool,
) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        let op = op_arg(call, sig_op);
        if nelems == 0 {
            return c.signal_op_addr(sig_addr as usize, signal, op, pe).or_exit(call);
        }
        // SAFETY: the caller passes `nelems` elements at `source`.
        let src = unsafe { local(call, "source", source, bytes_of(call, nelems, size)) };
        if nbi {
            c.putmem_signal_nbi(dest as usize, src, sig_addr as usize, signal, op, pe)
        } else {
            c.putmem_signal(dest as usize, src, sig_addr as usize, signal, op, pe)
        }
        .or_exit(call)
    })
}

macro_rules! signal_typed {
    ($(($n:ident, $t:ty)),* $(,)?) => {
        $(
        #[allow(non_snake_case)]
        pub(crate) mod $n {
            use super::*;
            type T = $t;
            const SIZE: usize = std::mem::size_of::<T>();
            c_pair!(put_signal, $n => "put_signal";
                fn (dest: *mut T, source: *const T, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) =
                |call, ctx| put_signal(call, ctx, dest.cast(), source.cast(), nelems, SIZE, sig_addr, signal, sig_op, pe, false));
            c_pair!(put_signal_nbi, $n => "put_signal_nbi";
                fn (dest: *mut T, source: *const T, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) =
                |call, ctx| put_signal(call, ctx, dest.cast(), source.cast(), nelems, SIZE, sig_addr, signal, sig_op, pe, true));
            pub(crate) const ROUTINES: &[Routine] = routines![put_signal, put_signal_nbi];
        }
        )*
        /// The routines of every type of this list.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($n::ROUTINES),*];
    };
}

macro_rules! signal_sized {
    ($(($m:ident, $bits:literal, $t:ty)),* $(,)?) => {
        $(
        pub(crate) mod $m {
            use super::*;
            const SIZE: usize = std::mem::size_of::<$t>();
            c_pair!(put_signal, concat!("put", $bits, "_signal");
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) =
                |call, ctx| put_signal(call, ctx, dest, source, nelems, SIZE, sig_addr, signal, sig_op, pe, false));
            c_pair!(put_signal_nbi, concat!("put", $bits, "_signal_nbi");
                fn (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) =
                |call, ctx| put_signal(call, ctx, dest, source, nelems, SIZE, sig_addr, signal, sig_op, pe, true));
            pub(crate) const ROUTINES: &[Routine] = routines![put_signal, put_signal_nbi];
        }
        )*
        /// The routines of every size.
        pub(crate) const ROUTINES: &[&[Routine]] = &[$($m::ROUTINES),*];
    };
}

/// Typed put-with-signal of every RMA type Rust has.
pub(crate) mod typed {
    use super::*;
    rshmem::rma_types!(signal_typed);
}

/// Typed put-with-signal of the RMA types only C has.
pub(crate) mod typed_c_only {
    use super::*;
    crate::c_only_rma_types!(signal_typed);
}

/// Sized put-with-signal.
pub(crate) mod sized {
    use super::*;
    crate::sized_types!(signal_sized);
}

c_pair!(putmem_signal, "putmem_signal";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) =
    |call, ctx| put_signal(call, ctx, dest, source, nelems, 1, sig_addr, signal, sig_op, pe, false));
c_pair!(putmem_signal_nbi, "putmem_signal_nbi";
    fn (dest: *mut c_void, source: *const c_void, nelems: usize, sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) =
    |call, ctx| put_signal(call, ctx, dest, source, nelems, 1, sig_addr, signal, sig_op, pe, true));

/// `signal_add` and `signal_set`: one update of a remote signal word.
fn signal_update(call: &str, h: CtxHandle, sig_addr: *mut u64, signal: u64, op: SignalOp, pe: c_int) {
    with_ctx(call, h, |c| {
        let pe = pe_arg(call, c, pe);
        c.signal_op_addr(sig_addr as usize, signal, op, pe).or_exit(call)
    })
}

c_pair!(signal_add, "signal_add", shmemx; fn (sig_addr: *mut u64, signal: u64, pe: c_int) =
    |call, ctx| signal_update(call, ctx, sig_addr, signal, SignalOp::Add, pe));
c_pair!(signal_set, "signal_set", shmemx; fn (sig_addr: *mut u64, signal: u64, pe: c_int) =
    |call, ctx| signal_update(call, ctx, sig_addr, signal, SignalOp::Set, pe));

c_fn!(signal_fetch, "signal_fetch"; fn (sig_addr: *const u64) -> u64 = |call| rt(call).signal_fetch_addr(sig_addr as usize).or_exit(call));
c_fn!(signal_wait_until, "signal_wait_until"; fn (sig_addr: *mut u64, cmp: c_int, cmp_value: u64) -> u64 = |call| {
    let cmp = cmp_arg(call, cmp);
    rt(call).signal_wait_until_addr(sig_addr as usize, cmp, cmp_value, None).or_exit(call)
});

/// The untyped routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] =
    routines![putmem_signal, putmem_signal_nbi, signal_add, signal_set, signal_fetch, signal_wait_until];

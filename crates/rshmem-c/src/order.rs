//! Memory ordering: `fence`, `quiet`, `pe_quiet` (OpenSHMEM 1.6), with context forms.

use crate::ctx::with_ctx;
use crate::state::{bad_pe, CtxHandle, OrExit};
use std::ffi::c_int;

/// `pe_quiet` on `npes` PEs listed at `pes`.
///
/// # Safety
/// `pes` points to `npes` PE numbers.
unsafe fn pe_quiet(call: &str, h: CtxHandle, pes: *const c_int, npes: usize) {
    with_ctx(call, h, |c| {
        if npes == 0 {
            return;
        }
        if pes.is_null() {
            crate::state::bad_arg(call, "target_pes", format_args!("null pointer for {npes} PEs"));
        }
        // SAFETY: the caller passes `npes` PE numbers.
        let list = unsafe { std::slice::from_raw_parts(pes, npes) };
        let pes: Vec<usize> =
            list.iter().map(|&p| if p >= 0 { p as usize } else { bad_pe(call, "target_pes", p as i64, c.n_pes()) }).collect();
        c.pe_quiet(&pes).or_exit(call)
    })
}

c_pair!(fence, "fence"; fn () = |call, ctx| with_ctx(call, ctx, |c| c.fence()));
c_pair!(quiet, "quiet"; fn () = |call, ctx| with_ctx(call, ctx, |c| c.quiet()));
c_pair!(pe_quiet_fn, "pe_quiet"; fn (target_pes: *const c_int, npes: usize) = |call, ctx| pe_quiet(call, ctx, target_pes, npes));

//! Memory ordering: `fence`, `quiet`, `pe_quiet` (OpenSHMEM 1.6), with context forms.
//! On `SHMEM_CTX_INVALID` each performs no operation, as OpenSHMEM specifies for
//! `shmem_ctx_quiet` and `shmem_ctx_fence`.

use crate::ctx::with_ctx;
use crate::handle::{is_invalid_ctx, CtxHandle};
use crate::routine::Routine;
use crate::state::{bad_pe, OrExit};
use rshmem::Ctx;
use std::ffi::c_int;

/// Runs `f` on the context behind `h`; nothing for `SHMEM_CTX_INVALID`.
fn unless_invalid(call: &str, h: CtxHandle, f: impl FnOnce(&Ctx)) {
    if !is_invalid_ctx(h) {
        with_ctx(call, h, f)
    }
}

/// `pe_quiet` on `npes` PEs listed at `pes`.
///
/// # Safety
/// `pes` points to `npes` PE numbers.
unsafe fn pe_quiet(call: &str, h: CtxHandle, pes: *const c_int, npes: usize) {
    unless_invalid(call, h, |c| {
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

c_pair!(fence, "fence"; fn () = |call, ctx| unless_invalid(call, ctx, |c| c.fence().or_exit(call)));
c_pair!(quiet, "quiet"; fn () = |call, ctx| unless_invalid(call, ctx, |c| c.quiet().or_exit(call)));
c_pair!(pe_quiet_fn, "pe_quiet", shmemx; fn (target_pes: *const c_int, npes: usize) = |call, ctx| pe_quiet(call, ctx, target_pes, npes));

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] = routines![fence, quiet, pe_quiet_fn];

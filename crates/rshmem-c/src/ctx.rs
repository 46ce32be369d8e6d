//! Communication contexts as C handles (`shmem_ctx_t`).
//!
//! `SHMEM_CTX_DEFAULT` is the runtime's own handle; created contexts live in a table
//! indexed by the handle's value, so a handle that was never created or was destroyed
//! is reported, never dereferenced.

use crate::handle::{is_invalid_ctx, team_handle, team_of, CtxHandle, TeamHandle, CTX_DEFAULT};
use crate::routine::Routine;
use crate::state::{bad_arg, fatal, rt, OrExit};
use rshmem::{Ctx, CtxOptions, Team};
use std::ffi::{c_int, c_long};
use std::sync::RwLock;

/// A created context and the team it belongs to.
pub(crate) struct CtxEntry {
    pub(crate) ctx: Ctx,
    pub(crate) team: Team,
}

/// Created contexts; handle value `i + 2` is entry `i`.
pub(crate) static TABLE: RwLock<Vec<Option<CtxEntry>>> = RwLock::new(Vec::new());

/// Runs `f` on the context behind handle `h` (for routine `call`).
#[inline]
pub(crate) fn with_ctx<R>(call: &str, h: CtxHandle, f: impl FnOnce(&Ctx) -> R) -> R {
    let c = rt(call);
    let v = h as usize;
    if v == CTX_DEFAULT {
        return f(c);
    }
    let table = TABLE.read().unwrap_or_else(|p| p.into_inner());
    match v.checked_sub(2).and_then(|i| table.get(i)).and_then(|e| e.as_ref()) {
        Some(e) => f(&e.ctx),
        None if v == 0 => fatal(call, "argument `ctx`: SHMEM_CTX_INVALID is not a context"),
        None => fatal(call, format_args!("argument `ctx`: {v:#x} is not a live context handle")),
    }
}

/// Drops every created context (at finalize).
pub(crate) fn destroy_all() {
    TABLE.write().unwrap_or_else(|p| p.into_inner()).clear();
}

/// Destroys the contexts created on `team` (before the team goes).
pub(crate) fn destroy_team_contexts(team: Team) {
    for e in TABLE.write().unwrap_or_else(|p| p.into_inner()).iter_mut() {
        if e.as_ref().is_some_and(|e| e.team == team) {
            *e = None;
        }
    }
}

/// Stores a new context in the table and returns its handle.
fn register(ctx: Ctx, team: Team) -> CtxHandle {
    let mut table = TABLE.write().unwrap_or_else(|p| p.into_inner());
    let entry = Some(CtxEntry { ctx, team });
    let i = match table.iter().position(|e| e.is_none()) {
        Some(i) => {
            table[i] = entry;
            i
        }
        None => {
            table.push(entry);
            table.len() - 1
        }
    };
    std::ptr::without_provenance_mut(i + 2)
}

/// `shmem_ctx_create` and `shmem_team_create_ctx`: 0 and a handle, or nonzero and
/// `SHMEM_CTX_INVALID`.
unsafe fn create(call: &'static str, team: Option<TeamHandle>, options: c_long, out: *mut CtxHandle) -> c_int {
    if out.is_null() {
        bad_arg(call, "ctx", "null pointer");
    }
    // SAFETY: non-null, the caller's handle variable.
    unsafe { *out = std::ptr::null_mut() };
    let c = rt(call);
    let Some(opts) = CtxOptions::from_bits(options) else {
        tracing::warn!("{call}: options {options:#x} hold bits other than SHMEM_CTX_SERIALIZED, _PRIVATE, _NOSTORE");
        return -1;
    };
    let made = match team {
        None => c.create_ctx(opts).map(|x| (x, Team::WORLD)),
        Some(h) => match team_of(h) {
            None => return -1,
            Some(t) => c.team_create_ctx(t, opts).map(|x| (x, t)),
        },
    };
    match made {
        Ok((x, t)) => {
            // SAFETY: as above.
            unsafe { *out = register(x, t) };
            0
        }
        Err(e) => {
            tracing::warn!("{call}: {e}");
            -1
        }
    }
}

c_fn!(ctx_create, "ctx_create"; fn (options: c_long, ctx: *mut CtxHandle) -> c_int = |call| create(call, None, options, ctx));
c_fn!(team_create_ctx, "team_create_ctx"; fn (team: TeamHandle, options: c_long, ctx: *mut CtxHandle) -> c_int =
    |call| create(call, Some(team), options, ctx));

c_fn!(ctx_destroy, "ctx_destroy"; fn (ctx: CtxHandle) = |call| {
    let _ = rt(call);
    let v = ctx as usize;
    if v == 0 {
        return;
    }
    if v == CTX_DEFAULT {
        fatal(call, "argument `ctx`: SHMEM_CTX_DEFAULT cannot be destroyed");
    }
    let entry = TABLE.write().unwrap_or_else(|p| p.into_inner()).get_mut(v - 2).and_then(|e| e.take());
    match entry {
        Some(e) => e.ctx.destroy_ctx().or_exit(call),
        None => fatal(call, format_args!("argument `ctx`: {v:#x} is not a live context handle")),
    }
});

c_fn!(ctx_get_team, "ctx_get_team"; fn (ctx: CtxHandle, team: *mut TeamHandle) -> c_int = |call| {
    if team.is_null() {
        bad_arg(call, "team", "null pointer");
    }
    let _ = rt(call);
    let v = ctx as usize;
    let t = if v == 0 {
        None
    } else if v == CTX_DEFAULT {
        Some(Team::WORLD)
    } else {
        let table = TABLE.read().unwrap_or_else(|p| p.into_inner());
        match table.get(v - 2).and_then(|e| e.as_ref()) {
            Some(e) => Some(e.team),
            None => fatal(call, format_args!("argument `ctx`: {v:#x} is not a live context handle")),
        }
    };
    // SAFETY: non-null, the caller's handle variable.
    unsafe { *team = team_handle(t.unwrap_or(Team::INVALID)) };
    if t.is_some() { 0 } else { -1 }
});

/// `shmem_ctx_session_config_t` (OpenSHMEM 1.6).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct SessionConfigC {
    /// Expected number of operations in the session (a hint).
    pub total_ops: usize,
}

/// `SHMEM_CTX_SESSION_BATCH`: the session option "latency tolerant, may be batched".
pub const SESSION_BATCH: c_long = 1;
/// `SHMEM_CTX_SESSION_TOTAL_OPS`: the `config_mask` bit of `total_ops`.
pub const SESSION_TOTAL_OPS: c_long = 1;

// Sessions (OpenSHMEM 1.6) are performance hints that change no result; rshmem has
// nothing to batch, so a session checks its context and does nothing else. On
// SHMEM_CTX_INVALID both do nothing, as the specification says.
c_fn!(ctx_session_start, "ctx_session_start";
    fn (ctx: CtxHandle, options: c_long, config: *const SessionConfigC, config_mask: c_long) = |call| {
    let _ = (options, config, config_mask);
    if !is_invalid_ctx(ctx) {
        with_ctx(call, ctx, |_| ())
    }
});
c_fn!(ctx_session_stop, "ctx_session_stop"; fn (ctx: CtxHandle) = |call| {
    if !is_invalid_ctx(ctx) {
        with_ctx(call, ctx, |_| ())
    }
});

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] =
    routines![ctx_create, team_create_ctx, ctx_destroy, ctx_get_team, ctx_session_start, ctx_session_stop];

//! Communication contexts as C handles (`shmem_ctx_t`).
//!
//! `SHMEM_CTX_DEFAULT` is the runtime's own handle; created contexts live in a table
//! indexed by the handle's value, so a handle that was never created or was destroyed
//! is reported, never dereferenced.

use crate::state::{fatal, rt, CtxHandle, CTX_DEFAULT};
use rshmem::{Ctx, Team};
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

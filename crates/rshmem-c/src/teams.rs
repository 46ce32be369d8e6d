//! The team routines over C handles (`shmem_team_t`, see `crate::handle`): a destroyed
//! team is recognized by the runtime's team table. The routine bodies take the runtime
//! (`*_in`), so that the GPU API's team routines (`rshmemx_cuda_team_*`) act on its own.

use crate::handle::{team_handle, team_of, TeamHandle};
use crate::routine::Routine;
use crate::state::{bad_arg, fatal, rt};
use rshmem::{Ctx, Team, TeamConfig};
use std::ffi::{c_int, c_long};

/// `shmem_team_config_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct TeamConfigC {
    /// Number of contexts the team expects to create.
    pub num_contexts: c_int,
}

/// `SHMEM_TEAM_NUM_CONTEXTS`: the `config_mask` bit of `num_contexts`.
pub const TEAM_NUM_CONTEXTS: c_long = 1;

/// The configuration a C caller passed (fields selected by `mask`).
///
/// # Safety
/// `config` is null or points to a `shmem_team_config_t`.
unsafe fn config_arg(config: *const TeamConfigC, mask: c_long) -> TeamConfig {
    let mut c = TeamConfig::default();
    if !config.is_null() && mask & TEAM_NUM_CONTEXTS != 0 {
        // SAFETY: non-null, points to the caller's config.
        c.num_contexts = unsafe { (*config).num_contexts };
    }
    c
}

/// Writes `t` to an output handle argument.
///
/// # Safety
/// `out` is null or points to a `shmem_team_t`.
unsafe fn store(call: &str, arg: &str, out: *mut TeamHandle, t: Team) {
    if out.is_null() {
        bad_arg(call, arg, "null pointer");
    }
    // SAFETY: non-null, the caller's handle variable.
    unsafe { *out = team_handle(t) };
}

/// `team_my_pe` on runtime `c` (the GPU API passes its own runtime).
pub(crate) fn my_pe_in(call: &str, c: &Ctx, team: TeamHandle) -> c_int {
    match team_of(team) {
        None => -1,
        Some(t) => c.team_my_pe(t).map_or_else(|e| fatal(call, e), |v| v as c_int),
    }
}

/// `team_n_pes` on runtime `c`.
pub(crate) fn n_pes_in(call: &str, c: &Ctx, team: TeamHandle) -> c_int {
    match team_of(team) {
        None => -1,
        Some(t) => c.team_n_pes(t).map_or_else(|e| fatal(call, e), |v| v as c_int),
    }
}

/// `team_get_config` on runtime `c`.
///
/// # Safety
/// `config` is null or points to a `shmem_team_config_t`.
pub(crate) unsafe fn get_config_in(call: &str, c: &Ctx, team: TeamHandle, config_mask: c_long, config: *mut TeamConfigC) -> c_int {
    let Some(t) = team_of(team) else { return -1 };
    let cfg = match c.team_get_config(t) {
        Ok(c) => c,
        Err(e) => fatal(call, e),
    };
    if config_mask & TEAM_NUM_CONTEXTS != 0 {
        if config.is_null() {
            bad_arg(call, "config", "null pointer");
        }
        // SAFETY: non-null, the caller's config.
        unsafe { (*config).num_contexts = cfg.num_contexts };
    }
    0
}

/// `team_translate_pe` on runtime `c`.
pub(crate) fn translate_pe_in(call: &str, c: &Ctx, src_team: TeamHandle, src_pe: c_int, dest_team: TeamHandle) -> c_int {
    let (Some(s), Some(d)) = (team_of(src_team), team_of(dest_team)) else { return -1 };
    let size = c.team_n_pes(s).unwrap_or_else(|e| fatal(call, e));
    if src_pe < 0 || src_pe as usize >= size {
        return -1;
    }
    match c.team_translate_pe(s, src_pe as usize, d) {
        Ok(Some(p)) => p as c_int,
        Ok(None) => -1,
        Err(e) => fatal(call, e),
    }
}

/// `team_split_strided` on runtime `c`.
///
/// # Safety
/// `config` is null or points to a `shmem_team_config_t`; `new_team` to a `shmem_team_t`.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn split_strided_in(
    call: &str,
    c: &Ctx,
    parent_team: TeamHandle,
    start: c_int,
    stride: c_int,
    size: c_int,
    config: *const TeamConfigC,
    config_mask: c_long,
    new_team: *mut TeamHandle,
) -> c_int {
    // SAFETY: the caller's handle variable (or null, refused by name).
    unsafe { store(call, "new_team", new_team, Team::INVALID) };
    let Some(parent) = team_of(parent_team) else { return -1 };
    if start < 0 || stride < 0 || size < 0 {
        // Every member passes the same arguments, so every member returns here.
        tracing::warn!("{call}: start {start}, stride {stride}, size {size}: negative values make no team");
        return -1;
    }
    // SAFETY: the caller's config or null.
    let cfg = unsafe { config_arg(config, config_mask) };
    match c.team_split_strided(parent, start as usize, stride as usize, size as usize, cfg) {
        Ok(t) => {
            // SAFETY: as above.
            unsafe { store(call, "new_team", new_team, t) };
            0
        }
        Err(e) => {
            tracing::warn!("{call}: {e}");
            -1
        }
    }
}

/// `team_split_2d` on runtime `c`.
///
/// # Safety
/// The configs are null or point to `shmem_team_config_t`s; the team arguments to `shmem_team_t`s.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn split_2d_in(
    call: &str,
    c: &Ctx,
    parent_team: TeamHandle,
    xrange: c_int,
    xaxis_config: *const TeamConfigC,
    xaxis_mask: c_long,
    xaxis_team: *mut TeamHandle,
    yaxis_config: *const TeamConfigC,
    yaxis_mask: c_long,
    yaxis_team: *mut TeamHandle,
) -> c_int {
    // SAFETY: the caller's handle variables (or null, refused by name).
    unsafe {
        store(call, "xaxis_team", xaxis_team, Team::INVALID);
        store(call, "yaxis_team", yaxis_team, Team::INVALID);
    }
    let Some(parent) = team_of(parent_team) else { return -1 };
    if xrange <= 0 {
        tracing::warn!("{call}: xrange {xrange} is not positive");
        return -1;
    }
    // SAFETY: the caller's configs or null.
    let (xc, yc) = unsafe { (config_arg(xaxis_config, xaxis_mask), config_arg(yaxis_config, yaxis_mask)) };
    match c.team_split_2d(parent, xrange as usize, xc, yc) {
        Ok((x, y)) => {
            // SAFETY: as above.
            unsafe {
                store(call, "xaxis_team", xaxis_team, x);
                store(call, "yaxis_team", yaxis_team, y);
            }
            0
        }
        Err(e) => {
            tracing::warn!("{call}: {e}");
            -1
        }
    }
}

/// `team_destroy` on runtime `c`; `contexts`: the team's contexts live in the C ABI's
/// context table (teams of the `shmem_*` runtime), which destroys them first.
pub(crate) fn destroy_in(call: &str, c: &Ctx, team: TeamHandle, contexts: bool) {
    if let Some(t) = team_of(team) {
        if contexts {
            crate::ctx::destroy_team_contexts(t);
        }
        if let Err(e) = c.team_destroy(t) {
            fatal(call, e)
        }
    }
}

c_fn!(team_my_pe, "team_my_pe"; fn (team: TeamHandle) -> c_int = |call| my_pe_in(call, rt(call), team));
c_fn!(team_n_pes, "team_n_pes"; fn (team: TeamHandle) -> c_int = |call| n_pes_in(call, rt(call), team));
c_fn!(team_get_config, "team_get_config"; fn (team: TeamHandle, config_mask: c_long, config: *mut TeamConfigC) -> c_int =
    |call| get_config_in(call, rt(call), team, config_mask, config));
c_fn!(team_translate_pe, "team_translate_pe"; fn (src_team: TeamHandle, src_pe: c_int, dest_team: TeamHandle) -> c_int =
    |call| translate_pe_in(call, rt(call), src_team, src_pe, dest_team));
c_fn!(team_split_strided, "team_split_strided";
    fn (parent_team: TeamHandle, start: c_int, stride: c_int, size: c_int, config: *const TeamConfigC, config_mask: c_long, new_team: *mut TeamHandle) -> c_int =
    |call| split_strided_in(call, rt(call), parent_team, start, stride, size, config, config_mask, new_team));
c_fn!(team_split_2d, "team_split_2d";
    fn (parent_team: TeamHandle, xrange: c_int, xaxis_config: *const TeamConfigC, xaxis_mask: c_long, xaxis_team: *mut TeamHandle,
        yaxis_config: *const TeamConfigC, yaxis_mask: c_long, yaxis_team: *mut TeamHandle) -> c_int =
    |call| split_2d_in(call, rt(call), parent_team, xrange, xaxis_config, xaxis_mask, xaxis_team, yaxis_config, yaxis_mask, yaxis_team));
c_fn!(team_destroy, "team_destroy"; fn (team: TeamHandle) = |call| destroy_in(call, rt(call), team, true));

c_fn!(team_sync, "team_sync"; fn (team: TeamHandle) -> c_int = |call| match team_of(team) {
    None => -1,
    Some(t) => match rt(call).sync(t) {
        Ok(()) => 0,
        Err(e) => fatal(call, e),
    },
});

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] =
    routines![team_my_pe, team_n_pes, team_get_config, team_translate_pe, team_split_strided, team_split_2d, team_destroy, team_sync];

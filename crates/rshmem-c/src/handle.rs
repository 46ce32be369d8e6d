//! The opaque handles of the C ABI and their values: `shmem_ctx_t` and `shmem_team_t`.
//! The lowest layer of the crate: it knows rshmem's `Team` numbering and nothing of the
//! runtime's state.

use rshmem::Team;
use std::ffi::c_void;

/// `shmem_ctx_t`: an opaque handle. 0 is `SHMEM_CTX_INVALID`, 1 `SHMEM_CTX_DEFAULT`,
/// larger values index the table of created contexts.
pub(crate) type CtxHandle = *mut c_void;
/// `shmem_team_t`: an opaque handle, the team's number plus one (0 is `SHMEM_TEAM_INVALID`).
pub(crate) type TeamHandle = *mut c_void;

/// Value of `SHMEM_CTX_INVALID`.
pub(crate) const CTX_INVALID: usize = 0;
/// Value of `SHMEM_CTX_DEFAULT`.
pub(crate) const CTX_DEFAULT: usize = 1;

/// `SHMEM_CTX_DEFAULT` as a handle.
pub(crate) const DEFAULT: CtxHandle = std::ptr::without_provenance_mut(CTX_DEFAULT);

/// Whether `h` is `SHMEM_CTX_INVALID`.
pub(crate) fn is_invalid_ctx(h: CtxHandle) -> bool {
    h as usize == CTX_INVALID
}

/// The handle of `team`.
pub(crate) fn team_handle(team: Team) -> TeamHandle {
    if team.is_invalid() {
        std::ptr::null_mut()
    } else {
        std::ptr::without_provenance_mut(team.raw() as usize + 1)
    }
}

/// The team behind handle `h`; `None` for `SHMEM_TEAM_INVALID`.
pub(crate) fn team_of(h: TeamHandle) -> Option<Team> {
    let v = h as usize;
    match v {
        0 => None,
        v if v - 1 < u32::MAX as usize => Some(Team::from_raw((v - 1) as u32)),
        _ => Some(Team::INVALID),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn team_handles_round_trip() {
        for t in [Team::WORLD, Team::SHARED, Team::from_raw(7)] {
            assert_eq!(team_of(team_handle(t)), Some(t));
        }
        assert!(team_handle(Team::INVALID).is_null() && team_of(std::ptr::null_mut()).is_none());
        assert!(is_invalid_ctx(std::ptr::null_mut()) && !is_invalid_ctx(DEFAULT));
    }
}

//! Descriptor exchange for bootstraps that carry only bytes (PMIx, TCP).
//!
//! A bootstrap without `SCM_RIGHTS` cannot hand a descriptor to another process, but a
//! process on the same host (and of the same user) can take one itself: each rank
//! allgathers (pid, descriptor number), every rank duplicates its peers' descriptors with
//! `pidfd_getfd`, or else reopens them through `/proc/<pid>/fd/<n>`, and a second
//! allgather tells every rank whether every other rank succeeded (the owners keep their
//! descriptors open until all have taken theirs).

use super::Bootstrap;
use crate::error::{Error, Result};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};

/// [`Bootstrap::allgather_fd_from`] over `boot`'s byte allgather: this rank's own
/// descriptor is duplicated, the descriptors of the ranks marked in `from` are taken from
/// their processes, the others are `None`. `name` says which bootstrap asked, for the
/// error message. Collective.
pub fn allgather_fd_by_pid(boot: &mut dyn Bootstrap, name: &str, fd: BorrowedFd<'_>, from: &[bool]) -> Result<Vec<Option<OwnedFd>>> {
    use std::os::fd::AsRawFd;
    let me = boot.rank();
    let mut mine = std::process::id().to_le_bytes().to_vec();
    mine.extend_from_slice(&fd.as_raw_fd().to_le_bytes());
    let all = boot.allgather(&mine)?;
    let mut out = Vec::with_capacity(all.len());
    let mut failure = None;
    for (r, e) in all.iter().enumerate() {
        if r == me {
            match fd.try_clone_to_owned() {
                Ok(f) => out.push(Some(f)),
                Err(e) => failure = Some(format!("dup of its own descriptor: {e}")),
            }
            continue;
        }
        if !from.get(r).copied().unwrap_or(false) {
            out.push(None);
            continue;
        }
        if e.len() != 8 {
            failure = Some(format!("rank {r} sent {} bytes, not (pid, fd)", e.len()));
            break;
        }
        let pid = u32::from_le_bytes(e[..4].try_into().expect("4 bytes"));
        let num = i32::from_le_bytes(e[4..].try_into().expect("4 bytes"));
        match open_peer_fd(pid, num) {
            Ok(f) => out.push(Some(f)),
            Err(e) => {
                failure = Some(format!("descriptor {num} of rank {r} (pid {pid}): {e}"));
                break;
            }
        }
    }
    let verdicts = boot.allgather(failure.as_deref().unwrap_or("").as_bytes())?;
    for (r, v) in verdicts.iter().enumerate() {
        if !v.is_empty() {
            return Err(Error::Bootstrap(format!(
                "allgather_fd over {name}: PE {r} could not take {} (PEs must share a host and user)",
                String::from_utf8_lossy(v)
            )));
        }
    }
    Ok(out)
}

/// A duplicate of descriptor `num` of process `pid` on this host: taken with
/// `pidfd_getfd` (the very open file, which CUDA's shareable memory handles need: reopening
/// one through `/proc` opens a new file that `cuMemImportFromShareableHandle` refuses, seen
/// under torchrun on the H200), or else reopened through `/proc/<pid>/fd` (enough for
/// shared-memory files, and allowed where ptrace rules refuse `pidfd_getfd`).
pub fn open_peer_fd(pid: u32, num: i32) -> std::result::Result<OwnedFd, String> {
    use rustix::fs::{Mode, OFlags};
    let pid_ = rustix::process::Pid::from_raw(pid as i32).ok_or_else(|| format!("pid {pid} is not valid"))?;
    let taken = rustix::process::pidfd_open(pid_, rustix::process::PidfdFlags::empty())
        .and_then(|pidfd| rustix::process::pidfd_getfd(pidfd.as_fd(), num, rustix::process::PidfdGetfdFlags::empty()));
    let e1 = match taken {
        Ok(f) => return Ok(f),
        Err(e) => e,
    };
    let path = format!("/proc/{pid}/fd/{num}");
    rustix::fs::open(&path, OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()).map_err(|e2| format!("pidfd_getfd: {e1}; open {path}: {e2}"))
}

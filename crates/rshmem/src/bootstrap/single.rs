//! The bootstrap of a program started without a launcher: one PE.

use super::Bootstrap;
use crate::error::Result;
use rustix::fd::{BorrowedFd, OwnedFd};

/// A job of one PE.
#[derive(Debug, Default)]
pub struct SinglePe;

impl Bootstrap for SinglePe {
    fn rank(&self) -> usize {
        0
    }
    fn size(&self) -> usize {
        1
    }
    fn allgather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        Ok(vec![mine.to_vec()])
    }
    fn allgather_fd(&mut self, fd: BorrowedFd<'_>) -> Result<Vec<OwnedFd>> {
        Ok(vec![fd.try_clone_to_owned().map_err(|e| crate::Error::os("dup", e))?])
    }
    fn abort(&mut self, code: i32, msg: &str) -> ! {
        crate::log::line(&format!("rshmem: abort ({code}): {msg}"));
        std::process::exit(code)
    }
}

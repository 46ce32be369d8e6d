//! The PE side of the `rshmemrun` rendezvous.

use super::protocol::{self, Kind};
use super::status;
use super::Bootstrap;
use crate::error::{Error, Result};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// A PE of a job started by `rshmemrun`.
#[derive(Debug)]
pub struct LaunchedBootstrap {
    sock: UnixStream,
    rank: usize,
    size: usize,
    board: Option<Arc<status::Board>>,
}

/// The next local index a thread of this process takes by calling `init` (process-wide:
/// the ranks of the process's PEs are handed out in the order its threads start).
static NEXT_LOCAL: AtomicUsize = AtomicUsize::new(0);

/// Which of this process's `local_pes` PEs the caller is: `index`, or the next one not
/// taken; an error when the process has no PE left.
pub(crate) fn local_index(index: Option<usize>, local_pes: usize) -> Result<usize> {
    let i = match index {
        Some(i) => i,
        None => NEXT_LOCAL.fetch_add(1, Ordering::Relaxed),
    };
    if i >= local_pes.max(1) {
        return Err(Error::Bootstrap(format!(
            "this process hosts {} PE(s) (rshmemrun --pes-per-process) and all are started; PE index {i} is one too many",
            local_pes.max(1)
        )));
    }
    Ok(i)
}

impl LaunchedBootstrap {
    /// Connects to the launcher at `path` as PE `rank` of `size`, presents the job key
    /// and waits to be welcomed.
    pub fn connect(path: &Path, rank: usize, size: usize, key: &str) -> Result<Self> {
        // Die with the launcher: a PE must never outlive the job that started it. The
        // launcher sets this at spawn already; a PE started through a wrapper that forks
        // (its parent is then the wrapper) gets it here too.
        let _ = rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL));
        let sock = UnixStream::connect(path)
            .map_err(|e| Error::Bootstrap(format!("PE {rank}: cannot reach the launcher at {}: {e}", path.display())))?;
        let hello = protocol::encode_hello(key, rank as u32, std::process::id());
        protocol::send_frame(sock.as_fd(), Kind::Hello, &hello, &[]).map_err(|e| Error::Bootstrap(format!("PE {rank}: hello: {e}")))?;
        let mut reply =
            protocol::recv_frame(sock.as_fd(), size).map_err(|e| Error::Bootstrap(format!("PE {rank}: waiting for the launcher: {e}")))?;
        match reply.kind {
            Kind::Welcome => {
                // The job's status board, where this PE's long waits are published.
                let board = reply.fds.pop().and_then(|fd| match status::Board::map(fd, size) {
                    Ok(board) => Some(Arc::new(board)),
                    Err(e) => {
                        tracing::warn!("PE {rank}: cannot map the launcher's status board: {e}");
                        None
                    }
                });
                Ok(LaunchedBootstrap { sock, rank, size, board })
            }
            Kind::Refused => Err(Error::Bootstrap(format!("PE {rank}: launcher refused: {}", String::from_utf8_lossy(&reply.payload)))),
            k => Err(Error::Bootstrap(format!("PE {rank}: unexpected launcher reply {k:?}"))),
        }
    }

    fn request(&mut self, kind: Kind, payload: &[u8], fds: &[BorrowedFd<'_>]) -> Result<()> {
        protocol::send_frame(self.sock.as_fd(), kind, payload, fds).map_err(|e| self.lost(e))
    }

    fn reply(&mut self, expect: Kind) -> Result<protocol::Frame> {
        let f = protocol::recv_frame(self.sock.as_fd(), self.size).map_err(|e| self.lost(e))?;
        if f.kind == Kind::Failed {
            return Err(Error::Bootstrap(format!("PE {}: {}", self.rank, String::from_utf8_lossy(&f.payload))));
        }
        if f.kind != expect {
            return Err(Error::Bootstrap(format!("PE {}: expected {expect:?} from the launcher, got {:?}", self.rank, f.kind)));
        }
        Ok(f)
    }

    fn lost(&self, e: std::io::Error) -> Error {
        Error::Bootstrap(format!("PE {}: lost the launcher connection: {e}", self.rank))
    }
}

impl Bootstrap for LaunchedBootstrap {
    fn status_board(&self) -> Option<Arc<status::Board>> {
        self.board.clone()
    }

    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn allgather(&mut self, mine: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.request(Kind::Allgather, mine, &[])?;
        let f = self.reply(Kind::AllgatherResult)?;
        let list = protocol::decode_list(&f.payload).map_err(|e| self.lost(e))?;
        if list.len() != self.size {
            return Err(Error::Bootstrap(format!("allgather returned {} entries for {} PEs", list.len(), self.size)));
        }
        Ok(list)
    }
    fn allgather_fd(&mut self, fd: BorrowedFd<'_>) -> Result<Vec<OwnedFd>> {
        self.request(Kind::AllgatherFd, &[], &[fd])?;
        let mut out = Vec::with_capacity(self.size);
        for pe in 0..self.size {
            let mut f = self.reply(Kind::FdResult)?;
            let fd = f.fds.pop().ok_or_else(|| Error::Bootstrap(format!("descriptor of PE {pe} missing")))?;
            out.push(fd);
        }
        Ok(out)
    }
    fn finalize(&mut self) -> Result<()> {
        self.request(Kind::Finalize, &[], &[])
    }
    fn abort(&mut self, code: i32, msg: &str) -> ! {
        let mut payload = code.to_le_bytes().to_vec();
        payload.extend_from_slice(msg.as_bytes());
        let _ = protocol::send_frame(self.sock.as_fd(), Kind::Abort, &payload, &[]);
        crate::log::line(&format!("rshmem: PE {} aborts the job ({code}): {msg}", self.rank));
        // The launcher ends every PE; exit in case it is already gone.
        std::process::exit(code)
    }
}

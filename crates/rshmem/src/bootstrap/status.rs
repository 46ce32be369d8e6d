//! The job's status board and the hang limit: what each PE is blocked on, for whoever
//! watches the job.
//!
//! `rshmemrun` creates the board (one [`RECORD_BYTES`] record per PE in a memfd) and
//! hands it to every PE with its welcome. A PE whose wait has lasted
//! [`PUBLISH_AFTER`] writes into its record what it waits for (the call, the PE, since
//! when), refreshes the text every second and clears the record when the wait ends, so
//! that the launcher can tell who waits on whom without asking the PEs anything (a
//! stopped PE cannot answer). Short waits never touch the board.
//!
//! The hang limit (`RSHMEM_HANG_TIMEOUT`) is enforced by the launcher where there is a
//! board (it sees every PE and ends the job with one report); without one (PMIx
//! launchers, a single PE) each wait enforces it for itself: [`WaitWatch::tick`] says
//! when a wait has passed it, and the wait fails naming what it waited for.

use super::threads::JobFailure;
use rustix::fd::{AsFd, OwnedFd};
use rustix::mm::{mmap, MapFlags, ProtFlags};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Bytes of one PE's record.
pub const RECORD_BYTES: usize = 256;
/// Offset of the text in a record.
const TEXT_OFF: usize = 32;
/// Most bytes of text a record holds.
pub const TEXT_MAX: usize = RECORD_BYTES - TEXT_OFF;
/// A wait is published once it has lasted this long.
pub const PUBLISH_AFTER: Duration = Duration::from_millis(200);
/// A published wait refreshes its text this often.
const REFRESH: Duration = Duration::from_secs(1);

/// One PE's record as a reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Published waits in progress (threads of the PE, nested waits).
    pub waiters: u32,
    /// `CLOCK_MONOTONIC` nanoseconds when the oldest published wait began.
    pub since_ns: u64,
    /// What the latest publisher waits for.
    pub text: String,
}

/// The board: `n` records in shared memory.
#[derive(Debug)]
pub struct Board {
    base: usize,
    n: usize,
    _fd: OwnedFd,
}

// SAFETY: the mapping is shared memory accessed only through atomics; it lives as long
// as the board.
unsafe impl Send for Board {}
// SAFETY: as above.
unsafe impl Sync for Board {}

/// Record word offsets.
const SEQ: usize = 0;
const WAITERS: usize = 4;
const SINCE: usize = 8;

impl Board {
    /// A fresh board for `n` PEs (the launcher's side).
    pub fn create(n: usize) -> std::io::Result<Board> {
        let fd = rustix::fs::memfd_create("rshmem-status", rustix::fs::MemfdFlags::CLOEXEC)?;
        rustix::fs::ftruncate(&fd, (n.max(1) * RECORD_BYTES) as u64)?;
        Board::map(fd, n)
    }

    /// Maps the board of `n` PEs held by `fd` (the PE's side: the fd came with the welcome).
    pub fn map(fd: OwnedFd, n: usize) -> std::io::Result<Board> {
        let len = n.max(1) * RECORD_BYTES;
        if (rustix::fs::fstat(&fd)?.st_size as usize) < len {
            return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, "status board smaller than its records"));
        }
        // SAFETY: a fresh shared mapping of the whole memfd, never unmapped while the board
        // lives (the board is never dropped by PEs; the launcher's lives until it exits).
        let p = unsafe { mmap(std::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::SHARED, &fd, 0)? };
        Ok(Board { base: p as usize, n, _fd: fd })
    }

    /// The descriptor to hand to a PE.
    pub fn fd(&self) -> rustix::fd::BorrowedFd<'_> {
        self._fd.as_fd()
    }

    fn u32_at(&self, pe: usize, off: usize) -> &AtomicU32 {
        assert!(pe < self.n);
        // SAFETY: inside the mapping, 4-aligned (records are 256-byte aligned); the
        // mapping lives as long as `self`.
        unsafe { &*((self.base + pe * RECORD_BYTES + off) as *const AtomicU32) }
    }

    fn u64_at(&self, pe: usize, off: usize) -> &AtomicU64 {
        assert!(pe < self.n);
        // SAFETY: as in `u32_at`, 8-aligned.
        unsafe { &*((self.base + pe * RECORD_BYTES + off) as *const AtomicU64) }
    }

    /// Reads PE `pe`'s record (a consistent copy; `None` if a writer kept it busy).
    pub fn read(&self, pe: usize) -> Option<Record> {
        for _ in 0..100 {
            let s0 = self.u32_at(pe, SEQ).load(Ordering::Acquire);
            if s0 % 2 == 1 {
                std::thread::yield_now();
                continue;
            }
            let waiters = self.u32_at(pe, WAITERS).load(Ordering::Acquire);
            let since_ns = self.u64_at(pe, SINCE).load(Ordering::Acquire);
            let mut bytes = Vec::with_capacity(TEXT_MAX);
            for w in 0..TEXT_MAX / 8 {
                bytes.extend_from_slice(&self.u64_at(pe, TEXT_OFF + 8 * w).load(Ordering::Relaxed).to_le_bytes());
            }
            std::sync::atomic::fence(Ordering::Acquire);
            if self.u32_at(pe, SEQ).load(Ordering::Relaxed) == s0 {
                let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
                return Some(Record { waiters, since_ns, text: String::from_utf8_lossy(&bytes[..end]).into_owned() });
            }
        }
        None
    }

    /// Writes `text` (cut to [`TEXT_MAX`] bytes) into PE `pe`'s record.
    fn write_text(&self, pe: usize, text: &str) {
        let mut bytes = [0u8; TEXT_MAX];
        let mut cut = text.len().min(TEXT_MAX - 1);
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        bytes[..cut].copy_from_slice(&text.as_bytes()[..cut]);
        let seq = self.u32_at(pe, SEQ);
        seq.fetch_add(1, Ordering::AcqRel);
        for (w, chunk) in bytes.chunks_exact(8).enumerate() {
            self.u64_at(pe, TEXT_OFF + 8 * w).store(u64::from_le_bytes(chunk.try_into().expect("8 bytes")), Ordering::Relaxed);
        }
        seq.fetch_add(1, Ordering::Release);
    }

    /// Registers one more published wait of PE `pe` (which began at `since_ns`).
    fn begin(&self, pe: usize, since_ns: u64, text: &str) {
        if self.u32_at(pe, WAITERS).fetch_add(1, Ordering::AcqRel) == 0 {
            self.u64_at(pe, SINCE).store(since_ns, Ordering::Release);
        }
        self.write_text(pe, text);
    }

    /// Ends one published wait of PE `pe`.
    fn end(&self, pe: usize) {
        self.u32_at(pe, WAITERS).fetch_sub(1, Ordering::AcqRel);
    }
}

/// `CLOCK_MONOTONIC` now, in nanoseconds (the clock the board's times use).
pub fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Where one PE's waits report: the job's board (when a launcher watches the job) and
/// the hang limit this PE enforces itself (`RSHMEM_HANG_TIMEOUT`, only when no launcher
/// does: a launcher enforces it for the whole job and writes one report). One per PE,
/// held by its runtime: PEs that share a process keep their own records.
#[derive(Debug, Clone, Default)]
pub struct Watcher {
    board: Option<(Arc<Board>, usize)>,
    own_limit: Option<Duration>,
    /// The failure of a job of thread PEs, which ends every wait of its PEs.
    failure: Option<Arc<JobFailure>>,
}

impl Watcher {
    /// PE `pe`'s watcher: its record on `board`, if any, the hang limit `limit`, and the
    /// job failure its waits watch (thread PEs).
    pub fn new(board: Option<Arc<Board>>, pe: usize, limit: Option<Duration>, failure: Option<Arc<JobFailure>>) -> Watcher {
        let own_limit = if board.is_some() { None } else { limit };
        Watcher { board: board.map(|b| (b, pe)), own_limit, failure }
    }
}

/// Why a watched wait must end.
#[derive(Debug, Clone, PartialEq)]
pub enum WaitEnd {
    /// It passed the hang limit this PE enforces itself.
    HangLimit(Duration),
    /// The job failed (a thread PE of this process panicked).
    JobFailed(String),
}

/// Follows one blocking wait: publishes it on the board once it lasts, enforces the hang
/// limit where no launcher does. Create it when a wait starts to block; call
/// [`WaitWatch::tick`] from the wait's loop (every few milliseconds is plenty); dropping
/// it clears what it published.
#[derive(Debug)]
pub struct WaitWatch<'a> {
    watcher: &'a Watcher,
    start: Instant,
    next: Instant,
    published: bool,
}

impl<'a> WaitWatch<'a> {
    /// Starts following a wait that begins now, reporting to `watcher`.
    pub fn new(watcher: &'a Watcher) -> WaitWatch<'a> {
        let start = Instant::now();
        WaitWatch { watcher, start, next: start + PUBLISH_AFTER, published: false }
    }

    /// How long the wait has lasted.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Publishes or refreshes the wait when due (`describe` says what it waits for, and
    /// is called only then). Returns why the wait must end: it passed the hang limit that
    /// this PE enforces itself, or the job failed.
    pub fn tick(&mut self, describe: &dyn Fn() -> String) -> Result<(), WaitEnd> {
        if let Some(why) = self.watcher.failure.as_ref().and_then(|f| f.get()) {
            return Err(WaitEnd::JobFailed(why));
        }
        let now = Instant::now();
        if now < self.next {
            return Ok(());
        }
        self.next = now + REFRESH;
        if let Some((board, pe)) = &self.watcher.board {
            if self.published {
                board.write_text(*pe, &describe());
            } else {
                let since = monotonic_ns().saturating_sub(self.start.elapsed().as_nanos() as u64);
                board.begin(*pe, since, &describe());
                self.published = true;
            }
        }
        match self.watcher.own_limit {
            Some(limit) if self.start.elapsed() >= limit => Err(WaitEnd::HangLimit(limit)),
            _ => Ok(()),
        }
    }

    /// The message of a wait that had to end (`what` it waited for), for errors and logs.
    pub fn end_message(&self, end: &WaitEnd, what: &str) -> String {
        match end {
            WaitEnd::HangLimit(limit) => {
                format!(
                    "{what} has made no progress for {:.1} s (RSHMEM_HANG_TIMEOUT={})",
                    self.elapsed().as_secs_f64(),
                    limit.as_secs_f64()
                )
            }
            WaitEnd::JobFailed(why) => format!("{what} ended: the job failed ({why})"),
        }
    }
}

impl Drop for WaitWatch<'_> {
    fn drop(&mut self) {
        if self.published {
            if let Some((board, pe)) = &self.watcher.board {
                board.end(*pe);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_count_waiters() {
        let b = Board::create(3).unwrap();
        assert_eq!(b.read(1).unwrap(), Record { waiters: 0, since_ns: 0, text: String::new() });
        b.begin(1, 42, "barrier_all on PE 1 (waiting for PE 2)");
        b.begin(1, 99, "a nested wait");
        let r = b.read(1).unwrap();
        assert_eq!((r.waiters, r.since_ns, r.text.as_str()), (2, 42, "a nested wait"));
        b.end(1);
        b.end(1);
        assert_eq!(b.read(1).unwrap().waiters, 0);
        let long = "é".repeat(300);
        b.write_text(2, &long);
        let t = b.read(2).unwrap().text;
        assert!(t.len() < TEXT_MAX && t.chars().all(|c| c == 'é'), "cut at a character boundary");
        // A second mapping (what a PE has) sees the same records.
        let other = Board::map(rustix::io::dup(b.fd()).unwrap(), 3).unwrap();
        assert_eq!(other.read(2).unwrap().text, t);
    }
}

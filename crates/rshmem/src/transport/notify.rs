//! Waking and waiting on shared memory.
//!
//! A PE that waits for a word of its heap to change spins briefly, then arms its header's
//! wake flag and sleeps on the header's wake sequence with a process-shared futex. Every
//! store path through a transport calls [`wake`] on the target afterwards: when the flag
//! is armed it disarms it, bumps the sequence and wakes the sleepers, who re-arm before
//! they sleep again. So a stream of stores to a sleeping PE costs one futex wake per
//! sleep of the target, not one per store. Timed sleeps bound the cost of a store that
//! bypassed the API (a write through `ptr`).

use crate::bootstrap::status::{WaitEnd, WaitWatch, Watcher};
use crate::error::{Error, Result};
use crate::heap::layout::{WAITERS, WAKE_SEQ};
use crate::heap::words::shared;
use rustix::thread::futex;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Longest single futex sleep by default; a store that bypassed the API is seen within this.
const SLEEP_SLICE: Duration = Duration::from_millis(20);

/// The sleep slice in force, in nanoseconds (0: [`SLEEP_SLICE`]).
static SLICE_NS: AtomicU64 = AtomicU64::new(0);

/// Shortens (or restores) the longest futex sleep of every wait in this process: a
/// transport whose stores arrive without a wake (a remote transport's) sets it, so that
/// waiters notice those stores within `slice`.
pub fn set_sleep_slice(slice: Duration) {
    SLICE_NS.store(slice.as_nanos().clamp(1, u64::MAX as u128) as u64, Ordering::Relaxed);
}

fn sleep_slice() -> Duration {
    match SLICE_NS.load(Ordering::Relaxed) {
        0 => SLEEP_SLICE,
        ns => Duration::from_nanos(ns),
    }
}

/// The wake words in the header of the heap whose base is `heap_base`.
struct WakeWords {
    seq: &'static AtomicU32,
    /// Non-zero while a sleeper may need a wake (the header's `WAITERS` word).
    armed: &'static AtomicU32,
}

fn words(heap_base: usize) -> WakeWords {
    // SAFETY: the header lies at the start of every mapped heap, which stays mapped for
    // the life of the runtime (callers pass bases of live heaps); offsets are 4-aligned.
    unsafe { WakeWords { seq: shared(heap_base + WAKE_SEQ), armed: shared(heap_base + WAITERS) } }
}

/// Wakes the sleepers of the heap at `heap_base`, if any. Call after a store to it.
///
/// The SeqCst fence pairs with the sleeper's fence between arming and re-checking its
/// condition: either the sleeper sees this store, or this sees the flag armed.
#[inline]
pub fn wake(heap_base: usize) {
    fence(Ordering::SeqCst);
    let w = words(heap_base);
    if w.armed.load(Ordering::Relaxed) != 0 && w.armed.swap(0, Ordering::SeqCst) != 0 {
        w.seq.fetch_add(1, Ordering::SeqCst);
        let _ = futex::wake(w.seq, futex::Flags::empty(), i32::MAX as u32);
    }
}

/// What a wait ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// The condition held.
    Ready,
    /// The deadline passed first.
    TimedOut,
}

/// How to wait.
#[derive(Debug, Clone, Copy)]
pub struct WaitPolicy<'a> {
    /// Polls before sleeping.
    pub spin: u32,
    /// Give up at this instant.
    pub deadline: Option<Instant>,
    /// Log a warning after waiting this long.
    pub warn_after: Option<Duration>,
    /// Where a long wait reports (the PE's status board record, its hang limit).
    pub watcher: &'a Watcher,
}

/// Waits until `ready()` holds, spinning, then sleeping on the futex of the heap at
/// `my_heap_base`: the heap that holds the watched words (this PE's, or a mapped peer's,
/// as the collectives do when they watch a peer's progress word; stores into a heap wake
/// that heap's waiters). `describe` names what is waited for in the hang warning and on
/// the job's status board (see [`crate::bootstrap::status`]): say which call, on which
/// PE, and which PE it waits for. With `RSHMEM_HANG_TIMEOUT` set and no launcher watching,
/// a wait that passes it logs an error and ends as [`WaitOutcome::TimedOut`]. An error
/// from `ready` (a load through a failing transport) ends the wait with it.
pub fn wait_until(
    my_heap_base: usize,
    policy: WaitPolicy<'_>,
    mut ready: impl FnMut() -> Result<bool>,
    describe: impl Fn() -> String,
) -> Result<WaitOutcome> {
    for i in 0..policy.spin {
        if ready()? {
            return Ok(WaitOutcome::Ready);
        }
        if i % 64 == 63 {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
    let w = words(my_heap_base);
    let start = Instant::now();
    let mut warned = false;
    // Publishes the wait on the job's status board once it lasts (the launcher's view
    // of who waits on whom) and enforces the hang limit where no launcher does.
    let mut watch = WaitWatch::new(policy.watcher);
    loop {
        // Read the sequence before arming: a wake after the arm bumps it, so the futex
        // wait below returns at once instead of missing that wake.
        let seq = w.seq.load(Ordering::SeqCst);
        w.armed.store(1, Ordering::SeqCst);
        fence(Ordering::SeqCst);
        if ready()? {
            // The flag stays armed (another thread of this PE may sleep on it); at most
            // one later store pays for a needless wake.
            return Ok(WaitOutcome::Ready);
        }
        let mut slice = sleep_slice();
        if let Some(d) = policy.deadline {
            slice = slice.min(d.saturating_duration_since(Instant::now()));
        }
        let ts = rustix::time::Timespec { tv_sec: slice.as_secs() as i64, tv_nsec: slice.subsec_nanos() as i64 };
        let _ = futex::wait(w.seq, futex::Flags::empty(), seq, Some(&ts));
        if ready()? {
            return Ok(WaitOutcome::Ready);
        }
        if policy.deadline.is_some_and(|d| Instant::now() >= d) {
            return Ok(WaitOutcome::TimedOut);
        }
        match watch.tick(&describe) {
            Ok(()) => {}
            Err(end @ WaitEnd::HangLimit(_)) => {
                crate::log::always_warn(&format!("rshmem: {}; failing the call", watch.end_message(&end, &describe())));
                return Ok(WaitOutcome::TimedOut);
            }
            Err(end @ WaitEnd::JobFailed(_)) => return Err(Error::Bootstrap(watch.end_message(&end, &describe()))),
        }
        if let Some(after) = policy.warn_after {
            if !warned && start.elapsed() >= after {
                warned = true;
                crate::log::always_warn(&format!("rshmem: still waiting after {:.0} s for {}", start.elapsed().as_secs_f64(), describe()));
            }
        }
    }
}

//! Waking and waiting on shared memory.
//!
//! A PE that waits for a word of its heap to change spins briefly, then arms its header's
//! wake flag and sleeps on the header's wake sequence with a process-shared futex. Every
//! store path through a transport calls [`wake`] on the target afterwards: when the flag
//! is armed it disarms it, bumps the sequence and wakes the sleepers, who re-arm before
//! they sleep again. So a stream of stores to a sleeping PE costs one futex wake per
//! sleep of the target, not one per store. Timed sleeps bound the cost of a store that
//! bypassed the API (a write through `ptr`).
//!
//! **Barriers.** A store and its wake need the store to be visible before the wake
//! reads the flag, and the sleeper needs its arm visible before it re-checks: a
//! store-load barrier on both sides. Stores are the hot path and sleeps the slow one, so
//! where the kernel offers `membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED)` the barrier is
//! asymmetric (as in userspace RCU and folly): the storing side only keeps the compiler
//! from reordering, and a sleeper, after arming, runs the membarrier, which makes every
//! running thread of every registered process execute a full barrier. A storer then has
//! either passed that barrier before reading the flag (and sees it armed) or had its
//! store made visible by it (and the sleeper's re-check sees the store). Every PE
//! process registers at init ([`init_barriers`]); where registration fails, both sides
//! use a full fence.

use crate::bootstrap::status::{WaitEnd, WaitWatch, Watcher};
use crate::error::{Error, Result};
use crate::heap::layout::{WAITERS, WAKE_SEQ};
use crate::heap::words::shared;
use rustix::thread::futex;
use std::sync::atomic::{compiler_fence, fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;
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

/// Whether this process registered for global expedited membarriers, so that stores may
/// skip their fence (see the module notes). Set once, before the heap is shared.
static ASYMMETRIC: AtomicBool = AtomicBool::new(false);

/// Registers this process for asymmetric wake barriers, once (idempotent; called by
/// `init` before any heap is shared). Returns whether they are in use.
pub fn init_barriers() -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| {
        use rustix::thread::{membarrier, MembarrierCommand};
        let ok = membarrier(MembarrierCommand::RegisterGlobalExpedited).is_ok() && membarrier(MembarrierCommand::GlobalExpedited).is_ok();
        if !ok {
            tracing::debug!("membarrier(GLOBAL_EXPEDITED) unavailable: stores fence before their wake");
        }
        ASYMMETRIC.store(ok, Ordering::SeqCst);
        ok
    })
}

/// The storing side's half of the store-load barrier of a wake.
#[inline]
fn store_side_barrier() {
    if ASYMMETRIC.load(Ordering::Relaxed) {
        compiler_fence(Ordering::SeqCst);
    } else {
        fence(Ordering::SeqCst);
    }
}

/// The sleeping side's half, between arming and re-checking.
fn sleep_side_barrier() {
    fence(Ordering::SeqCst);
    if ASYMMETRIC.load(Ordering::Relaxed) {
        if let Err(e) = rustix::thread::membarrier(rustix::thread::MembarrierCommand::GlobalExpedited) {
            // Registered at init, so this does not fail; if it ever does, the timed sleep
            // below bounds how late a store's wake can be.
            tracing::warn!("membarrier(GLOBAL_EXPEDITED) failed: {e}");
        }
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
/// The barrier pairs with the sleeper's between arming and re-checking its condition
/// (see the module notes): either the sleeper sees this store, or this sees the flag
/// armed.
#[inline]
pub fn wake(heap_base: usize) {
    store_side_barrier();
    let w = words(heap_base);
    if w.armed.load(Ordering::Relaxed) != 0 && w.armed.swap(0, Ordering::SeqCst) != 0 {
        w.seq.fetch_add(1, Ordering::SeqCst);
        let _ = futex::wake(w.seq, futex::Flags::empty(), i32::MAX as u32);
    }
}

/// A transport whose peers' operations on this PE need a thread of this PE to carry
/// them out (UCX's worker). A waiting thread that polls drives it itself, as a
/// single-threaded OpenSHMEM does: the transport's own progress thread would otherwise
/// share the PE's core with the poller and sleep between events, and on a VM every
/// wake-up of an idle core costs tens of microseconds (over UCX tcp with 2 bound PEs a
/// put + quiet took 26-34 us this way against Open MPI's 13).
pub trait Drive: Send + Sync + std::fmt::Debug {
    /// A thread of this PE starts driving: the transport's own thread stands back.
    fn enter(&self);
    /// One round of progress.
    fn drive(&self);
    /// That thread stops driving: `to_sleep` when it goes to sleep and leaves the work
    /// to the transport's thread, false when its wait is over.
    fn leave(&self, to_sleep: bool);
}

/// Drives `drivers` for the life of the value ([`Drive::enter`] now, [`Drive::leave`] on
/// drop, also by an error or a panic).
struct Driving<'a> {
    drivers: &'a [std::sync::Arc<dyn Drive>],
    /// Set when the poll phase ends unready: the thread goes to sleep next.
    to_sleep: bool,
}

impl<'a> Driving<'a> {
    #[inline]
    fn new(drivers: &'a [std::sync::Arc<dyn Drive>]) -> Driving<'a> {
        drivers.iter().for_each(|d| d.enter());
        Driving { drivers, to_sleep: false }
    }

    #[inline]
    fn round(&self) {
        self.drivers.iter().for_each(|d| d.drive());
    }
}

impl Drop for Driving<'_> {
    #[inline]
    fn drop(&mut self) {
        self.drivers.iter().for_each(|d| d.leave(self.to_sleep));
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
    /// More PEs share this host than there are CPUs for them: a polling PE may hold the
    /// CPU that the PE it waits for needs, so it yields after every few polls (a PE with
    /// a CPU of its own never yields while it polls).
    pub oversubscribed: bool,
    /// Give up at this instant.
    pub deadline: Option<Instant>,
    /// Log a warning after waiting this long.
    pub warn_after: Option<Duration>,
    /// Where a long wait reports (the PE's status board record, its hang limit).
    pub watcher: &'a Watcher,
    /// Transports this PE's polling waits drive (see [`Drive`]); empty for most.
    pub drive: &'a [std::sync::Arc<dyn Drive>],
    /// What this PE's earlier waits learned about how long to poll (see [`SpinLearner`]).
    pub learner: &'a SpinLearner,
}

/// How many times the policy's spin a PE with a CPU of its own may learn to poll before
/// it sleeps (see [`SpinLearner`]): 64 x the default 2000 polls is about 1.3 ms on the
/// 2-core VM (10 ns a pause), against the tens of microseconds a sleep costs the PEs that
/// store into this one (a futex wake each, and the sleeper's membarrier interrupts them).
const LEARNED_SPIN_FACTOR: u32 = 64;

/// A sleep that ended (its condition met) within this was not worth its cost: the PE
/// should have polled on.
const SHORT_SLEEP: Duration = Duration::from_millis(2);

/// A sleep longer than this was an idle wait: polling through it would have burnt the
/// CPU for nothing.
const IDLE_SLEEP: Duration = Duration::from_millis(50);

/// The polls a PE's waits spin before they sleep, learned from its earlier waits: a PE
/// with a CPU of its own whose sleeps keep ending soon (the condition met within
/// [`SHORT_SLEEP`], or woken by stores that did not meet it: a peer streams puts into it
/// while it waits in a barrier) doubles its spin, up to [`LEARNED_SPIN_FACTOR`] times the
/// policy's; one whose sleeps last ([`IDLE_SLEEP`]) halves it back toward the policy's.
/// Measured on 2 bound CPU PEs: with the policy's fixed 2000 polls (20 us), the PE waiting
/// in the benchmark's barrier fell asleep inside most repetitions, and the puts into it
/// paid for each sleep (8 B puts 0.017 to 0.081 us from one run to the next, 2 KiB
/// 0.024 to 0.106). A PE that shares its CPU always keeps the policy's spin: its polling
/// takes time from the PEs it waits for.
#[derive(Debug, Default)]
pub struct SpinLearner {
    /// Polls of the next wait's first spin (0: the policy's).
    polls: AtomicU32,
}

impl SpinLearner {
    /// Polls of a wait's first spin under `policy`.
    #[inline]
    fn first_spin(&self, policy: &WaitPolicy<'_>) -> u32 {
        if policy.oversubscribed {
            policy.spin
        } else {
            policy.spin.max(self.polls.load(Ordering::Relaxed))
        }
    }

    /// Learns from a wait that slept `slept` in all (from its first sleep to its end),
    /// with `false_wakes` wakes that found its condition false.
    fn learn(&self, policy: &WaitPolicy<'_>, slept: Duration, false_wakes: u32) {
        if policy.oversubscribed || policy.spin == 0 {
            return;
        }
        let now = self.first_spin(policy);
        let next = if slept < SHORT_SLEEP || (false_wakes > 0 && slept < IDLE_SLEEP) {
            now.saturating_mul(2).min(policy.spin.saturating_mul(LEARNED_SPIN_FACTOR))
        } else if slept >= IDLE_SLEEP {
            (now / 2).max(policy.spin)
        } else {
            now
        };
        self.polls.store(next, Ordering::Relaxed);
    }
}

/// Polls between yields of an oversubscribed PE. A PE with a CPU of its own never
/// yields while it polls: on a machine that other programs load too, a yield hands the
/// CPU to them for a whole time slice, and a ping-pong or barrier whose PEs yield falls
/// into sleeping on every step.
const YIELD_EVERY_OVERSUBSCRIBED: u32 = 4;

/// Polls at the start of a wait of a PE with a CPU of its own that look again at once,
/// without the spin-loop hint between them; later polls take the hint. The hint
/// (`pause`) lasts about 23 ns on the 2-core AMD EPYC VM, and a store that lands during
/// it is seen only after it. Measured there, 2 bound PEs, ping-pong 8 B half round trip
/// (alternating runs; the VM's cross-core latency has two modes): 0.059-0.062 -> 0.054-0.057
/// us in the fast mode, 0.237-0.248 -> 0.192-0.208 in the slow one. (Without the direct
/// word view of [`super::PolledWord`], whose poll is one load, dropping the hint made the
/// slow mode worse: 0.24 -> 0.275.)
const TIGHT_POLLS: u32 = 256;

/// Polls after a wake that found the condition false, before re-arming, for a PE that
/// shares its CPU (doubled after each such wake of one wait, up to [`respin_cap`]). A PE
/// with a CPU of its own starts at the policy's whole spin instead ([`respin_first`]).
const RESPIN_FIRST: u32 = 64;

/// How many times the policy's spin a PE with a CPU of its own may poll after wakes
/// that found its condition false. Each sleep costs the sleeper a membarrier (an
/// interrupt on every CPU that runs a PE) and the next storer a futex wake: measured on
/// 2 bound CPU PEs, a 512 KiB put stream into a PE that waited in a barrier put it to
/// sleep every 4 or 5 puts and cost each put 2 to 3 us of its 14. Polling longer
/// between sleeps costs nothing but that PE's own CPU.
const RESPIN_DEDICATED_FACTOR: u32 = 16;

/// The most polls between two sleeps of one wait after false wakes: the policy's spin
/// when the PE shares its CPU (polling then takes time from the PE it waits for),
/// [`RESPIN_DEDICATED_FACTOR`] times it when the CPU is the PE's own.
fn respin_cap(policy: &WaitPolicy<'_>) -> u32 {
    if policy.oversubscribed {
        policy.spin
    } else {
        policy.spin.saturating_mul(RESPIN_DEDICATED_FACTOR).max(policy.learner.first_spin(policy))
    }
}

/// The polls after the first wake that found the condition false. A false wake means
/// stores are arriving in this PE's heap (a peer streams puts into it while it waits in
/// a barrier, say), and every sleep after a short respin costs the storer a futex wake
/// and, through the sleeper's membarrier, an interrupt: measured on 2 bound CPU PEs, a
/// waiter that respun 64 polls (a few microseconds) before sleeping again cost a stream
/// of 2 KiB puts into it a sixth of its rate (0.029 against 0.025 us a put with a waiter
/// that never slept). A PE with a CPU of its own therefore polls the policy's whole spin
/// again before it sleeps; one that shares its CPU keeps [`RESPIN_FIRST`], since its
/// polling takes time from the PEs it waits for.
fn respin_first(policy: &WaitPolicy<'_>) -> u32 {
    if policy.oversubscribed {
        RESPIN_FIRST.min(policy.spin)
    } else {
        policy.learner.first_spin(policy)
    }
}

/// Polls `ready` up to `polls` times, yielding the CPU now and then and driving the
/// policy's transports before each poll; whether it held.
fn poll(polls: u32, policy: &WaitPolicy<'_>, ready: &mut impl FnMut() -> Result<bool>) -> Result<bool> {
    let oversubscribed = policy.oversubscribed;
    let mut driving = Driving::new(policy.drive);
    for i in 0..polls {
        driving.round();
        if ready()? {
            return Ok(true);
        }
        if oversubscribed && i % YIELD_EVERY_OVERSUBSCRIBED == YIELD_EVERY_OVERSUBSCRIBED - 1 {
            std::thread::yield_now();
        } else if oversubscribed || i >= TIGHT_POLLS {
            std::hint::spin_loop();
        }
    }
    driving.to_sleep = true;
    Ok(false)
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
    if poll(policy.learner.first_spin(&policy), &policy, &mut ready)? {
        return Ok(WaitOutcome::Ready);
    }
    let w = words(my_heap_base);
    // A wake that finds the condition false (a store to some other word of the heap)
    // polls a while before re-arming: a stream of stores then costs the storer one
    // futex wake per poll phase of this waiter, not one per store.
    let cap = respin_cap(&policy);
    let mut respin = respin_first(&policy);
    let start = Instant::now();
    // Wakes that found the condition false, for the learner.
    let mut false_wakes = 0u32;
    let mut warned = false;
    // Publishes the wait on the job's status board once it lasts (the launcher's view
    // of who waits on whom) and enforces the hang limit where no launcher does.
    let mut watch = WaitWatch::new(policy.watcher);
    loop {
        // Read the sequence before arming: a wake after the arm bumps it, so the futex
        // wait below returns at once instead of missing that wake.
        let seq = w.seq.load(Ordering::SeqCst);
        w.armed.store(1, Ordering::SeqCst);
        sleep_side_barrier();
        if ready()? {
            // The flag stays armed (another thread of this PE may sleep on it); at most
            // one later store pays for a needless wake.
            policy.learner.learn(&policy, start.elapsed(), false_wakes);
            return Ok(WaitOutcome::Ready);
        }
        let mut slice = sleep_slice();
        if let Some(d) = policy.deadline {
            slice = slice.min(d.saturating_duration_since(Instant::now()));
        }
        let ts = rustix::time::Timespec { tv_sec: slice.as_secs() as i64, tv_nsec: slice.subsec_nanos() as i64 };
        // Woken, or the sequence moved before the sleep (a wake came in between); not a
        // timed-out slice.
        let woken = !matches!(futex::wait(w.seq, futex::Flags::empty(), seq, Some(&ts)), Err(rustix::io::Errno::TIMEDOUT));
        if ready()? {
            policy.learner.learn(&policy, start.elapsed(), false_wakes);
            return Ok(WaitOutcome::Ready);
        }
        false_wakes += u32::from(woken);
        if woken && respin > 0 {
            if poll(respin, &policy, &mut ready)? {
                policy.learner.learn(&policy, start.elapsed(), false_wakes);
                return Ok(WaitOutcome::Ready);
            }
            respin = respin.saturating_mul(2).min(cap);
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
                // Whole seconds, rounded down: a loaded machine may wake late, and
                // "after 2 s" for a 1.6 s wait would overstate it.
                crate::log::always_warn(&format!("rshmem: still waiting after {} s for {}", start.elapsed().as_secs(), describe()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy<'a>(learner: &'a SpinLearner, watcher: &'a Watcher, oversubscribed: bool) -> WaitPolicy<'a> {
        WaitPolicy { spin: 100, oversubscribed, deadline: None, warn_after: None, watcher, drive: &[], learner }
    }

    #[test]
    fn dedicated_pe_learns_to_poll_through_short_sleeps_and_back_after_idle_ones() {
        let (l, w) = (SpinLearner::default(), Watcher::default());
        let p = policy(&l, &w, false);
        assert_eq!(l.first_spin(&p), 100, "starts at the policy's spin");
        l.learn(&p, Duration::from_micros(30), 0);
        assert_eq!(l.first_spin(&p), 200, "a sleep ended within SHORT_SLEEP doubles the spin");
        l.learn(&p, Duration::from_millis(10), 3);
        assert_eq!(l.first_spin(&p), 400, "false wakes before IDLE_SLEEP double it too");
        l.learn(&p, Duration::from_millis(10), 0);
        assert_eq!(l.first_spin(&p), 400, "a middling sleep without false wakes keeps it");
        for _ in 0..20 {
            l.learn(&p, Duration::ZERO, 0);
        }
        assert_eq!(l.first_spin(&p), 100 * LEARNED_SPIN_FACTOR, "capped at LEARNED_SPIN_FACTOR x the policy's");
        assert_eq!(respin_cap(&p), 100 * LEARNED_SPIN_FACTOR, "respins after false wakes may poll as long");
        l.learn(&p, IDLE_SLEEP, 5);
        assert_eq!(l.first_spin(&p), 50 * LEARNED_SPIN_FACTOR, "an idle sleep halves it");
        for _ in 0..20 {
            l.learn(&p, Duration::from_secs(1), 0);
        }
        assert_eq!(l.first_spin(&p), 100, "never below the policy's spin");
    }

    #[test]
    fn a_pe_sharing_its_cpu_keeps_the_policy_spin() {
        let (l, w) = (SpinLearner::default(), Watcher::default());
        let p = policy(&l, &w, true);
        l.learn(&p, Duration::ZERO, 4);
        assert_eq!(l.polls.load(Ordering::Relaxed), 0, "nothing learned");
        assert_eq!(l.first_spin(&p), 100);
        assert_eq!(respin_first(&p), RESPIN_FIRST);
        // What a dedicated PE learned does not leak into an oversubscribed policy.
        let (l2, w2) = (SpinLearner::default(), Watcher::default());
        l2.learn(&policy(&l2, &w2, false), Duration::ZERO, 0);
        assert_eq!(l2.first_spin(&policy(&l2, &w2, true)), 100);
    }
}

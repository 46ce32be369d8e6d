//! The progress thread stands back while application threads of its PE drive the worker.
//!
//! A thread of the PE that waits for a UCX request (or polls in a wait) progresses the
//! worker itself; the progress thread polling beside it would only contend for the
//! worker's lock and, on a PE bound to one core, for that core. So the progress thread
//! parks while an application thread drives or drove less than [`QUIET`] ago (a stream
//! of blocking gets leaves the worker for a moment between two gets), and looks again
//! after a pause that doubles from [`FIRST`] up to [`LONGEST`].
//!
//! A fixed 20 us pause woke the progress thread once per remote get (a get over loopback
//! tcp takes 12-18 us), and each wake took the core from the thread driving the get: on
//! the 2-core VM, get 8 B 17.9 us with it, 14.9 us with the pause at 500 us. A pause that
//! grew to 200 us still cost a stream of gets a fifth (each wake takes a core from a
//! thread driving, ours or the peer's): with [`LONGEST`] at 1 ms, get 8 B 12.5-14.5 ->
//! 10.3-11.0 us, fetch_add 12.0-14.9 -> 10.6-10.9, put + quiet 23.7-25.1 -> 19.2-20.7
//! (3 alternating runs; 20 ms gained nothing more). A thread that
//! stops driving to sleep (a wait whose poll phase ended) wakes the progress thread, which
//! must then serve peers and wake it; otherwise a peer's request waits at most
//! [`QUIET`] + [`LONGEST`] for the progress thread once the PE's threads stop driving.

use rustix::thread::futex;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// First pause of a progress thread that finds application threads driving.
pub(crate) const FIRST: Duration = Duration::from_micros(20);
/// Longest pause: the most a peer's request waits for the progress thread after the PE's
/// threads stop driving, when no wake comes.
pub(crate) const LONGEST: Duration = Duration::from_millis(1);
/// The progress thread stands back until no application thread has driven for this long.
pub(crate) const QUIET: Duration = Duration::from_micros(50);

/// Who drives the worker now: the count of application threads driving it, and the
/// progress thread's parking.
pub(crate) struct Standby {
    driving: AtomicUsize,
    /// 1 while the progress thread is parked (its futex word).
    parked: AtomicU32,
    /// When an application thread last stopped driving, in microseconds since `epoch`
    /// (at least 1); 0 before the first drive and after a hand-over.
    left_at: AtomicU64,
    epoch: Instant,
}

/// Ends an application thread's drive when dropped (also by a panic).
pub(crate) struct Driving<'a>(&'a Standby);

impl Drop for Driving<'_> {
    fn drop(&mut self) {
        self.0.leave(false);
    }
}

impl Standby {
    /// Nobody drives yet.
    pub(crate) fn new() -> Standby {
        Standby { driving: AtomicUsize::new(0), parked: AtomicU32::new(0), left_at: AtomicU64::new(0), epoch: Instant::now() }
    }

    fn now_us(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// An application thread starts driving the worker; it stops when the guard drops.
    pub(crate) fn drive(&self) -> Driving<'_> {
        self.enter();
        Driving(self)
    }

    /// An application thread starts driving the worker (pair with [`Standby::leave`]).
    pub(crate) fn enter(&self) {
        self.driving.fetch_add(1, Ordering::SeqCst);
    }

    /// An application thread stops driving. When it goes to sleep itself (`to_sleep`),
    /// the last one wakes a parked progress thread, which must now serve peers and wake
    /// it; otherwise the progress thread returns by itself, within [`LONGEST`], once no
    /// thread has driven for [`QUIET`].
    pub(crate) fn leave(&self, to_sleep: bool) {
        // A thread going to sleep hands the worker over at once: its drive does not count
        // as recent (see [`Standby::driven`]).
        self.left_at.store(if to_sleep { 0 } else { self.now_us().max(1) }, Ordering::Relaxed);
        if self.driving.fetch_sub(1, Ordering::SeqCst) == 1 && to_sleep && self.parked.load(Ordering::SeqCst) == 1 {
            self.parked.store(0, Ordering::SeqCst);
            let _ = futex::wake(&self.parked, futex::Flags::PRIVATE, 1);
        }
    }

    /// Whether an application thread drives the worker now or stopped less than
    /// [`QUIET`] ago (between two waits of a stream of blocking operations).
    pub(crate) fn driven(&self) -> bool {
        if self.driving.load(Ordering::Relaxed) > 0 {
            return true;
        }
        // 0: no drive yet, or the last one handed the worker over (see `leave`).
        let left = self.left_at.load(Ordering::Relaxed);
        left != 0 && self.now_us().saturating_sub(left) < QUIET.as_micros() as u64
    }

    /// For the progress thread: parks for `pause` while application threads drive, then
    /// doubles `pause` (up to [`LONGEST`]); when none drives, resets `pause` to [`FIRST`]
    /// and returns false at once.
    pub(crate) fn stand_back(&self, pause: &mut Duration) -> bool {
        if !self.driven() {
            *pause = FIRST;
            return false;
        }
        self.parked.store(1, Ordering::SeqCst);
        // Checked after announcing the parking: a thread that leaves from here on sees
        // `parked` and may wake us; one that left before is seen here.
        if self.driven() {
            let ts = rustix::time::Timespec { tv_sec: pause.as_secs() as i64, tv_nsec: i64::from(pause.subsec_nanos()) };
            let _ = futex::wait(&self.parked, futex::Flags::PRIVATE, 1, Some(&ts));
        }
        self.parked.store(0, Ordering::SeqCst);
        *pause = (*pause * 2).min(LONGEST);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn pause_doubles_while_driven_and_resets_when_quiet() {
        let s = Standby::new();
        std::thread::sleep(QUIET * 2);
        let mut pause = FIRST;
        assert!(!s.stand_back(&mut pause), "nobody drives: no parking");
        assert_eq!(pause, FIRST);
        let d = s.drive();
        assert!(s.stand_back(&mut pause));
        assert_eq!(pause, FIRST * 2);
        for _ in 0..8 {
            s.stand_back(&mut pause);
        }
        assert_eq!(pause, LONGEST);
        drop(d);
        assert!(s.driven(), "a drive that just ended still counts (a stream of gets)");
        std::thread::sleep(QUIET * 2);
        assert!(!s.driven());
        assert!(!s.stand_back(&mut pause));
        assert_eq!(pause, FIRST);
    }

    #[test]
    fn a_driver_going_to_sleep_wakes_the_parked_progress_thread() {
        let s = Arc::new(Standby::new());
        s.enter();
        let parker = {
            let s = s.clone();
            std::thread::spawn(move || {
                // A pause far longer than the test waits: only the wake ends it soon.
                let mut pause = Duration::from_secs(30);
                let t0 = Instant::now();
                s.stand_back(&mut pause);
                t0.elapsed()
            })
        };
        let t0 = Instant::now();
        while s.parked.load(Ordering::SeqCst) == 0 {
            assert!(t0.elapsed() < Duration::from_secs(10), "the progress thread never parked");
            std::thread::yield_now();
        }
        s.leave(true);
        let parked_for = parker.join().unwrap();
        assert!(parked_for < Duration::from_secs(10), "not woken: parked {parked_for:?}");
        assert!(!s.driven(), "a driver that went to sleep left the worker to the progress thread");
    }
}

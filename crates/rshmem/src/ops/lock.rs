//! Distributed locks (OpenSHMEM `shmem_set_lock`, `shmem_test_lock`, `shmem_clear_lock`)
//! on a symmetric 64-bit word (C `long`), zero before first use.
//!
//! **Algorithm: an MCS queue lock.** PEs that want the lock join a queue whose tail lives
//! on world PE 0's copy of the lock word; each PE's own copy holds its queue node. A PE
//! that finds a predecessor links itself behind it and waits on *its own* node, so waiting
//! is a local wait (spin briefly, then sleep on this PE's futex, woken by the predecessor's
//! atomic): waiters neither poll a remote word nor starve the PE they wait for on a
//! machine with few cores. The lock passes in queue order (first come, first served), so
//! no PE is starved: a PE waits for at most one critical section per PE queued before it.
//!
//! **Layout of the lock word** (the same on every PE; byte offsets, 32-bit halves):
//!
//! | bytes | on world PE 0 | on every PE |
//! |---|---|---|
//! | 0..4 | tail: 0 when free, else 1 + world PE of the last PE queued | (unused elsewhere) |
//! | 4..8 | | node: bits 0..30 = 1 + PE of its successor (0: none), bit 31 = still waiting |
//!
//! **Completion.** `clear_lock` first completes (quiet) this context's operations and the
//! default context's, so updates made inside the critical section are visible to the next
//! holder. Lock calls take no PE argument and are not context operations: they work the
//! same through any context.
//!
//! **Misuse is an error, not a hang:** setting a lock this PE already holds (or is
//! acquiring, from another thread), clearing one it does not hold, a lock word off the
//! heap or not aligned to 8 bytes.

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::runtime::LockState;
use crate::sym::Sym;
use crate::transport::AmoOp;

/// Byte offset of the queue tail (meaningful on world PE 0's copy).
const TAIL: usize = 0;
/// Byte offset of this PE's queue node.
const NODE: usize = 4;
/// Node bits naming the successor (1 + its PE; 0 for none).
const NEXT: u64 = 0x7fff_ffff;
/// Node bit set while this PE waits for its predecessor to hand the lock over.
const WAITING: u64 = 0x8000_0000;
/// The PE that holds the tail.
const HOME: usize = 0;

impl Ctx {
    /// Checks the lock word; returns its heap offset.
    fn lock_word(&self, call: &'static str, addr: usize) -> Result<usize> {
        if self.n_pes() as u64 >= NEXT {
            return Err(Error::Unsupported { call, detail: format!("locks support at most {} PEs", NEXT - 1) });
        }
        self.remote_word(call, "lock", addr, 8, "long lock", HOME)
    }

    fn misuse(&self, call: &'static str, addr: usize, what: &str) -> Error {
        Error::InvalidArgument { call, arg: "lock", detail: format!("PE {} {what} the lock at {addr:#x}", self.my_pe()), pe: self.my_pe() }
    }

    /// Acquires the lock `lock[index]`, waiting (in queue order) while another PE holds it.
    pub fn set_lock(&self, lock: &Sym<u64>, index: usize) -> Result<()> {
        self.set_lock_addr(self.element("set_lock", "lock", lock, index, self.my_pe())?)
    }

    /// Address form of [`Ctx::set_lock`] (`lock`: a symmetric address of this PE).
    pub fn set_lock_addr(&self, lock: usize) -> Result<()> {
        const CALL: &str = "set_lock";
        let off = self.lock_word(CALL, lock)?;
        {
            let mut held = self.rt.locks.map();
            match held.get(&off) {
                None => held.insert(off, LockState::Acquiring),
                Some(LockState::Acquiring) => return Err(self.misuse(CALL, lock, "is already acquiring (in another thread)")),
                Some(_) => return Err(self.misuse(CALL, lock, "already holds (locks are not recursive)")),
            };
        }
        let me = self.my_pe();
        let mine = self.rt.to(me);
        mine.store_word(me, off + NODE, 4, WAITING)?;
        let pred = self.rt.to(HOME).amo(HOME, off + TAIL, 4, AmoOp::Swap, me as u64 + 1, 0)?;
        if pred != 0 {
            let p = pred as usize - 1;
            self.rt.to(p).amo(p, off + NODE, 4, AmoOp::FetchOr, me as u64 + 1, 0)?;
            self.block(
                CALL,
                None,
                || Ok(mine.load_word(me, off + NODE, 4)? & WAITING == 0),
                || format!("the lock at {lock:#x} (queued behind PE {p})"),
            )?;
        }
        self.rt.locks.map().insert(off, LockState::Held);
        Ok(())
    }

    /// Acquires the lock `lock[index]` if no PE holds it; never waits. Returns `true` when
    /// this call acquired it, `false` when it was held or queued for, by any PE this one
    /// included (OpenSHMEM's `shmem_test_lock` returns 0 and 1 for these).
    pub fn test_lock(&self, lock: &Sym<u64>, index: usize) -> Result<bool> {
        self.test_lock_addr(self.element("test_lock", "lock", lock, index, self.my_pe())?)
    }

    /// Address form of [`Ctx::test_lock`].
    pub fn test_lock_addr(&self, lock: usize) -> Result<bool> {
        const CALL: &str = "test_lock";
        let off = self.lock_word(CALL, lock)?;
        {
            let mut held = self.rt.locks.map();
            if held.contains_key(&off) {
                return Ok(false);
            }
            held.insert(off, LockState::Acquiring);
        }
        let me = self.my_pe();
        // Not queued, so nobody else writes this node now.
        let old = self
            .rt
            .to(me)
            .store_word(me, off + NODE, 4, 0)
            .and_then(|_| self.rt.to(HOME).amo(HOME, off + TAIL, 4, AmoOp::CompareSwap, me as u64 + 1, 0));
        let mut held = self.rt.locks.map();
        if old.as_ref().is_ok_and(|&o| o == 0) {
            held.insert(off, LockState::Held);
            Ok(true)
        } else {
            held.remove(&off);
            old.map(|_| false)
        }
    }

    /// Releases the lock `lock[index]`, which this PE holds: completes this context's and
    /// the default context's operations, then hands the lock to the next PE in the queue.
    pub fn clear_lock(&self, lock: &Sym<u64>, index: usize) -> Result<()> {
        self.clear_lock_addr(self.element("clear_lock", "lock", lock, index, self.my_pe())?)
    }

    /// Address form of [`Ctx::clear_lock`].
    pub fn clear_lock_addr(&self, lock: usize) -> Result<()> {
        const CALL: &str = "clear_lock";
        let off = self.lock_word(CALL, lock)?;
        {
            let mut held = self.rt.locks.map();
            match held.get(&off) {
                Some(LockState::Held) => held.insert(off, LockState::Releasing),
                Some(LockState::Acquiring) => return Err(self.misuse(CALL, lock, "does not hold yet (another thread is acquiring)")),
                Some(LockState::Releasing) => return Err(self.misuse(CALL, lock, "is already releasing (in another thread)")),
                None => return Err(self.misuse(CALL, lock, "does not hold")),
            };
        }
        self.quiet()?;
        if !self.is_default_ctx() {
            self.rt.quiet_all()?;
        }
        let me = self.my_pe();
        let mine = self.rt.to(me);
        let mut next = mine.load_word(me, off + NODE, 4)? & NEXT;
        if next == 0 {
            let old = self.rt.to(HOME).amo(HOME, off + TAIL, 4, AmoOp::CompareSwap, 0, me as u64 + 1)?;
            if old != me as u64 + 1 {
                // A successor swapped itself in and is about to link behind us.
                self.block(
                    CALL,
                    None,
                    || {
                        next = mine.load_word(me, off + NODE, 4)? & NEXT;
                        Ok(next != 0)
                    },
                    || format!("the next PE to link behind the lock at {lock:#x}"),
                )?;
            }
        }
        if next != 0 {
            let s = next as usize - 1;
            self.rt.to(s).amo(s, off + NODE, 4, AmoOp::FetchAnd, !WAITING & 0xffff_ffff, 0)?;
        }
        self.rt.locks.map().remove(&off);
        Ok(())
    }
}

//! Point-to-point synchronization: wait until / test on symmetric variables of this PE.
//!
//! A wait spins briefly, then sleeps on the heap's futex (see `transport::notify`), which
//! every store through the API wakes: with 8 PEs on 2 cores waiters do not starve the
//! writers they wait for. The single-variable wait has a `_timeout` twin, and the address form of the
//! array family (`wait_many_addr`) takes a timeout, for programs (and tests) that must
//! not wait forever; a wait longer than `RSHMEM_WAIT_WARN` seconds logs a warning
//! naming the call and the PE.

use crate::ctx::Ctx;
use crate::error::{Error, Result};
use crate::sym::Sym;
use crate::transport::notify::{self, WaitOutcome};
use crate::transport::PolledWord;
use crate::types::{Cmp, SyncWord};
use std::time::Duration;

impl Ctx {
    /// The `n` words at `addr` in this PE's heap that a wait or test of `call` reads,
    /// checked to lie in one allocation.
    fn sync_words<T: SyncWord>(&self, call: &'static str, addr: usize, n: usize) -> Result<Vec<PolledWord<'_>>> {
        let me = self.my_pe();
        if n == 0 {
            // An empty set (nelems 0) is satisfied at once; the address must still be symmetric.
            self.remote(call, "ivars", addr, 0, me)?;
            return Ok(Vec::new());
        }
        let off = self.remote_word(call, "ivars", addr, T::WIDTH, T::NAME, me)?;
        if n > 1 {
            self.rt.heap.check_range(call, "ivars", addr, n * T::WIDTH, me)?;
        }
        Ok((0..n).map(|i| self.local_word(off + i * T::WIDTH, T::WIDTH)).collect())
    }

    /// The `width`-byte word at `off` in this PE's heap, for a wait or test to read.
    #[inline]
    pub(crate) fn local_word(&self, off: usize, width: usize) -> PolledWord<'_> {
        let me = self.my_pe();
        PolledWord::new(self.rt.to(me), me, off, width)
    }

    pub(crate) fn block(
        &self,
        call: &'static str,
        timeout: Option<Duration>,
        mut ready: impl FnMut() -> Result<bool>,
        what: impl Fn() -> String,
    ) -> Result<()> {
        let me = self.my_pe();
        match notify::wait_until(self.rt.heap.base(me), self.rt.wait_policy(timeout), &mut ready, || {
            format!("{call} on PE {me}: {}", what())
        })? {
            WaitOutcome::Ready => Ok(()),
            WaitOutcome::TimedOut => {
                Err(Error::Timeout { call, what: what(), secs: timeout.map(|t| t.as_secs_f64()).unwrap_or(0.0), pe: me })
            }
        }
    }

    // ----- single variable -----

    /// Waits until `ivar[index] <cmp> value` holds.
    pub fn wait_until<T: SyncWord>(&self, ivar: &Sym<T>, index: usize, cmp: Cmp, value: T) -> Result<()> {
        self.wait_until_addr(ivar.elements("wait_until", "index", index, 1, self.my_pe())?, cmp, value, None)
    }

    /// [`Ctx::wait_until`] that gives up after `timeout` with [`Error::Timeout`].
    pub fn wait_until_timeout<T: SyncWord>(&self, ivar: &Sym<T>, index: usize, cmp: Cmp, value: T, timeout: Duration) -> Result<()> {
        self.wait_until_addr(ivar.elements("wait_until", "index", index, 1, self.my_pe())?, cmp, value, Some(timeout))
    }

    /// Address form of [`Ctx::wait_until`] (used by the C ABI).
    pub fn wait_until_addr<T: SyncWord>(&self, addr: usize, cmp: Cmp, value: T, timeout: Option<Duration>) -> Result<()> {
        const CALL: &str = "wait_until";
        let word = self.local_word(self.remote_word(CALL, "ivars", addr, T::WIDTH, T::NAME, self.my_pe())?, T::WIDTH);
        self.block(CALL, timeout, || Ok(cmp.holds(T::from_bits(word.load()?), value)), || format!("ivar at {addr:#x} {cmp:?} {value:?}"))
    }

    /// Whether `ivar[index] <cmp> value` holds now.
    pub fn test<T: SyncWord>(&self, ivar: &Sym<T>, index: usize, cmp: Cmp, value: T) -> Result<bool> {
        self.test_addr(ivar.elements("test", "index", index, 1, self.my_pe())?, cmp, value)
    }

    /// Address form of [`Ctx::test`].
    pub fn test_addr<T: SyncWord>(&self, addr: usize, cmp: Cmp, value: T) -> Result<bool> {
        let off = self.remote_word("test", "ivars", addr, T::WIDTH, T::NAME, self.my_pe())?;
        Ok(cmp.holds(T::from_bits(self.local_word(off, T::WIDTH).load()?), value))
    }

    // ----- arrays: all / any / some, with one value or a vector of values -----

    /// Address form of the whole family: `values` has one entry (same value for every
    /// element) or one per element; `status[i] != 0` excludes element `i`.
    #[allow(clippy::too_many_arguments)]
    pub fn wait_many_addr<T: SyncWord>(
        &self,
        call: &'static str,
        addr: usize,
        n: usize,
        status: Option<&[i32]>,
        cmp: Cmp,
        values: &[T],
        mode: WaitMode,
        timeout: Option<Duration>,
        block: bool,
    ) -> Result<Vec<usize>> {
        let words = self.sync_words::<T>(call, addr, n)?;
        if let Some(s) = status {
            if s.len() < n {
                return Err(Error::InvalidArgument {
                    call,
                    arg: "status",
                    detail: format!("has {} entries for {n} variables", s.len()),
                    pe: self.my_pe(),
                });
            }
        }
        if values.len() != 1 && values.len() < n {
            return Err(Error::InvalidArgument {
                call,
                arg: "cmp_values",
                detail: format!("has {} entries for {n} variables", values.len()),
                pe: self.my_pe(),
            });
        }
        let active: Vec<usize> = (0..n).filter(|&i| status.is_none_or(|s| s[i] == 0)).collect();
        if active.is_empty() {
            return Ok(Vec::new());
        }
        let value = |i: usize| if values.len() == 1 { values[0] } else { values[i] };
        let satisfied = |i: usize| Ok(cmp.holds(T::from_bits(words[i].load()?), value(i)));
        let mut done: Vec<usize> = Vec::new();
        let mut check = || {
            done.clear();
            for &i in &active {
                if satisfied(i)? {
                    done.push(i);
                }
            }
            Ok(match mode {
                WaitMode::All => done.len() == active.len(),
                WaitMode::Any | WaitMode::Some => !done.is_empty(),
            })
        };
        if block {
            self.block(call, timeout, &mut check, || format!("{n} ivars at {addr:#x} ({mode:?} {cmp:?})"))?;
        } else if !check()? {
            return Ok(Vec::new());
        }
        Ok(match mode {
            WaitMode::All => active,
            WaitMode::Any => done.into_iter().take(1).collect(),
            WaitMode::Some => done,
        })
    }

    /// Waits until every element not excluded by `status` satisfies the comparison.
    pub fn wait_until_all<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, value: T) -> Result<()> {
        self.wait_many_addr("wait_until_all", ivars.addr(), ivars.len(), status, cmp, &[value], WaitMode::All, None, true).map(|_| ())
    }

    /// Waits until some element satisfies it; returns its index (None if all are excluded).
    pub fn wait_until_any<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, value: T) -> Result<Option<usize>> {
        Ok(self
            .wait_many_addr("wait_until_any", ivars.addr(), ivars.len(), status, cmp, &[value], WaitMode::Any, None, true)?
            .first()
            .copied())
    }

    /// Waits until at least one element satisfies it; returns the indices that do.
    pub fn wait_until_some<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, value: T) -> Result<Vec<usize>> {
        self.wait_many_addr("wait_until_some", ivars.addr(), ivars.len(), status, cmp, &[value], WaitMode::Some, None, true)
    }

    /// [`Ctx::wait_until_all`] with one comparison value per element.
    pub fn wait_until_all_vector<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, values: &[T]) -> Result<()> {
        self.wait_many_addr("wait_until_all_vector", ivars.addr(), ivars.len(), status, cmp, values, WaitMode::All, None, true).map(|_| ())
    }

    /// [`Ctx::wait_until_any`] with one comparison value per element.
    pub fn wait_until_any_vector<T: SyncWord>(
        &self,
        ivars: &Sym<T>,
        status: Option<&[i32]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<Option<usize>> {
        Ok(self
            .wait_many_addr("wait_until_any_vector", ivars.addr(), ivars.len(), status, cmp, values, WaitMode::Any, None, true)?
            .first()
            .copied())
    }

    /// [`Ctx::wait_until_some`] with one comparison value per element.
    pub fn wait_until_some_vector<T: SyncWord>(
        &self,
        ivars: &Sym<T>,
        status: Option<&[i32]>,
        cmp: Cmp,
        values: &[T],
    ) -> Result<Vec<usize>> {
        self.wait_many_addr("wait_until_some_vector", ivars.addr(), ivars.len(), status, cmp, values, WaitMode::Some, None, true)
    }

    /// Whether every element not excluded satisfies the comparison now.
    pub fn test_all<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, value: T) -> Result<bool> {
        let active = status.map_or(ivars.len(), |s| s.iter().take(ivars.len()).filter(|&&x| x == 0).count());
        Ok(self.wait_many_addr("test_all", ivars.addr(), ivars.len(), status, cmp, &[value], WaitMode::All, None, false)?.len() == active)
    }

    /// The index of one element that satisfies the comparison now, if any.
    pub fn test_any<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, value: T) -> Result<Option<usize>> {
        Ok(self.wait_many_addr("test_any", ivars.addr(), ivars.len(), status, cmp, &[value], WaitMode::Any, None, false)?.first().copied())
    }

    /// The indices of the elements that satisfy the comparison now.
    pub fn test_some<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, value: T) -> Result<Vec<usize>> {
        self.wait_many_addr("test_some", ivars.addr(), ivars.len(), status, cmp, &[value], WaitMode::Some, None, false)
    }

    /// [`Ctx::test_all`] with one comparison value per element.
    pub fn test_all_vector<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, values: &[T]) -> Result<bool> {
        let active = status.map_or(ivars.len(), |s| s.iter().take(ivars.len()).filter(|&&x| x == 0).count());
        Ok(self.wait_many_addr("test_all_vector", ivars.addr(), ivars.len(), status, cmp, values, WaitMode::All, None, false)?.len()
            == active)
    }

    /// [`Ctx::test_any`] with one comparison value per element.
    pub fn test_any_vector<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, values: &[T]) -> Result<Option<usize>> {
        Ok(self
            .wait_many_addr("test_any_vector", ivars.addr(), ivars.len(), status, cmp, values, WaitMode::Any, None, false)?
            .first()
            .copied())
    }

    /// [`Ctx::test_some`] with one comparison value per element.
    pub fn test_some_vector<T: SyncWord>(&self, ivars: &Sym<T>, status: Option<&[i32]>, cmp: Cmp, values: &[T]) -> Result<Vec<usize>> {
        self.wait_many_addr("test_some_vector", ivars.addr(), ivars.len(), status, cmp, values, WaitMode::Some, None, false)
    }
}

/// Which elements of an array wait must satisfy the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Every active element.
    All,
    /// One active element (the first found is returned).
    Any,
    /// At least one; all that do are returned.
    Some,
}

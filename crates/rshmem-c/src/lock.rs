//! Distributed locks: `set_lock`, `test_lock`, `clear_lock` on a symmetric `long`.

use crate::routine::Routine;
use crate::state::{rt, OrExit};
use std::ffi::{c_int, c_long};

c_fn!(set_lock, "set_lock"; fn (lock: *mut c_long) = |call| rt(call).set_lock_addr(lock as usize).or_exit(call));
c_fn!(clear_lock, "clear_lock"; fn (lock: *mut c_long) = |call| rt(call).clear_lock_addr(lock as usize).or_exit(call));
// 0 when this call acquired the lock, 1 when another PE holds it.
c_fn!(test_lock, "test_lock"; fn (lock: *mut c_long) -> c_int = |call| (!rt(call).test_lock_addr(lock as usize).or_exit(call)) as c_int);

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] = routines![set_lock, clear_lock, test_lock];

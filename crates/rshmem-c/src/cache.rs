//! The deprecated cache-management routines: no-ops on cache-coherent machines, as the
//! specification allows.

use crate::routine::Routine;
use std::ffi::c_void;

c_fn!(clear_cache_inv, "clear_cache_inv"; fn () = |_call| ());
c_fn!(set_cache_inv, "set_cache_inv"; fn () = |_call| ());
c_fn!(clear_cache_line_inv, "clear_cache_line_inv"; fn (dest: *mut c_void) = |_call| { let _ = dest; });
c_fn!(set_cache_line_inv, "set_cache_line_inv"; fn (dest: *mut c_void) = |_call| { let _ = dest; });
c_fn!(udcflush, "udcflush"; fn () = |_call| ());
c_fn!(udcflush_line, "udcflush_line"; fn (dest: *mut c_void) = |_call| { let _ = dest; });

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] =
    routines![clear_cache_inv, set_cache_inv, udcflush, clear_cache_line_inv, set_cache_line_inv, udcflush_line];

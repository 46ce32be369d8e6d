//! Ordering: fence, quiet, per-PE quiet.
//!
//! * `fence`: puts, AMOs and signals to one PE issued before it are delivered before those
//!   issued after it to the same PE.
//! * `quiet`: every put, AMO and signal issued before it is complete (visible at its
//!   target) when it returns, and local buffers may be reused.
//! * `pe_quiet(pes)`: quiet restricted to the listed PEs.
//!
//! On the local (mapped) transport every operation is complete when its call returns, so
//! both reduce to a full memory fence; remote transports flush their endpoints.

use crate::ctx::{Ctx, Runtime};
use crate::error::Result;

/// Quiet over every transport of the runtime.
pub(crate) fn quiet_all(rt: &Runtime) {
    for t in rt.transports.distinct() {
        t.quiet(None);
    }
}

impl Ctx {
    /// Orders earlier puts, AMOs and signals to each PE before later ones to that PE.
    pub fn fence(&self) {
        for t in self.rt.transports.distinct() {
            t.fence();
        }
    }

    /// Completes every earlier put, AMO and signal of this context.
    pub fn quiet(&self) {
        quiet_all(&self.rt);
    }

    /// Completes earlier operations to the PEs in `pes` (OpenSHMEM 1.6 `pe_quiet`).
    pub fn pe_quiet(&self, pes: &[usize]) -> Result<()> {
        for &pe in pes {
            self.check_pe("pe_quiet", pe)?;
            self.rt.to(pe).quiet(Some(pe));
        }
        Ok(())
    }
}

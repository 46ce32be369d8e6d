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

use crate::ctx::Ctx;
use crate::error::Result;

impl Ctx {
    /// Orders earlier puts, AMOs and signals of this context to each PE before later ones
    /// to that PE.
    pub fn fence(&self) -> Result<()> {
        for t in &self.domain.distinct {
            t.fence().map_err(|e| e.during("fence"))?;
        }
        Ok(())
    }

    /// Completes every earlier put, AMO and signal of this context (only this one: each
    /// context's transport instances keep their own completion state).
    pub fn quiet(&self) -> Result<()> {
        for t in &self.domain.distinct {
            t.quiet(None).map_err(|e| e.during("quiet"))?;
        }
        Ok(())
    }

    /// Completes earlier operations of this context to the PEs in `pes` (OpenSHMEM 1.6
    /// `pe_quiet`; PE numbers are relative to the context's team).
    pub fn pe_quiet(&self, pes: &[usize]) -> Result<()> {
        for &pe in pes {
            let pe = self.target_pe("pe_quiet", pe)?;
            self.to(pe).quiet(Some(pe)).map_err(|e| e.during("pe_quiet"))?;
        }
        Ok(())
    }
}

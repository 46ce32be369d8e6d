//! Direct broadcast: every member copies the root's data into its own dest.
//!
//! Up to one staging set (16 KiB) the root first copies its source into its staging
//! area, publishes, and returns at once (its readers are waited for lazily, when the set
//! is next reused). Larger messages are read straight from the root's source; the root
//! then waits until every member has finished reading (CONSUMED) before it returns, so
//! the source may be reused. One synchronization step for the members, none or one for
//! the root. A member's only word of the call besides its CONSUMED = DONE is its entry
//! word (the argument code, see `session.rs`), which it writes before waiting on the root.

use super::session::Session;
use crate::error::Result;
use crate::heap::layout::STAGE_SET;

pub(crate) fn run(s: &mut Session<'_>, dest: usize, src: usize, nbytes: usize, root: usize) -> Result<()> {
    let me = s.me();
    let staged = nbytes <= STAGE_SET;
    let from = if staged {
        let set = s.own_set();
        if me == root {
            let stage = s.stage_set(set)?;
            s.copy(me, stage, me, src, nbytes)?;
            s.publish(1)?;
            s.copy(me, dest, me, src, nbytes)?;
            return Ok(());
        }
        // Every member knows where the root stages: the same set at the same offset.
        s.stage_set_offset(set)
    } else {
        src
    };
    if me == root {
        s.publish(1)?;
        s.copy(me, dest, me, src, nbytes)?;
        for i in (0..s.n()).filter(|&i| i != root) {
            s.wait_consumed(i, 1)?;
        }
        return Ok(());
    }
    s.wait_progress(root, 1)?;
    s.copy(me, dest, root, from, nbytes)?;
    // The CONSUMED = DONE this PE stores as it returns tells the root it has read.
    Ok(())
}

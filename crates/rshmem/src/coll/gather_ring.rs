//! Ring gather (fcollect, collect): in step `t = 0 .. n-2` every member writes block
//! `(me - t) mod n` (its own at step 0, afterwards the one it received in the previous
//! step) into its right neighbour's dest and signals the neighbour's STEP_IN word with
//! `t + 1`. Each PE writes only to its right neighbour, which must have entered (the
//! caller waited for that); `n - 1` steps.

use super::session::Session;
use crate::error::Result;

pub(crate) fn run(s: &mut Session<'_>, dest: usize, src: usize, offsets: &[usize], sizes: &[usize]) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    let right = (me + 1) % n;
    s.signals_to(right);
    s.copy(me, dest + offsets[me], me, src, sizes[me])?;
    for t in 0..n - 1 {
        let b = (me + n - t) % n;
        let from = if t == 0 {
            src
        } else {
            s.wait_step_in(t as u64)?;
            dest + offsets[b]
        };
        s.copy(right, dest + offsets[b], me, from, sizes[b])?;
        s.fence(right)?;
        s.signal_step(right, t as u64 + 1)?;
    }
    s.wait_step_in(n as u64 - 1)
}

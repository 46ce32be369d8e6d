//! Direct gather (fcollect, collect): every member writes its block straight into every
//! member's dest ("one-shot writes"), then adds one to that member's ARRIVE counter; it
//! returns once the other `n - 1` blocks have arrived in its own dest. The caller has
//! already waited until every member entered (so every dest is ready). One step; each PE
//! writes `n - 1` blocks and reads none.

use super::session::Session;
use crate::error::Result;

pub(crate) fn run(s: &mut Session<'_>, dest: usize, src: usize, offsets: &[usize], sizes: &[usize]) -> Result<()> {
    let (me, n) = (s.me(), s.n());
    s.copy(me, dest + offsets[me], me, src, sizes[me])?;
    for d in 1..n {
        let j = (me + d) % n;
        s.push_arrive(j, dest + offsets[me], src, sizes[me])?;
    }
    s.wait_arrivals(n as u64 - 1)
}

//! Hierarchical broadcast for teams that span hosts ([`super::hosts`]).
//!
//! The root leads its own host for the call; every other host is led by its first
//! member. The root publishes its source (step 1). The root's host mates and the other
//! hosts' leaders copy it into their dests (the leaders over the network) and say so
//! (CONSUMED 1; the host mates with the CONSUMED = DONE they store as they return); each
//! other leader then publishes its dest (step 2), its members copy from it (CONSUMED =
//! DONE as they return) and the leader returns once they have. The root returns once its
//! readers have read. The network carries the message once per other host.

use super::session::Session;
use crate::error::Result;
use crate::runtime::hosts::HostGroups;

pub(crate) fn run(s: &mut Session<'_>, hosts: &HostGroups, dest: usize, src: usize, nbytes: usize, root: usize) -> Result<()> {
    let me = s.me();
    let root_group = hosts.group_of[root];
    let g = hosts.group_of[me];
    let group = &hosts.groups[g];
    let lead = |h: usize| if h == root_group { root } else { hosts.leader(h) };
    if me == root {
        s.publish(1)?;
        s.copy(me, dest, me, src, nbytes)?;
        for h in (0..hosts.groups.len()).filter(|&h| h != root_group) {
            s.wait_consumed(lead(h), 1)?;
        }
        for &i in group.iter().filter(|&&i| i != root) {
            s.wait_consumed(i, 1)?;
        }
        return Ok(());
    }
    if g == root_group || me == lead(g) {
        s.wait_progress(root, 1)?;
        s.copy(me, dest, root, src, nbytes)?;
        if g != root_group {
            s.consumed(1)?;
            s.publish(2)?;
            for &i in group.iter().filter(|&&i| i != me) {
                s.wait_consumed(i, 2)?;
            }
        }
        return Ok(());
    }
    let leader = lead(g);
    s.wait_progress(leader, 2)?;
    s.copy(me, dest, leader, dest, nbytes)?;
    // The CONSUMED = DONE this PE stores as it returns tells the leader it has read.
    Ok(())
}

//! Hierarchical gather (fcollect, collect) for teams that span hosts
//! ([`super::hosts`]). The caller has published step 1 (entered, source ready).
//!
//! Each host's leader copies its host's blocks (the members' sources) into its own dest
//! and publishes (step 2); it then copies every other host's blocks from that host's
//! leader's dest (over the network; adjacent blocks in one copy), publishes the full
//! dest (step 3), and returns once its members and the other leaders have read it. The
//! other members copy the whole result from their leader (CONSUMED 3). The network
//! carries each block once per other host.
//!
//! collect (`sizes_read`): members read every member's published size (INFO) before they
//! gather; a leader publishes step 2 only after its members have read the sizes
//! (CONSUMED 1), so once any member returns (after its leader's step 3, which follows
//! every leader's step 2) every member has read them, and a member's next collect may
//! overwrite its size.

use super::session::Session;
use crate::error::Result;
use crate::runtime::hosts::HostGroups;

/// Contiguous byte runs `(offset, len)` covering the blocks of `members`.
fn runs(members: &[usize], offsets: &[usize], sizes: &[usize]) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::new();
    for &i in members {
        match out.last_mut() {
            Some((at, len)) if *at + *len == offsets[i] => *len += sizes[i],
            _ => out.push((offsets[i], sizes[i])),
        }
    }
    out
}

pub(crate) fn run(
    s: &mut Session<'_>,
    hosts: &HostGroups,
    dest: usize,
    src: usize,
    (offsets, sizes): (&[usize], &[usize]),
    sizes_read: bool,
) -> Result<()> {
    let me = s.me();
    let group = &hosts.groups[hosts.group_of[me]];
    let leader = group[0];
    let total: usize = sizes.iter().sum();
    if me != leader {
        s.wait_progress(leader, 3)?;
        s.copy(me, dest, leader, dest, total)?;
        s.consumed(3)?;
        return Ok(());
    }
    for &i in group {
        if i != me {
            s.wait_progress(i, 1)?;
        }
        s.copy(me, dest + offsets[i], i, src, sizes[i])?;
        if sizes_read && i != me {
            s.wait_consumed(i, 1)?;
        }
    }
    s.publish(2)?;
    let leaders = hosts.leaders();
    for (h, members) in hosts.groups.iter().enumerate() {
        let l = leaders[h];
        if l == me {
            continue;
        }
        s.wait_progress(l, 2)?;
        for (at, len) in runs(members, offsets, sizes) {
            s.copy(me, dest + at, l, dest + at, len)?;
        }
    }
    s.consumed(2)?;
    s.publish(3)?;
    for &i in &group[1..] {
        s.wait_consumed(i, 3)?;
    }
    for &l in leaders.iter().filter(|&&l| l != me) {
        s.wait_consumed(l, 2)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn adjacent_blocks_merge() {
        let offsets = [0, 4, 4, 10];
        let sizes = [4, 0, 6, 2];
        assert_eq!(super::runs(&[0, 1, 2], &offsets, &sizes), vec![(0, 10)]);
        assert_eq!(super::runs(&[0, 3], &offsets, &sizes), vec![(0, 4), (10, 2)]);
    }
}

//! A team's members grouped by host, for the hierarchical algorithms (`*_hier.rs`).
//!
//! A host is a shared-memory domain: members whose heaps this runtime reaches through
//! mapped memory (the runtime's host table, from `RSHMEM_HOST` and `RSHMEM_TRANSPORT`;
//! see `ctx::host_transports`). Groups list team ranks in increasing order and are
//! ordered by their first member, so every member computes the same groups. The first
//! member of a group is its *leader*: the only one that talks to other hosts.

use crate::ctx::Runtime;
use crate::team::TeamInfo;

/// The members of one team, grouped by host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostGroups {
    /// Team ranks per host, each list increasing; hosts ordered by their first member.
    pub(crate) groups: Vec<Vec<usize>>,
    /// The group of each team rank.
    pub(crate) group_of: Vec<usize>,
}

impl HostGroups {
    /// Groups the members of `t` by the host of their world PE.
    pub(crate) fn of_team(rt: &Runtime, t: &TeamInfo) -> HostGroups {
        HostGroups::from_hosts(&(0..t.size).map(|i| rt.host_of[t.world_pe(i)]).collect::<Vec<_>>())
    }

    /// Groups ranks `0..host.len()` by `host[rank]`.
    pub(crate) fn from_hosts(host: &[usize]) -> HostGroups {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        let mut keys: Vec<usize> = Vec::new();
        let mut group_of = Vec::with_capacity(host.len());
        for (rank, h) in host.iter().enumerate() {
            let g = match keys.iter().position(|k| k == h) {
                Some(g) => g,
                None => {
                    keys.push(*h);
                    groups.push(Vec::new());
                    groups.len() - 1
                }
            };
            groups[g].push(rank);
            group_of.push(g);
        }
        HostGroups { groups, group_of }
    }

    /// Whether the hierarchical algorithms pay off: the team spans several hosts and some
    /// host holds more than one member (with one member per host they reduce to the flat
    /// algorithms plus overhead; on one host there is nothing to cross).
    pub(crate) fn spans_hosts(&self) -> bool {
        self.groups.len() > 1 && self.groups.iter().any(|g| g.len() > 1)
    }

    /// The leader (first member) of group `g`.
    #[inline]
    pub(crate) fn leader(&self, g: usize) -> usize {
        self.groups[g][0]
    }

    /// The leaders of every group, in group order.
    pub(crate) fn leaders(&self) -> Vec<usize> {
        self.groups.iter().map(|g| g[0]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_follow_the_hosts() {
        let h = HostGroups::from_hosts(&[5, 7, 5, 7, 9]);
        assert_eq!(h.groups, vec![vec![0, 2], vec![1, 3], vec![4]]);
        assert_eq!(h.group_of, vec![0, 1, 0, 1, 2]);
        assert_eq!(h.leaders(), vec![0, 1, 4]);
        assert!(h.spans_hosts());
        assert!(!HostGroups::from_hosts(&[0, 0, 0]).spans_hosts());
        assert!(!HostGroups::from_hosts(&[0, 1, 2]).spans_hosts());
    }
}

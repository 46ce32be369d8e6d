//! Which PEs share a machine: the job's hosts ([`Hosts`], exchanged at init) and a
//! team's members grouped by host ([`HostGroups`], for the hierarchical collectives).
//!
//! A host is a shared-memory domain: PEs whose heaps this runtime reaches through mapped
//! memory (from `RSHMEM_HOST` and `RSHMEM_TRANSPORT`). Groups list team ranks in
//! increasing order and are ordered by their first member, so every member computes the
//! same groups. The first member of a group is its *leader*: the only one that talks to
//! other hosts.

use crate::bootstrap::Bootstrap;
use crate::config::{Config, TransportMode};
use crate::error::Result;

/// Which PEs share a machine with which.
#[derive(Debug, Clone)]
pub(crate) struct Hosts {
    /// Shared-memory domain of every PE (the first PE of its domain): which peers take
    /// the local transport and how the collectives group PEs.
    pub(crate) domain: Vec<usize>,
    /// Whether this PE maps each PE's heap: only peers that name the same host
    /// (`RSHMEM_HOST`) are mapped, so a job across machines never asks for another
    /// machine's memory.
    pub(crate) mapped: Vec<bool>,
}

impl Hosts {
    /// Exchanges `RSHMEM_HOST` (default: the hostname). `RSHMEM_TRANSPORT=ucx` makes every
    /// PE a domain of its own (peers of one machine stay mapped, but are reached through
    /// UCX), `local` puts every PE in one domain and maps them all.
    pub(crate) fn exchange(config: &Config, boot: &mut dyn Bootstrap) -> Result<Hosts> {
        let me = boot.rank();
        let names = boot.allgather(config.host_name().as_bytes())?;
        Ok(Hosts::from_names(&names, me, config.transport))
    }

    /// The hosts of PEs that named `names[pe]`, seen from `me`.
    pub(crate) fn from_names(names: &[Vec<u8>], me: usize, mode: TransportMode) -> Hosts {
        let n_pes = names.len();
        // Host number: the first PE that named the same host.
        let by_name: Vec<usize> = (0..n_pes).map(|pe| names.iter().position(|n| *n == names[pe]).unwrap_or(pe)).collect();
        let same_host = (0..n_pes).map(|pe| by_name[pe] == by_name[me]).collect();
        let (domain, mapped) = match mode {
            TransportMode::Local => (vec![0; n_pes], vec![true; n_pes]),
            TransportMode::Ucx => ((0..n_pes).collect(), same_host),
            TransportMode::Auto => (by_name, same_host),
        };
        Hosts { domain, mapped }
    }

    /// (start, stride, size) of `me`'s `SHARED` team: the PEs of its domain when they
    /// form a strided set (as block and round-robin placements do), else `me` alone.
    pub(crate) fn shared_team(&self, me: usize) -> (usize, usize, usize) {
        let members: Vec<usize> = (0..self.domain.len()).filter(|&pe| self.domain[pe] == self.domain[me]).collect();
        let stride = if members.len() > 1 { members[1] - members[0] } else { 1 };
        if members.windows(2).all(|w| w[1] - w[0] == stride) {
            (members[0], stride, members.len())
        } else {
            (me, 1, 1)
        }
    }

    /// `me`'s number among the PEs of its host (those it maps), counted in PE order:
    /// the local rank that picks its GPU.
    pub(crate) fn local_rank(&self, me: usize) -> usize {
        (0..me).filter(|&pe| self.mapped[pe]).count()
    }

    /// The peers `me` reaches through the remote transport.
    pub(crate) fn remote(&self, me: usize) -> Vec<bool> {
        (0..self.domain.len()).map(|pe| pe != me && self.domain[pe] != self.domain[me]).collect()
    }
}

/// The members of one team, grouped by host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HostGroups {
    /// Team ranks per host, each list increasing; hosts ordered by their first member.
    pub(crate) groups: Vec<Vec<usize>>,
    /// The group of each team rank.
    pub(crate) group_of: Vec<usize>,
}

impl HostGroups {
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
    fn hosts_follow_the_names_and_the_transport_mode() {
        let names: Vec<Vec<u8>> = ["a", "b", "a", "b"].iter().map(|n| n.as_bytes().to_vec()).collect();
        let h = Hosts::from_names(&names, 2, TransportMode::Auto);
        assert_eq!(h.domain, vec![0, 1, 0, 1]);
        assert_eq!(h.mapped, vec![true, false, true, false]);
        assert_eq!(h.shared_team(2), (0, 2, 2));
        assert_eq!(h.remote(2), vec![false, true, false, true]);
        let u = Hosts::from_names(&names, 2, TransportMode::Ucx);
        assert_eq!((u.domain.clone(), u.mapped.clone()), (vec![0, 1, 2, 3], h.mapped));
        assert_eq!(u.shared_team(2), (2, 1, 1));
        let l = Hosts::from_names(&names, 1, TransportMode::Local);
        assert_eq!((l.domain, l.mapped), (vec![0; 4], vec![true; 4]));
    }

    /// Issue 19, item 4: the GPU of a PE follows its rank on its host, not its PE number.
    #[test]
    fn local_ranks_count_the_pes_of_the_same_host() {
        let names: Vec<Vec<u8>> = ["a", "b", "a", "b", "a"].iter().map(|n| n.as_bytes().to_vec()).collect();
        let ranks: Vec<usize> = (0..5).map(|me| Hosts::from_names(&names, me, TransportMode::Auto).local_rank(me)).collect();
        assert_eq!(ranks, vec![0, 0, 1, 1, 2]);
    }

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

//! The GPU part of the decision tree: which protocol a GPU collective uses
//! (`device/rshmem_device_coll.cuh` implements them), and `RSHMEM_GPU_COLL_PROTO`.
//!
//! Input: the payload per pair of PEs (`bytes`: the all-reduce's or reduce-scatter's
//! block, the broadcast's or fcollect's message, the all-to-all's block), the team size
//! and the scope. Every PE computes the same answer from the same inputs. The device-scope
//! calls apply the same rules (`rshmemi_pick`) with the thresholds the host writes into
//! the device state, so these constants are the one place they are set.
//!
//! ```text
//! team of 1 PE ............................................ simple (a local copy)
//! a member this PE reaches only through its proxy
//!   (another host), or proxy forced ....................... proxy (puts between team barriers)
//! team slot >= GPU_COLL_TEAMS (no synchronization sets) ... simple (team-barrier delimited)
//! bytes <= LL_MAX (4 KiB) ................................. LL    (16-byte lines: 2 x (4 B data + 4 B flag))
//! bytes <= LL128_MAX (60 KiB), not thread scope ........... LL128 (128-byte lines, 120 B data + flag)
//! otherwise ............................................... simple (peer loads/stores between two
//!                                                           flag barriers)
//! ```
//!
//! Inside the simple protocol an all-reduce takes one of two forms (`simple_reduce_splits`,
//! mirrored by `rshmemi_reduce_splits` in the device header):
//!
//! ```text
//! 2+ members, every PE this one maps on this PE's GPU (device state one_device),
//!   dest in the symmetric heap ............... split: team rank q reduces the q-th 1/n of the
//!                                              block from every member's src and stores it
//!                                              into every member's dest (reduce-scatter +
//!                                              all-gather in one pass: n*S read, n*S written)
//! otherwise ................................... read-all: every PE reads all n srcs, writes
//!                                              its own dest (n*n*S read)
//! ```
//!
//! Every member decides the same: one_device holds on a PE exactly when every PE it maps
//! (every member of a team without proxied members) shares its GPU, and then it holds on
//! each of them too; a dest is symmetric on every PE or on none (same arguments). Reduce-
//! scatters always read only their own block from each member (already n*S in all).
//! The split form needs peer stores into dest; across GPUs (NVLink) it would save the same
//! traffic but is not measured yet, so it is kept to one GPU.
//!
//! Why: LL and LL128 push each contribution into every peer's scratch with its flag in the
//! same store, so a call costs one one-way trip and no barrier, at the price of 2x (LL)
//! or 1.07x (LL128) the bytes; for large messages the simple protocol moves each byte
//! once at full bandwidth and the two barriers no longer matter. LL128 needs a warp's
//! 128-byte store to arrive whole: true for same-GPU and NVLink peers (every mapped GPU
//! peer), so it is never used at thread scope or across PCIe. A forced protocol that the
//! message does not fit (LL: `GPU_COLL_SLOT_BYTES / 2`, LL128: `GPU_COLL_SLOT_BYTES / 128 * 120`
//! bytes) or the scope cannot run (LL128 at thread scope: LL) falls back the same way on
//! every PE. The thresholds are first guesses; tune them against `gpu_coll --bench`.
//!
//! The proxy protocol is for teams that span hosts: a PE has no pointer to a member on
//! another host, so it cannot load or store there. Each contribution is a put instead
//! (a copy to mapped members, a request to the host proxy for the others) between two
//! team barriers, whose quiet waits for the proxy's puts; the reductions gather every
//! member's block into this PE's scratch slots (one slot per source, `GPU_COLL_SLOT_BYTES`
//! at a time) and combine them in rank order. Every PE sees some member behind the proxy
//! when any does (hosts are disjoint), so all agree on it.

pub use crate::config::GpuProto;
pub use crate::gpu::state::{GPU_COLL_SLOT_BYTES, GPU_COLL_TEAMS, LL128_MAX, LL_CAPACITY, LL_MAX};

/// Where a collective runs (LL128 needs whole warps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuScope {
    /// One thread.
    Thread,
    /// A warp, a block, a grid or the host's on-stream kernel (whole warps).
    Warps,
}

/// The protocol of a GPU collective moving `bytes` per pair of PEs on a team of
/// `team_size` with synchronization sets (`has_sets`), `remote` when some member is
/// reached only through the proxy; `forced` is the per-call or `RSHMEM_GPU_COLL_PROTO`
/// choice. Mirrors `rshmemi_pick` in the device header.
pub fn gpu_proto(bytes: usize, team_size: usize, has_sets: bool, remote: bool, scope: GpuScope, forced: GpuProto) -> GpuProto {
    if team_size <= 1 {
        return GpuProto::Simple;
    }
    if remote {
        return GpuProto::Proxy;
    }
    if !has_sets {
        return GpuProto::Simple;
    }
    let mut p = match forced {
        GpuProto::Auto if bytes <= LL_MAX => GpuProto::Ll,
        GpuProto::Auto if bytes <= LL128_MAX => GpuProto::Ll128,
        GpuProto::Auto => GpuProto::Simple,
        f => f,
    };
    if p == GpuProto::Ll128 && scope == GpuScope::Thread {
        p = GpuProto::Ll;
    }
    if p == GpuProto::Ll128 && bytes > LL128_MAX {
        p = GpuProto::Simple;
    }
    if p == GpuProto::Ll && bytes > LL_CAPACITY {
        p = GpuProto::Simple;
    }
    p
}

/// Whether a simple-protocol all-reduce on a team of `team_size` runs split (reduce-scatter +
/// all-gather in one pass): when every PE this one maps is on its GPU (`one_device`) and
/// `dest` is symmetric. Mirrors `rshmemi_reduce_splits` in the device header.
pub fn simple_reduce_splits(team_size: usize, one_device: bool, dest_symmetric: bool) -> bool {
    team_size > 1 && one_device && dest_symmetric
}

/// Bytes per block of a simple-protocol on-stream kernel (more blocks up to every SM).
pub const SIMPLE_BYTES_PER_BLOCK: usize = 32 << 10;

/// Blocks of an on-stream kernel for `proto` and `bytes` per pair, at most `sms`: LL
/// and LL128 need a thread (or 8 lanes) per line, simple a block per 32 KiB. Small calls
/// take few blocks so concurrent ones fit on the GPU together.
pub fn stream_blocks(proto: GpuProto, bytes: usize, threads: usize, sms: usize) -> usize {
    let lanes = match proto {
        GpuProto::Ll => bytes.div_ceil(8),
        GpuProto::Ll128 => bytes.div_ceil(120) * 8,
        _ => return bytes.div_ceil(SIMPLE_BYTES_PER_BLOCK).clamp(1, sms.max(1)),
    };
    lanes.div_ceil(threads).clamp(1, sms.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses() {
        assert_eq!(GpuProto::parse("LL128").unwrap(), GpuProto::Ll128);
        assert_eq!(GpuProto::parse("").unwrap(), GpuProto::Auto);
        assert!(GpuProto::parse("fast").is_err());
        for p in [GpuProto::Auto, GpuProto::Simple, GpuProto::Ll, GpuProto::Ll128, GpuProto::Proxy] {
            assert_eq!(GpuProto::parse(p.name()).unwrap(), p);
            assert_eq!(GpuProto::from_code(p.code()), p);
        }
    }

    #[test]
    fn tree_picks() {
        let w = GpuScope::Warps;
        assert_eq!(gpu_proto(8, 2, true, false, w, GpuProto::Auto), GpuProto::Ll);
        assert_eq!(gpu_proto(LL_MAX, 4, true, false, w, GpuProto::Auto), GpuProto::Ll);
        assert_eq!(gpu_proto(LL_MAX + 1, 4, true, false, w, GpuProto::Auto), GpuProto::Ll128);
        assert_eq!(gpu_proto(LL_MAX + 1, 4, true, false, GpuScope::Thread, GpuProto::Auto), GpuProto::Ll);
        assert_eq!(gpu_proto(LL128_MAX + 1, 4, true, false, w, GpuProto::Auto), GpuProto::Simple);
        assert_eq!(gpu_proto(8, 1, true, false, w, GpuProto::Ll), GpuProto::Simple);
        assert_eq!(gpu_proto(8, 4, false, false, w, GpuProto::Ll), GpuProto::Simple);
        assert_eq!(gpu_proto(1 << 20, 4, true, false, w, GpuProto::Ll), GpuProto::Simple);
        assert_eq!(gpu_proto(LL_CAPACITY, 4, true, false, w, GpuProto::Ll), GpuProto::Ll);
        assert_eq!(gpu_proto(100, 4, true, false, w, GpuProto::Simple), GpuProto::Simple);
        // A member behind the proxy: the proxy protocol whatever was forced; forced
        // proxy on a mapped team with sets.
        assert_eq!(gpu_proto(8, 4, true, true, w, GpuProto::Ll), GpuProto::Proxy);
        assert_eq!(gpu_proto(1 << 30, 4, false, true, w, GpuProto::Auto), GpuProto::Proxy);
        assert_eq!(gpu_proto(8, 1, true, true, w, GpuProto::Auto), GpuProto::Simple);
        assert_eq!(gpu_proto(8, 4, true, false, GpuScope::Thread, GpuProto::Proxy), GpuProto::Proxy);
        assert_eq!(gpu_proto(8, 4, false, false, w, GpuProto::Proxy), GpuProto::Simple);
    }

    #[test]
    fn split_reduce() {
        assert!(simple_reduce_splits(2, true, true));
        assert!(simple_reduce_splits(8, true, true));
        assert!(!simple_reduce_splits(1, true, true));
        assert!(!simple_reduce_splits(8, false, true));
        assert!(!simple_reduce_splits(8, true, false));
    }

    /// The device header applies the same conditions (team size, one_device, dest in the
    /// heap) in the same function the host names.
    #[test]
    fn split_reduce_mirrored() {
        let h = include_str!("../../device/rshmem_device_coll.cuh");
        let at = h.find("bool rshmemi_reduce_splits(").expect("rshmemi_reduce_splits in the device header");
        let body = &h[at..at + h[at..].find("\n}").unwrap()];
        for cond in [
            "c.np <= 1",
            "!rshmem_state.one_device",
            "d >= rshmem_state.heap_base",
            "d + bytes <= rshmem_state.heap_base + rshmem_state.heap_size",
        ] {
            assert!(body.contains(cond), "rshmemi_reduce_splits lacks `{cond}`");
        }
        assert!(h.contains("if (kind == 0 && rshmemi_reduce_splits(c, dest, bytes))"));
    }

    #[test]
    fn blocks() {
        assert_eq!(stream_blocks(GpuProto::Ll, 8, 512, 132), 1);
        assert_eq!(stream_blocks(GpuProto::Ll128, LL128_MAX, 512, 132), 8);
        assert_eq!(stream_blocks(GpuProto::Simple, 8, 512, 132), 1);
        assert_eq!(stream_blocks(GpuProto::Simple, 1 << 30, 512, 132), 132);
    }
}

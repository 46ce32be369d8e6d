//! The device-state struct every loaded module receives (`rshmem_state` in
//! `rshmem_device.cuh`), and the device runtime area's layout.

/// Team slots (the lowest ones: world, shared, the first split teams) that get
/// synchronization sets and scratch for the GPU collectives' LL protocols.
pub const GPU_COLL_TEAMS: usize = 4;
/// Bytes of scratch per (set, source PE): the most an LL / LL128 call carries per pair.
pub const GPU_COLL_SLOT_BYTES: usize = 64 << 10;
/// Auto: LL up to this many bytes per pair of PEs.
pub const LL_MAX: usize = 4 << 10;
/// Auto: LL128 up to this many bytes per pair of PEs (what a slot carries).
pub const LL128_MAX: usize = GPU_COLL_SLOT_BYTES / 128 * 120;
/// Payload an LL slot carries.
pub const LL_CAPACITY: usize = GPU_COLL_SLOT_BYTES / 2;

/// Defines a `#[repr(C)]` struct and, from the same field list, its C declaration for
/// the generated device header (`gpu::header`): one source for both sides.
macro_rules! c_struct {
    ($(#[$m:meta])* pub struct $name:ident as $c:literal { $( $(#[doc = $doc:literal])* pub $f:ident : $t:ty, )* }) => {
        $(#[$m])*
        #[repr(C)]
        #[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
        pub struct $name { $( $(#[doc = $doc])* pub $f: $t, )* }

        impl $name {
            /// The C declaration of this struct.
            pub fn c_declaration() -> String {
                let mut out = format!("struct {} {{\n", $c);
                $( out += &format!("    {} {};{}\n", <$t as CField>::C, stringify!($f), c_comment(&[$($doc),*])); )*
                out + "};\n"
            }
        }
    };
}

/// The C spelling of a field type of the device structs.
trait CField {
    const C: &'static str;
}
impl CField for i32 {
    const C: &'static str = "int";
}
impl CField for u64 {
    const C: &'static str = "rshmem_u64";
}

/// A field's doc lines as one trailing C comment.
fn c_comment(doc: &[&str]) -> String {
    let text: Vec<&str> = doc.iter().map(|l| l.trim()).collect();
    format!(" // {}", text.join(" "))
}

c_struct! {
    /// One team as device code sees it (`rshmem_device_team` of the generated header).
    pub struct DeviceTeam as "rshmem_device_team" {
    /// First member (world PE).
    pub start: i32,
    /// Distance between members.
    pub stride: i32,
    /// Members.
    pub size: i32,
    /// 1 for a live team.
    pub valid: i32,
}}

c_struct! {
    /// The state every loaded module receives (`rshmem_device_state` of the generated
    /// header, the type of `rshmem_state`).
    pub struct DeviceState as "rshmem_device_state" {
    /// This PE.
    pub my_pe: i32,
    /// PEs in the job.
    pub n_pes: i32,
    /// This PE's user heap (device address).
    pub heap_base: u64,
    /// Bytes of user heap currently mapped per PE.
    pub heap_size: u64,
    /// PE 0's heap as mapped here.
    pub peers_base: u64,
    /// Distance between consecutive PEs' heaps.
    pub stride: u64,
    /// This PE's device runtime area.
    pub sys_base: u64,
    /// Its size.
    pub sys_size: u64,
    /// `DeviceTeam[max_teams]` in the runtime area.
    pub teams: u64,
    /// Team slots.
    pub max_teams: i32,
    /// 1 when device calls check PE range and heap bounds.
    pub debug: i32,
    /// Device waits trap after this many nanoseconds (0: never).
    pub wait_timeout_ns: u64,
    /// `u64[max_teams]` barrier epochs.
    pub epochs: u64,
    /// `u64[max_teams * MAX_ROUNDS]` barrier counters.
    pub counters: u64,
    /// Host proxy request ring (`rshmemi_proxy_slot[proxy_slots]`, pinned host memory, as
    /// the device sees it); 0 when this PE has no proxy.
    pub proxy_ring: u64,
    /// Per-slot completion words (`rshmemi_proxy_done[proxy_slots]`, pinned host memory).
    pub proxy_done: u64,
    /// `u64[4]` in pinned host memory: requests completed, proxy status (1 running, 2 gone).
    pub proxy_control: u64,
    /// `u64` in device memory: requests issued (tickets claimed).
    pub proxy_head: u64,
    /// `u8[n_pes]` in device memory: 1 for the PEs reached through the proxy.
    pub proxy_peers: u64,
    /// Slots in the ring (a power of two).
    pub proxy_slots: u64,
    /// `u64[coll_teams]` device-numbered collective calls completed per team.
    pub coll_seq: u64,
    /// `u64[coll_teams][2][coll_sets]` last call finished per synchronization set.
    pub coll_done: u64,
    /// `u64[coll_teams][2][coll_sets][n_pes]` flag-barrier arrivals.
    pub coll_arrive: u64,
    /// `u32[coll_teams][2][coll_sets][4]` per-set grid barrier words.
    pub coll_gridbar: u64,
    /// Scratch slots `[coll_teams][2][coll_sets][n_pes]` of `coll_slot_bytes`.
    pub coll_data: u64,
    /// Bytes per scratch slot.
    pub coll_slot_bytes: u64,
    /// Auto protocol: LL up to this many bytes per pair of PEs.
    pub coll_ll_max: u64,
    /// Auto protocol: LL128 up to this many bytes per pair of PEs.
    pub coll_ll128_max: u64,
    /// Team slots with synchronization sets.
    pub coll_teams: i32,
    /// Sets per team and numbering space.
    pub coll_sets: i32,
    /// Forced protocol (0 auto, 1 simple, 2 LL, 3 LL128).
    pub coll_proto: i32,
    /// 1 when every PE this one maps is on this PE's GPU (thread PEs, or processes sharing
    /// one GPU): fences, signals and barrier counters then need only GPU scope.
    pub one_device: i32,
    /// PEs reached only through the host proxy (0: every PE is mapped, so the device API
    /// never reads the reach flags on its load/store path).
    pub proxied: i32,
    /// Unused: keeps the struct free of padding (0).
    pub reserved: i32,
}}

/// Barrier rounds per team (as `RSHMEM_MAX_ROUNDS` in the header).
pub const MAX_ROUNDS: usize = 64;

/// Offsets inside the device runtime area for `max_teams` slots.
#[derive(Debug, Clone, Copy)]
pub struct DeviceSysLayout {
    /// Team table offset.
    pub teams: usize,
    /// Epoch array offset.
    pub epochs: usize,
    /// Counter array offset.
    pub counters: usize,
    /// Collectives' per-team sequence counters.
    pub coll_seq: usize,
    /// Collectives' per-set done words.
    pub coll_done: usize,
    /// Collectives' per-set arrival words.
    pub coll_arrive: usize,
    /// Collectives' per-set grid barrier words.
    pub coll_gridbar: usize,
    /// Collectives' scratch slots.
    pub coll_data: usize,
    /// Team slots with collective sets, and sets per numbering space.
    pub coll_teams: usize,
    /// Sets per team and numbering space.
    pub coll_sets: usize,
    /// PEs (slots per set).
    pub n_pes: usize,
    /// 256 bytes of scratch for the host runtime's own kernels.
    pub scratch: usize,
    /// Total size.
    pub size: usize,
}

impl DeviceSysLayout {
    /// The layout for `max_teams` team slots, `n_pes` PEs and `coll_sets` collective
    /// synchronization sets per team (see `coll::gpu_select`).
    pub fn new(max_teams: usize, n_pes: usize, coll_sets: usize) -> DeviceSysLayout {
        let up = crate::heap::align_up;
        let coll_teams = GPU_COLL_TEAMS.min(max_teams);
        let sets = coll_teams * 2 * coll_sets;
        let teams = 0;
        let epochs = up(teams + max_teams * std::mem::size_of::<DeviceTeam>(), 256);
        let counters = up(epochs + max_teams * 8, 256);
        let coll_seq = up(counters + max_teams * MAX_ROUNDS * 8, 256);
        let coll_done = up(coll_seq + coll_teams * 8, 256);
        let coll_arrive = up(coll_done + sets * 8, 256);
        let coll_gridbar = up(coll_arrive + sets * n_pes * 8, 256);
        let coll_data = up(coll_gridbar + sets * 16, 4096);
        let scratch = up(coll_data + sets * n_pes * GPU_COLL_SLOT_BYTES, 256);
        let size = up(scratch + 256, 4096);
        DeviceSysLayout {
            teams,
            epochs,
            counters,
            coll_seq,
            coll_done,
            coll_arrive,
            coll_gridbar,
            coll_data,
            coll_teams,
            coll_sets,
            n_pes,
            scratch,
            size,
        }
    }

    /// The collective area of team slot `slot` (sequence word, done, arrival, grid and data
    /// ranges), as (offset, bytes) pairs, for zeroing when the slot's team goes away.
    pub fn coll_ranges(&self, slot: usize) -> Vec<(usize, usize)> {
        if slot >= self.coll_teams {
            return Vec::new();
        }
        let per = 2 * self.coll_sets;
        let first = slot * per;
        vec![
            (self.coll_seq + slot * 8, 8),
            (self.coll_done + first * 8, per * 8),
            (self.coll_arrive + first * self.n_pes * 8, per * self.n_pes * 8),
            (self.coll_gridbar + first * 16, per * 16),
            (self.coll_data + first * self.n_pes * GPU_COLL_SLOT_BYTES, per * self.n_pes * GPU_COLL_SLOT_BYTES),
        ]
    }

    /// The whole collective area (offset, bytes), zeroed at start.
    pub fn coll_area(&self) -> (usize, usize) {
        (self.coll_seq, self.scratch - self.coll_seq)
    }
}

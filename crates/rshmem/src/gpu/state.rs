//! The device-state struct every loaded module receives (`rshmem_state` in
//! `rshmem_device.cuh`), and the device runtime area's layout.

/// Must match `rshmem_device_team` in the header.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DeviceTeam {
    /// First member (world PE).
    pub start: i32,
    /// Distance between members.
    pub stride: i32,
    /// Members.
    pub size: i32,
    /// 1 for a live team.
    pub valid: i32,
}

/// Must match `rshmem_device_state` in the header.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
pub struct DeviceState {
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
}

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
    /// 256 bytes of scratch for the host runtime's own kernels.
    pub scratch: usize,
    /// Total size.
    pub size: usize,
}

impl DeviceSysLayout {
    /// The layout for `max_teams` team slots.
    pub fn new(max_teams: usize) -> DeviceSysLayout {
        let teams = 0;
        let epochs = crate::heap::align_up(teams + max_teams * std::mem::size_of::<DeviceTeam>(), 256);
        let counters = crate::heap::align_up(epochs + max_teams * 8, 256);
        let scratch = crate::heap::align_up(counters + max_teams * MAX_ROUNDS * 8, 256);
        let size = crate::heap::align_up(scratch + 256, 4096);
        DeviceSysLayout { teams, epochs, counters, scratch, size }
    }
}

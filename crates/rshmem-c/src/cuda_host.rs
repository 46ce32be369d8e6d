//! The GPU API's own forms of OpenSHMEM's host routines (`rshmemx_cuda_my_pe`,
//! `rshmemx_cuda_quiet`, `rshmemx_cuda_barrier_all`, the team routines,
//! `rshmemx_cuda_finalize`, ...), and `rshmemx_cuda_init_with_shmem`, which starts GPU PEs
//! on top of the CPU PEs `shmem_init` started.
//!
//! They act on the GPU API's runtime (`crate::state::gpu_side`): the GPU PEs started
//! over `shmem_init`'s CPU PEs when there are such, else the one runtime of the process,
//! where they do what the `shmem_*` routines of the same name do. NVSHMEM's host names
//! (`nvshmem_quiet`, `nvshmem_team_split_strided`, `nvshmem_finalize`, ...) map onto them,
//! so that with OpenSHMEM and NVSHMEM started side by side each call family acts on its
//! own PEs' heap. Team handles made here belong to the GPU API's runtime: pass them only
//! to `rshmemx_` routines. The team routines reuse `crate::teams`' bodies.

use crate::cuda::signal_op;
use crate::handle::TeamHandle;
use crate::routine::Routine;
use crate::state::{self, gpu_side, pe_arg, OrExit};
use crate::teams::{self, TeamConfigC};
use std::ffi::{c_int, c_long};

// rshmemx_cuda_init_with_shmem: NVSHMEMX_INIT_WITH_SHMEM. Returns 0 once the GPU API has
// GPU PEs (started now over shmem_init's CPU PEs, or shmem_init's own under
// RSHMEM_DEVICE=gpu); otherwise prints why on stderr and returns 1, the CPU PEs running on.
c_fn!(cuda_init_with_shmem, "cuda_init_with_shmem", rshmemx; fn () -> c_int = |call| {
    match state::initialize_gpu_over_cpu(call) {
        Ok(()) => 0,
        Err(why) => {
            match state::try_rt() {
                Some(c) => rshmem::log::line(&format!("rshmem: PE {}: {call}: {why}", c.my_pe())),
                None => rshmem::log::line(&format!("rshmem: {call}: {why}")),
            }
            1
        }
    }
});

// rshmemx_cuda_finalize: the GPU PEs started over shmem_init's CPU PEs (which keep
// running), else the one runtime, as shmem_finalize.
c_fn!(cuda_finalize, "cuda_finalize", rshmemx; fn () = |call| {
    if !state::finalize_gpu_side(call) {
        crate::ctx::destroy_all();
        state::finalize(call)
    }
});

c_fn!(cuda_my_pe, "cuda_my_pe", rshmemx; fn () -> c_int = |call| gpu_side(call).my_pe() as c_int);
c_fn!(cuda_n_pes, "cuda_n_pes", rshmemx; fn () -> c_int = |call| gpu_side(call).n_pes() as c_int);
c_fn!(cuda_global_exit, "cuda_global_exit", rshmemx; fn (status: c_int) -> ! = |_call| match state::try_gpu_side() {
    Some(c) => c.global_exit(status),
    None => std::process::exit(status),
});

c_fn!(cuda_quiet, "cuda_quiet", rshmemx; fn () = |call| gpu_side(call).quiet().or_exit(call));
c_fn!(cuda_fence, "cuda_fence", rshmemx; fn () = |call| gpu_side(call).fence().or_exit(call));
c_fn!(cuda_barrier_all, "cuda_barrier_all", rshmemx; fn () = |call| gpu_side(call).barrier_all().or_exit(call));
c_fn!(cuda_sync_all, "cuda_sync_all", rshmemx; fn () = |call| gpu_side(call).sync_all().or_exit(call));

c_fn!(cuda_signal_fetch, "cuda_signal_fetch", rshmemx; fn (sig_addr: *const u64) -> u64 =
    |call| gpu_side(call).signal_fetch_addr(sig_addr as usize).or_exit(call));
// rshmemx_cuda_signal_op: SHMEM_SIGNAL_SET or _ADD of `signal` to the word at `sig_addr` on `pe`.
c_fn!(cuda_signal_op, "cuda_signal_op", rshmemx; fn (sig_addr: *mut u64, signal: u64, sig_op: c_int, pe: c_int) = |call| {
    let c = gpu_side(call);
    let pe = pe_arg(call, c, pe);
    c.signal_op_addr(sig_addr as usize, signal, signal_op(call, sig_op), pe).or_exit(call)
});

c_fn!(cuda_team_my_pe, "cuda_team_my_pe", rshmemx; fn (team: TeamHandle) -> c_int = |call| teams::my_pe_in(call, gpu_side(call), team));
c_fn!(cuda_team_n_pes, "cuda_team_n_pes", rshmemx; fn (team: TeamHandle) -> c_int = |call| teams::n_pes_in(call, gpu_side(call), team));
c_fn!(cuda_team_get_config, "cuda_team_get_config", rshmemx;
    fn (team: TeamHandle, config_mask: c_long, config: *mut TeamConfigC) -> c_int =
    |call| teams::get_config_in(call, gpu_side(call), team, config_mask, config));
c_fn!(cuda_team_translate_pe, "cuda_team_translate_pe", rshmemx;
    fn (src_team: TeamHandle, src_pe: c_int, dest_team: TeamHandle) -> c_int =
    |call| teams::translate_pe_in(call, gpu_side(call), src_team, src_pe, dest_team));
c_fn!(cuda_team_split_strided, "cuda_team_split_strided", rshmemx;
    fn (parent_team: TeamHandle, start: c_int, stride: c_int, size: c_int, config: *const TeamConfigC, config_mask: c_long, new_team: *mut TeamHandle) -> c_int =
    |call| teams::split_strided_in(call, gpu_side(call), parent_team, start, stride, size, config, config_mask, new_team));
c_fn!(cuda_team_split_2d, "cuda_team_split_2d", rshmemx;
    fn (parent_team: TeamHandle, xrange: c_int, xaxis_config: *const TeamConfigC, xaxis_mask: c_long, xaxis_team: *mut TeamHandle,
        yaxis_config: *const TeamConfigC, yaxis_mask: c_long, yaxis_team: *mut TeamHandle) -> c_int =
    |call| teams::split_2d_in(call, gpu_side(call), parent_team, xrange, xaxis_config, xaxis_mask, xaxis_team, yaxis_config, yaxis_mask, yaxis_team));
// Contexts made with shmem_team_create_ctx belong to shmem_*'s runtime: when the GPU API
// shares it, they go with the team, as at shmem_team_destroy.
c_fn!(cuda_team_destroy, "cuda_team_destroy", rshmemx; fn (team: TeamHandle) =
    |call| teams::destroy_in(call, gpu_side(call), team, !state::gpu_is_separate()));

/// The routines of this module, in header order.
pub(crate) const ROUTINES: &[Routine] = routines![
    cuda_init_with_shmem,
    cuda_finalize,
    cuda_my_pe,
    cuda_n_pes,
    cuda_global_exit,
    cuda_quiet,
    cuda_fence,
    cuda_barrier_all,
    cuda_sync_all,
    cuda_signal_fetch,
    cuda_signal_op,
    cuda_team_my_pe,
    cuda_team_n_pes,
    cuda_team_get_config,
    cuda_team_translate_pe,
    cuda_team_split_strided,
    cuda_team_split_2d,
    cuda_team_destroy
];

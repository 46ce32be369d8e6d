//! Shared helpers of the GPU test programs (gpu_suite, gpu_proxy, gpu_coll): a
//! start, the state of a run ([`GpuRun`]: its checks go through `support::Check`), a
//! launch-and-wait and a symmetric allocation as a kernel argument.
#![allow(dead_code)]

use crate::support::Check;
use rshmem::gpu::{Gpu, KernelArg, LaunchConfig, Module};
use rshmem::{Ctx, Sym, SymType};
use std::sync::Arc;

/// Launches kernel `k` of `m` on `blocks` x `threads` and waits for it; panics naming the
/// kernel when the launch or the kernel fails.
pub fn launch(g: &Gpu, m: &Module, k: &str, blocks: u32, threads: u32, args: &[KernelArg]) {
    // SAFETY: the example programs that call this pass, for each kernel, the argument
    // kinds of its signature in their .cu source, with addresses of live symmetric
    // allocations.
    unsafe { m.launch(k, LaunchConfig::new(blocks, threads), None, args) }.unwrap_or_else(|e| panic!("launch {k}: {e}"));
    g.synchronize().unwrap_or_else(|e| panic!("kernel {k} failed: {e}"));
}

/// `s`'s address as a kernel argument.
pub fn a<T: SymType>(s: &Sym<T>) -> KernelArg {
    KernelArg::U64(s.addr() as u64)
}

/// One PE's run of a GPU test program: the runtime, its GPU, the program's compiled
/// kernels, the checks and the ring neighbours. Needs `mod support` beside it.
pub struct GpuRun<'a> {
    /// The runtime.
    pub ctx: &'a Ctx,
    /// This PE's GPU.
    pub g: &'a Gpu,
    /// The program's kernels.
    pub m: &'a Module,
    /// The checks of this PE, each printed as it is made.
    pub ck: Check,
    /// This PE.
    pub me: usize,
    /// Number of PEs.
    pub n: usize,
    /// The PE to the right, `me + 1`.
    pub right: usize,
    /// The PE to the left, `me - 1`.
    pub left: usize,
}

impl<'a> GpuRun<'a> {
    /// The run of `program` on PE `ctx.my_pe()` with kernels `m`.
    pub fn new(program: &'static str, ctx: &'a Ctx, g: &'a Gpu, m: &'a Module) -> GpuRun<'a> {
        let (me, n) = (ctx.my_pe(), ctx.n_pes());
        GpuRun { ctx, g, m, ck: Check::immediate(program, me), me, n, right: (me + 1) % n, left: (me + n - 1) % n }
    }

    /// Prints the summary and finalizes; whether every check passed.
    pub fn conclude(self) -> bool {
        let passed = self.ck.finish();
        self.ctx.barrier_all().expect("barrier");
        self.ctx.clone().finalize().expect("finalize");
        passed
    }
}

/// Runs GPU test program `program` on every PE this process hosts (one, or several as
/// threads under `rshmemrun --pes-per-process`): `body` gets the PE's runtime and GPU and
/// says whether its checks passed. Exits with 0 when every PE passed, 1 when one failed,
/// 2 (saying why) where a PE has no GPU.
pub fn run_gpu_program<F>(program: &str, body: F) -> !
where
    F: Fn(Ctx, Arc<Gpu>) -> bool + Sync,
{
    rshmem::log::install();
    let passed = rshmem::run_local_pes(|ctx| {
        let Some(g) = ctx.gpu().cloned() else {
            eprintln!(
                "{program}: PE {} has no GPU (needs a CUDA driver and a GPU; RSHMEM_DEVICE=gpu forces an error instead)",
                ctx.my_pe()
            );
            std::process::exit(2);
        };
        body(ctx, g)
    })
    .unwrap_or_else(|e| panic!("{program}: {e}"));
    std::process::exit(if passed.iter().all(|&p| p) { 0 } else { 1 })
}

//! Shared helpers of the GPU example programs (gpu_suite, gpu_proxy, gpu_coll): the
//! PASS/FAIL report, a launch-and-wait, and a symmetric allocation as a kernel argument.
#![allow(dead_code)]

use rshmem::gpu::{Gpu, KernelArg, LaunchConfig, Module};
use rshmem::{Sym, SymType};

/// Counts checks; prints `FAIL name on PE p: detail` for each failure and, when
/// `print_passes` (PE 0 only), `PASS name`.
pub struct Report {
    /// This PE.
    pub me: usize,
    /// Checks that held.
    pub passed: usize,
    /// Names of the checks that failed.
    pub failed: Vec<String>,
    /// Print a line per passing check on PE 0.
    pub print_passes: bool,
}

impl Report {
    /// A report for PE `me`.
    pub fn new(me: usize, print_passes: bool) -> Report {
        Report { me, passed: 0, failed: Vec::new(), print_passes }
    }

    /// Records one check; `detail` says what was wrong when it failed.
    pub fn check(&mut self, name: &str, ok: bool, detail: impl FnOnce() -> String) {
        if ok {
            self.passed += 1;
            if self.me == 0 && self.print_passes {
                println!("PASS {name}");
            }
        } else {
            println!("FAIL {name} on PE {}: {}", self.me, detail());
            self.failed.push(name.to_string());
        }
    }
}

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

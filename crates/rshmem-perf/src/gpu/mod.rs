//! The GPU suite: rshmem's GPU PEs ([`pe`], kernels in `perf.cu`) and the GPU anchors
//! ([`anchors`]: NVSHMEM and NCCL programs of ours, compiled with nvcc on the GPU host).

pub mod anchors;
pub mod pe;

/// The variable that forces the protocol of rshmem's GPU collectives
/// (`auto`, `simple`, `ll`, `ll128`); `--gpu-coll-proto` sets it for rshmem's PEs.
pub const COLL_PROTO_VAR: &str = "RSHMEM_GPU_COLL_PROTO";

/// The protocols `--gpu-coll-proto` takes.
pub const COLL_PROTOS: &[&str] = &["auto", "simple", "ll", "ll128"];

/// Why GPU PEs cannot run here, or None when a CUDA driver reports a GPU.
pub fn unavailable() -> Option<String> {
    if !rshmem::gpu::cuda::driver_present() {
        return Some("no CUDA driver (libcuda) was found on this machine; GPU PEs need an NVIDIA GPU and its driver".into());
    }
    if rshmem::gpu::cuda::device_count() == 0 {
        return Some("the CUDA driver reports no GPU on this machine".into());
    }
    None
}

/// Reads `--gpu-coll-proto`.
pub fn parse_coll_proto(p: &str) -> Result<String, String> {
    let p = p.trim().to_ascii_lowercase();
    if COLL_PROTOS.contains(&p.as_str()) {
        Ok(p)
    } else {
        Err(format!("--gpu-coll-proto: `{p}` is not a protocol (one of {})", COLL_PROTOS.join(", ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coll_protos() {
        assert_eq!(parse_coll_proto("LL128").unwrap(), "ll128");
        assert!(parse_coll_proto("fast").unwrap_err().contains("simple"));
    }

    #[test]
    fn says_why_without_a_gpu() {
        // On a machine without libcuda this names the driver; with one, either reason or none.
        if !rshmem::gpu::cuda::driver_present() {
            assert!(unavailable().unwrap().contains("libcuda"));
        }
    }
}

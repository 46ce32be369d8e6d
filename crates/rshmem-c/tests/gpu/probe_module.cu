// A module for cuModuleLoad (built with nvcc -cubin; RSHMEM_CUBIN names its rshmem_state): the C++ test loads it
// and registers it with rshmemx_cumodule_init, then checks what its kernel sees.
#define RSHMEM_CUBIN
#include <rshmem_device.cuh>
extern "C" __global__ void probe_pe(unsigned long long* out) {
    out[0] = (unsigned long long)rshmem_my_pe();
    out[1] = (unsigned long long)rshmem_n_pes();
}

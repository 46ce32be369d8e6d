// Experiment (not a test): dependent fetch_add latency by flavour on a peer's word (same
// GPU, VMM-mapped), and the g load by flavour inside rshmem's own call. 2 PEs; PE 0 measures.
#include <rshmem_device.cuh>
#include <rshmemx_cuda.h>
#include <cstdio>
typedef unsigned long long u64;
#define AT(name, op) __device__ __forceinline__ u64 name(u64* p, u64 v) { u64 r; asm volatile(op " %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(v) : "memory"); return r; }
AT(atom_global_gpu, "atom.global.gpu.add.u64")
AT(atom_global_sys, "atom.global.sys.add.u64")
AT(atom_relaxed_gpu, "atom.relaxed.gpu.global.add.u64")
AT(atom_generic_gpu, "atom.gpu.add.u64")
AT(red_dummy, "atom.global.add.u64")
__global__ void chain(u64* sym, int pe, int kind, int iters, u64 mask, u64* out) {
    u64* p = (u64*)rshmem_ptr(sym, pe);
    u64 acc = 0;
    u64 g0 = rshmem_globaltimer();
    for (int i = 0; i < iters; i++) {
        u64 off = acc & mask;
        u64 v;
        switch (kind) {
            case 0: v = rshmem_uint64_atomic_fetch_add(sym + off, 1, pe); break;
            case 1: v = atomicAdd(p + off, 1ull); break;
            case 2: v = atomicAdd_system(p + off, 1ull); break;
            case 3: v = atom_global_gpu(p + off, 1); break;
            case 4: v = atom_global_sys(p + off, 1); break;
            case 5: v = atom_relaxed_gpu(p + off, 1); break;
            case 6: v = atom_generic_gpu(p + off, 1); break;
            case 7: v = red_dummy(p + off, 1); break;
            case 8: v = rshmem_uint64_g(sym + off, pe); break;
            case 9: v = __ldcs(p + off); break;
            default: { u64* q = p + off; __builtin_assume(__isGlobal(q)); v = atomicAdd(q, 1ull); } break;
        }
        acc += v;
    }
    out[1] = rshmem_globaltimer() - g0;
    out[2] = acc;
}
int main() {
    rshmemx_cuda_init();
    int me = shmem_my_pe(), peer = 1 - me;
    u64* sym = (u64*)rshmemx_cuda_calloc(1024, 8);
    u64* out; cudaMalloc(&out, 64);
    shmem_barrier_all();
    if (me == 0) {
        const char* names[] = {"rshmem_uint64_atomic_fetch_add", "atomicAdd (generic)", "atomicAdd_system", "atom.global.gpu.add", "atom.global.sys.add", "atom.relaxed.gpu.global.add", "atom.gpu.add (generic)", "atom.global.add", "rshmem_uint64_g", "__ldcs", "atomicAdd, assume global"};
        int iters = 4000;
        for (int k = 0; k < 11; k++) {
            u64 h[3];
            for (int rep = 0; rep < 3; rep++) {
                chain<<<1, 1>>>(sym, peer, k, iters, 0, out);
                cudaMemcpy(h, out, 24, cudaMemcpyDeviceToHost);
            }
            printf("dep %-34s %7.3f us per op\n", names[k], (double)h[1] / iters / 1e3);
        }
        printf("cuda: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}

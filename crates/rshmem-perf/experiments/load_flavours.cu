// Experiment (not a test): dependent-load latency of load flavours on a peer's heap and on
// this PE's own, and the cost of store + completion flavours. 2 PEs; PE 0 measures.
#include <rshmem_device.cuh>
#include <rshmemx_cuda.h>
#include <cstdio>
typedef unsigned long long u64;
#define LD(name, asmop) __device__ __forceinline__ u64 name(const u64* p) { u64 v; asm volatile(asmop " %0, [%1];" : "=l"(v) : "l"(p) : "memory"); return v; }
LD(ld_volatile, "ld.volatile.global.u64")
LD(ld_relaxed_gpu, "ld.relaxed.gpu.global.u64")
LD(ld_relaxed_sys, "ld.relaxed.sys.global.u64")
LD(ld_cv, "ld.global.cv.u64")
LD(ld_cg, "ld.global.cg.u64")
LD(ld_ca, "ld.global.ca.u64")
LD(ld_acq_gpu, "ld.acquire.gpu.global.u64")
LD(ld_generic_volatile, "ld.volatile.u64")
// rshmem_uint64_g's body without the opaque copy of the peer distance (rshmemi_remote's asm):
// the compiler may then add the distance to the base once, outside the loop, and the chain
// pays one address add instead of two.
__device__ __forceinline__ u64 g_folded(const u64* src, int pe) {
    if (rshmemi_slow_path()) rshmemi_check("g_folded", src, 8, pe);
    rshmem_u64 delta = rshmem_state.peers_base + (rshmem_u64)pe * rshmem_state.stride - rshmem_state.heap_base;
    return rshmemi_ld_elem<u64>((const char*)src + delta);
}
__global__ void chain(const u64* sym, int pe, int kind, int iters, u64 mask, u64* out) {
    const u64* p = kind >= 100 ? sym : (const u64*)rshmem_ptr(sym, pe);
    int k = kind % 100;
    u64 acc = 0;
    long long t0 = clock64();
    u64 g0 = rshmem_globaltimer();
    for (int i = 0; i < iters; i++) {
        const u64* a = p + (acc & mask);
        u64 v;
        switch (k) {
            case 0: v = rshmem_uint64_g(sym + (acc & mask), pe); break;
            case 1: v = *(const volatile u64*)a; break;
            case 2: v = ld_volatile(a); break;
            case 3: v = ld_relaxed_gpu(a); break;
            case 4: v = ld_relaxed_sys(a); break;
            case 5: v = ld_cv(a); break;
            case 6: v = ld_cg(a); break;
            case 7: v = ld_ca(a); break;
            case 8: v = ld_acq_gpu(a); break;
            case 9: v = ld_generic_volatile(a); break;
            case 10: v = g_folded(sym + (acc & mask), pe); break;
            default: v = *a; break;
        }
        acc += v;
    }
    long long t1 = clock64();
    u64 g1 = rshmem_globaltimer();
    out[0] = (u64)(t1 - t0);
    out[1] = g1 - g0;
    out[2] = acc;
}
// Store + completion: 0 rshmem_uint64_p + rshmem_quiet, 1 volatile store + __threadfence,
// 2 + __threadfence_system, 3 + fence.sc.gpu, 4 p + rshmem_fence, 5 putmem 8 B + quiet
__global__ void stores(u64* sym, int pe, int kind, int iters, u64* out) {
    u64* p = (u64*)rshmem_ptr(sym, pe);
    u64 g0 = rshmem_globaltimer();
    for (int i = 0; i < iters; i++) {
        switch (kind) {
            case 0: rshmem_uint64_p(sym, i, pe); rshmem_quiet(); break;
            case 1: *(volatile u64*)p = i; __threadfence(); break;
            case 2: *(volatile u64*)p = i; __threadfence_system(); break;
            case 3: *(volatile u64*)p = i; asm volatile("fence.sc.gpu;" ::: "memory"); break;
            case 4: rshmem_uint64_p(sym, i, pe); rshmem_fence(); break;
            case 5: rshmem_putmem(sym, out + 4, 8, pe); rshmem_quiet(); break;
            default: rshmem_quiet(); break;
        }
    }
    out[1] = rshmem_globaltimer() - g0;
}
int main() {
    rshmemx_cuda_init();
    int me = shmem_my_pe(), peer = 1 - me;
    u64* sym = (u64*)rshmemx_cuda_calloc(1024, 8);
    u64* out; cudaMalloc(&out, 64);
    shmem_barrier_all();
    if (me == 0) {
        const char* names[] = {"rshmem_uint64_g", "generic volatile", "ld.volatile.global", "ld.relaxed.gpu", "ld.relaxed.sys", "ld.global.cv", "ld.global.cg", "ld.global.ca", "ld.acquire.gpu", "ld.volatile (generic asm)", "g, distance folded", "plain C++ load"};
        int iters = 4000;
        for (int where = 0; where < 2; where++)
            for (int k = 0; k < 12; k++) {
                if (where == 1 && (k == 0 || k == 10)) continue;
                u64 h[3];
                for (int rep = 0; rep < 3; rep++) {
                    chain<<<1, 1>>>(sym, peer, k + 100 * where, iters, 0, out);
                    cudaMemcpy(h, out, 24, cudaMemcpyDeviceToHost);
                }
                printf("load %-28s %-5s %7.1f cycles %7.3f us per dependent load\n", names[k], where ? "local" : "peer", (double)h[0] / iters, (double)h[1] / iters / 1e3);
            }
        const char* sn[] = {"uint64_p + rshmem_quiet", "store + __threadfence", "store + __threadfence_system", "store + fence.sc.gpu", "uint64_p + rshmem_fence", "putmem 8 B + rshmem_quiet", "rshmem_quiet alone"};
        for (int k = 0; k < 7; k++) {
            u64 h[2];
            for (int rep = 0; rep < 3; rep++) {
                stores<<<1, 1>>>(sym, peer, k, iters, out);
                cudaMemcpy(h, out, 16, cudaMemcpyDeviceToHost);
            }
            printf("store %-30s %7.3f us per iteration\n", sn[k], (double)h[1] / iters / 1e3);
        }
        cudaError_t e = cudaDeviceSynchronize();
        printf("cuda: %s\n", cudaGetErrorString(e));
    }
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}

// Experiment (not a test): what a block-scope copy loop needs to approach the GPU's
// device-to-device copy rate, in the launch shape of rshmem-perf's put_bw (one 1024-thread
// block per SM, each copying its contiguous part). Variants: 16-byte loads in flight per
// thread before their stores (1, 2, 4, 8), load and store cache hints (plain; .cs
// streaming; ld.global.nc.L1::no_allocate), two blocks per SM, each block starting at a
// different chunk of its part, and (for reference) the chunks dealt round-robin to blocks. The destination is a
// second virtual mapping of VMM memory (as a peer's heap is on one GPU); the source is VMM
// memory too. The reference is cuMemcpyAsync of the same bytes. Printed: GB/s of payload,
// best of 5 after a warm-up, at 16 MiB, 64 MiB, 256 MiB and 1 GiB.
// Build: nvcc -O2 -arch=sm_90 copy_unroll.cu -lcuda
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); printf("%s: %s\n", #x, s_); exit(1); } } while (0)

enum { LD_PLAIN = 0, LD_CS = 1, LD_NA = 2 };
enum { ST_PLAIN = 0, ST_CS = 1 };

template <int L> __device__ __forceinline__ int4 ld(const int4* p) {
    if (L == LD_CS) return __ldcs(p);
    if (L == LD_NA) {
        int4 v;
        asm volatile("ld.global.nc.L1::no_allocate.v4.s32 {%0,%1,%2,%3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
        return v;
    }
    return *p;
}
template <int S> __device__ __forceinline__ void st(int4* p, int4 v) {
    if (S == ST_CS) __stcs(p, v);
    else *p = v;
}

// Each block copies bytes [b*part, (b+1)*part); its threads stride by the block size,
// U vectors in flight per thread.
template <int U, int L, int S> __global__ void copy_k(int4* dst, const int4* src, size_t part_vec) {
    size_t base = (size_t)blockIdx.x * part_vec;
    int4* d = dst + base;
    const int4* s = src + base;
    size_t lanes = blockDim.x, i = threadIdx.x;
    for (; i + (U - 1) * lanes < part_vec; i += U * lanes) {
        int4 v[U];
#pragma unroll
        for (int u = 0; u < U; u++) v[u] = ld<L>(s + i + u * lanes);
#pragma unroll
        for (int u = 0; u < U; u++) st<S>(d + i + u * lanes, v[u]);
    }
    for (; i < part_vec; i += lanes) st<S>(d + i, ld<L>(s + i));
}

// Vectors i, i + lanes, i + 2 lanes and i + 3 lanes: four loads, then their stores.
__device__ __forceinline__ void copy_chunk4(int4* d, const int4* s, size_t i, size_t lanes) {
    int4 v[4];
#pragma unroll
    for (int u = 0; u < 4; u++) v[u] = s[i + u * lanes];
#pragma unroll
    for (int u = 0; u < 4; u++) d[i + u * lanes] = v[u];
}

// copy_k<4, plain> with each block starting its walk at a different 64 KiB chunk of its part
// (block b at chunk 37 b mod the chunk count) and wrapping around: blocks in lockstep then
// touch addresses that differ in their low bits (the DRAM channel a line maps to).
__global__ void copy_rotated(int4* dst, const int4* src, size_t part_vec) {
    size_t base = (size_t)blockIdx.x * part_vec;
    int4* d = dst + base;
    const int4* s = src + base;
    size_t lanes = blockDim.x, chunk = 4 * lanes, nchunks = part_vec / chunk;
    size_t c0 = nchunks ? ((size_t)blockIdx.x * 37) % nchunks : 0;
    for (size_t k = 0; k < nchunks; k++) {
        size_t c = c0 + k;
        if (c >= nchunks) c -= nchunks;
        size_t i = c * chunk + threadIdx.x;
        copy_chunk4(d, s, i, lanes);
    }
    for (size_t i = nchunks * chunk + threadIdx.x; i < part_vec; i += lanes) d[i] = s[i];
}

// Not a shape rshmem's block-scope call can take (a block copies its own contiguous part),
// the reference for whether the placement of the blocks' parts matters: the whole copy in
// 64 KiB chunks dealt round-robin to the blocks (block b takes chunks b, b + grid, ...).
__global__ void copy_interleaved(int4* dst, const int4* src, size_t part_vec) {
    size_t lanes = blockDim.x, chunk = 4 * lanes, total = part_vec * gridDim.x, nchunks = total / chunk;
    for (size_t c = blockIdx.x; c < nchunks; c += gridDim.x) {
        size_t i = c * chunk + threadIdx.x;
        copy_chunk4(dst, src, i, lanes);
    }
    for (size_t i = nchunks * chunk + blockIdx.x * lanes + threadIdx.x; i < total; i += gridDim.x * lanes) dst[i] = src[i];
}

static CUmemGenericAllocationHandle create(size_t n, size_t* rounded) {
    CUmemAllocationProp p = {};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED; p.location.type = CU_MEM_LOCATION_TYPE_DEVICE; p.location.id = 0;
    size_t g; CK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    *rounded = (n + g - 1) / g * g;
    CUmemGenericAllocationHandle h; CK(cuMemCreate(&h, *rounded, &p, 0));
    return h;
}
static CUdeviceptr map(CUmemGenericAllocationHandle h, size_t n) {
    CUdeviceptr va; CK(cuMemAddressReserve(&va, n, 0, 0, 0)); CK(cuMemMap(va, n, 0, h, 0));
    CUmemAccessDesc a = {}; a.location.type = CU_MEM_LOCATION_TYPE_DEVICE; a.location.id = 0; a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, n, &a, 1));
    return va;
}

typedef void (*kern_t)(int4*, const int4*, size_t);
struct Variant { const char* name; kern_t k; int blocks_per_sm; int threads; };

int main() {
    cudaFree(0);
    CUdevice dev; CK(cuDeviceGet(&dev, 0));
    int sms; CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    char name[128]; CK(cuDeviceGetName(name, sizeof name, dev));
    const size_t nmax = 1ull << 30;
    size_t r1, r2;
    CUmemGenericAllocationHandle hs = create(nmax, &r1), hd = create(nmax, &r2);
    CUdeviceptr src = map(hs, r1), dst_own = map(hd, r2), dst = map(hd, r2);  // dst: a second mapping
    CK(cuMemsetD8(src, 7, nmax)); CK(cuMemsetD8(dst_own, 0, nmax)); CK(cuCtxSynchronize());
    printf("copy_unroll: %s, %d SMs; GB/s of payload, best of 5; destination through a second VMM mapping\n", name, sms);
    Variant vs[] = {
        {"U1 plain", copy_k<1, LD_PLAIN, ST_PLAIN>, 1, 1024},
        {"U2 plain", copy_k<2, LD_PLAIN, ST_PLAIN>, 1, 1024},
        {"U4 plain (rshmem)", copy_k<4, LD_PLAIN, ST_PLAIN>, 1, 1024},
        {"U8 plain", copy_k<8, LD_PLAIN, ST_PLAIN>, 1, 1024},
        {"U4 ld.cs st.cs", copy_k<4, LD_CS, ST_CS>, 1, 1024},
        {"U4 ld.nc.noalloc", copy_k<4, LD_NA, ST_PLAIN>, 1, 1024},
        {"U4 ld.nc.noalloc st.cs", copy_k<4, LD_NA, ST_CS>, 1, 1024},
        {"U8 ld.nc.noalloc st.cs", copy_k<8, LD_NA, ST_CS>, 1, 1024},
        {"U8 plain st.cs", copy_k<8, LD_PLAIN, ST_CS>, 1, 1024},
        {"U4 plain, 2 blocks/SM", copy_k<4, LD_PLAIN, ST_PLAIN>, 2, 1024},
        {"U8 plain, 2 blocks/SM", copy_k<8, LD_PLAIN, ST_PLAIN>, 2, 1024},
        {"U4 rotated start", copy_rotated, 1, 1024},
        {"U4 interleaved 64 KiB", copy_interleaved, 1, 1024},
        {"U4 interleaved, 4 blk/SM", copy_interleaved, 4, 512},
    };
    size_t sizes[] = {16ull << 20, 64ull << 20, 256ull << 20, 1ull << 30};
    CUstream s; CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CUevent e0, e1; CK(cuEventCreate(&e0, 0)); CK(cuEventCreate(&e1, 0));
    printf("%-26s", "variant");
    for (size_t n : sizes) printf(" %9zu MiB", n >> 20);
    printf("\n");
    auto time_best = [&](auto&& launch, size_t n) {
        launch(); CK(cuStreamSynchronize(s));
        float best = 1e30f;
        for (int r = 0; r < 5; r++) {
            CK(cuEventRecord(e0, s)); launch(); CK(cuEventRecord(e1, s)); CK(cuStreamSynchronize(s));
            float t; CK(cuEventElapsedTime(&t, e0, e1)); if (t < best) best = t;
        }
        return (double)n / (best * 1e-3) / 1e9;
    };
    printf("%-26s", "cuMemcpyAsync");
    for (size_t n : sizes) printf(" %13.0f", time_best([&] { CK(cuMemcpyAsync(dst, src, n, s)); }, n));
    printf("\n");
    for (auto& v : vs) {
        printf("%-26s", v.name);
        for (size_t n : sizes) {
            int grid = sms * v.blocks_per_sm;
            size_t part_vec = n / 16 / grid;  // sizes divide evenly into 16-byte vectors per block
            double gbs = time_best([&] { v.k<<<grid, v.threads, 0, (cudaStream_t)s>>>((int4*)dst, (const int4*)src, part_vec); }, part_vec * 16 * grid);
            printf(" %13.0f", gbs);
        }
        printf("\n");
    }
    // Check the last copy landed (through the owner's mapping).
    int probe[4]; CK(cuMemcpyDtoH(probe, dst_own + (nmax / 2), sizeof probe));
    printf("copy_unroll: check %s\n", probe[0] == 0x07070707 ? "ok (destination holds the source's bytes)" : "FAILED");
    return probe[0] == 0x07070707 ? 0 : 1;
}

// Experiment (not a test): which device-to-device copies on one GPU keep running beside a
// compute kernel that fills every SM. A register-only FMA kernel (about 40 ms alone) on one
// stream; on another, 16 copies of 1 GiB, as (a) cuMemcpyAsync, (b) cuMemcpyBatchAsync with
// CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE (what rshmem's copy-engine puts use), (c) the
// same batch with the copy first in the queue and the compute after, (d) a device-to-host
// copy into pinned memory (a DMA engine for certain), 4 GiB. Printed: each alone, then side
// by side (compute slowdown, copy bandwidth, makespan). Both heap kinds: cuMemAlloc, and VMM
// memory (cuMemCreate + cuMemMap, as rshmem's heap).
// Build: nvcc -O2 -arch=sm_90 ce_overlap.cu -lcuda
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char* s_; cuGetErrorString(r_, &s_); printf("%s: %s\n", #x, s_); exit(1); } } while (0)
extern "C" __global__ void fma_k(int iters, float* sink) {
    float a = threadIdx.x * 1e-3f, b = 1.0001f, c = 0.9999f, d = blockIdx.x * 1e-4f;
    for (int i = 0; i < iters; i++) { a = fmaf(a, 0.999f, 0.001f); b = fmaf(b, 0.998f, 0.002f); c = fmaf(c, 0.997f, 0.003f); d = fmaf(d, 0.996f, 0.004f); }
    if (a + b + c + d == 12345.0f) sink[0] = a;
}
static CUdeviceptr vmm_alloc(size_t n) {
    CUmemAllocationProp p = {};
    p.type = CU_MEM_ALLOCATION_TYPE_PINNED; p.location.type = CU_MEM_LOCATION_TYPE_DEVICE; p.location.id = 0;
    size_t g; CK(cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED));
    n = (n + g - 1) / g * g;
    CUmemGenericAllocationHandle h; CK(cuMemCreate(&h, n, &p, 0));
    CUdeviceptr va; CK(cuMemAddressReserve(&va, n, 0, 0, 0)); CK(cuMemMap(va, n, 0, h, 0));
    CUmemAccessDesc a = {}; a.location = p.location; a.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    CK(cuMemSetAccess(va, n, &a, 1));
    return va;
}
int main() {
    cudaFree(0);
    CUdevice dev; CK(cuDeviceGet(&dev, 0));
    int sms; CK(cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
    int ces; CK(cuDeviceGetAttribute(&ces, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT, dev));
    printf("ce_overlap: %d SMs, %d async engines\n", sms, ces);
    const size_t n = 1ull << 30; const int reps = 16;
    float* sink; cudaMalloc(&sink, 64);
    CUstream s1, s2; CK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING)); CK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
    CUevent e[4]; for (auto& x : e) CK(cuEventCreate(&x, CU_EVENT_DEFAULT));
    void* host; CK(cuMemHostAlloc(&host, n, 0));
    auto ms = [&](CUevent a, CUevent b) { float t; cuEventElapsedTime(&t, a, b); return (double)t; };
    int grid = sms * 16, iters = 1 << 16;
    auto compute = [&]() { fma_k<<<grid, 256, 0, (cudaStream_t)s1>>>(iters, sink); };
    // calibrate about 40 ms
    for (;;) { cuEventRecord(e[0], s1); compute(); cuEventRecord(e[1], s1); cuStreamSynchronize(s1); double t = ms(e[0], e[1]); if (t > 20) break; iters = (int)(iters * 40.0 / (t > 0.01 ? t : 0.01)); }
    cuEventRecord(e[0], s1); compute(); cuEventRecord(e[1], s1); cuStreamSynchronize(s1);
    double calone = ms(e[0], e[1]);
    printf("ce_overlap: compute alone %.2f ms (%d blocks x 256, FMA in registers)\n", calone, grid);
    for (int heap = 0; heap < 2; heap++) {
        CUdeviceptr src, dst;
        if (heap == 0) { CK(cuMemAlloc(&src, n)); CK(cuMemAlloc(&dst, n)); } else { src = vmm_alloc(n); dst = vmm_alloc(n); }
        CK(cuMemsetD8(src, 1, n)); CK(cuCtxSynchronize());
        for (int mode = 0; mode < 3; mode++) {
            int k = mode == 2 ? 4 : reps;
            auto copy = [&]() {
                for (int r = 0; r < k; r++) {
                    if (mode == 0) CK(cuMemcpyAsync(dst, src, n, s2));
                    else if (mode == 1) {
                        CUmemcpyAttributes at = {};
                        at.srcAccessOrder = CU_MEMCPY_SRC_ACCESS_ORDER_STREAM;
                        at.srcLocHint.type = CU_MEM_LOCATION_TYPE_DEVICE; at.srcLocHint.id = 0; at.dstLocHint = at.srcLocHint;
                        at.flags = CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE;
                        CUdeviceptr d = dst, s = src; size_t len = n, idx = 0;
                        CK(cuMemcpyBatchAsync(&d, &s, &len, 1, &at, &idx, 1, s2));
                    } else CK(cuMemcpyDtoHAsync(host, src, n, s2));
                }
            };
            cuEventRecord(e[2], s2); copy(); cuEventRecord(e[3], s2); CK(cuStreamSynchronize(s2));
            double xalone = ms(e[2], e[3]);
            double gb = (double)n * k / 1e9;
            // side by side, the copy first
            cuEventRecord(e[2], s2); copy(); cuEventRecord(e[3], s2);
            cuEventRecord(e[0], s1); compute(); cuEventRecord(e[1], s1);
            CK(cuCtxSynchronize());
            double c = ms(e[0], e[1]), x = ms(e[2], e[3]);
            double t0 = ms(e[2], e[0]) < 0 ? 0 : 0; (void)t0;
            double start_gap = ms(e[2], e[0]); // compute start relative to copy start
            double end_c = start_gap + c, both = (end_c > x ? end_c : x) - (start_gap < 0 ? start_gap : 0);
            const char* names[] = {"cuMemcpyAsync D2D", "batch prefer-overlap", "D2H pinned"};
            printf("ce_overlap: %-4s %-22s alone %7.1f GB/s | beside compute: copy %7.1f GB/s, compute %.2f ms (%.2fx), makespan %.2f ms vs serial %.2f\n",
                   heap ? "vmm" : "plain", names[mode], gb / (xalone / 1e3), gb / (x / 1e3), c, c / calone, both, calone + xalone);
        }
    }
    return 0;
}

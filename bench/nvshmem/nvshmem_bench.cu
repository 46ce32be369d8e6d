// NVSHMEM anchor for examples/gpu_bench.rs: the same kernels, grid, sizes and timing,
// written against NVSHMEM's documented API (our own code). PE 0 drives; PE 1 waits in
// a host-side MPI barrier. Prints `RESULT op bytes value unit` lines.
//
// nvcc -rdc=true -arch=sm_90 -I$NVSHMEM/include nvshmem_bench.cu $(mpicxx --showme:compile)
//      -L$NVSHMEM/lib -l:libnvshmem_host.so.3 -lnvshmem_device $(mpicxx --showme:link) -o nvshmem_bench
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <vector>

typedef uint64_t u64;

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } } while (0)

__global__ void bw_put(char* dst, const char* src, u64 bytes, int pe) {
    u64 chunk = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~u64(15);
    u64 start = blockIdx.x * chunk;
    if (start < bytes) {
        u64 len = bytes - start < chunk ? bytes - start : chunk;
        nvshmemx_putmem_nbi_block(dst + start, src + start, len, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
}
__global__ void bw_get(char* dst, const char* src, u64 bytes, int pe) {
    u64 chunk = ((bytes + gridDim.x - 1) / gridDim.x + 15) & ~u64(15);
    u64 start = blockIdx.x * chunk;
    if (start < bytes) {
        u64 len = bytes - start < chunk ? bytes - start : chunk;
        nvshmemx_getmem_nbi_block(dst + start, src + start, len, pe);
    }
    __syncthreads();
    if (threadIdx.x == 0) nvshmem_quiet();
}
__global__ void bw_p(u64* dst, u64 n, int pe) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i < n) nvshmem_uint64_p(dst + i, i, pe);
}
__global__ void bw_g(u64* out, const u64* src, u64 n, int pe) {
    u64 i = blockIdx.x * (u64)blockDim.x + threadIdx.x;
    if (i < n) out[i] = nvshmem_uint64_g(src + i, pe);
}
__global__ void lat(char* dst, const char* src, u64 bytes, int kind, int iters, u64 mask, u64* out, int pe) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    u64 acc = 0;
    for (int i = 0; i < iters; i++) {
        u64 off = acc & mask;
        switch (kind) {
            case 0: nvshmem_putmem(dst + off, src, bytes, pe); nvshmem_quiet(); break;
            case 1: nvshmem_uint64_p((u64*)(dst + off), (u64)i, pe); nvshmem_quiet(); break;
            case 2: acc += nvshmem_uint64_g((const u64*)(src + off), pe); break;
            case 3: acc += nvshmem_uint64_atomic_fetch_add((u64*)(dst + off), u64(1), pe); break;
        }
    }
    out[0] = acc;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int ndev = 0;
    CK(cudaGetDeviceCount(&ndev));
    CK(cudaSetDevice(rank % ndev));
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) nvshmemx_get_uniqueid(&id);
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) { fprintf(stderr, "nvshmem init failed\n"); return 1; }
    u64 max_bytes = argc > 1 ? strtoull(argv[1], 0, 10) : (u64(1) << 30);
    int me = nvshmem_my_pe();
    char* src = (char*)nvshmem_malloc(max_bytes);
    char* dst = (char*)nvshmem_malloc(max_bytes);
    if (!src || !dst) { fprintf(stderr, "nvshmem_malloc failed\n"); return 1; }
    CK(cudaMemset(src, 0x5a, max_bytes));
    CK(cudaDeviceSynchronize());
    nvshmem_barrier_all();
    if (me == 0) {
        int sms = 0;
        CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, rank % ndev));
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        auto time = [&](int reps, auto f) {
            f();
            CK(cudaStreamSynchronize(st));
            std::vector<double> t;
            for (int k = 0; k < 3; k++) {
                CK(cudaEventRecord(a, st));
                for (int i = 0; i < reps; i++) f();
                CK(cudaEventRecord(b, st));
                CK(cudaEventSynchronize(b));
                float ms;
                CK(cudaEventElapsedTime(&ms, a, b));
                t.push_back(ms * 1e3 / reps);
            }
            std::sort(t.begin(), t.end());
            return t[1];
        };
        for (u64 size = u64(64) << 10; size <= max_bytes; size *= 4) {
            int reps = (int)std::min<u64>(200, std::max<u64>(5, ((u64(4) << 30) + size - 1) / size));
            double us = time(reps, [&] { bw_put<<<sms, 1024, 0, st>>>(dst, src, size, 1); });
            printf("RESULT put_bw %llu %f GB/s\n", (unsigned long long)size, size / us / 1e3);
            us = time(reps, [&] { bw_get<<<sms, 1024, 0, st>>>(dst, src, size, 1); });
            printf("RESULT get_bw %llu %f GB/s\n", (unsigned long long)size, size / us / 1e3);
            us = time(reps, [&] { CK(cudaMemcpyAsync(dst, src, size, cudaMemcpyDeviceToDevice, st)); });
            printf("RESULT memcpy_local_bw %llu %f GB/s\n", (unsigned long long)size, size / us / 1e3);
            fflush(stdout);
        }
        u64 n = (u64)sms * 2048;
        double us = time(50, [&] { bw_p<<<n / 256, 256, 0, st>>>((u64*)dst, n, 1); });
        printf("RESULT p_scalar_bw %llu %f GB/s\n", (unsigned long long)(n * 8), n * 8 / us / 1e3);
        us = time(50, [&] { bw_g<<<n / 256, 256, 0, st>>>((u64*)dst, (const u64*)src, n, 1); });
        printf("RESULT g_scalar_bw %llu %f GB/s\n", (unsigned long long)(n * 8), n * 8 / us / 1e3);
        int iters = 2000;
        struct { const char* name; int kind; u64 bytes; } L[] = {{"put_quiet_lat", 0, 8}, {"put_quiet_lat", 0, 512}, {"p_quiet_lat", 1, 8}, {"g_lat", 2, 8}, {"fetch_add_lat", 3, 8}};
        for (auto& l : L) {
            us = time(3, [&] { lat<<<1, 1, 0, st>>>(dst, src, l.bytes, l.kind, iters, 0, (u64*)(dst + max_bytes - 64), 1); });
            printf("RESULT %s %llu %f us\n", l.name, (unsigned long long)l.bytes, us / iters);
        }
        CK(cudaGetLastError());
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    nvshmem_barrier_all();
    {
        // On-stream all-reduce (float sum) over every PE, the same sizes as gpu_coll --bench.
        cudaStream_t st;
        CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        u64 cap = std::min<u64>(max_bytes, u64(1) << 28);
        for (u64 bytes = 8; bytes <= cap; bytes *= 8) {
            size_t n = bytes / 4;
            int reps = bytes <= (u64(1) << 20) ? 50 : 5;
            nvshmem_barrier_all();
            nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (float*)dst, (const float*)src, n, st);
            CK(cudaStreamSynchronize(st));
            nvshmem_barrier_all();
            CK(cudaEventRecord(a, st));
            for (int i = 0; i < reps; i++) nvshmemx_float_sum_reduce_on_stream(NVSHMEM_TEAM_WORLD, (float*)dst, (const float*)src, n, st);
            CK(cudaEventRecord(b, st));
            CK(cudaEventSynchronize(b));
            float ms;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (me == 0) printf("RESULT reduce_stream_us %llu %f us\n", (unsigned long long)bytes, ms * 1e3 / reps);
        }
        fflush(stdout);
    }
    nvshmem_barrier_all();
    nvshmem_free(src);
    nvshmem_free(dst);
    nvshmem_finalize();
    MPI_Finalize();
    return 0;
}

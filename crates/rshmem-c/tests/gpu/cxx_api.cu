// The C++ test of the nvcc path and the C host API for GPU PEs (issue 19): one file built
// by nvcc without -rdc (its own rshmem_state, registered by the header), run with 2 PEs
// under rshmemrun. GPU heap, a kernel with device puts and a signal, device RMA on half and
// bfloat16, stream-ordered RMA and collectives on a user stream, a CUDA graph of on-stream
// calls, collective launch, host RMA from device memory, buffer registration, heap growth
// seen by the kernels, and (with a cubin path as argv[1]) a module loaded with the driver API.
#include <cooperative_groups.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <dlfcn.h>
#include <rshmem_device.cuh>
#include <rshmemx_cuda.h>
#include <string.h>
#include <string>
#include <vector>

#include "gpu_check.h"

typedef unsigned long long u64;

// Block-scope put of `n` ints with a signal, then wait for the peer's signal.
__global__ void ring_put(int* dst, const int* src, u64* sig, int n, int peer) {
    rshmem_putmem_signal_nbi_block(dst, src, n * sizeof(int), sig, 1, RSHMEM_SIGNAL_ADD, peer);
    if (threadIdx.x == 0) {
        rshmem_quiet();
        rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, 1);
    }
}

// 16-bit floats by device RMA, n = blockDim.x elements of each type to and from the peer.
// d (on the peer): [0, n) thread-scope put, [n, 2n) put_block, [2n, 3n) p (one thread per
// element), [3n, 4n) put_signal (half: thread scope on sig[0]; bfloat16: block scope on
// sig[1]). g (here, from the peer's s): [0, n) thread-scope get, [n, 2n) get_block, [2n, 3n) g.
__global__ void rma16(rshmem_half* hd, const rshmem_half* hs, rshmem_half* hg, rshmem_bf16* bd, const rshmem_bf16* bs,
                      rshmem_bf16* bg, u64* sig, int peer) {
    const int n = blockDim.x, t = threadIdx.x;
    if (t == 0) {
        rshmem_half_put(hd, hs, n, peer);
        rshmem_bfloat16_put(bd, bs, n, peer);
        rshmem_half_get(hg, hs, n, peer);
        rshmem_bfloat16_get(bg, bs, n, peer);
    }
    __syncthreads();
    rshmem_half_put_block(hd + n, hs, n, peer);
    rshmem_bfloat16_put_block(bd + n, bs, n, peer);
    rshmem_half_get_block(hg + n, hs, n, peer);
    rshmem_bfloat16_get_block(bg + n, bs, n, peer);
    rshmem_half_p(hd + 2 * n + t, hs[t], peer);
    rshmem_bfloat16_p(bd + 2 * n + t, bs[t], peer);
    hg[2 * n + t] = rshmem_half_g(hs + t, peer);
    bg[2 * n + t] = rshmem_bfloat16_g(bs + t, peer);
    rshmem_quiet();
    __syncthreads();
    if (t == 0) rshmem_half_put_signal(hd + 3 * n, hs, n, sig, 1, RSHMEM_SIGNAL_ADD, peer);
    rshmem_bfloat16_put_signal_block(bd + 3 * n, bs, n, sig + 1, 1, RSHMEM_SIGNAL_ADD, peer);
    if (t == 0) {
        rshmem_quiet();
        rshmem_signal_wait_until(sig, RSHMEM_CMP_GE, 1);
        rshmem_signal_wait_until(sig + 1, RSHMEM_CMP_GE, 1);
    }
}
// The bits PE `pe` sends as element i: finite values (no NaN for the copies to change),
// different per PE and element.
static unsigned short half_bits(int pe, int i) { return (unsigned short)(0x1000 + (pe % 8) * 0x0800 + i * 3); }
static unsigned short bf16_bits(int pe, int i) { return (unsigned short)(0x3f80 + (pe % 8) * 0x0400 + i * 5); }

__global__ void fill(int* p, int n, int base) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) p[i] = base + i;
}

// What the kernels see of the device state.
__global__ void state_probe(u64* out) {
    out[0] = (u64)rshmem_my_pe();
    out[1] = (u64)rshmem_n_pes();
    out[2] = rshmem_state.heap_base;
    out[3] = rshmem_state.heap_size;
}

// A grid-synchronizing kernel (needs a collective launch): every block adds 1, then block 0
// sends the total to the peer.
__global__ void grid_total(int* counter, int* result, int peer) {
    namespace cg = cooperative_groups;
    if (threadIdx.x == 0) atomicAdd(counter, 1);
    cg::this_grid().sync();
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        rshmem_int_p(result, *(volatile int*)counter, peer);
        rshmem_quiet();
    }
}

static std::string detail(const char* fmt, long long a, long long b) {
    char buf[256];
    snprintf(buf, sizeof buf, fmt, a, b);
    return buf;
}

template <class T>
static std::vector<T> to_host(const T* dev, size_t n) {
    std::vector<T> v(n);
    CUDA_OK(cudaMemcpy(v.data(), dev, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
}

template <class T>
static void to_device(T* dev, const std::vector<T>& v) {
    CUDA_OK(cudaMemcpy(dev, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
}

int main(int argc, char** argv) {
    gc_program = "cxx_api";
    rshmemx_cuda_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes(), peer = (me + 1) % npes, from = (me + npes - 1) % npes;
    int dev = -1;
    CUDA_OK(cudaGetDevice(&dev));
    gc_verdict("gpu_choice", rshmemx_cuda_device() >= 0 && dev == rshmemx_cuda_device(), detail("cudart device %lld, rshmem device %lld", dev, rshmemx_cuda_device()).c_str());

    // GPU heap.
    const int n = 4096;
    int* dst = (int*)shmem_malloc(n * sizeof(int));
    int* src = (int*)rshmemx_cuda_malloc(n * sizeof(int));
    u64* sig = (u64*)rshmemx_cuda_calloc(4, sizeof(u64));
    cudaPointerAttributes attr;
    CUDA_OK(cudaPointerGetAttributes(&attr, dst));
    gc_verdict("heap_is_device_memory", attr.type == cudaMemoryTypeDevice, detail("memory type %lld (device is %lld)", attr.type, cudaMemoryTypeDevice).c_str());

    // The kernels see the state (registered from this file's static initializer).
    u64* probe = (u64*)rshmemx_cuda_calloc(4, sizeof(u64));
    state_probe<<<1, 1>>>(probe);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<u64> st = to_host(probe, 4);
    gc_verdict("state_written", st[0] == (u64)me && st[1] == (u64)npes && st[2] != 0, detail("kernel saw my_pe %lld n_pes %lld", (long long)st[0], (long long)st[1]).c_str());

    // A kernel with device puts and a signal.
    fill<<<8, 256>>>(src, n, me * 100000);
    CUDA_OK(cudaDeviceSynchronize());
    shmem_barrier_all();
    ring_put<<<1, 256>>>(dst, src, sig, n, peer);
    CUDA_OK(cudaDeviceSynchronize());
    std::vector<int> got = to_host(dst, n);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != from * 100000 + i;
    gc_verdict("device_put_signal", bad == 0, detail("%lld of %lld elements wrong", bad, n).c_str());
    shmem_barrier_all();

    // Device RMA on half and bfloat16 (put/get/p/g at thread and block scope, put_signal).
    {
        const int n16 = 256;
        rshmem_half* hd = (rshmem_half*)rshmemx_cuda_malloc(4 * n16 * sizeof(rshmem_half));
        rshmem_half* hs = (rshmem_half*)rshmemx_cuda_malloc(n16 * sizeof(rshmem_half));
        rshmem_half* hg = (rshmem_half*)rshmemx_cuda_malloc(3 * n16 * sizeof(rshmem_half));
        rshmem_bf16* bd = (rshmem_bf16*)rshmemx_cuda_malloc(4 * n16 * sizeof(rshmem_bf16));
        rshmem_bf16* bs = (rshmem_bf16*)rshmemx_cuda_malloc(n16 * sizeof(rshmem_bf16));
        rshmem_bf16* bg = (rshmem_bf16*)rshmemx_cuda_malloc(3 * n16 * sizeof(rshmem_bf16));
        u64* sig16 = (u64*)rshmemx_cuda_calloc(2, sizeof(u64));
        std::vector<unsigned short> hv(n16), bv(n16);
        for (int i = 0; i < n16; i++) {
            hv[i] = half_bits(me, i);
            bv[i] = bf16_bits(me, i);
        }
        to_device((unsigned short*)hs, hv);
        to_device((unsigned short*)bs, bv);
        CUDA_OK(cudaMemset(hd, 0, 4 * n16 * sizeof(rshmem_half)));
        CUDA_OK(cudaMemset(bd, 0, 4 * n16 * sizeof(rshmem_bf16)));
        CUDA_OK(cudaMemset(sig16, 0, 2 * sizeof(u64)));
        CUDA_OK(cudaDeviceSynchronize());
        shmem_barrier_all();
        rma16<<<1, n16>>>(hd, hs, hg, bd, bs, bg, sig16, peer);
        CUDA_OK(cudaDeviceSynchronize());
        shmem_barrier_all();
        std::vector<unsigned short> hdv = to_host((const unsigned short*)hd, 4 * n16), bdv = to_host((const unsigned short*)bd, 4 * n16);
        std::vector<unsigned short> hgv = to_host((const unsigned short*)hg, 3 * n16), bgv = to_host((const unsigned short*)bg, 3 * n16);
        // Per form: elements whose bits differ from the sender's (put forms: `from`; get forms: `peer`).
        const char* put_forms[4] = {"put", "put_block", "p", "put_signal"};
        const char* get_forms[3] = {"get", "get_block", "g"};
        for (int f = 0; f < 4; f++) {
            long long hbad = 0, bbad = 0;
            for (int i = 0; i < n16; i++) {
                hbad += hdv[f * n16 + i] != half_bits(from, i);
                bbad += bdv[f * n16 + i] != bf16_bits(from, i);
            }
            gc_verdict((std::string("device_half_") + put_forms[f]).c_str(), hbad == 0,
                       detail("%lld of %lld elements wrong", hbad, n16).c_str());
            gc_verdict((std::string("device_bfloat16_") + put_forms[f]).c_str(), bbad == 0,
                       detail("%lld of %lld elements wrong", bbad, n16).c_str());
        }
        for (int f = 0; f < 3; f++) {
            long long hbad = 0, bbad = 0;
            for (int i = 0; i < n16; i++) {
                hbad += hgv[f * n16 + i] != half_bits(peer, i);
                bbad += bgv[f * n16 + i] != bf16_bits(peer, i);
            }
            gc_verdict((std::string("device_half_") + get_forms[f]).c_str(), hbad == 0,
                       detail("%lld of %lld elements wrong", hbad, n16).c_str());
            gc_verdict((std::string("device_bfloat16_") + get_forms[f]).c_str(), bbad == 0,
                       detail("%lld of %lld elements wrong", bbad, n16).c_str());
        }
        std::vector<u64> sv16 = to_host(sig16, 2);
        gc_verdict("device_16bit_put_signal_signals", sv16[0] == 1 && sv16[1] == 1,
                   detail("signals %lld and %lld (want 1 and 1)", (long long)sv16[0], (long long)sv16[1]).c_str());
        shmem_barrier_all();
    }

    // Stream-ordered RMA on a user stream.
    cudaStream_t s;
    CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CUDA_OK(cudaMemsetAsync(dst, 0, n * sizeof(int), s));
    CUDA_OK(cudaMemsetAsync(sig, 0, 4 * sizeof(u64), s));
    rshmemx_barrier_all_on_stream(s);
    rshmemx_int_put_signal_on_stream(dst, src, n, (uint64_t*)&sig[1], 7, SHMEM_SIGNAL_SET, peer, s);
    rshmemx_signal_wait_until_on_stream((uint64_t*)&sig[1], SHMEM_CMP_EQ, 7, s);
    gc_stream_wait(s, 60, "put_signal_on_stream");
    got = to_host(dst, n);
    bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != from * 100000 + i;
    gc_verdict("put_signal_on_stream", bad == 0, detail("%lld of %lld elements wrong", bad, n).c_str());

    // p on stream for 1-, 2-, 4- and 8-byte types; get on stream.
    char* pc = (char*)rshmemx_cuda_calloc(64, 1);
    rshmemx_barrier_all_on_stream(s);
    rshmemx_char_p_on_stream(pc, (char)(40 + me), peer, s);
    rshmemx_short_p_on_stream((short*)(pc + 2), (short)(3000 + me), peer, s);
    rshmemx_float_p_on_stream((float*)(pc + 4), 1.5f + me, peer, s);
    rshmemx_double_p_on_stream((double*)(pc + 8), 2.25 + me, peer, s);
    rshmemx_barrier_all_on_stream(s);
    int* back = (int*)rshmemx_cuda_calloc(n, sizeof(int));
    rshmemx_int_get_on_stream(back, src, n, peer, s);
    gc_stream_wait(s, 60, "p/get on stream");
    std::vector<char> pv = to_host(pc, 16);
    short sv;
    float fv;
    double dv;
    memcpy(&sv, &pv[2], 2);
    memcpy(&fv, &pv[4], 4);
    memcpy(&dv, &pv[8], 8);
    gc_verdict("p_on_stream", pv[0] == 40 + from && sv == 3000 + from && fv == 1.5f + from && dv == 2.25 + from,
               detail("char %lld short %lld", pv[0], sv).c_str());
    got = to_host(back, n);
    bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != peer * 100000 + i;
    gc_verdict("get_on_stream", bad == 0, detail("%lld of %lld elements wrong", bad, n).c_str());

    // On-stream collectives on the user stream.
    const int m = 1000;
    float* fs = (float*)rshmemx_cuda_malloc(m * sizeof(float));
    float* fd = (float*)rshmemx_cuda_malloc(m * sizeof(float));
    std::vector<float> fh(m);
    for (int i = 0; i < m; i++) fh[i] = (float)(i + me);
    to_device(fs, fh);
    shmem_barrier_all();
    int rc = rshmemx_float_sum_reduce_on_stream(SHMEM_TEAM_WORLD, fd, fs, m, s);
    gc_stream_wait(s, 60, "float_sum_reduce_on_stream");
    std::vector<float> fr = to_host(fd, m);
    bad = 0;
    for (int i = 0; i < m; i++) {
        float want = 0;
        for (int p = 0; p < npes; p++) want += (float)(i + p);
        bad += fr[i] != want;
    }
    gc_verdict("float_sum_reduce_on_stream", rc == 0 && bad == 0, detail("rc %lld, %lld wrong", rc, bad).c_str());

    // 16-bit floats: sums of small integers, exact in half and bfloat16.
    __half* hs = (__half*)rshmemx_cuda_malloc(m * sizeof(__half));
    __half* hd = (__half*)rshmemx_cuda_malloc(m * sizeof(__half));
    __nv_bfloat16* bs = (__nv_bfloat16*)rshmemx_cuda_malloc(m * sizeof(__nv_bfloat16));
    __nv_bfloat16* bd = (__nv_bfloat16*)rshmemx_cuda_malloc(m * sizeof(__nv_bfloat16));
    std::vector<__half> hh(m);
    std::vector<__nv_bfloat16> bh(m);
    for (int i = 0; i < m; i++) {
        hh[i] = __float2half((float)(i % 16 + me));
        bh[i] = __float2bfloat16((float)(i % 16 + me));
    }
    to_device(hs, hh);
    to_device(bs, bh);
    shmem_barrier_all();
    rc = rshmemx_half_sum_reduce_on_stream(SHMEM_TEAM_WORLD, (rshmemx_half*)hd, (const rshmemx_half*)hs, m, s);
    int rc2 = rshmemx_bfloat16_max_reduce_on_stream(SHMEM_TEAM_WORLD, (rshmemx_bfloat16*)bd, (const rshmemx_bfloat16*)bs, m, s);
    gc_stream_wait(s, 60, "half_sum_reduce_on_stream, bfloat16_max_reduce_on_stream");
    std::vector<__half> hr = to_host(hd, m);
    std::vector<__nv_bfloat16> br = to_host(bd, m);
    long long hbad = 0, bbad = 0;
    for (int i = 0; i < m; i++) {
        float want = 0;
        for (int p = 0; p < npes; p++) want += (float)(i % 16 + p);
        hbad += __half2float(hr[i]) != want;
        bbad += __bfloat162float(br[i]) != (float)(i % 16 + npes - 1);
    }
    gc_verdict("half_sum_reduce_on_stream", rc == 0 && hbad == 0, detail("rc %lld, %lld wrong", rc, hbad).c_str());
    gc_verdict("bfloat16_max_reduce_on_stream", rc2 == 0 && bbad == 0, detail("rc %lld, %lld wrong", rc2, bbad).c_str());

    long* ls = (long*)rshmemx_cuda_malloc(m * npes * sizeof(long));
    long* ld = (long*)rshmemx_cuda_malloc(m * npes * sizeof(long));
    std::vector<long> lh(m * npes);
    for (int i = 0; i < m * npes; i++) lh[i] = (long)i * (me + 1);
    to_device(ls, lh);
    shmem_barrier_all();
    rc = rshmemx_long_max_reduce_on_stream(SHMEM_TEAM_WORLD, ld, ls, m, s);
    gc_stream_wait(s, 60, "long_max_reduce_on_stream");
    std::vector<long> lr = to_host(ld, m);
    bad = 0;
    for (int i = 0; i < m; i++) bad += lr[i] != (long)i * npes;
    gc_verdict("long_max_reduce_on_stream", rc == 0 && bad == 0, detail("rc %lld, %lld wrong", rc, bad).c_str());

    rc = rshmemx_long_sum_reducescatter_on_stream(SHMEM_TEAM_WORLD, ld, ls, m, s);
    gc_stream_wait(s, 60, "long_sum_reducescatter_on_stream");
    lr = to_host(ld, m);
    bad = 0;
    for (int i = 0; i < m; i++) {
        long want = 0;
        for (int p = 0; p < npes; p++) want += (long)(me * m + i) * (p + 1);
        bad += lr[i] != want;
    }
    gc_verdict("long_sum_reducescatter_on_stream", rc == 0 && bad == 0, detail("rc %lld, %lld wrong", rc, bad).c_str());

    int* is = (int*)rshmemx_cuda_malloc(m * npes * sizeof(int));
    int* id = (int*)rshmemx_cuda_malloc(m * npes * sizeof(int));
    std::vector<int> ih(m * npes);
    for (int i = 0; i < m * npes; i++) ih[i] = me * 1000000 + i;
    to_device(is, ih);
    shmem_barrier_all();
    rc = rshmemx_int_broadcast_on_stream(SHMEM_TEAM_WORLD, id, is, m, 1 % npes, s);
    gc_stream_wait(s, 60, "int_broadcast_on_stream");
    std::vector<int> ir = to_host(id, m);
    bad = 0;
    for (int i = 0; i < m; i++) bad += ir[i] != (1 % npes) * 1000000 + i;
    gc_verdict("int_broadcast_on_stream", rc == 0 && bad == 0, detail("rc %lld, %lld wrong", rc, bad).c_str());

    rc = rshmemx_int_fcollect_on_stream(SHMEM_TEAM_WORLD, id, is, m, s);
    gc_stream_wait(s, 60, "int_fcollect_on_stream");
    ir = to_host(id, m * npes);
    bad = 0;
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < m; i++) bad += ir[p * m + i] != p * 1000000 + i;
    gc_verdict("int_fcollect_on_stream", rc == 0 && bad == 0, detail("rc %lld, %lld wrong", rc, bad).c_str());

    rc = rshmemx_int_alltoall_on_stream(SHMEM_TEAM_WORLD, id, is, m, s);
    gc_stream_wait(s, 60, "int_alltoall_on_stream");
    ir = to_host(id, m * npes);
    bad = 0;
    for (int p = 0; p < npes; p++)
        for (int i = 0; i < m; i++) bad += ir[p * m + i] != p * 1000000 + me * m + i;
    gc_verdict("int_alltoall_on_stream", rc == 0 && bad == 0, detail("rc %lld, %lld wrong", rc, bad).c_str());

    rc = rshmemx_int_sum_reduce_on_stream(SHMEM_TEAM_INVALID, id, is, m, s);
    gc_verdict("invalid_team_returns_nonzero", rc != 0, detail("rc %lld", rc, 0).c_str());

    // A CUDA graph of on-stream calls, replayed three times with new inputs.
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    rshmemx_int_sum_reduce_on_stream(SHMEM_TEAM_WORLD, id, is, m, s);
    rshmemx_int_put_on_stream(dst, id, m, peer, s);
    rshmemx_barrier_all_on_stream(s);
    CUDA_OK(cudaStreamEndCapture(s, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    int graph_bad = 0;
    for (int r = 0; r < 3; r++) {
        for (int i = 0; i < m; i++) ih[i] = (r + 1) * (me + 1) + i;
        to_device(is, ih);
        shmem_barrier_all();
        CUDA_OK(cudaGraphLaunch(exec, s));
        gc_stream_wait(s, 60, "graph replay");
        std::vector<int> a = to_host(id, m), b = to_host(dst, m);
        for (int i = 0; i < m; i++) {
            int want = 0;
            for (int p = 0; p < npes; p++) want += (r + 1) * (p + 1) + i;
            graph_bad += (a[i] != want) + (b[i] != want);
        }
        shmem_barrier_all();
    }
    gc_verdict("graph_of_on_stream_calls", graph_bad == 0, detail("%lld wrong over %lld replays", graph_bad, 3).c_str());
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));

    // Collective launch: the grid it allows, then a grid-synchronizing kernel.
    int grid = 0;
    rshmemx_dim3 block = {128, 1, 1};
    rc = rshmemx_collective_launch_query_gridsize((const void*)grid_total, block, 0, 0, &grid);
    gc_verdict("collective_launch_query_gridsize", rc == 0 && grid > 0, detail("rc %lld, grid %lld", rc, grid).c_str());
    int* counter = (int*)rshmemx_cuda_calloc(2, sizeof(int));
    int blocks = grid < 16 ? grid : 16;
    rshmemx_dim3 g = {(unsigned)blocks, 1, 1};
    int* result = counter + 1;
    int peer_arg = peer;
    void* args[] = {&counter, &result, &peer_arg};
    shmem_barrier_all();
    rc = rshmemx_collective_launch((const void*)grid_total, g, block, args, 0, s);
    gc_stream_wait(s, 60, "collective_launch");
    shmem_barrier_all();
    std::vector<int> cr = to_host(counter, 2);
    gc_verdict("collective_launch", rc == 0 && cr[0] == blocks && cr[1] == blocks, detail("counter %lld, result from peer %lld", cr[0], cr[1]).c_str());

    // Host RMA whose local side is device memory, and a registered user buffer.
    int* mine;
    CUDA_OK(cudaMalloc(&mine, n * sizeof(int)));
    fill<<<8, 256>>>(mine, n, 7000000 + me);
    CUDA_OK(cudaDeviceSynchronize());
    rc = rshmemx_buffer_register(mine, n * sizeof(int));
    shmem_barrier_all();
    rshmemx_putmem(dst, mine, n * sizeof(int), peer);
    shmem_barrier_all();
    got = to_host(dst, n);
    bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != 7000000 + from + i;
    gc_verdict("host_putmem_from_device", rc == 0 && bad == 0, detail("rc %lld, %lld wrong", rc, bad).c_str());
    CUDA_OK(cudaMemset(mine, 0, n * sizeof(int)));
    rshmemx_getmem(mine, src, n * sizeof(int), peer);
    got = to_host(mine, n);
    bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != peer * 100000 + i;
    gc_verdict("host_getmem_to_device", bad == 0, detail("%lld of %lld wrong", bad, n).c_str());
    rshmemx_putmem_on_stream(dst, mine, n * sizeof(int), peer, s);
    rshmemx_barrier_all_on_stream(s);
    gc_stream_wait(s, 60, "putmem_on_stream from a registered buffer");
    got = to_host(dst, n);
    bad = 0;
    for (int i = 0; i < n; i++) bad += got[i] != me * 100000 + i;
    gc_verdict("putmem_on_stream_from_user_buffer", bad == 0, detail("%lld of %lld wrong", bad, n).c_str());
    gc_verdict("buffer_unregister", rshmemx_buffer_unregister(mine) == 0, "");
    shmem_barrier_all();

    // Heap growth: a big allocation past the initial heap; kernels see the new size and
    // can put into it.
    const size_t big_bytes = (size_t)768 << 20;
    char* big = (char*)rshmemx_cuda_malloc(big_bytes);
    state_probe<<<1, 1>>>(probe);
    CUDA_OK(cudaDeviceSynchronize());
    st = to_host(probe, 4);
    int* tail = (int*)(big + big_bytes - n * sizeof(int));
    gc_verdict("state_after_heap_growth", big != 0 && (u64)(tail + n) <= st[2] + st[3],
               detail("allocation ends %lld bytes past the heap the kernels see", (long long)((u64)(tail + n) - (st[2] + st[3])), 0).c_str());
    if (big) {
        // cudaMemset of device memory returns before it runs: it must be done before the
        // barrier, or the peer's signal may land first and be zeroed.
        CUDA_OK(cudaMemset(sig, 0, 4 * sizeof(u64)));
        CUDA_OK(cudaDeviceSynchronize());
        shmem_barrier_all();
        ring_put<<<1, 256>>>(tail, src, sig, n, peer);
        CUDA_OK(cudaDeviceSynchronize());
        got = to_host(tail, n);
        bad = 0;
        for (int i = 0; i < n; i++) bad += got[i] != from * 100000 + i;
        gc_verdict("device_put_into_grown_heap", bad == 0, detail("%lld of %lld wrong", bad, n).c_str());
        shmem_barrier_all();
        rshmemx_cuda_free(big);
    }

    // A module loaded with the driver API (cubin built with -DRSHMEM_CUBIN).
    // The driver API through dlopen (the build machine has no libcuda to link against).
    void* libcuda = argc > 1 ? dlopen("libcuda.so.1", RTLD_NOW) : 0;
    typedef CUresult (*load_t)(CUmodule*, const char*);
    typedef CUresult (*getf_t)(CUfunction*, CUmodule, const char*);
    typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void**, void**);
    load_t module_load = libcuda ? (load_t)dlsym(libcuda, "cuModuleLoad") : 0;
    getf_t module_get_function = libcuda ? (getf_t)dlsym(libcuda, "cuModuleGetFunction") : 0;
    launch_t launch_kernel = libcuda ? (launch_t)dlsym(libcuda, "cuLaunchKernel") : 0;
    if (argc > 1) gc_verdict("libcuda", module_load && module_get_function && launch_kernel, dlerror());
    if (argc > 1 && module_load && module_get_function && launch_kernel) {
        CUmodule mod;
        CUfunction f;
        CUresult r = module_load(&mod, argv[1]);
        if (r == CUDA_SUCCESS) r = module_get_function(&f, mod, "probe_pe");
        gc_verdict("cumodule_load", r == CUDA_SUCCESS, detail("CUresult %lld", r, 0).c_str());
        if (r == CUDA_SUCCESS) {
            rc = rshmemx_cumodule_init(mod);
            void* kargs[] = {&probe};
            r = launch_kernel(f, 1, 1, 1, 1, 1, 1, 0, 0, kargs, 0);
            CUDA_OK(cudaDeviceSynchronize());
            st = to_host(probe, 2);
            gc_verdict("cumodule_init", rc == 0 && r == CUDA_SUCCESS && st[0] == (u64)me && st[1] == (u64)npes,
                       detail("module kernel saw my_pe %lld n_pes %lld", (long long)st[0], (long long)st[1]).c_str());
            gc_verdict("cumodule_finalize", rshmemx_cumodule_finalize(mod) == 0, "");
        }
    }

    CUDA_OK(cudaStreamDestroy(s));
    shmem_barrier_all();
    int failed = gc_summary();
    shmem_finalize();
    return failed;
}

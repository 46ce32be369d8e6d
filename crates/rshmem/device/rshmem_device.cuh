// rshmem device API: one-sided communication from CUDA kernels.
//
// Include this header in kernels compiled by rshmem's runtime (NVRTC, `rshmem::gpu`) or by
// your own nvcc build (`rshmem-nvcc`, see the README). The host runtime writes `rshmem_state`
// into every module it loads and every copy an nvcc-built program registers.
// Names mirror NVSHMEM's with the `rshmem_` prefix (`rshmemx_` for extensions), so porting
// a kernel is a rename. Scopes: plain names are thread scope; `_warp` and `_block` forms
// must be called by every thread of the warp / block with the same arguments.
//
// Self-contained: no system headers, so NVRTC needs no include path.
#ifndef RSHMEM_DEVICE_CUH
#define RSHMEM_DEVICE_CUH

#include "rshmem_device_types.cuh"
#if defined(__CUDACC__) && !defined(__CUDACC_RTC__)
// nvcc: device printf is declared by <cstdio> (NVRTC has it built in).
#include <cstdio>
#endif

// In constant memory: every thread reads it, nothing on the device writes it.
//
// Where it lives depends on the compiler:
// - NVRTC (rshmem's runtime) and cubins for cuModuleLoad: one `rshmem_state` per module,
//   which the runtime (or `rshmemx_cumodule_init`) finds by name and writes.
// - nvcc -rdc=true: one `rshmem_state` for the whole program, defined by the device
//   library (librshmem_device.a, built from rshmem_device_state.cu); every file of the
//   program only declares it.
// - nvcc without -rdc: every file its own copy (a static), since each is a module of its own.
//   A cubin for cuModuleLoad (nvcc -cubin) defines RSHMEM_CUBIN to get the named copy.
// RSHMEM_NO_STATE_DEFINITION leaves out the definition of the named copy (NVRTC, cubins).
#if defined(__CUDACC_RTC__) || !defined(__CUDACC__) || !defined(__CUDACC_RDC__) && defined(RSHMEM_CUBIN)
extern "C" __constant__ rshmem_device_state rshmem_state;
#ifndef RSHMEM_NO_STATE_DEFINITION
extern "C" __constant__ rshmem_device_state rshmem_state = {0};
#endif
#elif defined(__CUDACC_RDC__)
extern "C" __constant__ rshmem_device_state rshmem_state;
#else
static __constant__ rshmem_device_state rshmem_state = {0};
#endif

// nvcc builds (not NVRTC): the host side of this file tells libshmem where its
// `rshmem_state` is, from a static initializer, so that the runtime writes the state there
// at GPU init and after every change (heap growth). It also lets the library turn a
// kernel's host function into a driver handle for rshmemx_collective_launch. cudart's
// calls run on the device's primary context, which rshmem uses too.
#if defined(__CUDACC__) && !defined(__CUDACC_RTC__) && !defined(RSHMEM_NO_HOST_REGISTRATION) && !defined(RSHMEM_CUBIN)
extern "C" int rshmemx_cudart_register(void* (*state_address)(int device, unsigned long* size),
                                       void* (*function_of)(const void* host_function));
static void* rshmemi_state_address(int device, unsigned long* size) {
    void* addr = 0;
    size_t bytes = 0;
    if (cudaSetDevice(device) != cudaSuccess || cudaGetSymbolAddress(&addr, rshmem_state) != cudaSuccess ||
        cudaGetSymbolSize(&bytes, rshmem_state) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    *size = (unsigned long)bytes;
    return addr;
}
static void* rshmemi_function_of(const void* host_function) {
    cudaFunction_t f = 0;
    if (cudaGetFuncBySymbol(&f, host_function) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return (void*)f;
}
static const int rshmemi_registered __attribute__((unused)) = rshmemx_cudart_register(rshmemi_state_address, rshmemi_function_of);
#endif

// ---------------------------------------------------------------- errors and addressing

__device__ __forceinline__ rshmem_u64 rshmem_globaltimer() {
    rshmem_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

static __device__ __noinline__ void rshmemi_fail(const char* call, const char* what, int pe, rshmem_u64 a, rshmem_u64 b) {
    printf("rshmem: device error in %s on PE %d (block %d, thread %d): %s [PE %d, %#llx, %llu]\n",
           call, rshmem_state.my_pe, (int)blockIdx.x, (int)threadIdx.x, what, pe, a, b);
    __trap();
}

__device__ __forceinline__ void rshmemi_check(const char* call, const void* addr, rshmem_size_t n, int pe) {
    if (!rshmem_state.debug) return;
    if (pe < 0 || pe >= rshmem_state.n_pes) rshmemi_fail(call, "PE out of range", pe, (rshmem_u64)pe, (rshmem_u64)rshmem_state.n_pes);
    rshmem_u64 a = (rshmem_u64)addr;
    if (a < rshmem_state.heap_base || a + n > rshmem_state.heap_base + rshmem_state.heap_size)
        rshmemi_fail(call, "address outside the symmetric heap", pe, a, n);
}

// Address of `addr` (a symmetric address of this PE) on `pe`, as mapped here: `addr` plus a
// distance that depends on `pe` alone, so that a loop over addresses of one PE computes the
// distance once and each access adds one number (a dependent chain of g's pays only that).
__device__ __forceinline__ void* rshmemi_remote(const void* addr, int pe) {
    rshmem_u64 delta = rshmem_state.peers_base + (rshmem_u64)pe * rshmem_state.stride - rshmem_state.heap_base;
    // An opaque copy (a pure asm the compiler may still hoist out of a loop), so that the
    // compiler does not fold the distance back into the address arithmetic of each access.
    asm("mov.b64 %0, %0;" : "+l"(delta));
    return (void*)((rshmem_u64)addr + delta);
}

// A polling loop that traps with a message instead of hanging silently.
struct rshmemi_waiter {
    rshmem_u64 start;
    unsigned polls;
    __device__ __forceinline__ rshmemi_waiter() : start(0), polls(0) {}
    __device__ __forceinline__ void tick(const char* call, const void* addr) {
        if ((++polls & 1023u) != 0) return;
        rshmem_u64 now = rshmem_globaltimer();
        if (start == 0) { start = now; return; }
        if (rshmem_state.wait_timeout_ns && now - start > rshmem_state.wait_timeout_ns)
            rshmemi_fail(call, "wait timed out (RSHMEM_DEVICE_WAIT_TIMEOUT)", rshmem_state.my_pe, (rshmem_u64)addr, (now - start) / 1000000000ull);
    }
};

// Peers without a mapping go through this PE's host proxy.
#include "rshmem_device_proxy.cuh"

__device__ __forceinline__ int rshmem_my_pe() { return rshmem_state.my_pe; }
__device__ __forceinline__ int rshmem_n_pes() { return rshmem_state.n_pes; }

// Directly usable address of `addr` on `pe` (mapped peers), or null (peers reached through the proxy).
__device__ __forceinline__ void* rshmem_ptr(const void* addr, int pe) {
    rshmem_u64 a = (rshmem_u64)addr;
    if (pe < 0 || pe >= rshmem_state.n_pes || a < rshmem_state.heap_base || a >= rshmem_state.heap_base + rshmem_state.heap_size) return 0;
    if (rshmemi_proxied(pe)) return 0;
    return rshmemi_remote(addr, pe);
}

__device__ __forceinline__ const rshmem_device_team* rshmemi_team(rshmem_team_t t) {
    const rshmem_device_team* teams = (const rshmem_device_team*)rshmem_state.teams;
    if (t < 0 || t >= rshmem_state.max_teams || !teams[t].valid) rshmemi_fail("team", "invalid team", t, 0, 0);
    return &teams[t];
}
__device__ __forceinline__ int rshmem_team_my_pe(rshmem_team_t t) {
    const rshmem_device_team* d = rshmemi_team(t);
    int rel = rshmem_state.my_pe - d->start;
    if (rel < 0 || (d->stride ? rel % d->stride : rel) != 0) return -1;
    int idx = d->stride ? rel / d->stride : 0;
    return idx < d->size ? idx : -1;
}
__device__ __forceinline__ int rshmem_team_n_pes(rshmem_team_t t) { return rshmemi_team(t)->size; }
__device__ __forceinline__ int rshmem_team_translate_pe(rshmem_team_t src, int src_pe, rshmem_team_t dest) {
    const rshmem_device_team* s = rshmemi_team(src);
    const rshmem_device_team* d = rshmemi_team(dest);
    if (src_pe < 0 || src_pe >= s->size) return -1;
    int world = s->start + src_pe * s->stride;
    int rel = world - d->start;
    if (rel < 0 || (d->stride ? rel % d->stride : rel) != 0) return -1;
    int idx = d->stride ? rel / d->stride : 0;
    return idx < d->size ? idx : -1;
}

// ---------------------------------------------------------------- ordering

// Orders this thread's earlier puts/AMOs/signals before its later ones (to every PE).
// Implicit proxy requests are carried out in issue order; copy-engine requests and
// remote-engine requests to mapped peers are completed first (rshmem_device_engines.cuh).
// Orders this thread's stores to peers: GPU scope suffices when every mapped PE is on this
// GPU (thread PEs, or processes sharing one GPU); other GPUs or host memory need system scope.
__device__ __forceinline__ void rshmemi_fence_peers() {
    if (rshmem_state.one_device) __threadfence();
    else __threadfence_system();
}

__device__ __forceinline__ void rshmem_fence() { rshmemi_fence_peers(); rshmemi_proxy_fence("rshmem_fence"); }
// Completes this thread's earlier operations: stores by peer mapping are complete once
// visible, which a system-scope fence ensures; proxy requests once the proxy reports them
// complete (it waits for the transport's own quiet first).
__device__ __forceinline__ void rshmem_quiet() {
    rshmem_u64 issued = rshmemi_proxy_issued();
    rshmemi_fence_peers();
    rshmemi_proxy_quiet_upto("rshmem_quiet", issued);
}

// ---------------------------------------------------------------- bulk copies

// The last `n` bytes (fewer than 16) of a copy whose two ends are 8-byte aligned here: pieces
// of 8, 4, 2 and 1 bytes, every load issued before any store, so that a small copy waits for
// one load rather than one per byte.
__device__ __forceinline__ void rshmemi_copy_tail(char* d, const char* s, rshmem_size_t n) {
    const rshmem_size_t o4 = n & 8, o2 = o4 + (n & 4), o1 = o2 + (n & 2);
    rshmem_u64 w8 = 0;
    unsigned w4 = 0;
    unsigned short w2 = 0;
    unsigned char w1 = 0;
    if (n & 8) w8 = *(const rshmem_u64*)s;
    if (n & 4) w4 = *(const unsigned*)(s + o4);
    if (n & 2) w2 = *(const unsigned short*)(s + o2);
    if (n & 1) w1 = *(const unsigned char*)(s + o1);
    if (n & 8) *(rshmem_u64*)d = w8;
    if (n & 4) *(unsigned*)(d + o4) = w4;
    if (n & 2) *(unsigned short*)(d + o2) = w2;
    if (n & 1) *(unsigned char*)(d + o1) = w1;
}

// Thread scope: 16-byte vectors when both ends allow it.
__device__ __forceinline__ void rshmemi_copy(void* dst, const void* src, rshmem_size_t n, unsigned lane, unsigned lanes) {
    char* d = (char*)dst;
    const char* s = (const char*)src;
    if ((((rshmem_u64)d | (rshmem_u64)s) & 15) == 0) {
        rshmem_size_t nv = n / 16;
        int4* dv = (int4*)d;
        const int4* sv = (const int4*)s;
        // Four 16-byte loads in flight per thread before their stores: one per thread
        // leaves HBM and NVLink latency uncovered on large copies.
        rshmem_size_t i = lane;
        for (; i + 3 * (rshmem_size_t)lanes < nv; i += 4 * (rshmem_size_t)lanes) {
            int4 a = sv[i], b = sv[i + lanes], c = sv[i + 2 * (rshmem_size_t)lanes], e = sv[i + 3 * (rshmem_size_t)lanes];
            dv[i] = a;
            dv[i + lanes] = b;
            dv[i + 2 * (rshmem_size_t)lanes] = c;
            dv[i + 3 * (rshmem_size_t)lanes] = e;
        }
        for (; i < nv; i += lanes) dv[i] = sv[i];
        if (lane == 0 && (n & 15)) rshmemi_copy_tail(d + nv * 16, s + nv * 16, n & 15);
    } else if ((((rshmem_u64)d | (rshmem_u64)s) & 7) == 0) {
        rshmem_size_t nv = n / 8;
        rshmem_u64* dv = (rshmem_u64*)d;
        const rshmem_u64* sv = (const rshmem_u64*)s;
        for (rshmem_size_t i = lane; i < nv; i += lanes) dv[i] = sv[i];
        if (lane == 0 && (n & 7)) rshmemi_copy_tail(d + nv * 8, s + nv * 8, n & 7);
    } else {
        for (rshmem_size_t i = lane; i < n; i += lanes) d[i] = s[i];
    }
}

__device__ __forceinline__ unsigned rshmemi_lane() { return threadIdx.x & 31u; }
__device__ __forceinline__ unsigned rshmemi_block_rank() { return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z); }
__device__ __forceinline__ unsigned rshmemi_block_size() { return blockDim.x * blockDim.y * blockDim.z; }

#define RSHMEMI_SCOPED_MEM(scope, lane, lanes, sync)                                                            \
    __device__ __forceinline__ void rshmem_putmem##scope(void* dst, const void* src, rshmem_size_t n, int pe) { \
        rshmemi_check("rshmem_putmem" #scope, dst, n, pe);                                                      \
        if (rshmemi_proxied(pe)) {                                                                              \
            sync;                                                                                               \
            if ((lane) == 0) rshmemi_proxy_put("rshmem_putmem" #scope, dst, src, n, pe, true);                  \
            sync;                                                                                               \
            return;                                                                                             \
        }                                                                                                       \
        rshmemi_copy(rshmemi_remote(dst, pe), src, n, lane, lanes);                                             \
        sync;                                                                                                   \
    }                                                                                                           \
    __device__ __forceinline__ void rshmem_getmem##scope(void* dst, const void* src, rshmem_size_t n, int pe) { \
        rshmemi_check("rshmem_getmem" #scope, src, n, pe);                                                      \
        if (rshmemi_proxied(pe)) {                                                                              \
            sync;                                                                                               \
            if ((lane) == 0) rshmemi_proxy_get("rshmem_getmem" #scope, dst, src, n, pe, true);                  \
            sync;                                                                                               \
            return;                                                                                             \
        }                                                                                                       \
        rshmemi_copy(dst, rshmemi_remote(src, pe), n, lane, lanes);                                             \
        sync;                                                                                                   \
    }                                                                                                           \
    __device__ __forceinline__ void rshmem_putmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe) { \
        rshmemi_check("rshmem_putmem_nbi" #scope, dst, n, pe);                                                  \
        if (rshmemi_proxied(pe)) {                                                                              \
            sync;                                                                                               \
            if ((lane) == 0) rshmemi_proxy_put("rshmem_putmem_nbi" #scope, dst, src, n, pe, false);             \
            return;                                                                                             \
        }                                                                                                       \
        rshmemi_copy(rshmemi_remote(dst, pe), src, n, lane, lanes);                                             \
    }                                                                                                           \
    __device__ __forceinline__ void rshmem_getmem_nbi##scope(void* dst, const void* src, rshmem_size_t n, int pe) { \
        rshmemi_check("rshmem_getmem_nbi" #scope, src, n, pe);                                                  \
        if (rshmemi_proxied(pe)) {                                                                              \
            sync;                                                                                               \
            if ((lane) == 0) rshmemi_proxy_get("rshmem_getmem_nbi" #scope, dst, src, n, pe, false);             \
            return;                                                                                             \
        }                                                                                                       \
        rshmemi_copy(dst, rshmemi_remote(src, pe), n, lane, lanes);                                             \
    }

RSHMEMI_SCOPED_MEM(, 0, 1, (void)0)
RSHMEMI_SCOPED_MEM(_warp, rshmemi_lane(), 32, __syncwarp())
RSHMEMI_SCOPED_MEM(_block, rshmemi_block_rank(), rshmemi_block_size(), __syncthreads())

// ---------------------------------------------------------------- 16-bit floats (no headers)
// IEEE half and bfloat16 as their bits: the typed RMA below, the reductions and the typed
// collectives of rshmem_device_coll.cuh take these. CUDA's `half` / `__half` (cuda_fp16.h)
// and `__nv_bfloat16` (cuda_bf16.h) hold the same 16 bits: cast their pointers.
struct rshmem_half { unsigned short bits; };
struct rshmem_bf16 { unsigned short bits; };

// ---------------------------------------------------------------- typed RMA

// Whether calls may need more than the plain access: argument checks (RSHMEM_DEVICE_DEBUG)
// or PEs reached through the proxy. One test of the constant bank, the same for every
// thread, which the scalar p / g put before anything else on their path.
__device__ __forceinline__ bool rshmemi_slow_path() { return (rshmem_state.debug | rshmem_state.proxied) != 0; }

// The one element of a typed p / g. p stores it with a volatile store of its size (the
// 16-bit floats are structs, which have no volatile copy: through their 16-bit word; the
// store takes the value before the address, the order in which `*(volatile T*)p = v`
// evaluates them). g reads it with a plain load, as NVSHMEM's g does: an RMA read carries no
// synchronization, so it sees a peer's stores once the program has synchronized with them
// (a barrier, a wait, a signal), and it costs about half what a volatile read costs (on the
// H200, 0.12 against 0.22 us for a dependent chain of loads from a peer on the same GPU).
// Poll with rshmem_TYPE_wait_until / test or an atomic fetch, never with g.
template <typename T> __device__ __forceinline__ void rshmemi_st_elem(T v, void* p) { *(volatile T*)p = v; }
template <> __device__ __forceinline__ void rshmemi_st_elem<rshmem_half>(rshmem_half v, void* p) { *(volatile unsigned short*)p = v.bits; }
template <> __device__ __forceinline__ void rshmemi_st_elem<rshmem_bf16>(rshmem_bf16 v, void* p) { *(volatile unsigned short*)p = v.bits; }
template <typename T> __device__ __forceinline__ T rshmemi_ld_elem(const void* p) {
    __builtin_assume(__isGlobal(p));
    return *(const T*)p;
}

#define RSHMEMI_TYPED_RMA(NAME, T)                                                                                  \
    __device__ __forceinline__ void rshmem_##NAME##_p(T* dst, T v, int pe) {                                        \
        if (rshmemi_slow_path()) {                                                                                  \
            rshmemi_check("rshmem_" #NAME "_p", dst, sizeof(T), pe);                                                \
            if (rshmemi_proxied(pe)) { rshmemi_proxy_put("rshmem_" #NAME "_p", dst, &v, sizeof(T), pe, false); return; } \
        }                                                                                                           \
        rshmemi_st_elem<T>(v, rshmemi_remote(dst, pe));                                                             \
    }                                                                                                               \
    __device__ __forceinline__ T rshmem_##NAME##_g(const T* src, int pe) {                                          \
        if (rshmemi_slow_path()) rshmemi_check("rshmem_" #NAME "_g", src, sizeof(T), pe);                           \
        if (rshmemi_slow_path() && rshmemi_proxied(pe)) {                                                           \
            rshmem_u64 bits = rshmemi_proxy_g("rshmem_" #NAME "_g", src, sizeof(T), pe);                            \
            T out;                                                                                                  \
            unsigned char* ob = (unsigned char*)&out;                                                               \
            for (unsigned i = 0; i < sizeof(T); i++) ob[i] = (unsigned char)(bits >> (8 * i));                      \
            return out;                                                                                             \
        }                                                                                                           \
        return rshmemi_ld_elem<T>(rshmemi_remote(src, pe));                                                         \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_put(T* dst, const T* src, rshmem_size_t n, int pe) {            \
        rshmem_putmem(dst, src, n * sizeof(T), pe);                                                                 \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_get(T* dst, const T* src, rshmem_size_t n, int pe) {            \
        rshmem_getmem(dst, src, n * sizeof(T), pe);                                                                 \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_put_nbi(T* dst, const T* src, rshmem_size_t n, int pe) {        \
        rshmem_putmem_nbi(dst, src, n * sizeof(T), pe);                                                             \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_get_nbi(T* dst, const T* src, rshmem_size_t n, int pe) {        \
        rshmem_getmem_nbi(dst, src, n * sizeof(T), pe);                                                             \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_put_warp(T* dst, const T* src, rshmem_size_t n, int pe) {       \
        rshmem_putmem_warp(dst, src, n * sizeof(T), pe);                                                            \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_get_warp(T* dst, const T* src, rshmem_size_t n, int pe) {       \
        rshmem_getmem_warp(dst, src, n * sizeof(T), pe);                                                            \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_put_block(T* dst, const T* src, rshmem_size_t n, int pe) {      \
        rshmem_putmem_block(dst, src, n * sizeof(T), pe);                                                           \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_get_block(T* dst, const T* src, rshmem_size_t n, int pe) {      \
        rshmem_getmem_block(dst, src, n * sizeof(T), pe);                                                           \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_iput(T* dst, const T* src, rshmem_i64 dst_st, rshmem_i64 src_st, \
                                                         rshmem_size_t n, int pe) {                                 \
        if (n == 0) return;                                                                                         \
        rshmemi_check("rshmem_" #NAME "_iput", dst, ((n - 1) * dst_st + 1) * sizeof(T), pe);                        \
        if (rshmemi_proxied(pe)) {                                                                                  \
            for (rshmem_size_t i = 0; i < n; i++) rshmem_##NAME##_p(dst + i * dst_st, src[i * src_st], pe);          \
            return;                                                                                                 \
        }                                                                                                           \
        T* r = (T*)rshmemi_remote(dst, pe);                                                                         \
        for (rshmem_size_t i = 0; i < n; i++) r[i * dst_st] = src[i * src_st];                                      \
    }                                                                                                               \
    __device__ __forceinline__ void rshmem_##NAME##_iget(T* dst, const T* src, rshmem_i64 dst_st, rshmem_i64 src_st, \
                                                         rshmem_size_t n, int pe) {                                 \
        if (n == 0) return;                                                                                         \
        rshmemi_check("rshmem_" #NAME "_iget", src, ((n - 1) * src_st + 1) * sizeof(T), pe);                        \
        if (rshmemi_proxied(pe)) {                                                                                  \
            for (rshmem_size_t i = 0; i < n; i++) dst[i * dst_st] = rshmem_##NAME##_g(src + i * src_st, pe);         \
            return;                                                                                                 \
        }                                                                                                           \
        const T* r = (const T*)rshmemi_remote(src, pe);                                                             \
        for (rshmem_size_t i = 0; i < n; i++) dst[i * dst_st] = r[i * src_st];                                      \
    }

RSHMEM_RMA_TYPES(RSHMEMI_TYPED_RMA)
RSHMEM_RMA_TYPES_ALT(RSHMEMI_TYPED_RMA)
// half and bfloat16 (NVSHMEM's type names), which the host's OpenSHMEM tables do not have.
RSHMEMI_TYPED_RMA(half, rshmem_half)
RSHMEMI_TYPED_RMA(bfloat16, rshmem_bf16)

// Sized forms.
#define RSHMEMI_SIZED(BITS, T)                                                                                     \
    __device__ __forceinline__ void rshmem_put##BITS(void* d, const void* s, rshmem_size_t n, int pe) { rshmem_putmem(d, s, n * sizeof(T), pe); } \
    __device__ __forceinline__ void rshmem_get##BITS(void* d, const void* s, rshmem_size_t n, int pe) { rshmem_getmem(d, s, n * sizeof(T), pe); } \
    __device__ __forceinline__ void rshmem_put##BITS##_nbi(void* d, const void* s, rshmem_size_t n, int pe) { rshmem_putmem_nbi(d, s, n * sizeof(T), pe); } \
    __device__ __forceinline__ void rshmem_get##BITS##_nbi(void* d, const void* s, rshmem_size_t n, int pe) { rshmem_getmem_nbi(d, s, n * sizeof(T), pe); }
RSHMEMI_SIZED(8, unsigned char)
RSHMEMI_SIZED(16, unsigned short)
RSHMEMI_SIZED(32, unsigned int)
RSHMEMI_SIZED(64, unsigned long long)
RSHMEMI_SIZED(128, int4)

// ---------------------------------------------------------------- atomics

// Atomics go to the peer's memory through the mapping with system-scope hardware atomics,
// or to the proxy (which has the target's host run a one-thread atomic kernel there).
// A hardware atomic on a mapped peer's word: GPU scope when every mapped PE is on this GPU
// (`one_device`: thread PEs, or processes sharing the GPU), else system scope.
#define RSHMEMI_AMO_DIRECT(fn, ...) (rshmem_state.one_device ? fn(__VA_ARGS__) : fn##_system(__VA_ARGS__))
// The argument check (RSHMEM_DEVICE_DEBUG) and the proxy test sit behind one test of the
// constant bank (`rshmemi_slow_path`), so the common path pays that and the scope test only.
#define RSHMEMI_AMO_VIA(call, a, pe, U, op, operand, compare, fetch, direct)                                     \
    ((rshmemi_slow_path() && (rshmemi_check(call, a, sizeof(U), pe), rshmemi_proxied(pe)))                        \
         ? (U)rshmemi_proxy_amo(call, a, sizeof(U), pe, op, (rshmem_u64)(U)(operand), (rshmem_u64)(U)(compare), fetch) \
         : (direct))
#define RSHMEMI_AMO_STD(NAME, T, U)                                                                                   \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_fetch(const T* a, int pe) {                                   \
        return (T)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_fetch", a, pe, U, RSHMEMI_AMO_FETCH, 0, 0, true, RSHMEMI_AMO_DIRECT(atomicAdd, (U*)rshmemi_remote(a, pe), (U)0));\
    }                                                                                                                 \
    __device__ __forceinline__ void rshmem_##NAME##_atomic_set(T* a, T v, int pe) {                                   \
        (void)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_set", a, pe, U, RSHMEMI_AMO_SET, v, 0, false, RSHMEMI_AMO_DIRECT(atomicExch, (U*)rshmemi_remote(a, pe), (U)v));\
    }                                                                                                                 \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_swap(T* a, T v, int pe) {                                     \
        return (T)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_swap", a, pe, U, RSHMEMI_AMO_SWAP, v, 0, true, RSHMEMI_AMO_DIRECT(atomicExch, (U*)rshmemi_remote(a, pe), (U)v));\
    }                                                                                                                 \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_compare_swap(T* a, T cond, T v, int pe) {                     \
        return (T)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_compare_swap", a, pe, U, RSHMEMI_AMO_CSWAP, v, cond, true, RSHMEMI_AMO_DIRECT(atomicCAS, (U*)rshmemi_remote(a, pe), (U)cond, (U)v));\
    }                                                                                                                 \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_fetch_add(T* a, T v, int pe) {                                \
        return (T)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_fetch_add", a, pe, U, RSHMEMI_AMO_ADD, v, 0, true, RSHMEMI_AMO_DIRECT(atomicAdd, (U*)rshmemi_remote(a, pe), (U)v));\
    }                                                                                                                 \
    __device__ __forceinline__ void rshmem_##NAME##_atomic_add(T* a, T v, int pe) {                                          \
        if (rshmemi_proxied(pe)) { /* no result wanted: the proxy need not answer */                             \
            rshmemi_check("rshmem_" #NAME "_atomic_add", a, sizeof(T), pe);                                         \
            rshmemi_proxy_amo("rshmem_" #NAME "_atomic_add", a, sizeof(U), pe, RSHMEMI_AMO_ADD, (rshmem_u64)(U)(v), 0, false); \
            return;                                                                                               \
        }                                                                                                         \
        (void)rshmem_##NAME##_atomic_fetch_add(a, v, pe);                                                                                                        \
    } \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_fetch_inc(T* a, int pe) { return rshmem_##NAME##_atomic_fetch_add(a, (T)1, pe); } \
    __device__ __forceinline__ void rshmem_##NAME##_atomic_inc(T* a, int pe) {                                          \
        if (rshmemi_proxied(pe)) { /* no result wanted: the proxy need not answer */                             \
            rshmemi_check("rshmem_" #NAME "_atomic_inc", a, sizeof(T), pe);                                         \
            rshmemi_proxy_amo("rshmem_" #NAME "_atomic_inc", a, sizeof(U), pe, RSHMEMI_AMO_ADD, (rshmem_u64)(U)((T)1), 0, false); \
            return;                                                                                               \
        }                                                                                                         \
        (void)rshmem_##NAME##_atomic_fetch_add(a, (T)1, pe);                                                                                                        \
    }

#define RSHMEMI_AMO_BIT(NAME, T, U)                                                                                   \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_fetch_and(T* a, T v, int pe) {                                \
        return (T)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_fetch_and", a, pe, U, RSHMEMI_AMO_AND, v, 0, true, RSHMEMI_AMO_DIRECT(atomicAnd, (U*)rshmemi_remote(a, pe), (U)v));\
    }                                                                                                                 \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_fetch_or(T* a, T v, int pe) {                                 \
        return (T)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_fetch_or", a, pe, U, RSHMEMI_AMO_OR, v, 0, true, RSHMEMI_AMO_DIRECT(atomicOr, (U*)rshmemi_remote(a, pe), (U)v));\
    }                                                                                                                 \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_fetch_xor(T* a, T v, int pe) {                                \
        return (T)RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_fetch_xor", a, pe, U, RSHMEMI_AMO_XOR, v, 0, true, RSHMEMI_AMO_DIRECT(atomicXor, (U*)rshmemi_remote(a, pe), (U)v));\
    }                                                                                                                 \
    __device__ __forceinline__ void rshmem_##NAME##_atomic_and(T* a, T v, int pe) {                                          \
        if (rshmemi_proxied(pe)) { /* no result wanted: the proxy need not answer */                             \
            rshmemi_check("rshmem_" #NAME "_atomic_and", a, sizeof(T), pe);                                         \
            rshmemi_proxy_amo("rshmem_" #NAME "_atomic_and", a, sizeof(U), pe, RSHMEMI_AMO_AND, (rshmem_u64)(U)(v), 0, false); \
            return;                                                                                               \
        }                                                                                                         \
        (void)rshmem_##NAME##_atomic_fetch_and(a, v, pe);                                                                                                        \
    } \
    __device__ __forceinline__ void rshmem_##NAME##_atomic_or(T* a, T v, int pe) {                                          \
        if (rshmemi_proxied(pe)) { /* no result wanted: the proxy need not answer */                             \
            rshmemi_check("rshmem_" #NAME "_atomic_or", a, sizeof(T), pe);                                         \
            rshmemi_proxy_amo("rshmem_" #NAME "_atomic_or", a, sizeof(U), pe, RSHMEMI_AMO_OR, (rshmem_u64)(U)(v), 0, false); \
            return;                                                                                               \
        }                                                                                                         \
        (void)rshmem_##NAME##_atomic_fetch_or(a, v, pe);                                                                                                        \
    }   \
    __device__ __forceinline__ void rshmem_##NAME##_atomic_xor(T* a, T v, int pe) {                                          \
        if (rshmemi_proxied(pe)) { /* no result wanted: the proxy need not answer */                             \
            rshmemi_check("rshmem_" #NAME "_atomic_xor", a, sizeof(T), pe);                                         \
            rshmemi_proxy_amo("rshmem_" #NAME "_atomic_xor", a, sizeof(U), pe, RSHMEMI_AMO_XOR, (rshmem_u64)(U)(v), 0, false); \
            return;                                                                                               \
        }                                                                                                         \
        (void)rshmem_##NAME##_atomic_fetch_xor(a, v, pe);                                                                                                        \
    }

// (C name, C type, hardware type) — the standard AMO table.
RSHMEM_AMO_STANDARD_TYPES(RSHMEMI_AMO_STD)
RSHMEM_AMO_STANDARD_TYPES_ALT(RSHMEMI_AMO_STD)
// The bitwise AMO table.
RSHMEM_AMO_BITWISE_TYPES(RSHMEMI_AMO_BIT)
RSHMEM_AMO_BITWISE_TYPES_ALT(RSHMEMI_AMO_BIT)

// Extended AMO types: fetch, set, swap on float and double (bitwise exchange).
#define RSHMEMI_AMO_FLOAT(NAME, T, U)                                                                  \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_fetch(const T* a, int pe) {                    \
        U bits = RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_fetch", a, pe, U, RSHMEMI_AMO_FETCH, 0, 0, true,  \
                                 RSHMEMI_AMO_DIRECT(atomicAdd, (U*)rshmemi_remote(a, pe), (U)0));                  \
        return *(T*)&bits;                                                                             \
    }                                                                                                  \
    __device__ __forceinline__ T rshmem_##NAME##_atomic_swap(T* a, T v, int pe) {                      \
        U bits = RSHMEMI_AMO_VIA("rshmem_" #NAME "_atomic_swap", a, pe, U, RSHMEMI_AMO_SWAP, *(U*)&v, 0, true, \
                                 RSHMEMI_AMO_DIRECT(atomicExch, (U*)rshmemi_remote(a, pe), *(U*)&v));              \
        return *(T*)&bits;                                                                             \
    }                                                                                                  \
    __device__ __forceinline__ void rshmem_##NAME##_atomic_set(T* a, T v, int pe) { (void)rshmem_##NAME##_atomic_swap(a, v, pe); }
RSHMEM_AMO_EXTENDED_TYPES(RSHMEMI_AMO_FLOAT)

// ---------------------------------------------------------------- waiting

__device__ __forceinline__ bool rshmemi_cmp_ll(rshmem_i64 a, int cmp, rshmem_i64 b) {
    switch (cmp) {
        case RSHMEM_CMP_EQ: return a == b;
        case RSHMEM_CMP_NE: return a != b;
        case RSHMEM_CMP_GT: return a > b;
        case RSHMEM_CMP_GE: return a >= b;
        case RSHMEM_CMP_LT: return a < b;
        case RSHMEM_CMP_LE: return a <= b;
    }
    return false;
}
__device__ __forceinline__ bool rshmemi_cmp_ull(rshmem_u64 a, int cmp, rshmem_u64 b) {
    switch (cmp) {
        case RSHMEM_CMP_EQ: return a == b;
        case RSHMEM_CMP_NE: return a != b;
        case RSHMEM_CMP_GT: return a > b;
        case RSHMEM_CMP_GE: return a >= b;
        case RSHMEM_CMP_LT: return a < b;
        case RSHMEM_CMP_LE: return a <= b;
    }
    return false;
}

#define RSHMEMI_SIGNED(T) ((T)-1 < (T)0)
#define RSHMEMI_CMP(T, a, cmp, b) (RSHMEMI_SIGNED(T) ? rshmemi_cmp_ll((rshmem_i64)(a), cmp, (rshmem_i64)(b)) : rshmemi_cmp_ull((rshmem_u64)(a), cmp, (rshmem_u64)(b)))

#define RSHMEMI_WAIT(NAME, T)                                                                                        \
    __device__ __forceinline__ int rshmem_##NAME##_test(T* ivar, int cmp, T v) {                                     \
        rshmemi_check("rshmem_" #NAME "_test", ivar, sizeof(T), rshmem_state.my_pe);                                 \
        return RSHMEMI_CMP(T, *(volatile T*)ivar, cmp, v);                                                           \
    }                                                                                                                \
    __device__ __forceinline__ void rshmem_##NAME##_wait_until(T* ivar, int cmp, T v) {                              \
        rshmemi_check("rshmem_" #NAME "_wait_until", ivar, sizeof(T), rshmem_state.my_pe);                           \
        rshmemi_waiter w;                                                                                            \
        while (!RSHMEMI_CMP(T, *(volatile T*)ivar, cmp, v)) w.tick("rshmem_" #NAME "_wait_until", ivar);            \
        __threadfence_system();                                                                                      \
    }                                                                                                                \
    __device__ __forceinline__ int rshmem_##NAME##_test_all(T* ivars, rshmem_size_t n, const int* status, int cmp, T v) { \
        for (rshmem_size_t i = 0; i < n; i++)                                                                        \
            if (!(status && status[i]) && !RSHMEMI_CMP(T, ((volatile T*)ivars)[i], cmp, v)) return 0;               \
        return 1;                                                                                                    \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_test_any(T* ivars, rshmem_size_t n, const int* status, int cmp, T v) { \
        for (rshmem_size_t i = 0; i < n; i++)                                                                        \
            if (!(status && status[i]) && RSHMEMI_CMP(T, ((volatile T*)ivars)[i], cmp, v)) return i;                \
        return ~0ull;                                                                                                \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_test_some(T* ivars, rshmem_size_t n, rshmem_size_t* idx, const int* status, int cmp, T v) { \
        rshmem_size_t k = 0;                                                                                         \
        for (rshmem_size_t i = 0; i < n; i++)                                                                        \
            if (!(status && status[i]) && RSHMEMI_CMP(T, ((volatile T*)ivars)[i], cmp, v)) idx[k++] = i;            \
        return k;                                                                                                    \
    }                                                                                                                \
    __device__ __forceinline__ void rshmem_##NAME##_wait_until_all(T* ivars, rshmem_size_t n, const int* status, int cmp, T v) { \
        rshmemi_waiter w;                                                                                            \
        while (!rshmem_##NAME##_test_all(ivars, n, status, cmp, v)) w.tick("rshmem_" #NAME "_wait_until_all", ivars); \
        __threadfence_system();                                                                                      \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_wait_until_any(T* ivars, rshmem_size_t n, const int* status, int cmp, T v) { \
        bool any = false;                                                                                            \
        for (rshmem_size_t i = 0; i < n; i++) any |= !(status && status[i]);                                         \
        if (!any) return ~0ull;                                                                                      \
        rshmemi_waiter w;                                                                                            \
        rshmem_size_t r;                                                                                             \
        while ((r = rshmem_##NAME##_test_any(ivars, n, status, cmp, v)) == ~0ull) w.tick("rshmem_" #NAME "_wait_until_any", ivars); \
        __threadfence_system();                                                                                      \
        return r;                                                                                                    \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_wait_until_some(T* ivars, rshmem_size_t n, rshmem_size_t* idx, const int* status, int cmp, T v) { \
        bool any = false;                                                                                            \
        for (rshmem_size_t i = 0; i < n; i++) any |= !(status && status[i]);                                         \
        if (!any) return 0;                                                                                          \
        rshmemi_waiter w;                                                                                            \
        rshmem_size_t k;                                                                                             \
        while ((k = rshmem_##NAME##_test_some(ivars, n, idx, status, cmp, v)) == 0) w.tick("rshmem_" #NAME "_wait_until_some", ivars); \
        __threadfence_system();                                                                                      \
        return k;                                                                                                    \
    }                                                                                                                \
    __device__ __forceinline__ int rshmem_##NAME##_test_all_vector(T* ivars, rshmem_size_t n, const int* status, int cmp, const T* vs) { \
        for (rshmem_size_t i = 0; i < n; i++)                                                                        \
            if (!(status && status[i]) && !RSHMEMI_CMP(T, ((volatile T*)ivars)[i], cmp, vs[i])) return 0;           \
        return 1;                                                                                                    \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_test_any_vector(T* ivars, rshmem_size_t n, const int* status, int cmp, const T* vs) { \
        for (rshmem_size_t i = 0; i < n; i++)                                                                        \
            if (!(status && status[i]) && RSHMEMI_CMP(T, ((volatile T*)ivars)[i], cmp, vs[i])) return i;            \
        return ~0ull;                                                                                                \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_test_some_vector(T* ivars, rshmem_size_t n, rshmem_size_t* idx, const int* status, int cmp, const T* vs) { \
        rshmem_size_t k = 0;                                                                                         \
        for (rshmem_size_t i = 0; i < n; i++)                                                                        \
            if (!(status && status[i]) && RSHMEMI_CMP(T, ((volatile T*)ivars)[i], cmp, vs[i])) idx[k++] = i;        \
        return k;                                                                                                    \
    }                                                                                                                \
    __device__ __forceinline__ void rshmem_##NAME##_wait_until_all_vector(T* ivars, rshmem_size_t n, const int* status, int cmp, const T* vs) { \
        rshmemi_waiter w;                                                                                            \
        while (!rshmem_##NAME##_test_all_vector(ivars, n, status, cmp, vs)) w.tick("rshmem_" #NAME "_wait_until_all_vector", ivars); \
        __threadfence_system();                                                                                      \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_wait_until_any_vector(T* ivars, rshmem_size_t n, const int* status, int cmp, const T* vs) { \
        bool any = false;                                                                                            \
        for (rshmem_size_t i = 0; i < n; i++) any |= !(status && status[i]);                                         \
        if (!any) return ~0ull;                                                                                      \
        rshmemi_waiter w;                                                                                            \
        rshmem_size_t r;                                                                                             \
        while ((r = rshmem_##NAME##_test_any_vector(ivars, n, status, cmp, vs)) == ~0ull) w.tick("rshmem_" #NAME "_wait_until_any_vector", ivars); \
        __threadfence_system();                                                                                      \
        return r;                                                                                                    \
    }                                                                                                                \
    __device__ __forceinline__ rshmem_size_t rshmem_##NAME##_wait_until_some_vector(T* ivars, rshmem_size_t n, rshmem_size_t* idx, const int* status, int cmp, const T* vs) { \
        bool any = false;                                                                                            \
        for (rshmem_size_t i = 0; i < n; i++) any |= !(status && status[i]);                                         \
        if (!any) return 0;                                                                                          \
        rshmemi_waiter w;                                                                                            \
        rshmem_size_t k;                                                                                             \
        while ((k = rshmem_##NAME##_test_some_vector(ivars, n, idx, status, cmp, vs)) == 0) w.tick("rshmem_" #NAME "_wait_until_some_vector", ivars); \
        __threadfence_system();                                                                                      \
        return k;                                                                                                    \
    }

RSHMEM_SYNC_TYPES(RSHMEMI_WAIT)
RSHMEM_SYNC_TYPES_ALT(RSHMEMI_WAIT)

// ---------------------------------------------------------------- signals

__device__ __forceinline__ rshmem_u64 rshmem_signal_fetch(const rshmem_u64* sig) {
    return *(const volatile rshmem_u64*)sig;
}

__device__ __forceinline__ void rshmem_signal_op(rshmem_u64* sig, rshmem_u64 v, int op, int pe) {
    rshmemi_check("rshmem_signal_op", sig, 8, pe);
    if (rshmemi_proxied(pe)) {
        rshmemi_proxy_amo("rshmem_signal_op", sig, 8, pe, op == RSHMEM_SIGNAL_ADD ? RSHMEMI_AMO_ADD : RSHMEMI_AMO_SET, v, 0, false);
        return;
    }
    rshmem_u64* r = (rshmem_u64*)rshmemi_remote(sig, pe);
    if (rshmem_state.one_device) {
        if (op == RSHMEM_SIGNAL_ADD) atomicAdd(r, v);
        else atomicExch(r, v);
    } else if (op == RSHMEM_SIGNAL_ADD) {
        atomicAdd_system(r, v);
    } else {
        atomicExch_system(r, v);
    }
}

__device__ __forceinline__ rshmem_u64 rshmem_signal_wait_until(rshmem_u64* sig, int cmp, rshmem_u64 v) {
    rshmemi_check("rshmem_signal_wait_until", sig, 8, rshmem_state.my_pe);
    rshmemi_waiter w;
    rshmem_u64 cur;
    while (!rshmemi_cmp_ull(cur = *(volatile rshmem_u64*)sig, cmp, v)) w.tick("rshmem_signal_wait_until", sig);
    __threadfence_system();
    return cur;
}

#define RSHMEMI_PUT_SIGNAL(scope, is_leader, sync)                                                                   \
    __device__ __forceinline__ void rshmem_putmem_signal##scope(void* dst, const void* src, rshmem_size_t n,          \
                                                                rshmem_u64* sig, rshmem_u64 v, int op, int pe) {      \
        rshmem_putmem_nbi##scope(dst, src, n, pe);                                                                    \
        rshmemi_fence_peers();                                                                                        \
        sync;                                                                                                         \
        if (is_leader) rshmem_signal_op(sig, v, op, pe);                                                              \
    }                                                                                                                 \
    __device__ __forceinline__ void rshmem_putmem_signal_nbi##scope(void* dst, const void* src, rshmem_size_t n,      \
                                                                    rshmem_u64* sig, rshmem_u64 v, int op, int pe) {  \
        rshmem_putmem_signal##scope(dst, src, n, sig, v, op, pe);                                                     \
    }
RSHMEMI_PUT_SIGNAL(, true, (void)0)
RSHMEMI_PUT_SIGNAL(_warp, rshmemi_lane() == 0, __syncwarp())
RSHMEMI_PUT_SIGNAL(_block, rshmemi_block_rank() == 0, __syncthreads())

// ---------------------------------------------------------------- barrier and sync

// Dissemination barrier over a team's device counters (thread scope: one thread per PE).
__device__ __forceinline__ void rshmemi_team_sync(rshmem_team_t team, const char* call) {
    const rshmem_device_team* t = rshmemi_team(team);
    int me = rshmem_team_my_pe(team);
    if (me < 0) rshmemi_fail(call, "this PE is not a member of the team", team, 0, 0);
    if (t->size <= 1) return;
    rshmem_u64* epochs = (rshmem_u64*)rshmem_state.epochs;
    rshmem_u64 epoch = ++epochs[team];
    rshmem_u64* counters = (rshmem_u64*)rshmem_state.counters + (rshmem_u64)team * RSHMEM_MAX_ROUNDS;
    int round = 0;
    for (int dist = 1; dist < t->size; dist *= 2, round++) {
        int partner = t->start + ((me + dist) % t->size) * t->stride;
        // Each round has one sender per receiver, so the counter of a finished round holds
        // the epoch either way. A partner behind the proxy gets the epoch as a put: the
        // target then writes it with a copy, where an atomic would need a kernel on its
        // GPU, which a grid filling every SM (waiting in this barrier) would keep out.
        if (rshmemi_proxied(partner)) {
            rshmem_u64 v = epoch;
            rshmemi_proxy_put(call, &counters[round], &v, sizeof v, partner, false);
        } else {
            rshmemi_add_u64(&counters[round], 1ull, partner, call);
        }
        rshmemi_waiter w;
        while (*(volatile rshmem_u64*)&counters[round] < epoch) w.tick(call, &counters[round]);
    }
    rshmemi_fence_peers();
}

__device__ __forceinline__ void rshmem_sync(rshmem_team_t team) { rshmemi_team_sync(team, "rshmem_sync"); }
__device__ __forceinline__ void rshmem_sync_all() { rshmemi_team_sync(RSHMEM_TEAM_WORLD, "rshmem_sync_all"); }
__device__ __forceinline__ void rshmem_barrier(rshmem_team_t team) { rshmem_quiet(); rshmemi_team_sync(team, "rshmem_barrier"); }
__device__ __forceinline__ void rshmem_barrier_all() { rshmem_quiet(); rshmemi_team_sync(RSHMEM_TEAM_WORLD, "rshmem_barrier_all"); }

#define RSHMEMI_SCOPED_BARRIER(scope, leader, sync)                                                      \
    __device__ __forceinline__ void rshmemx_barrier_all##scope() { sync; if (leader) rshmem_barrier_all(); sync; } \
    __device__ __forceinline__ void rshmemx_sync_all##scope() { sync; if (leader) rshmem_sync_all(); sync; }       \
    __device__ __forceinline__ void rshmemx_barrier##scope(rshmem_team_t t) { sync; if (leader) rshmem_barrier(t); sync; } \
    __device__ __forceinline__ void rshmemx_sync##scope(rshmem_team_t t) { sync; if (leader) rshmem_sync(t); sync; }
RSHMEMI_SCOPED_BARRIER(_warp, rshmemi_lane() == 0, __syncwarp())
RSHMEMI_SCOPED_BARRIER(_block, rshmemi_block_rank() == 0, __syncthreads())

// First statement of every kernel the runtime launches on a stream. The host may launch
// them with programmatic dependent launch (sm_90+, RSHMEM_GPU_OVERLAP_LAUNCH): the kernel
// is then scheduled while the stream's previous kernel still runs, and waits here until
// that kernel is complete and its writes are visible, so stream order holds as with a
// plain launch; then it lets the stream's next such kernel be scheduled in turn, which
// hides the launch latency of back-to-back on-stream calls. On a plain launch both
// instructions return at once.
__device__ __forceinline__ void rshmemi_stream_entry() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Typed put-with-signal at every scope (rshmem_int_put_signal_nbi_warp, ...).
#include "rshmem_device_typed.cuh"
// Engine-explicit operations (remote, copy engine), batches, 2-D copies, prefetch.
#include "rshmem_device_engines.cuh"

#endif  // RSHMEM_DEVICE_CUH

// rshmem device collectives: barrier-delimited one-shot algorithms over mapped peers
// (the simple protocol: data by direct loads/stores, then the team barrier's flags).
// Scopes: _block (every thread of one block), _grid (every thread of a cooperative
// launch: the whole grid works on one collective), and the host's on-stream forms,
// which launch the grid forms. Reductions combine contributions in team-rank order, so
// every PE gets bit-identical results whatever the scope.
#ifndef RSHMEM_DEVICE_COLL_CUH
#define RSHMEM_DEVICE_COLL_CUH
#include "rshmem_device.cuh"

// ---------------------------------------------------------------- 16-bit floats (no headers)
struct rshmem_half { unsigned short bits; };
struct rshmem_bf16 { unsigned short bits; };
__device__ __forceinline__ float rshmemi_to_f32(rshmem_half h) { float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits)); return f; }
__device__ __forceinline__ rshmem_half rshmemi_from_f32_h(float f) { rshmem_half h; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f)); return h; }
__device__ __forceinline__ float rshmemi_to_f32(rshmem_bf16 b) { return __uint_as_float(((unsigned)b.bits) << 16); }
__device__ __forceinline__ rshmem_bf16 rshmemi_from_f32_b(float f) {
    unsigned u = __float_as_uint(f);
    rshmem_bf16 b;
    if ((u & 0x7fffffffu) > 0x7f800000u) b.bits = (unsigned short)((u >> 16) | 0x40);  // NaN stays NaN
    else b.bits = (unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);            // round to nearest even
    return b;
}

// Loads that bypass L1 (peers' data may change between collectives of one kernel).
template <typename T> __device__ __forceinline__ T rshmemi_ld(const T* p) { return __ldcg(p); }
template <> __device__ __forceinline__ rshmem_half rshmemi_ld(const rshmem_half* p) { rshmem_half h; h.bits = __ldcg((const unsigned short*)p); return h; }
template <> __device__ __forceinline__ rshmem_bf16 rshmemi_ld(const rshmem_bf16* p) { rshmem_bf16 h; h.bits = __ldcg((const unsigned short*)p); return h; }

// Reduction operators (value combine), with 16-bit floats computed in f32.
#define RSHMEMI_OPS(X) X(sum) X(prod) X(min) X(max) X(and) X(or) X(xor)
template <typename T> struct rshmemi_arith { typedef T acc; __device__ static acc up(T v) { return v; } __device__ static T down(acc a) { return a; } };
template <> struct rshmemi_arith<rshmem_half> { typedef float acc; __device__ static float up(rshmem_half v) { return rshmemi_to_f32(v); } __device__ static rshmem_half down(float a) { return rshmemi_from_f32_h(a); } };
template <> struct rshmemi_arith<rshmem_bf16> { typedef float acc; __device__ static float up(rshmem_bf16 v) { return rshmemi_to_f32(v); } __device__ static rshmem_bf16 down(float a) { return rshmemi_from_f32_b(a); } };

struct rshmemi_op_sum { template <typename A> __device__ static A f(A a, A b) { return a + b; } };
struct rshmemi_op_prod { template <typename A> __device__ static A f(A a, A b) { return a * b; } };
struct rshmemi_op_min { template <typename A> __device__ static A f(A a, A b) { return b < a ? b : a; } };
struct rshmemi_op_max { template <typename A> __device__ static A f(A a, A b) { return b > a ? b : a; } };
struct rshmemi_op_and { template <typename A> __device__ static A f(A a, A b) { return a & b; } };
struct rshmemi_op_or { template <typename A> __device__ static A f(A a, A b) { return a | b; } };
struct rshmemi_op_xor { template <typename A> __device__ static A f(A a, A b) { return a ^ b; } };

// ---------------------------------------------------------------- grid barrier (one PE)
// Sense-reversing barrier over the blocks of a cooperative launch, in this PE's runtime
// scratch (one grid collective at a time per PE).
__device__ __forceinline__ void rshmemi_grid_sync() {
    __syncthreads();
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        unsigned* count = (unsigned*)(rshmem_state.sys_base + rshmem_state.sys_size - 256 + 64);
        volatile unsigned* gen = count + 1;
        unsigned g = *gen;
        __threadfence();
        if (atomicAdd(count, 1u) == gridDim.x * gridDim.y * gridDim.z - 1) {
            *count = 0;
            __threadfence();
            atomicAdd((unsigned*)gen, 1u);
        } else {
            rshmemi_waiter w;
            while (*gen == g) w.tick("rshmemx grid sync", (const void*)gen);
        }
        __threadfence();
    }
    __syncthreads();
}

__device__ __forceinline__ bool rshmemi_block_leader() { return rshmemi_block_rank() == 0; }
__device__ __forceinline__ bool rshmemi_grid_leader() { return rshmemi_block_leader() && blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0; }
__device__ __forceinline__ rshmem_u64 rshmemi_grid_rank() { return (rshmem_u64)blockIdx.x * rshmemi_block_size() + rshmemi_block_rank(); }
__device__ __forceinline__ rshmem_u64 rshmemi_grid_size() { return (rshmem_u64)gridDim.x * rshmemi_block_size(); }

// Team barrier at each scope.
__device__ __forceinline__ void rshmemi_coll_sync_block(rshmem_team_t t) { __syncthreads(); if (rshmemi_block_leader()) rshmem_barrier(t); __syncthreads(); }
__device__ __forceinline__ void rshmemi_coll_sync_grid(rshmem_team_t t) { rshmemi_grid_sync(); if (rshmemi_grid_leader()) rshmem_barrier(t); rshmemi_grid_sync(); }

__device__ __forceinline__ int rshmemi_team_pe(rshmem_team_t t, int i) { const rshmem_device_team* d = rshmemi_team(t); return d->start + i * d->stride; }

// ---------------------------------------------------------------- the algorithms, parameterized by scope
// lane/lanes: this thread's index and the number of threads working on the collective.
template <typename T, typename OP>
__device__ __forceinline__ void rshmemi_reduce_range(rshmem_team_t t, T* dest, const T* src, rshmem_size_t first, rshmem_size_t count, rshmem_size_t lane, rshmem_size_t lanes) {
    typedef rshmemi_arith<T> AR;
    int n = rshmem_team_n_pes(t);
    for (rshmem_size_t i = lane; i < count; i += lanes) {
        typename AR::acc a = AR::up(rshmemi_ld((const T*)rshmemi_remote(src + first + i, rshmemi_team_pe(t, 0))));
        for (int p = 1; p < n; p++) a = OP::f(a, AR::up(rshmemi_ld((const T*)rshmemi_remote(src + first + i, rshmemi_team_pe(t, p)))));
        dest[i] = AR::down(a);
    }
}

#define RSHMEMI_COLL_SCOPE(SCOPE, LANE, LANES)                                                                          \
    template <typename T, typename OP>                                                                                   \
    __device__ __forceinline__ void rshmemx_reduce##SCOPE(rshmem_team_t t, T* dest, const T* src, rshmem_size_t n) {     \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
        rshmemi_reduce_range<T, OP>(t, dest, src, 0, n, LANE, LANES);                                                    \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
    }                                                                                                                    \
    template <typename T, typename OP>                                                                                   \
    __device__ __forceinline__ void rshmemx_reduce_scatter##SCOPE(rshmem_team_t t, T* dest, const T* src, rshmem_size_t n) { \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
        rshmemi_reduce_range<T, OP>(t, dest, src, (rshmem_size_t)rshmem_team_my_pe(t) * n, n, LANE, LANES);             \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmem_broadcastmem##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n, int root) { \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
        rshmemi_copy(dest, rshmemi_remote(src, rshmemi_team_pe(t, root)), n, LANE, LANES);                              \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmem_fcollectmem##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n) { \
        int me = rshmem_team_my_pe(t), np = rshmem_team_n_pes(t);                                                        \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
        for (int k = 0; k < np; k++) {                                                                                   \
            int p = (me + k) % np;                                                                                       \
            rshmemi_copy(rshmemi_remote((char*)dest + (rshmem_size_t)me * n, rshmemi_team_pe(t, p)), src, n, LANE, LANES); \
        }                                                                                                                \
        __threadfence_system();                                                                                          \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
    }                                                                                                                    \
    __device__ __forceinline__ void rshmem_alltoallmem##SCOPE(rshmem_team_t t, void* dest, const void* src, rshmem_size_t n) { \
        int me = rshmem_team_my_pe(t), np = rshmem_team_n_pes(t);                                                        \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
        for (int k = 0; k < np; k++) {                                                                                   \
            int p = (me + k) % np;                                                                                       \
            rshmemi_copy(rshmemi_remote((char*)dest + (rshmem_size_t)me * n, rshmemi_team_pe(t, p)),                     \
                         (const char*)src + (rshmem_size_t)p * n, n, LANE, LANES);                                       \
        }                                                                                                                \
        __threadfence_system();                                                                                          \
        rshmemi_coll_sync##SCOPE(t);                                                                                     \
    }

RSHMEMI_COLL_SCOPE(_block, rshmemi_block_rank(), rshmemi_block_size())
RSHMEMI_COLL_SCOPE(_grid, rshmemi_grid_rank(), rshmemi_grid_size())

// Typed names in the NVSHMEM style: rshmem_float_sum_reduce_block(team, dest, src, n), etc.
#define RSHMEMI_TYPED_REDUCE(TNAME, T, OPNAME)                                                                                  \
    __device__ __forceinline__ void rshmem_##TNAME##_##OPNAME##_reduce_block(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) { rshmemx_reduce_block<T, rshmemi_op_##OPNAME>(t, d, s, n); } \
    __device__ __forceinline__ void rshmemx_##TNAME##_##OPNAME##_reduce_grid(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) { rshmemx_reduce_grid<T, rshmemi_op_##OPNAME>(t, d, s, n); }   \
    __device__ __forceinline__ void rshmem_##TNAME##_##OPNAME##_reduce_scatter_block(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) { rshmemx_reduce_scatter_block<T, rshmemi_op_##OPNAME>(t, d, s, n); } \
    __device__ __forceinline__ void rshmemx_##TNAME##_##OPNAME##_reduce_scatter_grid(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) { rshmemx_reduce_scatter_grid<T, rshmemi_op_##OPNAME>(t, d, s, n); }
#define RSHMEMI_ARITH_OPS(TNAME, T) RSHMEMI_TYPED_REDUCE(TNAME, T, sum) RSHMEMI_TYPED_REDUCE(TNAME, T, prod) RSHMEMI_TYPED_REDUCE(TNAME, T, min) RSHMEMI_TYPED_REDUCE(TNAME, T, max)
#define RSHMEMI_BIT_OPS(TNAME, T) RSHMEMI_TYPED_REDUCE(TNAME, T, and) RSHMEMI_TYPED_REDUCE(TNAME, T, or) RSHMEMI_TYPED_REDUCE(TNAME, T, xor)
RSHMEMI_ARITH_OPS(float, float) RSHMEMI_ARITH_OPS(double, double) RSHMEMI_ARITH_OPS(half, rshmem_half) RSHMEMI_ARITH_OPS(bfloat16, rshmem_bf16)
RSHMEMI_ARITH_OPS(int, int) RSHMEMI_ARITH_OPS(longlong, long long) RSHMEMI_ARITH_OPS(uint, unsigned int) RSHMEMI_ARITH_OPS(ulonglong, unsigned long long)
RSHMEMI_BIT_OPS(int, int) RSHMEMI_BIT_OPS(longlong, long long) RSHMEMI_BIT_OPS(uint, unsigned int) RSHMEMI_BIT_OPS(ulonglong, unsigned long long)

// ---------------------------------------------------------------- the host's on-stream forms
// dtype: 0 float, 1 double, 2 half, 3 bf16, 4 int, 5 long long, 6 uint, 7 ulonglong.
// op: 0 sum, 1 prod, 2 min, 3 max, 4 and, 5 or, 6 xor. kind: 0 reduce, 1 reduce_scatter.
template <typename T>
__device__ __forceinline__ void rshmemi_stream_reduce_t(int team, void* d, const void* s, rshmem_size_t n, int op, int kind, bool bits) {
    T* dd = (T*)d;
    const T* ss = (const T*)s;
#define RSHMEMI_K(O) (kind ? rshmemx_reduce_scatter_grid<T, O>(team, dd, ss, n) : rshmemx_reduce_grid<T, O>(team, dd, ss, n))
    switch (op) {
        case 0: RSHMEMI_K(rshmemi_op_sum); break;
        case 1: RSHMEMI_K(rshmemi_op_prod); break;
        case 2: RSHMEMI_K(rshmemi_op_min); break;
        case 3: RSHMEMI_K(rshmemi_op_max); break;
        default: break;
    }
#undef RSHMEMI_K
}
template <typename T>
__device__ __forceinline__ void rshmemi_stream_reduce_bits(int team, void* d, const void* s, rshmem_size_t n, int op, int kind) {
    T* dd = (T*)d;
    const T* ss = (const T*)s;
#define RSHMEMI_K(O) (kind ? rshmemx_reduce_scatter_grid<T, O>(team, dd, ss, n) : rshmemx_reduce_grid<T, O>(team, dd, ss, n))
    switch (op) {
        case 4: RSHMEMI_K(rshmemi_op_and); break;
        case 5: RSHMEMI_K(rshmemi_op_or); break;
        case 6: RSHMEMI_K(rshmemi_op_xor); break;
        default: rshmemi_stream_reduce_t<T>(team, d, s, n, op, kind, false);
    }
#undef RSHMEMI_K
}

#endif  // RSHMEM_DEVICE_COLL_CUH

/* rshmem_nvshmem_device.cuh: NVSHMEM's device API names on rshmem's device API.
 *
 * Part of rshmem's opt-in NVSHMEM source-compatibility layer (see README.md in
 * crates/rshmem-c/compat/nvshmem). Written by the rshmem project from NVSHMEM's public API
 * names and signatures; NVSHMEM is NVIDIA's, and rshmem is not affiliated with NVIDIA.
 *
 * Device-only calls are inline __device__ wrappers around the rshmem_ / rshmemx_ calls of
 * rshmem_device.cuh and rshmem_device_coll.cuh. Calls that NVSHMEM allows from host and
 * device are __host__ __device__ wrappers in rshmem_nvshmem.h, which picks this file's
 * rshmemc_nv_dev_* forms on the device. Reductions return 0 (they end the job with a
 * message on bad input rather than return an error). */
#ifndef RSHMEM_NVSHMEM_DEVICE_CUH
#define RSHMEM_NVSHMEM_DEVICE_CUH

#include "rshmem_device_coll.cuh"

#define RSHMEMC_NV_D __device__ __forceinline__

/* ---------------------------------------------------------------- typed RMA, sized RMA */
/* An NVSHMEM element value as rshmem's type of the same bits, and back: the value itself but
 * for half and __nv_bfloat16 (rshmem_half, rshmem_bf16; below). */
template <typename T> RSHMEMC_NV_D T rshmemc_nv_bits(T v) { return v; }
template <typename T> RSHMEMC_NV_D T rshmemc_nv_value(T v) { return v; }
#ifdef RSHMEMC_NV_HALF_TYPES
/* CUDA's half and __nv_bfloat16 hold the same 16 bits as rshmem_half and rshmem_bf16. */
RSHMEMC_NV_D rshmem_half rshmemc_nv_bits(half v) {
    rshmem_half b;
    b.bits = __half_as_ushort(v);
    return b;
}
RSHMEMC_NV_D rshmem_bf16 rshmemc_nv_bits(__nv_bfloat16 v) {
    rshmem_bf16 b;
    b.bits = __bfloat16_as_ushort(v);
    return b;
}
RSHMEMC_NV_D half rshmemc_nv_value(rshmem_half b) { return __ushort_as_half(b.bits); }
RSHMEMC_NV_D __nv_bfloat16 rshmemc_nv_value(rshmem_bf16 b) { return __ushort_as_bfloat16(b.bits); }
#endif

/* The device-only typed RMA of NVSHMEM type T on rshmem's type RT of the same bits (T itself
 * but for half and __nv_bfloat16). Thread-scope p/g/put/get[_nbi] are in rshmem_nvshmem.h
 * (callable from host and device). */
#define RSHMEMC_NV_RMA_SCOPE(NAME, T, RT, SC)                                                                  \
    RSHMEMC_NV_D void nvshmemx_##NAME##_put##SC(T* d, const T* s, size_t n, int pe) {                          \
        rshmem_##NAME##_put##SC((RT*)d, (const RT*)s, n, pe);                                                   \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmemx_##NAME##_get##SC(T* d, const T* s, size_t n, int pe) {                          \
        rshmem_##NAME##_get##SC((RT*)d, (const RT*)s, n, pe);                                                   \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmemx_##NAME##_put_nbi##SC(T* d, const T* s, size_t n, int pe) {                        \
        rshmem_putmem_nbi##SC(d, s, n * sizeof(T), pe);                                                         \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmemx_##NAME##_get_nbi##SC(T* d, const T* s, size_t n, int pe) {                        \
        rshmem_getmem_nbi##SC(d, s, n * sizeof(T), pe);                                                         \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmemx_##NAME##_put_signal##SC(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
        rshmem_##NAME##_put_signal##SC((RT*)d, (const RT*)s, n, sig, v, op, pe);                                \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmemx_##NAME##_put_signal_nbi##SC(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
        rshmem_##NAME##_put_signal_nbi##SC((RT*)d, (const RT*)s, n, sig, v, op, pe);                            \
    }
#define RSHMEMC_NV_RMA_AS(NAME, T, RT)                                                                         \
    RSHMEMC_NV_D void nvshmem_##NAME##_iput(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
        rshmem_##NAME##_iput((RT*)d, (const RT*)s, dst, sst, n, pe);                                            \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmem_##NAME##_iget(T* d, const T* s, ptrdiff_t dst, ptrdiff_t sst, size_t n, int pe) { \
        rshmem_##NAME##_iget((RT*)d, (const RT*)s, dst, sst, n, pe);                                            \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmem_##NAME##_put_signal(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
        rshmem_##NAME##_put_signal((RT*)d, (const RT*)s, n, sig, v, op, pe);                                    \
    }                                                                                                          \
    RSHMEMC_NV_D void nvshmem_##NAME##_put_signal_nbi(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
        rshmem_##NAME##_put_signal_nbi((RT*)d, (const RT*)s, n, sig, v, op, pe);                                \
    }                                                                                                          \
    RSHMEMC_NV_RMA_SCOPE(NAME, T, RT, _warp) RSHMEMC_NV_RMA_SCOPE(NAME, T, RT, _block)
#define RSHMEMC_NV_RMA(NAME, T) RSHMEMC_NV_RMA_AS(NAME, T, T)
RSHMEM_RMA_TYPES(RSHMEMC_NV_RMA)
#ifdef RSHMEMC_NV_HALF_TYPES
RSHMEMC_NV_RMA_AS(half, half, rshmem_half)
RSHMEMC_NV_RMA_AS(bfloat16, __nv_bfloat16, rshmem_bf16)
#endif

#define RSHMEMC_NV_SIZED(BITS)                                                                                      \
    RSHMEMC_NV_D void nvshmem_put##BITS(void* d, const void* s, size_t n, int pe) { rshmem_put##BITS(d, s, n, pe); } \
    RSHMEMC_NV_D void nvshmem_get##BITS(void* d, const void* s, size_t n, int pe) { rshmem_get##BITS(d, s, n, pe); } \
    RSHMEMC_NV_D void nvshmem_put##BITS##_nbi(void* d, const void* s, size_t n, int pe) { rshmem_put##BITS##_nbi(d, s, n, pe); } \
    RSHMEMC_NV_D void nvshmem_get##BITS##_nbi(void* d, const void* s, size_t n, int pe) { rshmem_get##BITS##_nbi(d, s, n, pe); }
RSHMEMC_NV_SIZED(8)
RSHMEMC_NV_SIZED(16)
RSHMEMC_NV_SIZED(32)
RSHMEMC_NV_SIZED(64)
RSHMEMC_NV_SIZED(128)

/* ---------------------------------------------------------------- bytes at warp and block scope, signals */
#define RSHMEMC_NV_MEM_SCOPE(SC)                                                                                         \
    RSHMEMC_NV_D void nvshmemx_putmem##SC(void* d, const void* s, size_t n, int pe) { rshmem_putmem##SC(d, s, n, pe); }   \
    RSHMEMC_NV_D void nvshmemx_getmem##SC(void* d, const void* s, size_t n, int pe) { rshmem_getmem##SC(d, s, n, pe); }   \
    RSHMEMC_NV_D void nvshmemx_putmem_nbi##SC(void* d, const void* s, size_t n, int pe) { rshmem_putmem_nbi##SC(d, s, n, pe); } \
    RSHMEMC_NV_D void nvshmemx_getmem_nbi##SC(void* d, const void* s, size_t n, int pe) { rshmem_getmem_nbi##SC(d, s, n, pe); } \
    RSHMEMC_NV_D void nvshmemx_putmem_signal##SC(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
        rshmem_putmem_signal##SC(d, s, n, sig, v, op, pe);                                                               \
    }                                                                                                                    \
    RSHMEMC_NV_D void nvshmemx_putmem_signal_nbi##SC(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) { \
        rshmem_putmem_signal_nbi##SC(d, s, n, sig, v, op, pe);                                                           \
    }
RSHMEMC_NV_MEM_SCOPE(_warp)
RSHMEMC_NV_MEM_SCOPE(_block)

RSHMEMC_NV_D void nvshmem_putmem_signal(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) {
    rshmem_putmem_signal(d, s, n, sig, v, op, pe);
}
RSHMEMC_NV_D void nvshmem_putmem_signal_nbi(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe) {
    rshmem_putmem_signal_nbi(d, s, n, sig, v, op, pe);
}
RSHMEMC_NV_D uint64_t nvshmem_signal_wait_until(uint64_t* sig, int cmp, uint64_t v) { return rshmem_signal_wait_until(sig, cmp, v); }

/* ---------------------------------------------------------------- atomics */
#define RSHMEMC_NV_AMO_STD(NAME, T, U)                                                                                  \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_fetch(const T* a, int pe) { return rshmem_##NAME##_atomic_fetch(a, pe); }   \
    RSHMEMC_NV_D void nvshmem_##NAME##_atomic_set(T* a, T v, int pe) { rshmem_##NAME##_atomic_set(a, v, pe); }         \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_swap(T* a, T v, int pe) { return rshmem_##NAME##_atomic_swap(a, v, pe); }   \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_compare_swap(T* a, T c, T v, int pe) { return rshmem_##NAME##_atomic_compare_swap(a, c, v, pe); } \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_fetch_add(T* a, T v, int pe) { return rshmem_##NAME##_atomic_fetch_add(a, v, pe); } \
    RSHMEMC_NV_D void nvshmem_##NAME##_atomic_add(T* a, T v, int pe) { rshmem_##NAME##_atomic_add(a, v, pe); }         \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_fetch_inc(T* a, int pe) { return rshmem_##NAME##_atomic_fetch_inc(a, pe); } \
    RSHMEMC_NV_D void nvshmem_##NAME##_atomic_inc(T* a, int pe) { rshmem_##NAME##_atomic_inc(a, pe); }
RSHMEM_AMO_STANDARD_TYPES(RSHMEMC_NV_AMO_STD)
#define RSHMEMC_NV_AMO_BIT(NAME, T, U)                                                                                  \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_fetch_and(T* a, T v, int pe) { return rshmem_##NAME##_atomic_fetch_and(a, v, pe); } \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_fetch_or(T* a, T v, int pe) { return rshmem_##NAME##_atomic_fetch_or(a, v, pe); } \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_fetch_xor(T* a, T v, int pe) { return rshmem_##NAME##_atomic_fetch_xor(a, v, pe); } \
    RSHMEMC_NV_D void nvshmem_##NAME##_atomic_and(T* a, T v, int pe) { rshmem_##NAME##_atomic_and(a, v, pe); }         \
    RSHMEMC_NV_D void nvshmem_##NAME##_atomic_or(T* a, T v, int pe) { rshmem_##NAME##_atomic_or(a, v, pe); }           \
    RSHMEMC_NV_D void nvshmem_##NAME##_atomic_xor(T* a, T v, int pe) { rshmem_##NAME##_atomic_xor(a, v, pe); }
RSHMEM_AMO_BITWISE_TYPES(RSHMEMC_NV_AMO_BIT)
#define RSHMEMC_NV_AMO_EXT(NAME, T, U)                                                                                \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_fetch(const T* a, int pe) { return rshmem_##NAME##_atomic_fetch(a, pe); } \
    RSHMEMC_NV_D void nvshmem_##NAME##_atomic_set(T* a, T v, int pe) { rshmem_##NAME##_atomic_set(a, v, pe); }       \
    RSHMEMC_NV_D T nvshmem_##NAME##_atomic_swap(T* a, T v, int pe) { return rshmem_##NAME##_atomic_swap(a, v, pe); }
RSHMEM_AMO_EXTENDED_TYPES(RSHMEMC_NV_AMO_EXT)

/* ---------------------------------------------------------------- point-to-point synchronization */
#define RSHMEMC_NV_WAIT(NAME, T)                                                                                         \
    RSHMEMC_NV_D void nvshmem_##NAME##_wait_until(T* v, int cmp, T x) { rshmem_##NAME##_wait_until(v, cmp, x); }         \
    RSHMEMC_NV_D int nvshmem_##NAME##_test(T* v, int cmp, T x) { return rshmem_##NAME##_test(v, cmp, x); }               \
    RSHMEMC_NV_D void nvshmem_##NAME##_wait_until_all(T* v, size_t n, const int* st, int cmp, T x) {                     \
        rshmem_##NAME##_wait_until_all(v, n, st, cmp, x);                                                                \
    }                                                                                                                    \
    RSHMEMC_NV_D size_t nvshmem_##NAME##_wait_until_any(T* v, size_t n, const int* st, int cmp, T x) {                   \
        return rshmem_##NAME##_wait_until_any(v, n, st, cmp, x);                                                         \
    }                                                                                                                    \
    RSHMEMC_NV_D size_t nvshmem_##NAME##_wait_until_some(T* v, size_t n, size_t* idx, const int* st, int cmp, T x) {     \
        return rshmem_##NAME##_wait_until_some(v, n, (rshmem_size_t*)idx, st, cmp, x);                                   \
    }                                                                                                                    \
    RSHMEMC_NV_D void nvshmem_##NAME##_wait_until_all_vector(T* v, size_t n, const int* st, int cmp, T* xs) {            \
        rshmem_##NAME##_wait_until_all_vector(v, n, st, cmp, xs);                                                        \
    }                                                                                                                    \
    RSHMEMC_NV_D size_t nvshmem_##NAME##_wait_until_any_vector(T* v, size_t n, const int* st, int cmp, T* xs) {          \
        return rshmem_##NAME##_wait_until_any_vector(v, n, st, cmp, xs);                                                 \
    }                                                                                                                    \
    RSHMEMC_NV_D size_t nvshmem_##NAME##_wait_until_some_vector(T* v, size_t n, size_t* idx, const int* st, int cmp, T* xs) { \
        return rshmem_##NAME##_wait_until_some_vector(v, n, (rshmem_size_t*)idx, st, cmp, xs);                           \
    }                                                                                                                    \
    RSHMEMC_NV_D int nvshmem_##NAME##_test_all(T* v, size_t n, const int* st, int cmp, T x) { return rshmem_##NAME##_test_all(v, n, st, cmp, x); } \
    RSHMEMC_NV_D size_t nvshmem_##NAME##_test_any(T* v, size_t n, const int* st, int cmp, T x) { return rshmem_##NAME##_test_any(v, n, st, cmp, x); } \
    RSHMEMC_NV_D size_t nvshmem_##NAME##_test_some(T* v, size_t n, size_t* idx, const int* st, int cmp, T x) {           \
        return rshmem_##NAME##_test_some(v, n, (rshmem_size_t*)idx, st, cmp, x);                                         \
    }
RSHMEM_SYNC_TYPES(RSHMEMC_NV_WAIT)

/* ---------------------------------------------------------------- barriers at every scope */
RSHMEMC_NV_D int nvshmem_barrier(int team) { rshmem_barrier(team); return 0; }
RSHMEMC_NV_D void nvshmem_sync_all() { rshmem_sync_all(); }
RSHMEMC_NV_D int nvshmem_team_sync(int team) { rshmem_sync(team); return 0; }
RSHMEMC_NV_D int nvshmem_sync(int team) { rshmem_sync(team); return 0; }
#define RSHMEMC_NV_BARRIER_SCOPE(SC)                                                             \
    RSHMEMC_NV_D void nvshmemx_barrier_all##SC() { rshmemx_barrier_all##SC(); }                  \
    RSHMEMC_NV_D void nvshmemx_sync_all##SC() { rshmemx_sync_all##SC(); }                        \
    RSHMEMC_NV_D int nvshmemx_barrier##SC(int team) { rshmemx_barrier##SC(team); return 0; }     \
    RSHMEMC_NV_D int nvshmemx_team_sync##SC(int team) { rshmemx_sync##SC(team); return 0; }
RSHMEMC_NV_BARRIER_SCOPE(_warp)
RSHMEMC_NV_BARRIER_SCOPE(_block)

/* ---------------------------------------------------------------- collectives
 * NVSHMEM's names: nvshmem_T_OP_reduce (thread), nvshmemx_T_OP_reduce_{warp,block};
 * reducescatter likewise; T_broadcast / T_fcollect / T_alltoall and the *mem forms. */
#define RSHMEMC_NV_REDUCE_SCOPE(TNAME, T, OP, PFX, SC)                                                                   \
    RSHMEMC_NV_D int PFX##_##TNAME##_##OP##_reduce##SC(int team, T* d, const T* s, size_t n) {                           \
        rshmem_##TNAME##_##OP##_reduce##SC(team, d, s, n);                                                               \
        return 0;                                                                                                        \
    }                                                                                                                    \
    RSHMEMC_NV_D int PFX##_##TNAME##_##OP##_reducescatter##SC(int team, T* d, const T* s, size_t n) {                    \
        rshmem_##TNAME##_##OP##_reduce_scatter##SC(team, d, s, n);                                                       \
        return 0;                                                                                                        \
    }
/* Thread scope is callable from the host too: there it runs the on-stream form on the
 * default stream and waits for it (rshmemc_nv_host_reduce, rshmem_nvshmem.h). */
#ifdef __CUDA_ARCH__
#define RSHMEMC_NV_REDUCE_HD_BODY(TNAME, OP, KIND, d, s, n) rshmem_##TNAME##_##OP##_##KIND(team, d, s, n)
#else
#define RSHMEMC_NV_REDUCE_HD_BODY(TNAME, OP, KIND, d, s, n) rshmemc_nv_host_##OP##_##KIND(#TNAME, team, d, s, n)
#endif
#define RSHMEMC_NV_REDUCE_HD(TNAME, T, OP)                                                                              \
    static __host__ __device__ __forceinline__ int nvshmem_##TNAME##_##OP##_reduce(int team, T* d, const T* s, size_t n) { \
        RSHMEMC_NV_REDUCE_HD_BODY(TNAME, OP, reduce, d, s, n);                                                          \
        return 0;                                                                                                       \
    }                                                                                                                   \
    static __host__ __device__ __forceinline__ int nvshmem_##TNAME##_##OP##_reducescatter(int team, T* d, const T* s, size_t n) { \
        RSHMEMC_NV_REDUCE_HD_BODY(TNAME, OP, reduce_scatter, d, s, n);                                                  \
        return 0;                                                                                                       \
    }
#define RSHMEMC_NV_REDUCE(TNAME, T, OP)                                                                                  \
    RSHMEMC_NV_REDUCE_HD(TNAME, T, OP) RSHMEMC_NV_REDUCE_SCOPE(TNAME, T, OP, nvshmemx, _warp)                           \
    RSHMEMC_NV_REDUCE_SCOPE(TNAME, T, OP, nvshmemx, _block)
#define RSHMEMC_NV_ARITH(TNAME, T) RSHMEMC_NV_REDUCE(TNAME, T, sum) RSHMEMC_NV_REDUCE(TNAME, T, prod) RSHMEMC_NV_REDUCE(TNAME, T, min) RSHMEMC_NV_REDUCE(TNAME, T, max)
#define RSHMEMC_NV_BITS(TNAME, T) RSHMEMC_NV_REDUCE(TNAME, T, and) RSHMEMC_NV_REDUCE(TNAME, T, or) RSHMEMC_NV_REDUCE(TNAME, T, xor)
RSHMEM_REDUCE_ARITH_TYPES(RSHMEMC_NV_ARITH)
RSHMEM_REDUCE_BITWISE_TYPES(RSHMEMC_NV_BITS)
#ifdef RSHMEMC_NV_HALF_TYPES
/* half and __nv_bfloat16 on rshmem_half and rshmem_bf16, as in the typed RMA above. */
#define RSHMEMC_NV_REDUCE16_SCOPE(TNAME, T, RT, OP, PFX, SC)                                                             \
    RSHMEMC_NV_D int PFX##_##TNAME##_##OP##_reduce##SC(int team, T* d, const T* s, size_t n) {                           \
        rshmem_##TNAME##_##OP##_reduce##SC(team, (RT*)d, (const RT*)s, n);                                               \
        return 0;                                                                                                        \
    }                                                                                                                    \
    RSHMEMC_NV_D int PFX##_##TNAME##_##OP##_reducescatter##SC(int team, T* d, const T* s, size_t n) {                    \
        rshmem_##TNAME##_##OP##_reduce_scatter##SC(team, (RT*)d, (const RT*)s, n);                                       \
        return 0;                                                                                                        \
    }
#define RSHMEMC_NV_REDUCE16(TNAME, T, RT, OP)                                                                            \
    RSHMEMC_NV_REDUCE16_SCOPE(TNAME, T, RT, OP, nvshmem, ) RSHMEMC_NV_REDUCE16_SCOPE(TNAME, T, RT, OP, nvshmemx, _warp)  \
    RSHMEMC_NV_REDUCE16_SCOPE(TNAME, T, RT, OP, nvshmemx, _block)
#define RSHMEMC_NV_ARITH16(TNAME, T, RT) \
    RSHMEMC_NV_REDUCE16(TNAME, T, RT, sum) RSHMEMC_NV_REDUCE16(TNAME, T, RT, prod) RSHMEMC_NV_REDUCE16(TNAME, T, RT, min) RSHMEMC_NV_REDUCE16(TNAME, T, RT, max)
RSHMEMC_NV_ARITH16(half, half, rshmem_half)
RSHMEMC_NV_ARITH16(bfloat16, __nv_bfloat16, rshmem_bf16)
#endif
RSHMEMC_NV_D int nvshmemx_double2_maxloc_reduce_block(int team, double2* d, const double2* s, size_t n) {
    rshmem_double2_maxloc_reduce_block(team, d, s, n);
    return 0;
}

#define RSHMEMC_NV_MOVE_SCOPE(TNAME, T, PFX, SC)                                                                         \
    RSHMEMC_NV_D int PFX##_##TNAME##_broadcast##SC(int team, T* d, const T* s, size_t n, int root) {                     \
        rshmem_broadcastmem##SC(team, d, s, n * sizeof(T), root);                                                        \
        return 0;                                                                                                        \
    }                                                                                                                    \
    RSHMEMC_NV_D int PFX##_##TNAME##_fcollect##SC(int team, T* d, const T* s, size_t n) {                                \
        rshmem_fcollectmem##SC(team, d, s, n * sizeof(T));                                                               \
        return 0;                                                                                                        \
    }                                                                                                                    \
    RSHMEMC_NV_D int PFX##_##TNAME##_alltoall##SC(int team, T* d, const T* s, size_t n) {                                \
        rshmem_alltoallmem##SC(team, d, s, n * sizeof(T));                                                               \
        return 0;                                                                                                        \
    }
#define RSHMEMC_NV_MOVE(TNAME, T) \
    RSHMEMC_NV_MOVE_SCOPE(TNAME, T, nvshmem, ) RSHMEMC_NV_MOVE_SCOPE(TNAME, T, nvshmemx, _warp) RSHMEMC_NV_MOVE_SCOPE(TNAME, T, nvshmemx, _block)
RSHMEM_RMA_TYPES(RSHMEMC_NV_MOVE)
#ifdef RSHMEMC_NV_HALF_TYPES
RSHMEMC_NV_MOVE(half, half)
RSHMEMC_NV_MOVE(bfloat16, __nv_bfloat16)
#endif
#define RSHMEMC_NV_MOVEMEM_SCOPE(PFX, SC)                                                                               \
    RSHMEMC_NV_D int PFX##_broadcastmem##SC(int team, void* d, const void* s, size_t n, int root) {                     \
        rshmem_broadcastmem##SC(team, d, s, n, root);                                                                   \
        return 0;                                                                                                       \
    }                                                                                                                   \
    RSHMEMC_NV_D int PFX##_fcollectmem##SC(int team, void* d, const void* s, size_t n) { rshmem_fcollectmem##SC(team, d, s, n); return 0; } \
    RSHMEMC_NV_D int PFX##_alltoallmem##SC(int team, void* d, const void* s, size_t n) { rshmem_alltoallmem##SC(team, d, s, n); return 0; }
RSHMEMC_NV_MOVEMEM_SCOPE(nvshmem, )
RSHMEMC_NV_MOVEMEM_SCOPE(nvshmemx, _warp)
RSHMEMC_NV_MOVEMEM_SCOPE(nvshmemx, _block)

#endif /* RSHMEM_NVSHMEM_DEVICE_CUH */

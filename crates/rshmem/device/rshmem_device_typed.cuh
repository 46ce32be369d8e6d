// rshmem device API: the typed forms, written out over the generated type tables
// (rshmem_device_types.cuh, from src/types.rs).
//
//   rshmem_TYPE_put_signal[_nbi][_warp|_block](dest, src, nelems, sig, signal, sig_op, pe)
//   signal calls on `uint64_t*` (`unsigned long*`) words as well as `rshmem_u64*`
//   rshmem_TYPE_OP_reduce[_thread|_warp|_block](team, dest, src, nreduce), rshmemx_..._grid
//   rshmem_TYPE_OP_reduce_scatter[...](team, dest, src, nreduce)
//   rshmem_double2_maxloc_reduce[...](team, dest, src, nreduce)
//
// In put_signal, as in rshmem_device.cuh's typed p, g, iput, iget, put/get[_nbi] and
// put/get_warp/_block, TYPE is every name of the RMA table plus half (rshmem_half) and
// bfloat16 (rshmem_bf16).
// In reductions, OP is and/or/xor for the bitwise table (plus int and longlong, which rshmem
// has always accepted), min/max/sum/prod for the arithmetic table (plus half and bfloat16). Each
// reduction wrapper is a function template with a defaulted parameter, so a program that
// calls none of them instantiates none (a plain call `rshmem_int_sum_reduce(t, d, s, n)`
// works as for a plain function). Included by rshmem_device.cuh (RMA part) and, once its
// generic reductions are defined, by rshmem_device_coll.cuh (reduction part). Self-contained: no system headers.

// ---------------------------------------------------------------- typed put with signal
#if defined(RSHMEM_DEVICE_CUH) && !defined(RSHMEM_DEVICE_TYPED_RMA)
#define RSHMEM_DEVICE_TYPED_RMA

// Signal words as <stdint.h> spells uint64_t on Linux (`unsigned long`): the same calls as
// the `rshmem_u64` (`unsigned long long`) forms of rshmem_device.cuh.
__device__ __forceinline__ rshmem_u64 rshmem_signal_fetch(const unsigned long* sig) { return rshmem_signal_fetch((const rshmem_u64*)sig); }
__device__ __forceinline__ void rshmem_signal_op(unsigned long* sig, rshmem_u64 v, int op, int pe) { rshmem_signal_op((rshmem_u64*)sig, v, op, pe); }
__device__ __forceinline__ rshmem_u64 rshmem_signal_wait_until(unsigned long* sig, int cmp, rshmem_u64 v) {
    return rshmem_signal_wait_until((rshmem_u64*)sig, cmp, v);
}
#define RSHMEMI_PUT_SIGNAL_UL(SCOPE)                                                                                   \
    __device__ __forceinline__ void rshmem_putmem_signal##SCOPE(void* dst, const void* src, rshmem_size_t n,           \
                                                                unsigned long* sig, rshmem_u64 v, int op, int pe) {    \
        rshmem_putmem_signal##SCOPE(dst, src, n, (rshmem_u64*)sig, v, op, pe);                                         \
    }                                                                                                                  \
    __device__ __forceinline__ void rshmem_putmem_signal_nbi##SCOPE(void* dst, const void* src, rshmem_size_t n,       \
                                                                    unsigned long* sig, rshmem_u64 v, int op, int pe) { \
        rshmem_putmem_signal_nbi##SCOPE(dst, src, n, (rshmem_u64*)sig, v, op, pe);                                     \
    }
RSHMEMI_PUT_SIGNAL_UL()
RSHMEMI_PUT_SIGNAL_UL(_warp)
RSHMEMI_PUT_SIGNAL_UL(_block)

// Typed put with signal, for either spelling of the signal word.
#define RSHMEMI_TYPED_PUT_SIGNAL_SIG(NAME, T, SCOPE, SIG)                                                             \
    __device__ __forceinline__ void rshmem_##NAME##_put_signal##SCOPE(T* dst, const T* src, rshmem_size_t n, SIG* sig, \
                                                                      rshmem_u64 v, int op, int pe) {                  \
        rshmem_putmem_signal##SCOPE(dst, src, n * sizeof(T), (rshmem_u64*)sig, v, op, pe);                             \
    }                                                                                                                  \
    __device__ __forceinline__ void rshmem_##NAME##_put_signal_nbi##SCOPE(T* dst, const T* src, rshmem_size_t n,       \
                                                                          SIG* sig, rshmem_u64 v, int op, int pe) {    \
        rshmem_putmem_signal_nbi##SCOPE(dst, src, n * sizeof(T), (rshmem_u64*)sig, v, op, pe);                         \
    }
#define RSHMEMI_TYPED_PUT_SIGNAL_SCOPE(NAME, T, SCOPE) \
    RSHMEMI_TYPED_PUT_SIGNAL_SIG(NAME, T, SCOPE, rshmem_u64) RSHMEMI_TYPED_PUT_SIGNAL_SIG(NAME, T, SCOPE, unsigned long)
#define RSHMEMI_TYPED_PUT_SIGNAL(NAME, T) \
    RSHMEMI_TYPED_PUT_SIGNAL_SCOPE(NAME, T, ) RSHMEMI_TYPED_PUT_SIGNAL_SCOPE(NAME, T, _warp) RSHMEMI_TYPED_PUT_SIGNAL_SCOPE(NAME, T, _block)
RSHMEM_RMA_TYPES(RSHMEMI_TYPED_PUT_SIGNAL)
RSHMEM_RMA_TYPES_ALT(RSHMEMI_TYPED_PUT_SIGNAL)
RSHMEMI_TYPED_PUT_SIGNAL(half, rshmem_half)
RSHMEMI_TYPED_PUT_SIGNAL(bfloat16, rshmem_bf16)

#endif  // RSHMEM_DEVICE_TYPED_RMA

// ---------------------------------------------------------------- typed reductions
#if defined(RSHMEMI_WANT_TYPED_COLL) && !defined(RSHMEM_DEVICE_TYPED_COLL)
#define RSHMEM_DEVICE_TYPED_COLL

#define RSHMEMI_TYPED_REDUCE_SCOPE(TNAME, T, OPNAME, PFX, SCOPE)                                                                  \
    template <int RSHMEMI_LAZY = 0>                                                                                                \
    __device__ __forceinline__ void PFX##_##TNAME##_##OPNAME##_reduce##SCOPE(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) { \
        rshmemx_reduce##SCOPE<T, rshmemi_op_##OPNAME>(t, d, s, n);                                                                 \
    }                                                                                                                              \
    template <int RSHMEMI_LAZY = 0>                                                                                                \
    __device__ __forceinline__ void PFX##_##TNAME##_##OPNAME##_reduce_scatter##SCOPE(rshmem_team_t t, T* d, const T* s, rshmem_size_t n) { \
        rshmemx_reduce_scatter##SCOPE<T, rshmemi_op_##OPNAME>(t, d, s, n);                                                         \
    }
#define RSHMEMI_TYPED_REDUCE(TNAME, T, OPNAME)                        \
    RSHMEMI_TYPED_REDUCE_SCOPE(TNAME, T, OPNAME, rshmem, )            \
    RSHMEMI_TYPED_REDUCE_SCOPE(TNAME, T, OPNAME, rshmem, _thread)     \
    RSHMEMI_TYPED_REDUCE_SCOPE(TNAME, T, OPNAME, rshmem, _warp)       \
    RSHMEMI_TYPED_REDUCE_SCOPE(TNAME, T, OPNAME, rshmem, _block)      \
    RSHMEMI_TYPED_REDUCE_SCOPE(TNAME, T, OPNAME, rshmemx, _grid)
#define RSHMEMI_ARITH_OPS(TNAME, T) RSHMEMI_TYPED_REDUCE(TNAME, T, sum) RSHMEMI_TYPED_REDUCE(TNAME, T, prod) RSHMEMI_TYPED_REDUCE(TNAME, T, min) RSHMEMI_TYPED_REDUCE(TNAME, T, max)
#define RSHMEMI_BIT_OPS(TNAME, T) RSHMEMI_TYPED_REDUCE(TNAME, T, and) RSHMEMI_TYPED_REDUCE(TNAME, T, or) RSHMEMI_TYPED_REDUCE(TNAME, T, xor)
RSHMEM_REDUCE_ARITH_TYPES(RSHMEMI_ARITH_OPS)
RSHMEM_REDUCE_ARITH_TYPES_ALT(RSHMEMI_ARITH_OPS)
RSHMEMI_ARITH_OPS(half, rshmem_half)
RSHMEMI_ARITH_OPS(bfloat16, rshmem_bf16)
RSHMEM_REDUCE_BITWISE_TYPES(RSHMEMI_BIT_OPS)
RSHMEM_REDUCE_BITWISE_TYPES_ALT(RSHMEMI_BIT_OPS)
RSHMEMI_BIT_OPS(int, int)
RSHMEMI_BIT_OPS(longlong, long long)

// Max-loc over (value, index) pairs in a double2: the largest .x; among equal values the
// smallest .y. Every PE combines in team-rank order, so ties resolve the same everywhere.
struct rshmemi_op_maxloc {
    template <typename A> __device__ static A f(A a, A b) { return (b.x > a.x || (b.x == a.x && b.y < a.y)) ? b : a; }
};
// The simple protocol: the line protocols carry 8-byte words, a double2 is one 16-byte element.
#define RSHMEMI_MAXLOC_SCOPE(PFX, SCOPE)                                                                                        \
    template <int RSHMEMI_LAZY = 0>                                                                                             \
    __device__ __forceinline__ void PFX##_double2_maxloc_reduce##SCOPE(rshmem_team_t t, double2* d, const double2* s, rshmem_size_t n) { \
        rshmemx_reduce##SCOPE<double2, rshmemi_op_maxloc>(t, d, s, n, RSHMEMX_PROTO_SIMPLE);                                     \
    }
RSHMEMI_MAXLOC_SCOPE(rshmem, )
RSHMEMI_MAXLOC_SCOPE(rshmem, _thread)
RSHMEMI_MAXLOC_SCOPE(rshmem, _warp)
RSHMEMI_MAXLOC_SCOPE(rshmem, _block)
RSHMEMI_MAXLOC_SCOPE(rshmemx, _grid)

#endif  // RSHMEM_DEVICE_TYPED_COLL

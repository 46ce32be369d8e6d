/* rshmem_nvshmem.h: NVSHMEM's public names, types and constants on rshmem (host and device).
 *
 * rshmem's opt-in NVSHMEM source-compatibility layer: nvshmem.h, nvshmemx.h and
 * nvshmem_host.h include this file, so a program written for NVSHMEM builds against
 * rshmem by pointing its include and library paths at this folder (see README.md here).
 * Written by the rshmem project from NVSHMEM's public API names and signatures only.
 * NVSHMEM is NVIDIA's; rshmem is not affiliated with NVIDIA.
 *
 * Host calls map onto rshmem's C host API for GPU PEs (rshmemx_cuda.h), whose calls act on
 * NVSHMEM's PEs: GPU PEs started over shmem_init's CPU PEs (NVSHMEMX_INIT_WITH_SHMEM), else
 * the one runtime of the process (which shmem.h's calls act on as well); calls NVSHMEM allows from host and device are static inline
 * __host__ __device__ functions that pick the device API (rshmem_device.cuh) in device
 * code. Teams are numbers as in NVSHMEM (the device team slots): NVSHMEM_TEAM_WORLD 0,
 * NVSHMEM_TEAM_SHARED and NVSHMEMX_TEAM_NODE 1 (rshmem's SHMEM_TEAM_SHARED: the PEs of this
 * host); libnvshmem_host keeps the host handle of each team it made. */
#ifndef RSHMEM_NVSHMEM_H
#define RSHMEM_NVSHMEM_H

#if defined(__CUDACC_RTC__)
#define RSHMEMC_NV_NO_HOST 1
/* NVRTC has no system headers: the fixed-width types as <stdint.h> spells them on Linux. */
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef unsigned long size_t;
typedef long ptrdiff_t;
/* half and __nv_bfloat16 where the program included cuda_fp16.h and cuda_bf16.h first. */
#if defined(__CUDA_FP16_TYPES_EXIST__) && defined(__CUDA_BF16_TYPES_EXIST__)
#define RSHMEMC_NV_HALF_TYPES 1
#endif
#endif

#ifndef RSHMEMC_NV_NO_HOST
/* The C headers NVSHMEM programs get through nvshmem.h. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__CUDACC__) || (defined(__has_include) && __has_include(<cuda_runtime.h>))
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#define RSHMEMC_NV_HALF_TYPES 1
#define RSHMEMC_NV_CUDA_HEADERS 1
#endif
#include <shmem.h>
#include <rshmemx_cuda.h>
#endif

#include "rshmem_device_types.cuh"

/* ---------------------------------------------------------------- types and constants */
typedef int nvshmem_team_t;
typedef int32_t nvshmemx_team_t;
#define NVSHMEM_TEAM_INVALID (-1)
#define NVSHMEM_TEAM_WORLD RSHMEM_TEAM_WORLD
#define NVSHMEM_TEAM_SHARED RSHMEM_TEAM_SHARED
#define NVSHMEMX_TEAM_NODE RSHMEM_TEAM_SHARED
#define NVSHMEM_TEAM_WORLD_INDEX NVSHMEM_TEAM_WORLD
#define NVSHMEM_TEAM_SHARED_INDEX NVSHMEM_TEAM_SHARED
#define NVSHMEMX_TEAM_NODE_INDEX NVSHMEMX_TEAM_NODE

enum nvshmemi_rshmem_cmp {
    NVSHMEM_CMP_EQ = RSHMEM_CMP_EQ,
    NVSHMEM_CMP_NE = RSHMEM_CMP_NE,
    NVSHMEM_CMP_GT = RSHMEM_CMP_GT,
    NVSHMEM_CMP_GE = RSHMEM_CMP_GE,
    NVSHMEM_CMP_LT = RSHMEM_CMP_LT,
    NVSHMEM_CMP_LE = RSHMEM_CMP_LE
};
typedef int nvshmemx_cmp_type_t;
enum nvshmemi_rshmem_signal { NVSHMEM_SIGNAL_SET = RSHMEM_SIGNAL_SET, NVSHMEM_SIGNAL_ADD = RSHMEM_SIGNAL_ADD };
typedef int nvshmemx_signal_op_t;
enum nvshmemi_rshmem_thread {
    NVSHMEM_THREAD_SINGLE = 0,
    NVSHMEM_THREAD_FUNNELED = 1,
    NVSHMEM_THREAD_SERIALIZED = 2,
    NVSHMEM_THREAD_MULTIPLE = 3
};
enum nvshmemi_rshmem_status {
    NVSHMEM_STATUS_NOT_INITIALIZED = 0,
    NVSHMEM_STATUS_IS_BOOTSTRAPPED = 1,
    NVSHMEM_STATUS_IS_INITIALIZED = 2
};
enum nvshmemi_rshmem_error {
    NVSHMEMX_SUCCESS = 0,
    NVSHMEMX_ERROR_INVALID_VALUE = 1,
    NVSHMEMX_ERROR_OUT_OF_MEMORY = 2,
    NVSHMEMX_ERROR_NOT_SUPPORTED = 3,
    NVSHMEMX_ERROR_SYMMETRY = 4,
    NVSHMEMX_ERROR_GPU_NOT_SELECTED = 5,
    NVSHMEMX_ERROR_COLLECTIVE_LAUNCH_FAILED = 6,
    NVSHMEMX_ERROR_INTERNAL = 7,
    NVSHMEMX_ERROR_SENTINEL = 8
};
enum nvshmemi_rshmem_init_flags {
    NVSHMEMX_INIT_THREAD_PES = 1,
    NVSHMEMX_INIT_WITH_MPI_COMM = 1 << 1,
    NVSHMEMX_INIT_WITH_SHMEM = 1 << 2,
    NVSHMEMX_INIT_WITH_UNIQUEID = 1 << 3
};

#define NVSHMEM_MAJOR_VERSION 1
#define NVSHMEM_MINOR_VERSION 3
#define NVSHMEM_VENDOR_MAJOR_VERSION 3
#define NVSHMEM_VENDOR_MINOR_VERSION 0
#define NVSHMEM_VENDOR_PATCH_VERSION 0
#define NVSHMEM_MAX_NAME_LEN 256
#define NVSHMEM_VENDOR_STRING "rshmem (NVSHMEM compatibility layer)"

/* An error message on stderr (the perftests' helper uses NVSHMEM's macro of this name). */
#ifndef RSHMEMC_NV_NO_HOST
#define NVSHMEMI_ERROR_PRINT(...)                                   \
    do {                                                           \
        fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);            \
        fprintf(stderr, __VA_ARGS__);                              \
        fprintf(stderr, "\n");                                     \
    } while (0)
#endif

/* A unique id: the text of an rshmem meeting point (rank 0's address and a job key). */
typedef struct {
    int version;
    char internal[252];
} nvshmemx_uniqueid_t;
#define NVSHMEMX_UNIQUEID_INITIALIZER {1, {0}}
typedef struct {
    int version;
    int myrank;
    int nranks;
    const nvshmemx_uniqueid_t* uid;
} nvshmemx_uniqueid_args_t;
typedef struct {
    int version;
    void* mpi_comm;
    nvshmemx_uniqueid_args_t uid_args;
} nvshmemx_init_args_t;
typedef struct {
    int version;
    void* mpi_comm;
    nvshmemx_init_args_t args;
} nvshmemx_init_attr_t;
#define NVSHMEMX_INIT_ATTR_INITIALIZER {1, 0, {1, 0, {1, -1, -1, 0}}}

typedef struct {
    int num_contexts;
} nvshmem_team_config_t;
#define NVSHMEM_TEAM_CONFIG_INITIALIZER {0}

#ifndef RSHMEMC_NV_NO_HOST
#ifndef RSHMEMC_NV_CUDA_HEADERS
typedef struct CUstream_st* cudaStream_t;
typedef struct CUmod_st* CUmodule;
typedef struct {
    unsigned int x, y, z;
} dim3;
#endif
#endif

/* ---------------------------------------------------------------- host-only calls (libnvshmem_host) */
#ifndef RSHMEMC_NV_NO_HOST
#ifdef __cplusplus
extern "C" {
#endif
/* Init: GPU PEs (rshmemx_cuda_init) under rshmem's own bootstrap (rshmemrun, PMIx,
 * torchrun's environment). The MPI-communicator and unique-id forms check that the
 * rank and size they were given match that bootstrap's. NVSHMEMX_INIT_WITH_SHMEM after
 * shmem_init: GPU PEs over its CPU PEs (rshmemx_cuda_init_with_shmem), or shmem_init's own
 * PEs when they are GPU PEs (RSHMEM_DEVICE=gpu). */
int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t* attr);
int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t* attr);
int nvshmem_init_thread(int requested, int* provided);
void nvshmem_query_thread(int* provided);
int nvshmemx_init_status(void);
void nvshmemx_hostlib_finalize(void);
int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t* id);
int nvshmemx_set_attr_uniqueid_args(int myrank, int nranks, const nvshmemx_uniqueid_t* id, nvshmemx_init_attr_t* attr);
int nvshmemx_set_attr_mpi_comm_args(void* mpi_comm, nvshmemx_init_attr_t* attr);

/* Memory: the symmetric heap in GPU memory. */
void* nvshmem_malloc(size_t size);
void* nvshmem_calloc(size_t count, size_t size);
void* nvshmem_align(size_t alignment, size_t size);
void nvshmem_free(void* ptr);
int nvshmemx_buffer_register(void* addr, size_t length);
int nvshmemx_buffer_unregister(void* addr);
/* Not supported (rshmem cannot map a user buffer into the symmetric heap): a message on
 * stderr, then NULL / NVSHMEMX_ERROR_NOT_SUPPORTED. */
void* nvshmemx_buffer_register_symmetric(void* addr, size_t length, int flags);
int nvshmemx_buffer_unregister_symmetric(void* addr, size_t length);

/* Teams: numbers on the device, rshmem team handles on the host. */
shmem_team_t rshmemc_nv_team(nvshmem_team_t team);
int nvshmem_team_split_strided(nvshmem_team_t parent, int start, int stride, int size, const nvshmem_team_config_t* config,
                               long config_mask, nvshmem_team_t* new_team);
int nvshmem_team_split_2d(nvshmem_team_t parent, int xrange, const nvshmem_team_config_t* xconfig, long xmask,
                          nvshmem_team_t* xteam, const nvshmem_team_config_t* yconfig, long ymask, nvshmem_team_t* yteam);
void nvshmem_team_destroy(nvshmem_team_t team);
void nvshmem_team_get_config(nvshmem_team_t team, nvshmem_team_config_t* config);

/* Modules loaded by the program (cuModuleLoad). */
int nvshmemx_cumodule_init(CUmodule module);
int nvshmemx_cumodule_finalize(CUmodule module);

/* Collective launch. */
int nvshmemx_collective_launch(const void* func, dim3 grid, dim3 block, void** args, size_t shmem, cudaStream_t stream);
int nvshmemx_collective_launch_query_gridsize(const void* func, dim3 block, void** args, size_t shmem, int* gridsize);
#ifdef __cplusplus
}
#endif

static inline void nvshmem_init(void) { (void)nvshmemx_init_attr(0, 0); }
static inline void nvshmem_finalize(void) { rshmemx_cuda_finalize(); }

/* ---------------------------------------------------------------- stream-ordered calls */
static inline void nvshmemx_putmem_on_stream(void* d, const void* s, size_t n, int pe, cudaStream_t st) {
    rshmemx_putmem_on_stream(d, s, n, pe, (rshmemx_stream_t)st);
}
static inline void nvshmemx_getmem_on_stream(void* d, const void* s, size_t n, int pe, cudaStream_t st) {
    rshmemx_getmem_on_stream(d, s, n, pe, (rshmemx_stream_t)st);
}
static inline void nvshmemx_putmem_nbi_on_stream(void* d, const void* s, size_t n, int pe, cudaStream_t st) {
    rshmemx_putmem_nbi_on_stream(d, s, n, pe, (rshmemx_stream_t)st);
}
static inline void nvshmemx_getmem_nbi_on_stream(void* d, const void* s, size_t n, int pe, cudaStream_t st) {
    rshmemx_getmem_nbi_on_stream(d, s, n, pe, (rshmemx_stream_t)st);
}
static inline void nvshmemx_putmem_signal_on_stream(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op, int pe,
                                                    cudaStream_t st) {
    rshmemx_putmem_signal_on_stream(d, s, n, sig, v, op, pe, (rshmemx_stream_t)st);
}
static inline void nvshmemx_putmem_signal_nbi_on_stream(void* d, const void* s, size_t n, uint64_t* sig, uint64_t v, int op,
                                                        int pe, cudaStream_t st) {
    rshmemx_putmem_signal_nbi_on_stream(d, s, n, sig, v, op, pe, (rshmemx_stream_t)st);
}
static inline void nvshmemx_signal_op_on_stream(uint64_t* sig, uint64_t v, int op, int pe, cudaStream_t st) {
    rshmemx_signal_op_on_stream(sig, v, op, pe, (rshmemx_stream_t)st);
}
static inline void nvshmemx_signal_wait_until_on_stream(uint64_t* sig, int cmp, uint64_t v, cudaStream_t st) {
    rshmemx_signal_wait_until_on_stream(sig, cmp, v, (rshmemx_stream_t)st);
}
static inline void nvshmemx_quiet_on_stream(cudaStream_t st) { rshmemx_quiet_on_stream((rshmemx_stream_t)st); }
static inline void nvshmemx_barrier_all_on_stream(cudaStream_t st) { rshmemx_barrier_all_on_stream((rshmemx_stream_t)st); }
static inline void nvshmemx_sync_all_on_stream(cudaStream_t st) { rshmemx_sync_all_on_stream((rshmemx_stream_t)st); }
static inline int nvshmemx_barrier_on_stream(nvshmem_team_t t, cudaStream_t st) {
    return rshmemx_barrier_on_stream(rshmemc_nv_team(t), (rshmemx_stream_t)st);
}
static inline int nvshmemx_team_sync_on_stream(nvshmem_team_t t, cudaStream_t st) {
    return rshmemx_team_sync_on_stream(rshmemc_nv_team(t), (rshmemx_stream_t)st);
}
static inline int nvshmemx_broadcastmem_on_stream(nvshmem_team_t t, void* d, const void* s, size_t n, int root, cudaStream_t st) {
    return rshmemx_broadcastmem_on_stream(rshmemc_nv_team(t), d, s, n, root, (rshmemx_stream_t)st);
}
static inline int nvshmemx_fcollectmem_on_stream(nvshmem_team_t t, void* d, const void* s, size_t n, cudaStream_t st) {
    return rshmemx_fcollectmem_on_stream(rshmemc_nv_team(t), d, s, n, (rshmemx_stream_t)st);
}
static inline int nvshmemx_alltoallmem_on_stream(nvshmem_team_t t, void* d, const void* s, size_t n, cudaStream_t st) {
    return rshmemx_alltoallmem_on_stream(rshmemc_nv_team(t), d, s, n, (rshmemx_stream_t)st);
}
/* The typed on-stream RMA of NVSHMEM type T, on rshmemx_cuda.h's type RT of the same bits (T
 * itself but for half and __nv_bfloat16, whose rshmemx forms take rshmemx_half/_bfloat16). */
#define RSHMEMC_NV_STREAM_RMA_AS(NAME, T, RT)                                                                          \
    static inline void nvshmemx_##NAME##_put_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {          \
        rshmemx_putmem_on_stream(d, s, n * sizeof(T), pe, (rshmemx_stream_t)st);                                        \
    }                                                                                                                  \
    static inline void nvshmemx_##NAME##_get_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {          \
        rshmemx_getmem_on_stream(d, s, n * sizeof(T), pe, (rshmemx_stream_t)st);                                        \
    }                                                                                                                  \
    static inline void nvshmemx_##NAME##_put_nbi_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {      \
        rshmemx_putmem_nbi_on_stream(d, s, n * sizeof(T), pe, (rshmemx_stream_t)st);                                    \
    }                                                                                                                  \
    static inline void nvshmemx_##NAME##_get_nbi_on_stream(T* d, const T* s, size_t n, int pe, cudaStream_t st) {      \
        rshmemx_getmem_nbi_on_stream(d, s, n * sizeof(T), pe, (rshmemx_stream_t)st);                                    \
    }                                                                                                                  \
    static inline void nvshmemx_##NAME##_p_on_stream(T* d, T v, int pe, cudaStream_t st) {                            \
        RT bits;                                                                                                       \
        memcpy(&bits, &v, sizeof bits);                                                                                \
        rshmemx_##NAME##_p_on_stream((RT*)d, bits, pe, (rshmemx_stream_t)st);                                           \
    }                                                                                                                  \
    static inline void nvshmemx_##NAME##_put_signal_on_stream(T* d, const T* s, size_t n, uint64_t* sig, uint64_t v,   \
                                                              int op, int pe, cudaStream_t st) {                       \
        rshmemx_##NAME##_put_signal_on_stream((RT*)d, (const RT*)s, n, sig, v, op, pe, (rshmemx_stream_t)st);           \
    }                                                                                                                  \
    static inline void nvshmemx_##NAME##_put_signal_nbi_on_stream(T* d, const T* s, size_t n, uint64_t* sig,           \
                                                                  uint64_t v, int op, int pe, cudaStream_t st) {       \
        rshmemx_##NAME##_put_signal_nbi_on_stream((RT*)d, (const RT*)s, n, sig, v, op, pe, (rshmemx_stream_t)st);       \
    }                                                                                                                  \
    static inline int nvshmemx_##NAME##_broadcast_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, int root,    \
                                                            cudaStream_t st) {                                         \
        return rshmemx_broadcastmem_on_stream(rshmemc_nv_team(t), d, s, n * sizeof(T), root, (rshmemx_stream_t)st);     \
    }                                                                                                                  \
    static inline int nvshmemx_##NAME##_fcollect_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, cudaStream_t st) { \
        return rshmemx_fcollectmem_on_stream(rshmemc_nv_team(t), d, s, n * sizeof(T), (rshmemx_stream_t)st);           \
    }                                                                                                                  \
    static inline int nvshmemx_##NAME##_alltoall_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, cudaStream_t st) { \
        return rshmemx_alltoallmem_on_stream(rshmemc_nv_team(t), d, s, n * sizeof(T), (rshmemx_stream_t)st);           \
    }
#define RSHMEMC_NV_STREAM_RMA(NAME, T) RSHMEMC_NV_STREAM_RMA_AS(NAME, T, T)
RSHMEM_RMA_TYPES(RSHMEMC_NV_STREAM_RMA)
#ifdef RSHMEMC_NV_HALF_TYPES
RSHMEMC_NV_STREAM_RMA_AS(half, half, rshmemx_half)
RSHMEMC_NV_STREAM_RMA_AS(bfloat16, __nv_bfloat16, rshmemx_bfloat16)
#endif

#define RSHMEMC_NV_STREAM_REDUCE_AS(TNAME, T, RT, OP)                                                                \
    static inline int nvshmemx_##TNAME##_##OP##_reduce_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, cudaStream_t st) { \
        return rshmemx_##TNAME##_##OP##_reduce_on_stream(rshmemc_nv_team(t), (RT*)d, (const RT*)s, n, (rshmemx_stream_t)st); \
    }                                                                                                                 \
    static inline int nvshmemx_##TNAME##_##OP##_reducescatter_on_stream(nvshmem_team_t t, T* d, const T* s, size_t n, \
                                                                        cudaStream_t st) {                            \
        return rshmemx_##TNAME##_##OP##_reducescatter_on_stream(rshmemc_nv_team(t), (RT*)d, (const RT*)s, n,           \
                                                                (rshmemx_stream_t)st);                                \
    }
#define RSHMEMC_NV_STREAM_REDUCE(TNAME, T, OP) RSHMEMC_NV_STREAM_REDUCE_AS(TNAME, T, T, OP)
#define RSHMEMC_NV_STREAM_ARITH_AS(TNAME, T, RT)                                                   \
    RSHMEMC_NV_STREAM_REDUCE_AS(TNAME, T, RT, sum) RSHMEMC_NV_STREAM_REDUCE_AS(TNAME, T, RT, prod) \
    RSHMEMC_NV_STREAM_REDUCE_AS(TNAME, T, RT, min) RSHMEMC_NV_STREAM_REDUCE_AS(TNAME, T, RT, max)
#define RSHMEMC_NV_STREAM_ARITH(TNAME, T) RSHMEMC_NV_STREAM_ARITH_AS(TNAME, T, T)
#define RSHMEMC_NV_STREAM_BITS(TNAME, T) \
    RSHMEMC_NV_STREAM_REDUCE(TNAME, T, and) RSHMEMC_NV_STREAM_REDUCE(TNAME, T, or) RSHMEMC_NV_STREAM_REDUCE(TNAME, T, xor)
/* The types of rshmemx_cuda.h's on-stream reductions. */
#define RSHMEMC_NV_STREAM_REAL_TYPES(X) X(float, float) X(double, double)
#define RSHMEMC_NV_STREAM_INT_TYPES(X)                                                                           \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int) X(ulong, unsigned long)                \
    X(ulonglong, unsigned long long) X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) \
    X(size, size_t) X(ptrdiff, ptrdiff_t)
RSHMEMC_NV_STREAM_REAL_TYPES(RSHMEMC_NV_STREAM_ARITH)
RSHMEMC_NV_STREAM_INT_TYPES(RSHMEMC_NV_STREAM_ARITH)
RSHMEMC_NV_STREAM_INT_TYPES(RSHMEMC_NV_STREAM_BITS)
#ifdef RSHMEMC_NV_HALF_TYPES
RSHMEMC_NV_STREAM_ARITH_AS(half, half, rshmemx_half)
RSHMEMC_NV_STREAM_ARITH_AS(bfloat16, __nv_bfloat16, rshmemx_bfloat16)
#endif

/* Host-side blocking reductions (NVSHMEM's thread-scope names called from host code): the
 * on-stream form on the default stream, then a wait for the stream. Types without an
 * on-stream form end the job with a message. */
#if defined(__cplusplus) && defined(RSHMEMC_NV_CUDA_HEADERS)
template <typename T>
static inline void rshmemc_nv_host_unsupported(const char* call, const char* type, nvshmem_team_t, T*, const T*, size_t) {
    fprintf(stderr, "rshmem (NVSHMEM compatibility): nvshmem_%s_%s from host code: no on-stream form for this type\n", type, call);
    rshmemx_cuda_global_exit(1);
}
#define RSHMEMC_NV_HOST_REDUCE_OP(OP)                                                                                 \
    template <typename T>                                                                                             \
    static inline void rshmemc_nv_host_##OP##_reduce(const char* type, nvshmem_team_t t, T* d, const T* s, size_t n) { \
        rshmemc_nv_host_unsupported(#OP "_reduce", type, t, d, s, n);                                                 \
    }                                                                                                                 \
    template <typename T>                                                                                             \
    static inline void rshmemc_nv_host_##OP##_reduce_scatter(const char* type, nvshmem_team_t t, T* d, const T* s, size_t n) { \
        rshmemc_nv_host_unsupported(#OP "_reducescatter", type, t, d, s, n);                                          \
    }
RSHMEMC_NV_HOST_REDUCE_OP(sum)
RSHMEMC_NV_HOST_REDUCE_OP(prod)
RSHMEMC_NV_HOST_REDUCE_OP(min)
RSHMEMC_NV_HOST_REDUCE_OP(max)
RSHMEMC_NV_HOST_REDUCE_OP(and)
RSHMEMC_NV_HOST_REDUCE_OP(or)
RSHMEMC_NV_HOST_REDUCE_OP(xor)
#define RSHMEMC_NV_HOST_REDUCE(TNAME, T, OP)                                                                          \
    static inline void rshmemc_nv_host_##OP##_reduce(const char*, nvshmem_team_t t, T* d, const T* s, size_t n) {     \
        nvshmemx_##TNAME##_##OP##_reduce_on_stream(t, d, s, n, 0);                                                    \
        (void)cudaStreamSynchronize(0);                                                                               \
    }                                                                                                                 \
    static inline void rshmemc_nv_host_##OP##_reduce_scatter(const char*, nvshmem_team_t t, T* d, const T* s, size_t n) { \
        nvshmemx_##TNAME##_##OP##_reducescatter_on_stream(t, d, s, n, 0);                                             \
        (void)cudaStreamSynchronize(0);                                                                               \
    }
#define RSHMEMC_NV_HOST_ARITH(TNAME, T) \
    RSHMEMC_NV_HOST_REDUCE(TNAME, T, sum) RSHMEMC_NV_HOST_REDUCE(TNAME, T, prod) RSHMEMC_NV_HOST_REDUCE(TNAME, T, min) RSHMEMC_NV_HOST_REDUCE(TNAME, T, max)
#define RSHMEMC_NV_HOST_BITS(TNAME, T) \
    RSHMEMC_NV_HOST_REDUCE(TNAME, T, and) RSHMEMC_NV_HOST_REDUCE(TNAME, T, or) RSHMEMC_NV_HOST_REDUCE(TNAME, T, xor)
/* One overload per C type: int32/int64/... share int/long's. */
RSHMEMC_NV_HOST_ARITH(float, float)
RSHMEMC_NV_HOST_ARITH(double, double)
RSHMEMC_NV_HOST_ARITH(int, int)
RSHMEMC_NV_HOST_ARITH(long, long)
RSHMEMC_NV_HOST_ARITH(longlong, long long)
RSHMEMC_NV_HOST_ARITH(uint, unsigned int)
RSHMEMC_NV_HOST_ARITH(ulong, unsigned long)
RSHMEMC_NV_HOST_ARITH(ulonglong, unsigned long long)
RSHMEMC_NV_HOST_ARITH(half, half)
RSHMEMC_NV_HOST_ARITH(bfloat16, __nv_bfloat16)
RSHMEMC_NV_HOST_BITS(int, int)
RSHMEMC_NV_HOST_BITS(long, long)
RSHMEMC_NV_HOST_BITS(longlong, long long)
RSHMEMC_NV_HOST_BITS(uint, unsigned int)
RSHMEMC_NV_HOST_BITS(ulong, unsigned long)
RSHMEMC_NV_HOST_BITS(ulonglong, unsigned long long)
#endif
#endif /* !RSHMEMC_NV_NO_HOST */

/* ---------------------------------------------------------------- device API */
#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#include "rshmem_nvshmem_device.cuh"
#define RSHMEMC_NV_HD static __host__ __device__ __forceinline__
#else
#define RSHMEMC_NV_HD static inline
#endif

/* The device pass of a CUDA compilation (nvcc runs one per architecture, and one for the host). */
#if defined(__CUDA_ARCH__)
#define RSHMEMC_NV_DEVICE_PASS 1
#endif

/* ---------------------------------------------------------------- host and device calls */
#if !defined(RSHMEMC_NV_NO_HOST) || defined(RSHMEMC_NV_DEVICE_PASS)
/* RSHMEMC_NV_PICK(device form, host form): the form of this compilation pass. */
#ifdef RSHMEMC_NV_DEVICE_PASS
#define RSHMEMC_NV_PICK(dev, host) dev
#else
#define RSHMEMC_NV_PICK(dev, host) host
#endif
RSHMEMC_NV_HD int nvshmem_my_pe(void) { return RSHMEMC_NV_PICK(rshmem_my_pe(), rshmemx_cuda_my_pe()); }
RSHMEMC_NV_HD int nvshmem_n_pes(void) { return RSHMEMC_NV_PICK(rshmem_n_pes(), rshmemx_cuda_n_pes()); }
RSHMEMC_NV_HD int nvshmem_team_my_pe(nvshmem_team_t t) { return RSHMEMC_NV_PICK(rshmem_team_my_pe(t), rshmemx_cuda_team_my_pe(rshmemc_nv_team(t))); }
RSHMEMC_NV_HD int nvshmem_team_n_pes(nvshmem_team_t t) { return RSHMEMC_NV_PICK(rshmem_team_n_pes(t), rshmemx_cuda_team_n_pes(rshmemc_nv_team(t))); }
RSHMEMC_NV_HD int nvshmem_team_translate_pe(nvshmem_team_t src, int pe, nvshmem_team_t dest) {
    return RSHMEMC_NV_PICK(rshmem_team_translate_pe(src, pe, dest), rshmemx_cuda_team_translate_pe(rshmemc_nv_team(src), pe, rshmemc_nv_team(dest)));
}
RSHMEMC_NV_HD void* nvshmem_ptr(const void* p, int pe) { return RSHMEMC_NV_PICK(rshmem_ptr(p, pe), rshmemx_ptr(p, pe)); }
RSHMEMC_NV_HD void nvshmem_quiet(void) { RSHMEMC_NV_PICK(rshmem_quiet(), rshmemx_cuda_quiet()); }
RSHMEMC_NV_HD void nvshmem_fence(void) { RSHMEMC_NV_PICK(rshmem_fence(), rshmemx_cuda_fence()); }
RSHMEMC_NV_HD void nvshmem_barrier_all(void) { RSHMEMC_NV_PICK(rshmem_barrier_all(), rshmemx_cuda_barrier_all()); }
RSHMEMC_NV_HD void nvshmem_global_exit(int status) {
    RSHMEMC_NV_PICK(rshmemi_fail("nvshmem_global_exit", "global exit requested from device code", rshmem_state.my_pe, (rshmem_u64)status, 0),
                    rshmemx_cuda_global_exit(status));
}
RSHMEMC_NV_HD void nvshmem_info_get_version(int* major, int* minor) {
    *major = NVSHMEM_MAJOR_VERSION;
    *minor = NVSHMEM_MINOR_VERSION;
}
RSHMEMC_NV_HD void nvshmem_info_get_name(char* name) {
    const char* s = NVSHMEM_VENDOR_STRING;
    int i = 0;
    for (; s[i] && i < NVSHMEM_MAX_NAME_LEN - 1; i++) name[i] = s[i];
    name[i] = 0;
}
RSHMEMC_NV_HD void nvshmemx_vendor_get_version_info(int* major, int* minor, int* patch) {
    *major = NVSHMEM_VENDOR_MAJOR_VERSION;
    *minor = NVSHMEM_VENDOR_MINOR_VERSION;
    *patch = NVSHMEM_VENDOR_PATCH_VERSION;
}
RSHMEMC_NV_HD uint64_t nvshmem_signal_fetch(uint64_t* sig) { return RSHMEMC_NV_PICK(rshmem_signal_fetch(sig), rshmemx_cuda_signal_fetch(sig)); }
RSHMEMC_NV_HD void nvshmemx_signal_op(uint64_t* sig, uint64_t v, int op, int pe) {
    RSHMEMC_NV_PICK(rshmem_signal_op(sig, v, op, pe),
                    rshmemx_cuda_signal_op(sig, v, op, pe));
}

/* Bytes, from host (local side host or device memory: rshmemx_putmem) or device. */
RSHMEMC_NV_HD void nvshmem_putmem(void* d, const void* s, size_t n, int pe) { RSHMEMC_NV_PICK(rshmem_putmem(d, s, n, pe), rshmemx_putmem(d, s, n, pe)); }
RSHMEMC_NV_HD void nvshmem_getmem(void* d, const void* s, size_t n, int pe) { RSHMEMC_NV_PICK(rshmem_getmem(d, s, n, pe), rshmemx_getmem(d, s, n, pe)); }
RSHMEMC_NV_HD void nvshmem_putmem_nbi(void* d, const void* s, size_t n, int pe) {
    RSHMEMC_NV_PICK(rshmem_putmem_nbi(d, s, n, pe), rshmemx_putmem_nbi(d, s, n, pe));
}
RSHMEMC_NV_HD void nvshmem_getmem_nbi(void* d, const void* s, size_t n, int pe) {
    RSHMEMC_NV_PICK(rshmem_getmem_nbi(d, s, n, pe), rshmemx_getmem_nbi(d, s, n, pe));
}

/* Typed put/get/p/g, from host or device, of NVSHMEM type T; on the device on rshmem's type
 * RT of the same bits (T itself but for half and __nv_bfloat16: rshmem_half, rshmem_bf16;
 * rshmemc_nv_bits / rshmemc_nv_value in rshmem_nvshmem_device.cuh convert the values). */
#ifdef RSHMEMC_NV_DEVICE_PASS
#define RSHMEMC_NV_HD_RMA_AS(NAME, T, RT)                                                                               \
    RSHMEMC_NV_HD void nvshmem_##NAME##_p(T* d, T v, int pe) { rshmem_##NAME##_p((RT*)d, rshmemc_nv_bits(v), pe); }      \
    RSHMEMC_NV_HD T nvshmem_##NAME##_g(const T* s, int pe) { return rshmemc_nv_value(rshmem_##NAME##_g((const RT*)s, pe)); } \
    RSHMEMC_NV_HD void nvshmem_##NAME##_put(T* d, const T* s, size_t n, int pe) {                                       \
        rshmem_##NAME##_put((RT*)d, (const RT*)s, n, pe);                                                               \
    }                                                                                                                   \
    RSHMEMC_NV_HD void nvshmem_##NAME##_get(T* d, const T* s, size_t n, int pe) {                                       \
        rshmem_##NAME##_get((RT*)d, (const RT*)s, n, pe);                                                               \
    }                                                                                                                   \
    RSHMEMC_NV_HD void nvshmem_##NAME##_put_nbi(T* d, const T* s, size_t n, int pe) {                                   \
        rshmem_##NAME##_put_nbi((RT*)d, (const RT*)s, n, pe);                                                           \
    }                                                                                                                   \
    RSHMEMC_NV_HD void nvshmem_##NAME##_get_nbi(T* d, const T* s, size_t n, int pe) {                                   \
        rshmem_##NAME##_get_nbi((RT*)d, (const RT*)s, n, pe);                                                           \
    }
#else
#define RSHMEMC_NV_HD_RMA_AS(NAME, T, RT)                                                                               \
    RSHMEMC_NV_HD void nvshmem_##NAME##_p(T* d, T v, int pe) { rshmemx_putmem(d, &v, sizeof(T), pe); }                  \
    RSHMEMC_NV_HD T nvshmem_##NAME##_g(const T* s, int pe) {                                                            \
        T v;                                                                                                            \
        rshmemx_getmem(&v, s, sizeof(T), pe);                                                                           \
        return v;                                                                                                       \
    }                                                                                                                   \
    RSHMEMC_NV_HD void nvshmem_##NAME##_put(T* d, const T* s, size_t n, int pe) { rshmemx_putmem(d, s, n * sizeof(T), pe); } \
    RSHMEMC_NV_HD void nvshmem_##NAME##_get(T* d, const T* s, size_t n, int pe) { rshmemx_getmem(d, s, n * sizeof(T), pe); } \
    RSHMEMC_NV_HD void nvshmem_##NAME##_put_nbi(T* d, const T* s, size_t n, int pe) { rshmemx_putmem_nbi(d, s, n * sizeof(T), pe); } \
    RSHMEMC_NV_HD void nvshmem_##NAME##_get_nbi(T* d, const T* s, size_t n, int pe) { rshmemx_getmem_nbi(d, s, n * sizeof(T), pe); }
#endif
#define RSHMEMC_NV_HD_RMA(NAME, T) RSHMEMC_NV_HD_RMA_AS(NAME, T, T)
RSHMEM_RMA_TYPES(RSHMEMC_NV_HD_RMA)
#ifdef RSHMEMC_NV_HALF_TYPES
RSHMEMC_NV_HD_RMA_AS(half, half, rshmem_half)
RSHMEMC_NV_HD_RMA_AS(bfloat16, __nv_bfloat16, rshmem_bf16)
#endif
#endif /* host or device pass */

#endif /* RSHMEM_NVSHMEM_H */

/* libnvshmem_host: the host-only calls of rshmem's NVSHMEM compatibility layer, as real
 * functions (so that programs linking -lnvshmem_host find them), on libshmem's C ABI and
 * its C host API for GPU PEs (rshmemx_cuda.h). Written by the rshmem project from
 * NVSHMEM's public API names and signatures; NVSHMEM is NVIDIA's, and rshmem is not
 * affiliated with NVIDIA. Build: scripts/nvshmem-compat-home.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rshmem_nvshmem.h"
#include <shmemx.h>

/* The host handle of each device team slot this library has seen (teams are numbers in
 * NVSHMEM's API; the slot is rshmemx_team_device's answer). */
#define RSHMEMC_NV_MAX_TEAMS 1024
static shmem_team_t team_handles[RSHMEMC_NV_MAX_TEAMS];
static int initialized;

static void die(const char* call, const char* arg, const char* what) {
    fprintf(stderr, "rshmem (NVSHMEM compatibility): %s: argument %s: %s\n", call, arg, what);
    rshmemx_cuda_global_exit(1);
    abort();
}

shmem_team_t rshmemc_nv_team(nvshmem_team_t team) {
    if (team == NVSHMEM_TEAM_WORLD) return SHMEM_TEAM_WORLD;
    if (team == NVSHMEM_TEAM_SHARED) return SHMEM_TEAM_SHARED;
    if (team < 0 || team >= RSHMEMC_NV_MAX_TEAMS || team_handles[team] == SHMEM_TEAM_INVALID) return SHMEM_TEAM_INVALID;
    return team_handles[team];
}

/* Records a team made on the host and returns its number (NVSHMEM_TEAM_INVALID for a PE
 * outside it). */
static nvshmem_team_t team_number(const char* call, shmem_team_t t) {
    int slot;
    if (t == SHMEM_TEAM_INVALID) return NVSHMEM_TEAM_INVALID;
    slot = rshmemx_team_device(t);
    if (slot < 0 || slot >= RSHMEMC_NV_MAX_TEAMS) die(call, "new_team", "the new team has no device slot below 1024");
    team_handles[slot] = t;
    return slot;
}

static int init_gpu_pes(const char* call, int requested, int* provided) {
    int rc = requested < 0 ? rshmemx_cuda_init() : rshmemx_cuda_init_thread(requested, provided);
    if (rc != 0) {
        fprintf(stderr, "rshmem (NVSHMEM compatibility): %s: GPU init failed (%d)\n", call, rc);
        return NVSHMEMX_ERROR_INTERNAL;
    }
    initialized = 1;
    return NVSHMEMX_SUCCESS;
}

int nvshmemx_init_attr(unsigned int flags, nvshmemx_init_attr_t* attr) {
    const char* call = "nvshmemx_init_attr";
    int rc;
    if (flags & ~(unsigned)(NVSHMEMX_INIT_WITH_MPI_COMM | NVSHMEMX_INIT_WITH_UNIQUEID | NVSHMEMX_INIT_WITH_SHMEM)) {
        fprintf(stderr, "rshmem (NVSHMEM compatibility): %s: flags %#x: only NVSHMEMX_INIT_WITH_MPI_COMM, _WITH_UNIQUEID and "
                        "_WITH_SHMEM are supported (no NVSHMEMX_INIT_THREAD_PES)\n", call, flags);
        return NVSHMEMX_ERROR_NOT_SUPPORTED;
    }
    if ((flags & (NVSHMEMX_INIT_WITH_MPI_COMM | NVSHMEMX_INIT_WITH_UNIQUEID)) && !attr) die(call, "attr", "null");
    if (flags & NVSHMEMX_INIT_WITH_SHMEM) {
        /* After shmem_init: NVSHMEM's GPU PEs start over the PEs shmem_init started (a second
         * runtime of the same PEs over their bootstrap, unless shmem_init's PEs are GPU PEs
         * already, RSHMEM_DEVICE=gpu); shmem_* calls keep acting on shmem_init's PEs and
         * heap, nvshmem* calls on the GPU PEs'. Before shmem_init it is a plain GPU init. */
        int started = 0;
        shmem_query_initialized(&started);
        if (started) {
            if (rshmemx_cuda_init_with_shmem() != 0) {
                fprintf(stderr, "rshmem (NVSHMEM compatibility): %s: NVSHMEMX_INIT_WITH_SHMEM: the GPU PEs could not start over "
                                "shmem_init's PEs (the message above says why)\n",
                        call);
                return NVSHMEMX_ERROR_INTERNAL;
            }
            initialized = 1;
            return NVSHMEMX_SUCCESS;
        }
    }
    if (flags & NVSHMEMX_INIT_WITH_UNIQUEID) {
        /* The PEs meet over TCP at the id rank 0 made (nvshmemx_get_uniqueid) and the
         * program handed around; rank 0 must be the process that made it. */
        const nvshmemx_uniqueid_args_t* u = &attr->args.uid_args;
        if (!u->uid) die(call, "attr", "no unique id: call nvshmemx_set_attr_uniqueid_args first");
        if (strncmp(u->uid->internal, "rshmem-tcp1 ", 12) != 0) die(call, "uniqueid", "not an id of nvshmemx_get_uniqueid");
        rc = rshmemx_cuda_init_uniqueid(u->uid->internal, u->myrank, u->nranks);
    } else if (flags & NVSHMEMX_INIT_WITH_MPI_COMM) {
        /* The communicator's ranks are the PEs (its rank 0 makes an id and broadcasts it). */
        void* comm = attr->mpi_comm ? attr->mpi_comm : attr->args.mpi_comm;
        if (!comm) die(call, "attr", "no communicator: set attr.mpi_comm to the address of an MPI_Comm");
        rc = rshmemx_cuda_init_mpi_comm(comm);
    } else {
        return init_gpu_pes(call, -1, NULL);
    }
    if (rc != 0) {
        fprintf(stderr, "rshmem (NVSHMEM compatibility): %s: GPU init failed (%d)\n", call, rc);
        return NVSHMEMX_ERROR_INTERNAL;
    }
    initialized = 1;
    return NVSHMEMX_SUCCESS;
}

int nvshmemx_hostlib_init_attr(unsigned int flags, nvshmemx_init_attr_t* attr) { return nvshmemx_init_attr(flags, attr); }

int nvshmem_init_thread(int requested, int* provided) { return init_gpu_pes("nvshmem_init_thread", requested, provided); }

void nvshmem_query_thread(int* provided) { shmem_query_thread(provided); }

int nvshmemx_init_status(void) { return initialized ? NVSHMEM_STATUS_IS_INITIALIZED : NVSHMEM_STATUS_NOT_INITIALIZED; }

void nvshmemx_hostlib_finalize(void) { rshmemx_cuda_finalize(); }

int nvshmemx_get_uniqueid(nvshmemx_uniqueid_t* id) {
    /* A meeting point on this host (rank 0's): its address and a job key, as text. */
    if (!id) die("nvshmemx_get_uniqueid", "uniqueid", "null");
    memset(id, 0, sizeof *id);
    id->version = 1;
    return shmemx_get_uniqueid(id->internal, sizeof id->internal) == 0 ? NVSHMEMX_SUCCESS : NVSHMEMX_ERROR_INTERNAL;
}

int nvshmemx_set_attr_uniqueid_args(int myrank, int nranks, const nvshmemx_uniqueid_t* id, nvshmemx_init_attr_t* attr) {
    if (!attr) die("nvshmemx_set_attr_uniqueid_args", "attr", "null");
    if (!id) die("nvshmemx_set_attr_uniqueid_args", "uniqueid", "null");
    if (nranks < 1 || myrank < 0 || myrank >= nranks) die("nvshmemx_set_attr_uniqueid_args", "myrank", "not in [0, nranks)");
    attr->args.uid_args.myrank = myrank;
    attr->args.uid_args.nranks = nranks;
    attr->args.uid_args.uid = id;
    return NVSHMEMX_SUCCESS;
}

int nvshmemx_set_attr_mpi_comm_args(void* mpi_comm, nvshmemx_init_attr_t* attr) {
    if (!attr) die("nvshmemx_set_attr_mpi_comm_args", "attr", "null");
    attr->mpi_comm = mpi_comm;
    attr->args.mpi_comm = mpi_comm;
    return NVSHMEMX_SUCCESS;
}

void* nvshmem_malloc(size_t size) { return rshmemx_cuda_malloc(size); }
void* nvshmem_calloc(size_t count, size_t size) { return rshmemx_cuda_calloc(count, size); }
void* nvshmem_align(size_t alignment, size_t size) { return rshmemx_cuda_align(alignment, size); }
void nvshmem_free(void* ptr) { rshmemx_cuda_free(ptr); }
int nvshmemx_buffer_register(void* addr, size_t length) { return rshmemx_buffer_register(addr, length); }
int nvshmemx_buffer_unregister(void* addr) { return rshmemx_buffer_unregister(addr); }

void* nvshmemx_buffer_register_symmetric(void* addr, size_t length, int flags) {
    (void)addr;
    (void)length;
    (void)flags;
    fprintf(stderr, "rshmem (NVSHMEM compatibility): nvshmemx_buffer_register_symmetric is not supported\n");
    return NULL;
}

int nvshmemx_buffer_unregister_symmetric(void* addr, size_t length) {
    (void)addr;
    (void)length;
    fprintf(stderr, "rshmem (NVSHMEM compatibility): nvshmemx_buffer_unregister_symmetric is not supported\n");
    return NVSHMEMX_ERROR_NOT_SUPPORTED;
}

int nvshmem_team_split_strided(nvshmem_team_t parent, int start, int stride, int size, const nvshmem_team_config_t* config,
                               long config_mask, nvshmem_team_t* new_team) {
    const char* call = "nvshmem_team_split_strided";
    shmem_team_t t = SHMEM_TEAM_INVALID;
    int rc;
    (void)config;
    (void)config_mask;
    if (!new_team) die(call, "new_team", "null");
    rc = rshmemx_cuda_team_split_strided(rshmemc_nv_team(parent), start, stride, size, NULL, 0, &t);
    *new_team = rc == 0 ? team_number(call, t) : NVSHMEM_TEAM_INVALID;
    return rc;
}

int nvshmem_team_split_2d(nvshmem_team_t parent, int xrange, const nvshmem_team_config_t* xconfig, long xmask,
                          nvshmem_team_t* xteam, const nvshmem_team_config_t* yconfig, long ymask, nvshmem_team_t* yteam) {
    const char* call = "nvshmem_team_split_2d";
    shmem_team_t x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
    int rc;
    (void)xconfig;
    (void)xmask;
    (void)yconfig;
    (void)ymask;
    if (!xteam || !yteam) die(call, xteam ? "yaxis_team" : "xaxis_team", "null");
    rc = rshmemx_cuda_team_split_2d(rshmemc_nv_team(parent), xrange, NULL, 0, &x, NULL, 0, &y);
    *xteam = rc == 0 ? team_number(call, x) : NVSHMEM_TEAM_INVALID;
    *yteam = rc == 0 ? team_number(call, y) : NVSHMEM_TEAM_INVALID;
    return rc;
}

void nvshmem_team_destroy(nvshmem_team_t team) {
    shmem_team_t t = rshmemc_nv_team(team);
    if (team == NVSHMEM_TEAM_WORLD || team == NVSHMEM_TEAM_SHARED || t == SHMEM_TEAM_INVALID) return;
    rshmemx_cuda_team_destroy(t);
    team_handles[team] = SHMEM_TEAM_INVALID;
}

void nvshmem_team_get_config(nvshmem_team_t team, nvshmem_team_config_t* config) {
    shmem_team_config_t c;
    if (!config) die("nvshmem_team_get_config", "config", "null");
    memset(&c, 0, sizeof c);
    (void)rshmemx_cuda_team_get_config(rshmemc_nv_team(team), SHMEM_TEAM_NUM_CONTEXTS, &c);
    config->num_contexts = c.num_contexts;
}

int nvshmemx_cumodule_init(CUmodule module) { return rshmemx_cumodule_init((rshmemx_cumodule_t)module); }
int nvshmemx_cumodule_finalize(CUmodule module) { return rshmemx_cumodule_finalize((rshmemx_cumodule_t)module); }

static rshmemx_dim3 dim3_of(dim3 d) {
    rshmemx_dim3 r;
    r.x = d.x;
    r.y = d.y;
    r.z = d.z;
    return r;
}

int nvshmemx_collective_launch(const void* func, dim3 grid, dim3 block, void** args, size_t shmem, cudaStream_t stream) {
    return rshmemx_collective_launch(func, dim3_of(grid), dim3_of(block), args, shmem, (rshmemx_stream_t)stream);
}

int nvshmemx_collective_launch_query_gridsize(const void* func, dim3 block, void** args, size_t shmem, int* gridsize) {
    return rshmemx_collective_launch_query_gridsize(func, dim3_of(block), args, shmem, gridsize);
}

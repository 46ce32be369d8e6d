/* Shared helpers of rshmem's C test programs. Every check failure prints what was wrong,
 * naming the PE, and ends the job with a non-zero status. */
#ifndef RSHMEM_TEST_CHECK_H
#define RSHMEM_TEST_CHECK_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "PE %d: %s:%d: check `%s` failed: ", shmem_my_pe(), __FILE__, \
                    __LINE__, #cond);                                                     \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            fflush(stderr);                                                               \
            shmem_global_exit(1);                                                         \
        }                                                                                 \
    } while (0)

/* The checks of a job that just started (tests/c/uniqueid.c, mpi_comm.c): each PE puts
 * 1000 + rank to the next PE around the ring, and the sum of rank + 1 over the world is
 * npes (npes + 1) / 2. */
static inline void check_ring_and_sum(int rank, int npes) {
    long *ring = (long *)shmem_malloc(sizeof(long)), *sum = (long *)shmem_malloc(sizeof(long));
    long *total = (long *)shmem_malloc(sizeof(long));
    *ring = -1;
    *sum = rank + 1;
    shmem_barrier_all();
    shmem_long_p(ring, 1000 + rank, (rank + 1) % npes);
    shmem_barrier_all();
    CHECK(*ring == 1000 + (rank + npes - 1) % npes, "ring holds %ld", *ring);
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, total, sum, 1) == 0, "reduce failed");
    CHECK(*total == (long)npes * (npes + 1) / 2, "sum %ld", *total);
    shmem_free(ring);
    shmem_free(sum);
    shmem_free(total);
}

#endif

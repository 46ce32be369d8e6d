/* A plain OpenSHMEM C program gets host memory from shmem_malloc, on any machine: it
 * stores to its own symmetric memory from the CPU, then reads a peer's. On a host with a
 * GPU this crashed while the heap defaulted to GPU memory; GPU memory is chosen only
 * explicitly (RSHMEM_DEVICE=gpu). */
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *p = shmem_malloc(4 * sizeof(long));
    CHECK(p != NULL, "shmem_malloc");
    p[0] = 42 + me;
    p[3] = -me;
    long *z = shmem_calloc(2, sizeof(long));
    CHECK(z[0] == 0 && z[1] == 0, "calloc zeroed");
    z[1] = me;
    shmem_barrier_all();
    int peer = (me + 1) % npes;
    CHECK(shmem_long_g(p, peer) == 42 + peer, "peer's p[0]");
    CHECK(shmem_long_g(&p[3], peer) == -peer && shmem_long_g(&z[1], peer) == peer, "peer's words");
    shmem_barrier_all();
    shmem_free(z);
    shmem_free(p);
    shmem_finalize();
    return 0;
}

/* GPU PEs started over shmem_init's CPU PEs (rshmemx_cuda_init_with_shmem, NVSHMEM's
 * NVSHMEMX_INIT_WITH_SHMEM). Without a CUDA device it must return 1 on every PE after a
 * message, with the CPU PEs running on and the GPU API's host routines acting on them (the
 * one runtime). With one, the GPU PEs are the same PEs, and finalizing them leaves the CPU
 * PEs running. Either way shmem_* calls move data through the CPU PEs' heap throughout. */
#include "check.h"
#include <rshmemx_cuda.h>

static void ring(long *word, long base) {
    int me = shmem_my_pe(), n = shmem_n_pes();
    long v = base + me;
    *word = -1;
    shmem_barrier_all();
    shmem_putmem(word, &v, sizeof v, (me + 1) % n);
    shmem_barrier_all();
    CHECK(*word == base + (me + n - 1) % n, "PE %d holds %ld, want %ld", me, *word, base + (me + n - 1) % n);
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    long *word = (long *)shmem_malloc(sizeof(long));
    ring(word, 100);
    int rc = rshmemx_cuda_init_with_shmem();
    CHECK(rc == 0 || rc == 1, "rshmemx_cuda_init_with_shmem returned %d", rc);
    /* The GPU API's runtime has the same PEs, whichever it is. */
    CHECK(rshmemx_cuda_my_pe() == me && rshmemx_cuda_n_pes() == n, "GPU API PE %d of %d, shmem PE %d of %d",
          rshmemx_cuda_my_pe(), rshmemx_cuda_n_pes(), me, n);
    CHECK(rshmemx_cuda_team_my_pe(SHMEM_TEAM_WORLD) == me, "GPU API world team PE %d", rshmemx_cuda_team_my_pe(SHMEM_TEAM_WORLD));
    rshmemx_cuda_barrier_all();
    rshmemx_cuda_quiet();
    ring(word, 200);
    if (rc == 0) {
        rshmemx_cuda_finalize();
        ring(word, 300);
    }
    if (me == 0) printf("gpu_over_cpu: %d PEs, %s\n", n, rc == 0 ? "GPU PEs started and finalized" : "no GPU PEs, CPU PEs ran on");
    shmem_free(word);
    shmem_finalize();
    return 0;
}

/* The shmemx.h extensions that programs written for other OpenSHMEM implementations
 * call: SHMEMX_TEAM_NODE, shmemx_wtime, and shmemx_ names of routines that OpenSHMEM
 * later standardized (pe_quiet, signal_add/set, the sum scans). */
#include "check.h"
#include <shmemx.h>
#include <stdint.h>

static uint64_t sig;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), next = (me + 1) % npes;
    /* The node team is the shared-memory team: every PE on one host (each PE alone when
     * RSHMEM_TRANSPORT=ucx makes every PE a domain of its own). */
    int node_n = shmem_team_n_pes(SHMEMX_TEAM_NODE);
    CHECK(node_n >= 1 && node_n == shmem_team_n_pes(SHMEM_TEAM_SHARED), "SHMEMX_TEAM_NODE has %d PEs", node_n);
    CHECK(shmem_team_my_pe(SHMEMX_TEAM_NODE) == shmem_team_my_pe(SHMEM_TEAM_SHARED), "SHMEMX_TEAM_NODE rank");
    CHECK(shmem_team_translate_pe(SHMEMX_TEAM_NODE, shmem_team_my_pe(SHMEMX_TEAM_NODE), SHMEM_TEAM_WORLD) == me, "translate");
    double t0 = shmemx_wtime();
    shmemx_signal_set(&sig, 5, next);
    shmemx_signal_add(&sig, 2, next);
    shmemx_ctx_signal_add(SHMEM_CTX_DEFAULT, &sig, 1, next);
    int targets[1] = {next};
    shmemx_pe_quiet(targets, 1);
    shmemx_ctx_pe_quiet(SHMEM_CTX_DEFAULT, targets, 1);
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 8);
    long *src = shmem_malloc(2 * sizeof(long)), *dst = shmem_malloc(2 * sizeof(long));
    src[0] = me + 1, src[1] = 1;
    shmem_barrier_all();
    CHECK(shmemx_long_sum_inscan(SHMEM_TEAM_WORLD, dst, src, 2) == 0, "inscan rc");
    CHECK(dst[0] == (long)(me + 1) * (me + 2) / 2 && dst[1] == me + 1, "shmemx_long_sum_inscan gave %ld, %ld", dst[0], dst[1]);
    CHECK(shmemx_long_sum_exscan(SHMEM_TEAM_WORLD, dst, src, 2) == 0 && dst[1] == me, "shmemx_long_sum_exscan");
    double t1 = shmemx_wtime();
    CHECK(t0 >= 0 && t1 >= t0, "shmemx_wtime went from %f to %f", t0, t1);
    shmem_barrier_all();
    shmem_free(dst);
    shmem_free(src);
    shmem_finalize();
    return 0;
}

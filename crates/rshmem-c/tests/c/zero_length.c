/* Transfers of zero elements are valid and do nothing, whatever the pointers: RMA (put,
 * get, their non-blocking, strided and block-strided forms, typed, sized and byte),
 * put-with-signal (the signal is still delivered), and collectives with nelems 0, team
 * based and active-set. NULL stands for "no buffer" throughout. */
#include "check.h"
#include <stdint.h>

static long pSync[SHMEM_REDUCE_SYNC_SIZE];
static long pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static uint64_t sig;

int main(void) {
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), pe = (me + 1) % npes;
    shmem_putmem(NULL, NULL, 0, pe);
    shmem_getmem(NULL, NULL, 0, pe);
    shmem_putmem_nbi(NULL, NULL, 0, pe);
    shmem_getmem_nbi(NULL, NULL, 0, pe);
    shmem_ctx_putmem(SHMEM_CTX_DEFAULT, NULL, NULL, 0, pe);
    shmem_long_put(NULL, NULL, 0, pe);
    shmem_long_get(NULL, NULL, 0, pe);
    shmem_double_put_nbi(NULL, NULL, 0, pe);
    shmem_int_get_nbi(NULL, NULL, 0, pe);
    shmem_put32(NULL, NULL, 0, pe);
    shmem_get64(NULL, NULL, 0, pe);
    shmem_long_iput(NULL, NULL, 1, 1, 0, pe);
    shmem_long_iget(NULL, NULL, 1, 1, 0, pe);
    shmem_iput32(NULL, NULL, 2, 3, 0, pe);
    shmem_iget128(NULL, NULL, 2, 3, 0, pe);
    shmem_long_ibput(NULL, NULL, 1, 1, 4, 0, pe);
    shmem_long_ibget(NULL, NULL, 1, 1, 0, 3, pe);
    shmem_quiet();
    /* The signal of a zero-length put-with-signal still arrives. */
    shmem_putmem_signal(NULL, NULL, 0, &sig, 7, SHMEM_SIGNAL_SET, pe);
    shmem_long_put_signal_nbi(NULL, NULL, 0, &sig, 1, SHMEM_SIGNAL_ADD, pe);
    shmem_signal_wait_until(&sig, SHMEM_CMP_EQ, 8);
    shmem_barrier_all();
    /* Team collectives. */
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, NULL, NULL, 0, 0) == 0, "broadcast");
    CHECK(shmem_broadcastmem(SHMEM_TEAM_WORLD, NULL, NULL, 0, 0) == 0, "broadcastmem");
    CHECK(shmem_long_collect(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "collect");
    CHECK(shmem_long_fcollect(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "fcollect");
    CHECK(shmem_collectmem(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "collectmem");
    CHECK(shmem_long_alltoall(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "alltoall");
    CHECK(shmem_long_alltoalls(SHMEM_TEAM_WORLD, NULL, NULL, 1, 1, 0) == 0, "alltoalls");
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "sum_reduce");
    CHECK(shmem_uint_and_reduce(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "and_reduce");
    CHECK(shmem_double_max_reduce(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "max_reduce");
    CHECK(shmem_long_sum_inscan(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "inscan");
    CHECK(shmem_long_sum_exscan(SHMEM_TEAM_WORLD, NULL, NULL, 0) == 0, "exscan");
    /* Active-set collectives. */
    shmem_broadcast64(NULL, NULL, 0, 0, 0, 0, npes, pSync);
    shmem_fcollect32(NULL, NULL, 0, 0, 0, npes, pSync);
    shmem_collect64(NULL, NULL, 0, 0, 0, npes, pSync);
    shmem_alltoall64(NULL, NULL, 0, 0, 0, npes, pSync);
    shmem_alltoalls32(NULL, NULL, 1, 1, 0, 0, 0, npes, pSync);
    shmem_long_sum_to_all(NULL, NULL, 0, 0, 0, npes, pWrk, pSync);
    shmem_barrier_all();
    CHECK(sig == 8, "signal %llu", (unsigned long long)sig);
    shmem_finalize();
    return 0;
}

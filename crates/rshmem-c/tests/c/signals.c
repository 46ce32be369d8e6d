/* Signals: put-with-signal (typed, generic, sized, mem; blocking and nbi; ctx forms) with
 * SHMEM_SIGNAL_SET and SHMEM_SIGNAL_ADD, signal_fetch, signal_wait_until, and the 1.6
 * signal_add/signal_set. The receiver sees the data once it sees the signal. */
#include "check.h"

#define N 512

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    long *data = shmem_calloc(N, sizeof(long));
    uint64_t *sig = shmem_calloc(4, sizeof(uint64_t));
    long src[N];
    for (int i = 0; i < N; i++) src[i] = me * 10000L + i;
    shmem_barrier_all();

    shmem_long_put_signal(data, src, N, &sig[0], 1, SHMEM_SIGNAL_SET, next);
    uint64_t got = shmem_signal_wait_until(&sig[0], SHMEM_CMP_EQ, 1);
    CHECK(got == 1, "signal_wait_until returned %llu", (unsigned long long)got);
    for (int i = 0; i < N; i++) CHECK(data[i] == prev * 10000L + i, "data[%d] after the signal", i);
    CHECK(shmem_signal_fetch(&sig[0]) == 1, "signal_fetch");

    /* Several adds accumulate: generic, ctx, nbi, sized, mem forms, each adding 1. */
    shmem_barrier_all();
    shmem_put_signal(data, src, 8, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
    shmem_put_signal_nbi(SHMEM_CTX_DEFAULT, data + 8, src + 8, 8, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
    shmem_ctx_long_put_signal_nbi(SHMEM_CTX_DEFAULT, data + 16, src + 16, 8, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
    shmem_put64_signal(data + 24, src + 24, 8, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
    shmem_ctx_put32_signal_nbi(SHMEM_CTX_DEFAULT, data + 32, src + 32, 16, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
    shmem_putmem_signal(data + 40, src + 40, 64, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
    shmem_putmem_signal_nbi(data + 48, src + 48, 64, &sig[1], 1, SHMEM_SIGNAL_ADD, next);
    shmem_quiet();
    shmem_signal_wait_until(&sig[1], SHMEM_CMP_EQ, 7);
    for (int i = 0; i < 56; i++) CHECK(data[i] == prev * 10000L + i, "accumulated puts: data[%d]", i);

    /* signal_add / signal_set (1.6) and waiting on them with the generic wait */
    shmem_barrier_all();
    shmem_signal_add(&sig[2], 5, next);
    shmem_ctx_signal_add(SHMEM_CTX_DEFAULT, &sig[2], 6, next);
    shmem_wait_until(&sig[2], SHMEM_CMP_EQ, 11);
    shmem_barrier_all();
    shmem_signal_set(&sig[2], 3, next);
    shmem_signal_wait_until(&sig[2], SHMEM_CMP_EQ, 3);
    shmem_barrier_all();
    shmem_ctx_signal_set(SHMEM_CTX_DEFAULT, &sig[2], 4, next);
    CHECK(shmem_signal_wait_until(&sig[2], SHMEM_CMP_GE, 4) == 4, "ctx signal_set");

    /* long double moves as bytes with its signal */
    long double *ld = shmem_calloc(4, sizeof(long double));
    long double lsrc[4] = {1.25L, 2.5L, 3.75L, (long double)me};
    shmem_barrier_all();
    shmem_longdouble_put_signal(ld, lsrc, 4, &sig[3], 1, SHMEM_SIGNAL_SET, next);
    shmem_signal_wait_until(&sig[3], SHMEM_CMP_EQ, 1);
    CHECK(ld[0] == 1.25L && ld[3] == (long double)prev, "long double put_signal");
    shmem_barrier_all();
    shmem_free(ld);
    shmem_free(sig);
    shmem_free(data);
    shmem_finalize();
    return 0;
}

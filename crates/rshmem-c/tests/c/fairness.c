/* The _any routines are fair (OpenSHMEM 1.5, shmem_test_any / shmem_wait_until_any): a
 * series of calls eventually returns every index whose variable satisfies the condition.
 * Here every flag stays set, so each index must come back within one round of calls. */
#include "check.h"
#include <stdint.h>
#include <string.h>

#define K 7

static int me, npes;

/* Calls `next()` K times and checks that every index not excluded by `status` came back. */
#define ROUND(what, status, call)                                                           \
    do {                                                                                    \
        const int *st = (status);                                                           \
        int seen[K], want = 0;                                                              \
        memset(seen, 0, sizeof seen);                                                       \
        for (int i = 0; i < K; i++) want += st == NULL || st[i] == 0;                       \
        for (int r = 0; r < want; r++) {                                                    \
            size_t i = (call);                                                              \
            CHECK(i < K, what ": call %d returned %zu", r, i);                              \
            CHECK(st == NULL || st[i] == 0, what ": excluded index %zu returned", i);       \
            seen[i]++;                                                                      \
        }                                                                                   \
        for (int i = 0; i < K; i++)                                                         \
            CHECK(seen[i] == (st == NULL || st[i] == 0), what ": index %d came back %d times in %d calls", i, seen[i], want); \
    } while (0)

int main(void) {
    shmem_init();
    me = shmem_my_pe(), npes = shmem_n_pes();
    int *flags = shmem_calloc(K, sizeof(int));
    long *counts = shmem_calloc(K, sizeof(long));
    int next = (me + 1) % npes;
    for (int i = 0; i < K; i++) {
        shmem_int_p(&flags[i], 1, next);
        shmem_long_p(&counts[i], 10 + i, next);
    }
    shmem_barrier_all();
    int none[K] = {0};
    int some[K] = {0, 1, 0, 0, 1, 0, 0}; /* indices 1 and 4 excluded */
    long above[K] = {9, 10, 11, 12, 13, 14, 15};
    ROUND("test_any", NULL, shmem_int_test_any(flags, K, NULL, SHMEM_CMP_EQ, 1));
    ROUND("test_any with status", some, shmem_int_test_any(flags, K, some, SHMEM_CMP_EQ, 1));
    ROUND("wait_until_any", none, shmem_int_wait_until_any(flags, K, none, SHMEM_CMP_NE, 0));
    ROUND("generic test_any", NULL, shmem_test_any(flags, K, NULL, SHMEM_CMP_GE, 1));
    ROUND("test_any_vector", NULL, shmem_long_test_any_vector(counts, K, NULL, SHMEM_CMP_GT, above));
    ROUND("wait_until_any_vector", some, shmem_long_wait_until_any_vector(counts, K, some, SHMEM_CMP_GE, above));
    /* The caller clears each index it is given: every one is handed out once, then none. */
    shmem_barrier_all();
    for (int r = 0; r < K; r++) {
        size_t i = shmem_int_wait_until_any(flags, K, NULL, SHMEM_CMP_EQ, 1);
        CHECK(i < K && flags[i] == 1, "clearing round %d got %zu", r, i);
        flags[i] = 0;
    }
    CHECK(shmem_int_test_any(flags, K, NULL, SHMEM_CMP_EQ, 1) == SIZE_MAX, "all cleared");
    shmem_barrier_all();
    shmem_free(counts);
    shmem_free(flags);
    shmem_finalize();
    return 0;
}

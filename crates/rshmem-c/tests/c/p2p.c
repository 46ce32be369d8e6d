/* Point-to-point synchronization and ordering: wait_until (typed and generic), test,
 * the _all/_any/_some forms and their _vector twins, the deprecated wait; fence, quiet,
 * pe_quiet. */
#include "check.h"
#include <stdint.h>

#define K 8

static int me, npes, next, prev;

/* A ring of flag puts: PE i sets PE i+1's flag, which waits for it. */
static void test_wait_until(void) {
    static long flag;
    static int iflag;
    uint64_t *u = shmem_calloc(1, sizeof(uint64_t));
    shmem_barrier_all();
    shmem_long_p(&flag, 10 + prev, next); /* value that PE next expects */
    shmem_long_wait_until(&flag, SHMEM_CMP_EQ, 10 + (prev + npes - 1) % npes);
    shmem_int_p(&iflag, 5, next);
    shmem_wait_until(&iflag, SHMEM_CMP_GE, 5);
    shmem_uint64_p(u, 77, next);
    shmem_wait_until(u, SHMEM_CMP_NE, 0);
    CHECK(*u == 77, "uint64 wait_until saw %llu", (unsigned long long)*u);
    CHECK(shmem_test(u, SHMEM_CMP_EQ, 77) == 1, "test true");
    CHECK(shmem_uint64_test(u, SHMEM_CMP_LT, 77) == 0, "test false");
    CHECK(shmem_test(&flag, SHMEM_CMP_GT, 0L) == 1, "generic test");
    /* deprecated wait: returns once the value differs */
    shmem_barrier_all();
    shmem_int_p(&iflag, 6, next);
    shmem_int_wait(&iflag, 5);
    CHECK(iflag == 6, "wait saw %d", iflag);
    shmem_barrier_all();
    shmem_long_p(&flag, 99, next);
    shmem_wait(&flag, 10 + (prev + npes - 1) % npes);
    CHECK(flag == 99, "deprecated shmem_wait saw %ld", flag);
    shmem_barrier_all();
    shmem_free(u);
}

static void test_arrays(void) {
    int *ivars = shmem_calloc(K, sizeof(int));
    int status[K] = {0};
    size_t idx[K];
    shmem_barrier_all();
    /* The previous PE sets elements 1, 3 and 6. */
    shmem_int_p(&ivars[1], 1, next);
    shmem_int_p(&ivars[3], 1, next);
    shmem_int_p(&ivars[6], 1, next);
    size_t any = shmem_int_wait_until_any(ivars, K, status, SHMEM_CMP_EQ, 1);
    CHECK(any == 1 || any == 3 || any == 6, "wait_until_any returned %zu", any);
    shmem_quiet();
    shmem_barrier_all();
    size_t n = shmem_int_wait_until_some(ivars, K, idx, status, SHMEM_CMP_EQ, 1);
    CHECK(n == 3 && idx[0] == 1 && idx[1] == 3 && idx[2] == 6, "wait_until_some found %zu", n);
    CHECK(shmem_int_test_some(ivars, K, idx, status, SHMEM_CMP_EQ, 0) == 5, "test_some of zeros");
    CHECK(shmem_int_test_all(ivars, K, status, SHMEM_CMP_EQ, 1) == 0, "test_all with zeros left");
    for (int i = 0; i < K; i++) status[i] = !(i == 1 || i == 3 || i == 6);
    CHECK(shmem_int_test_all(ivars, K, status, SHMEM_CMP_EQ, 1) == 1, "test_all on the set ones");
    shmem_int_wait_until_all(ivars, K, status, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < K; i++) status[i] = 1;
    CHECK(shmem_int_test_any(ivars, K, status, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any with all excluded");
    CHECK(shmem_int_wait_until_any(ivars, K, status, SHMEM_CMP_EQ, 1) == SIZE_MAX, "wait_until_any with all excluded");
    CHECK(shmem_int_test_any(ivars, 0, NULL, SHMEM_CMP_EQ, 1) == SIZE_MAX, "test_any of nothing");
    CHECK(shmem_test_any(ivars, K, NULL, SHMEM_CMP_EQ, 1) != SIZE_MAX, "generic test_any");
    CHECK(shmem_test_all(ivars, K, NULL, SHMEM_CMP_GE, 0) == 1, "generic test_all");
    CHECK(shmem_test_some(ivars, K, idx, NULL, SHMEM_CMP_EQ, 1) == 3, "generic test_some");

    /* vector forms: element i waits for value i */
    long *lv = shmem_calloc(K, sizeof(long));
    long want[K];
    for (int i = 0; i < K; i++) want[i] = i + 100;
    shmem_barrier_all();
    for (int i = K - 1; i >= 0; i--) shmem_long_p(&lv[i], i + 100, next);
    shmem_long_wait_until_all_vector(lv, K, NULL, SHMEM_CMP_EQ, want);
    CHECK(shmem_long_test_all_vector(lv, K, NULL, SHMEM_CMP_EQ, want) == 1, "test_all_vector");
    CHECK(shmem_long_test_any_vector(lv, K, NULL, SHMEM_CMP_GT, want) == SIZE_MAX, "test_any_vector none");
    want[4] = 0;
    CHECK(shmem_test_any_vector(lv, K, NULL, SHMEM_CMP_GT, want) == 4, "generic test_any_vector");
    CHECK(shmem_long_test_some_vector(lv, K, idx, NULL, SHMEM_CMP_GT, want) == 1 && idx[0] == 4, "test_some_vector");
    CHECK(shmem_wait_until_any_vector(lv, K, NULL, SHMEM_CMP_GT, want) == 4, "wait_until_any_vector");
    CHECK(shmem_long_wait_until_some_vector(lv, K, idx, NULL, SHMEM_CMP_GT, want) == 1, "wait_until_some_vector");
    shmem_wait_until_all_vector(lv, K, NULL, SHMEM_CMP_GE, want);
    shmem_barrier_all();
    shmem_free(lv);
    shmem_free(ivars);
}

/* Ordering: data put before a fence is visible once the flag put after it is. */
static void test_ordering(void) {
    int *data = shmem_calloc(1024, sizeof(int));
    int *flag = shmem_calloc(1, sizeof(int));
    int src[1024];
    for (int i = 0; i < 1024; i++) src[i] = me * 5000 + i;
    shmem_barrier_all();
    shmem_int_put(data, src, 1024, next);
    shmem_fence();
    shmem_int_p(flag, 1, next);
    shmem_int_wait_until(flag, SHMEM_CMP_EQ, 1);
    for (int i = 0; i < 1024; i++) CHECK(data[i] == prev * 5000 + i, "fence: data[%d] = %d", i, data[i]);
    shmem_barrier_all();
    *flag = 0;
    shmem_barrier_all();
    shmem_int_put_nbi(data, src, 512, next);
    shmem_ctx_fence(SHMEM_CTX_DEFAULT);
    int target = next;
    shmem_pe_quiet(&target, 1);
    shmem_ctx_pe_quiet(SHMEM_CTX_DEFAULT, &target, 1);
    shmem_pe_quiet(NULL, 0);
    shmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_int_p(flag, 2, next);
    shmem_int_wait_until(flag, SHMEM_CMP_EQ, 2);
    for (int i = 0; i < 512; i++) CHECK(data[i] == prev * 5000 + i, "pe_quiet: data[%d] = %d", i, data[i]);
    shmem_sync_all();
    shmem_barrier_all();
    shmem_free(flag);
    shmem_free(data);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
    test_wait_until();
    test_arrays();
    test_ordering();
    shmem_clear_cache_inv();
    shmem_set_cache_inv();
    shmem_udcflush();
    shmem_clear_cache_line_inv(&me);
    shmem_set_cache_line_inv(&me);
    shmem_udcflush_line(&me);
    shmem_finalize();
    return 0;
}

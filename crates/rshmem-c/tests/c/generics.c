/* The C11 type-generic interfaces accept every type of their tables: the bitwise atomics
 * (and, or, xor; fetching, non-fetching, non-blocking, with and without a context) take
 * int32_t and int64_t as well as the unsigned types, and the AND/OR/XOR reductions take
 * int8_t, int16_t, int32_t and int64_t. */
#include "check.h"
#include <stdint.h>

static int me, npes;

static void bitwise_atomics(void) {
    int32_t *a = shmem_calloc(4, sizeof(int32_t));
    int64_t *b = shmem_calloc(4, sizeof(int64_t));
    uint32_t *c = shmem_calloc(1, sizeof(uint32_t));
    int target = (me + 1) % npes;
    /* Each PE sets its own bit in its neighbour's words. */
    shmem_atomic_or(&a[0], (int32_t)1 << me % 31, target);
    shmem_atomic_or(SHMEM_CTX_DEFAULT, &b[0], (int64_t)1 << me % 63, target);
    shmem_atomic_xor(&a[1], (int32_t)-1, target);
    shmem_atomic_xor(SHMEM_CTX_DEFAULT, &b[1], (int64_t)-1, target);
    shmem_atomic_or(c, 5u, target);
    shmem_barrier_all();
    int prev = (me + npes - 1) % npes;
    CHECK(a[0] == (int32_t)1 << prev % 31, "int32 atomic_or gave %d", (int)a[0]);
    CHECK(b[0] == (int64_t)1 << prev % 63, "int64 atomic_or");
    CHECK(a[1] == -1 && b[1] == -1, "atomic_xor gave %d", (int)a[1]);
    CHECK(*c == 5u, "uint32 atomic_or");
    shmem_barrier_all();
    int32_t old32 = shmem_atomic_fetch_and(&a[1], (int32_t)0x0f, target);
    int64_t old64 = shmem_atomic_fetch_xor(SHMEM_CTX_DEFAULT, &b[1], (int64_t)1, target);
    CHECK(old32 == -1 && old64 == -1, "fetching bitwise atomics returned %d, %lld", (int)old32, (long long)old64);
    int32_t f32 = 0;
    int64_t f64 = 0;
    shmem_atomic_fetch_or_nbi(&f32, &a[2], (int32_t)3, target);
    shmem_atomic_fetch_and_nbi(SHMEM_CTX_DEFAULT, &f64, &b[2], (int64_t)3, target);
    shmem_quiet();
    CHECK(f32 == 0 && f64 == 0, "nbi fetches gave %d, %lld", (int)f32, (long long)f64);
    CHECK(shmem_atomic_fetch_or(&a[2], (int32_t)0, target) == 3, "fetch_or_nbi applied");
    shmem_barrier_all();
    CHECK(a[1] == 0x0f && b[1] == -2, "after fetch_and / fetch_xor: %d, %lld", (int)a[1], (long long)b[1]);
    shmem_barrier_all();
    shmem_free(c);
    shmem_free(b);
    shmem_free(a);
}

#define REDUCE_CHECK(TYPE)                                                                            \
    do {                                                                                               \
        TYPE *s = shmem_malloc(2 * sizeof(TYPE)), *d = shmem_malloc(2 * sizeof(TYPE));                \
        s[0] = (TYPE)(1 << (me % 7)), s[1] = (TYPE)(me == 0 ? 0x7f : 0x3f);                         \
        TYPE want_or = 0, want_xor = 0, want_and = 0x7f & 0x3f;                                        \
        for (int k = 0; k < npes; k++) want_or |= (TYPE)(1 << (k % 7)), want_xor ^= (TYPE)(1 << (k % 7)); \
        if (npes == 1) want_and = 0x7f;                                                                \
        shmem_barrier_all();                                                                           \
        CHECK(shmem_or_reduce(SHMEM_TEAM_WORLD, d, s, 1) == 0 && d[0] == want_or, #TYPE " or_reduce");  \
        CHECK(shmem_xor_reduce(SHMEM_TEAM_WORLD, d, s, 1) == 0 && d[0] == want_xor, #TYPE " xor_reduce"); \
        CHECK(shmem_and_reduce(SHMEM_TEAM_WORLD, d, s, 2) == 0 && d[1] == want_and, #TYPE " and_reduce"); \
        shmem_free(d);                                                                                 \
        shmem_free(s);                                                                                 \
    } while (0)

int main(void) {
    shmem_init();
    me = shmem_my_pe(), npes = shmem_n_pes();
    bitwise_atomics();
    REDUCE_CHECK(int8_t);
    REDUCE_CHECK(int16_t);
    REDUCE_CHECK(int32_t);
    REDUCE_CHECK(int64_t);
    REDUCE_CHECK(uint8_t);
    REDUCE_CHECK(size_t);
    shmem_finalize();
    return 0;
}

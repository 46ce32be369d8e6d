/* Atomics: every typed shmem_atomic_* routine (default and ctx forms, nbi fetching forms)
 * checked against a sequential model, the C11 generics, the deprecated names, and
 * atomics on global variables. Every PE updates a counter on PE 0 and on its neighbour. */
#include "check.h"

static int me, npes, next, prev;

/* (TYPE, TYPENAME) of the standard AMO types. */
#define STD_TYPES(X)                                                                              \
    X(int, int) X(long, long) X(long long, longlong) X(unsigned int, uint) X(unsigned long, ulong) \
    X(unsigned long long, ulonglong) X(int32_t, int32) X(int64_t, int64) X(uint32_t, uint32)       \
    X(uint64_t, uint64) X(size_t, size) X(ptrdiff_t, ptrdiff)
#define BIT_TYPES(X)                                                                              \
    X(unsigned int, uint) X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int32_t, int32) \
    X(int64_t, int64) X(uint32_t, uint32) X(uint64_t, uint64)

#define TEST_STD(TYPE, NAME)                                                                       \
    static void std_##NAME(void) {                                                                 \
        TYPE *w = shmem_calloc(4, sizeof(TYPE));                                                   \
        shmem_barrier_all();                                                                       \
        /* Every PE adds me+1 to PE 0's w[0] and increments it: total n(n+1)/2 + n. */             \
        shmem_##NAME##_atomic_add(&w[0], (TYPE)(me + 1), 0);                                       \
        shmem_ctx_##NAME##_atomic_inc(SHMEM_CTX_DEFAULT, &w[0], 0);                                \
        TYPE old = shmem_##NAME##_atomic_fetch_add(&w[1], (TYPE)1, 0);                             \
        CHECK(old < (TYPE)npes, #NAME " fetch_add returned %lld", (long long)old);                 \
        TYPE f;                                                                                    \
        shmem_##NAME##_atomic_fetch_inc_nbi(&f, &w[2], 0);                                         \
        shmem_quiet();                                                                             \
        CHECK(f < (TYPE)npes, #NAME " fetch_inc_nbi fetched %lld", (long long)f);                  \
        shmem_barrier_all();                                                                       \
        if (me == 0) {                                                                             \
            TYPE want = (TYPE)(npes * (npes + 1) / 2 + npes);                                      \
            CHECK(w[0] == want, #NAME " add+inc total %lld want %lld", (long long)w[0], (long long)want); \
            CHECK(w[1] == (TYPE)npes && w[2] == (TYPE)npes, #NAME " fetch_add/fetch_inc totals");  \
        }                                                                                          \
        /* compare_swap: exactly one PE wins the swap of 0 -> me+1 on PE 0's w[3]. */              \
        TYPE seen = shmem_##NAME##_atomic_compare_swap(&w[3], (TYPE)0, (TYPE)(me + 1), 0);         \
        long won = seen == (TYPE)0;                                                                \
        long *wins = shmem_calloc(1, sizeof(long));                                                \
        shmem_long_atomic_add(wins, won, 0);                                                       \
        shmem_barrier_all();                                                                       \
        if (me == 0) CHECK(*wins == 1, #NAME " compare_swap winners %ld", *wins);                  \
        TYPE now = shmem_ctx_##NAME##_atomic_fetch(SHMEM_CTX_DEFAULT, &w[3], 0);                   \
        CHECK(now >= (TYPE)1 && now <= (TYPE)npes, #NAME " winner value");                         \
        TYPE cs;                                                                                   \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_atomic_compare_swap_nbi(&cs, &w[3], now, now, 0);                           \
        shmem_quiet();                                                                             \
        CHECK(cs == now, #NAME " compare_swap_nbi fetched");                                       \
        /* set, swap, fetch on the neighbour */                                                    \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_atomic_set(&w[0], (TYPE)(me + 10), next);                                   \
        shmem_barrier_all();                                                                       \
        CHECK(w[0] == (TYPE)(prev + 10), #NAME " set: %lld", (long long)w[0]); \
        shmem_barrier_all(); \
        TYPE was = shmem_##NAME##_atomic_swap(&w[0], (TYPE)(me + 20), next);                       \
        CHECK(was == (TYPE)(me + 10), #NAME " swap returned %lld", (long long)was);                \
        shmem_barrier_all();                                                                       \
        TYPE sw;                                                                                   \
        shmem_ctx_##NAME##_atomic_swap_nbi(SHMEM_CTX_DEFAULT, &sw, &w[0], (TYPE)(me + 30), next);  \
        TYPE fe;                                                                                   \
        shmem_quiet();                                                                             \
        shmem_##NAME##_atomic_fetch_nbi(&fe, &w[0], next);                                         \
        shmem_quiet();                                                                             \
        CHECK(sw == (TYPE)(me + 20) && fe == (TYPE)(me + 30), #NAME " swap_nbi/fetch_nbi");        \
        TYPE fa;                                                                                   \
        shmem_ctx_##NAME##_atomic_fetch_add_nbi(SHMEM_CTX_DEFAULT, &fa, &w[0], (TYPE)2, next);     \
        shmem_quiet();                                                                             \
        CHECK(fa == (TYPE)(me + 30) && shmem_##NAME##_atomic_fetch(&w[0], next) == (TYPE)(me + 32), \
              #NAME " fetch_add_nbi");                                                             \
        CHECK(shmem_##NAME##_atomic_fetch_inc(&w[0], next) == (TYPE)(me + 32), #NAME " fetch_inc");  \
        shmem_barrier_all();                                                                       \
        shmem_free(wins);                                                                          \
        shmem_free(w);                                                                             \
    }
STD_TYPES(TEST_STD)

#define TEST_BIT(TYPE, NAME)                                                                       \
    static void bit_##NAME(void) {                                                                 \
        TYPE *w = shmem_calloc(3, sizeof(TYPE));                                                   \
        w[1] = (TYPE)~(TYPE)0;                                                                     \
        shmem_barrier_all();                                                                       \
        /* every PE sets its bit with or, clears it with and (on w[1]), flips it with xor */       \
        TYPE bit = (TYPE)((TYPE)1 << me);                                                          \
        shmem_##NAME##_atomic_or(&w[0], bit, 0);                                                   \
        shmem_##NAME##_atomic_and(&w[1], (TYPE)~bit, 0);                                           \
        TYPE x = shmem_##NAME##_atomic_fetch_xor(&w[2], bit, 0);                                   \
        (void)x;                                                                                   \
        shmem_barrier_all();                                                                       \
        TYPE all = (TYPE)(((TYPE)1 << npes) - 1);                                                  \
        if (me == 0) {                                                                             \
            CHECK(w[0] == all && w[1] == (TYPE)~all && w[2] == all, #NAME " or/and/xor totals");   \
        }                                                                                          \
        shmem_barrier_all();                                                                       \
        TYPE o = shmem_ctx_##NAME##_atomic_fetch_or(SHMEM_CTX_DEFAULT, &w[0], bit, 0);             \
        CHECK(o == all, #NAME " fetch_or");                                                        \
        TYPE a, xo, on;                                                                            \
        shmem_barrier_all();                                                                       \
        shmem_##NAME##_atomic_fetch_and_nbi(&a, &w[0], all, 0);                                    \
        shmem_##NAME##_atomic_fetch_or_nbi(&on, &w[1], (TYPE)0, 0);                                \
        shmem_ctx_##NAME##_atomic_fetch_xor_nbi(SHMEM_CTX_DEFAULT, &xo, &w[2], (TYPE)0, 0);        \
        shmem_quiet();                                                                             \
        CHECK(a == all && on == (TYPE)~all && xo == all, #NAME " nbi bitwise");                    \
        CHECK(shmem_##NAME##_atomic_fetch_and(&w[2], all, 0) == all, #NAME " fetch_and");          \
        shmem_barrier_all();                                                                       \
        shmem_ctx_##NAME##_atomic_xor(SHMEM_CTX_DEFAULT, &w[2], bit, 0);                           \
        shmem_barrier_all();                                                                       \
        if (me == 0) CHECK(w[2] == (TYPE)0, #NAME " xor back to zero");                            \
        shmem_barrier_all();                                                                       \
        shmem_free(w);                                                                             \
    }
BIT_TYPES(TEST_BIT)

static void extended(void) {
    float *f = shmem_calloc(2, sizeof(float));
    double *d = shmem_calloc(2, sizeof(double));
    shmem_barrier_all();
    shmem_float_atomic_set(&f[0], 1.5f + me, next);
    shmem_ctx_double_atomic_set(SHMEM_CTX_DEFAULT, &d[0], 2.5 + me, next);
    shmem_barrier_all();
    CHECK(f[0] == 1.5f + prev && d[0] == 2.5 + prev, "float/double set");
    CHECK(shmem_float_atomic_fetch(&f[0], next) == 1.5f + me, "float fetch");
    shmem_barrier_all();
    CHECK(shmem_double_atomic_swap(&d[0], -1.0, me) == 2.5 + prev, "double swap");
    float ff;
    shmem_float_atomic_swap_nbi(&ff, &f[0], 9.0f, me);
    double dd;
    shmem_ctx_double_atomic_fetch_nbi(SHMEM_CTX_DEFAULT, &dd, &d[0], me);
    shmem_quiet();
    CHECK(ff == 1.5f + prev && dd == -1.0, "float/double nbi");
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(f);
}

long glob_counter;
static unsigned long glob_bits;

static void generics_and_globals(void) {
    shmem_barrier_all();
    shmem_atomic_add(&glob_counter, 2L, 0);
    shmem_atomic_inc(SHMEM_CTX_DEFAULT, &glob_counter, 0);
    shmem_atomic_or(&glob_bits, 1UL << me, 0);
    long before = shmem_atomic_fetch_add(&glob_counter, 0L, 0);
    CHECK(before >= 3, "generic fetch_add on a global: %ld", before);
    shmem_barrier_all();
    if (me == 0) CHECK(glob_counter == 3L * npes && glob_bits == (1UL << npes) - 1, "global atomics: %ld %lx", glob_counter, glob_bits);
    const long *cg = &glob_counter;
    CHECK(shmem_atomic_fetch(cg, 0) == 3L * npes, "generic fetch through a const pointer");
    CHECK(shmem_atomic_fetch(SHMEM_CTX_DEFAULT, &glob_counter, 0) == 3L * npes, "generic ctx fetch");
    shmem_barrier_all();
    long sw = shmem_atomic_swap(&glob_counter, 100L, next);
    (void)sw;
    shmem_barrier_all();
    CHECK(glob_counter == 100, "generic swap on a global");
    CHECK(shmem_atomic_compare_swap(&glob_counter, 100L, 200L, me) == 100 && glob_counter == 200, "generic compare_swap");
    long fi;
    shmem_atomic_fetch_inc_nbi(&fi, &glob_counter, me);
    shmem_quiet();
    CHECK(fi == 200 && shmem_atomic_fetch_inc(&glob_counter, me) == 201, "generic fetch_inc forms");
    unsigned long fx;
    shmem_atomic_fetch_xor_nbi(&fx, &glob_bits, 0UL, 0);
    shmem_quiet();
    CHECK(fx == (1UL << npes) - 1 && shmem_atomic_fetch_and(&glob_bits, ~0UL, 0) == fx, "generic bitwise fetches");
    shmem_atomic_set(&glob_counter, 7L, me);
    CHECK(shmem_atomic_fetch(&glob_counter, me) == 7, "generic set");
    /* deprecated names */
    shmem_barrier_all();
    CHECK(shmem_long_finc(&glob_counter, me) == 7 && shmem_long_fetch(&glob_counter, me) == 8, "finc/fetch");
    shmem_long_inc(&glob_counter, me);
    shmem_long_add(&glob_counter, 10, me);
    CHECK(shmem_long_fadd(&glob_counter, 1, me) == 19, "fadd");
    CHECK(shmem_long_cswap(&glob_counter, 20, 30, me) == 20 && shmem_long_swap(&glob_counter, 40, me) == 30, "cswap/swap");
    shmem_long_set(&glob_counter, 50, me);
    CHECK(shmem_fetch(&glob_counter, me) == 50, "deprecated generic fetch");
    shmem_finc(&glob_counter, me);
    shmem_add(&glob_counter, 2L, me);
    CHECK(shmem_fadd(&glob_counter, 1L, me) == 53 && shmem_cswap(&glob_counter, 54L, 0L, me) == 54, "deprecated generics");
    shmem_set(&glob_counter, 1L, me);
    shmem_inc(&glob_counter, me);
    CHECK(shmem_swap(&glob_counter, 0L, me) == 2, "deprecated swap");
    shmem_barrier_all();
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
#define CALL_STD(TYPE, NAME) std_##NAME();
#define CALL_BIT(TYPE, NAME) bit_##NAME();
    STD_TYPES(CALL_STD)
    BIT_TYPES(CALL_BIT)
    extended();
    generics_and_globals();
    shmem_finalize();
    return 0;
}

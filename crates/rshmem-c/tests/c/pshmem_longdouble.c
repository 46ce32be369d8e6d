/* The profiling interface covers long double p and g too: a tool defines
 * shmem_longdouble_p/g (and the context forms) of its own and reaches the library through
 * pshmem_longdouble_p/g, which libshmem exports; every value keeps its full precision. */
#include "check.h"
#include <pshmem.h>

static int seen_p, seen_g, seen_ctx_p, seen_ctx_g;

void shmem_longdouble_p(long double *dest, long double value, int pe) {
    seen_p++;
    pshmem_longdouble_p(dest, value, pe);
}

long double shmem_longdouble_g(const long double *source, int pe) {
    seen_g++;
    return pshmem_longdouble_g(source, pe);
}

void shmem_ctx_longdouble_p(shmem_ctx_t ctx, long double *dest, long double value, int pe) {
    seen_ctx_p++;
    pshmem_ctx_longdouble_p(ctx, dest, value, pe);
}

long double shmem_ctx_longdouble_g(shmem_ctx_t ctx, const long double *source, int pe) {
    seen_ctx_g++;
    return pshmem_ctx_longdouble_g(ctx, source, pe);
}

static long double word[2];

/* 1 + k * 2^-62: needs a 64-bit significand. */
static long double fine(int k) {
    long double t = 1.0L;
    for (int i = 0; i < 62; i++) t /= 2;
    return 1.0L + k * t;
}

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    shmem_longdouble_p(&word[0], fine(me + 1), next);
    shmem_ctx_longdouble_p(SHMEM_CTX_DEFAULT, &word[1], -fine(me + 3), next);
    shmem_barrier_all();
    CHECK(word[0] == fine(prev + 1), "word[0] = %La, want %La", word[0], fine(prev + 1));
    CHECK(word[1] == -fine(prev + 3), "word[1] = %La", word[1]);
    shmem_p(&word[0], word[0], me); /* the C11 generic reaches the tool's function too */
    shmem_barrier_all();
    long double a = shmem_longdouble_g(&word[0], next);
    long double b = shmem_ctx_longdouble_g(SHMEM_CTX_DEFAULT, &word[1], next);
    CHECK(a == fine(me + 1) && b == -fine(me + 3), "g gave %La, %La", a, b);
    CHECK(seen_p == 2 && seen_g == 1 && seen_ctx_p == 1 && seen_ctx_g == 1, "tool saw p %d, g %d, ctx_p %d, ctx_g %d", seen_p,
          seen_g, seen_ctx_p, seen_ctx_g);
    shmem_barrier_all();
    /* Direct calls of the profiling names. */
    pshmem_longdouble_p(&word[0], 2.5L, me);
    CHECK(pshmem_longdouble_g(&word[0], me) == 2.5L, "pshmem round trip");
    shmem_barrier_all();
    shmem_finalize();
    return 0;
}

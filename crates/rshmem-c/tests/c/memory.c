/* Symmetric memory: malloc, calloc, align, realloc, free, malloc_with_hints and the
 * deprecated shmalloc family; results are symmetric (usable as RMA targets). */
#include "check.h"
#include <stdint.h>
#include <string.h>

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), next = (me + 1) % n, prev = (me + n - 1) % n;

    CHECK(shmem_malloc(0) == NULL, "malloc(0) is not NULL");
    long *a = shmem_malloc(100 * sizeof(long));
    CHECK(a != NULL, "malloc failed");
    CHECK((uintptr_t)a % 16 == 0, "malloc not 16-aligned: %p", (void *)a);
    for (int i = 0; i < 100; i++) a[i] = -1;
    shmem_barrier_all();
    long v[100];
    for (int i = 0; i < 100; i++) v[i] = me * 1000 + i;
    shmem_long_put(a, v, 100, next);
    shmem_barrier_all();
    for (int i = 0; i < 100; i++) CHECK(a[i] == prev * 1000 + i, "a[%d] = %ld", i, a[i]);

    /* calloc zeroes, even memory that was used before. */
    shmem_free(a);
    int *z = shmem_calloc(200, sizeof(int));
    CHECK(z != NULL, "calloc failed");
    for (int i = 0; i < 200; i++) CHECK(z[i] == 0, "calloc z[%d] = %d", i, z[i]);

    /* align */
    for (size_t al = sizeof(void *); al <= 65536; al *= 4) {
        char *p = shmem_align(al, 24);
        CHECK(p != NULL && (uintptr_t)p % al == 0, "align(%zu) gave %p", al, (void *)p);
        shmem_char_p(p + 3, (char)me, next);
        shmem_barrier_all();
        CHECK(p[3] == (char)prev, "put into aligned block: %d", p[3]);
        shmem_free(p);
    }

    /* realloc keeps the contents and stays symmetric. */
    int *r = shmem_malloc(10 * sizeof(int));
    for (int i = 0; i < 10; i++) r[i] = me + i;
    r = shmem_realloc(r, 5000 * sizeof(int));
    CHECK(r != NULL, "realloc failed");
    for (int i = 0; i < 10; i++) CHECK(r[i] == me + i, "realloc lost r[%d] = %d", i, r[i]);
    shmem_int_p(&r[4999], me, next);
    shmem_barrier_all();
    CHECK(r[4999] == prev, "put into reallocated block: %d", r[4999]);
    r = shmem_realloc(r, 4 * sizeof(int));
    for (int i = 0; i < 4; i++) CHECK(r[i] == me + i, "shrinking realloc lost r[%d] = %d", i, r[i]);
    CHECK(shmem_realloc(r, 0) == NULL, "realloc(p, 0) is not NULL");
    int *fresh = shmem_realloc(NULL, sizeof(int));
    CHECK(fresh != NULL, "realloc(NULL, n) failed");
    shmem_free(fresh);
    shmem_free(NULL);

    double *h = shmem_malloc_with_hints(8 * sizeof(double), SHMEM_MALLOC_ATOMICS_REMOTE | SHMEM_MALLOC_SIGNAL_REMOTE);
    CHECK(h != NULL, "malloc_with_hints failed");
    shmem_double_p(&h[7], 0.5 + me, next);
    shmem_barrier_all();
    CHECK(h[7] == 0.5 + prev, "h[7] = %f", h[7]);
    shmem_free(h);

    /* Deprecated names. */
    short *s = shmalloc(4 * sizeof(short));
    CHECK(s != NULL, "shmalloc failed");
    s = shrealloc(s, 64 * sizeof(short));
    short *al = shmemalign(64, 8);
    CHECK(s != NULL && al != NULL && (uintptr_t)al % 64 == 0, "shrealloc/shmemalign");
    shfree(al);
    shfree(s);

    /* Many small allocations, freed in a different order, keep every PE in step. */
    void *ptrs[64];
    for (int i = 0; i < 64; i++) {
        ptrs[i] = shmem_malloc((size_t)(i + 1) * 24);
        CHECK(ptrs[i] != NULL, "malloc %d failed", i);
        memset(ptrs[i], me, (size_t)(i + 1) * 24);
    }
    for (int i = 0; i < 64; i += 2) shmem_free(ptrs[i]);
    for (int i = 1; i < 64; i += 2) {
        unsigned char *p = ptrs[i];
        CHECK(p[(i + 1) * 24 - 1] == (unsigned char)me, "block %d clobbered", i);
        shmem_free(ptrs[i]);
    }
    shmem_free(z);
    shmem_finalize();
    return 0;
}

/* shmem_align with an alignment below rshmem's minimum (16 bytes, the alignment of
 * shmem_malloc), such as 1, 2, 4 or 8, rounds up to that minimum: the block is a multiple
 * of the alignment asked for, as OpenSHMEM requires, and symmetric. Larger powers of two
 * are kept. */
#include "check.h"
#include <stdint.h>

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    size_t aligns[] = {1, 2, 4, 8, 16, 64, 4096};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        char *p = shmem_align(aligns[i], 3);
        CHECK(p != NULL, "shmem_align(%zu, 3) returned NULL", aligns[i]);
        CHECK((uintptr_t)p % aligns[i] == 0 && (uintptr_t)p % 16 == 0, "shmem_align(%zu) gave %p", aligns[i], (void *)p);
        p[0] = (char)me, p[2] = (char)(me + 1);
        shmem_barrier_all();
        char peer[3];
        shmem_getmem(peer, p, 3, (me + 1) % npes);
        CHECK(peer[0] == (char)((me + 1) % npes) && peer[2] == (char)((me + 1) % npes + 1), "symmetric block");
        shmem_barrier_all();
        shmem_free(p);
    }
    char *q = shmemalign(2, 8);
    CHECK(q != NULL && (uintptr_t)q % 16 == 0, "shmemalign(2, 8) gave %p", (void *)q);
    shfree(q);
    shmem_finalize();
    return 0;
}

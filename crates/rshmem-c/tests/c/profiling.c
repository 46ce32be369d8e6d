/* The profiling interface: a tool defines shmem_ routines of its own and reaches the
 * library through the pshmem_ names; calls made by the program reach the tool first. */
#include "check.h"
#include <pshmem.h>

static int puts_seen, barriers_seen;

void shmem_long_p(long *dest, long value, int pe) {
    puts_seen++;
    pshmem_long_p(dest, value, pe);
}

void shmem_barrier_all(void) {
    barriers_seen++;
    pshmem_barrier_all();
}

static long word;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_long_p(&word, me + 1, (me + 1) % npes);
    shmem_barrier_all();
    CHECK(word == (me + npes - 1) % npes + 1, "word %ld", word);
    CHECK(puts_seen == 1 && barriers_seen == 1, "tool saw %d puts, %d barriers", puts_seen, barriers_seen);
    CHECK(pshmem_my_pe() == me && pshmem_n_pes() == npes, "pshmem queries");
    long v = pshmem_long_g(&word, me);
    CHECK(v == word, "pshmem_long_g");
    pshmem_ctx_quiet(SHMEM_CTX_DEFAULT);
    shmem_finalize();
    return 0;
}

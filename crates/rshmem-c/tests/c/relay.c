/* rshmemx_relay_putmem / _getmem (rshmemx_cuda.h) on CPU PEs: every PE sends a block to
 * the PE two to its right through the PE between, and reads the block of the PE two to
 * its left back through the same kind of relay. Run with the staged UCX protocol
 * (RSHMEM_TRANSPORT=ucx RSHMEM_UCX_PROTOCOL=am), 3 PEs or more. */
#include "check.h"
#include <rshmemx_cuda.h>
#include <stdint.h>
#include <stdlib.h>

#define N 100003 /* words: more than one 256 KiB protocol piece */

static uint64_t word(int pe, size_t i) { return ((uint64_t)pe << 40) ^ (i * 0x9e3779b97f4a7c15ull); }

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    CHECK(n >= 3, "relay.c needs 3 PEs or more, it has %d", n);
    int relay = (me + 1) % n, far = (me + 2) % n, from = (me + n - 2) % n;
    uint64_t *dst = shmem_calloc(N, sizeof(uint64_t)), *src = shmem_malloc(N * sizeof(uint64_t));
    uint64_t *mine = malloc(N * sizeof(uint64_t)), *back = malloc(N * sizeof(uint64_t));
    for (size_t i = 0; i < N; i++) src[i] = mine[i] = word(me, i);
    shmem_barrier_all();
    rshmemx_relay_putmem(dst, mine, N * sizeof(uint64_t), far, relay);
    shmem_barrier_all();
    size_t bad = 0;
    for (size_t i = 0; i < N; i++) bad += dst[i] != word(from, i);
    CHECK(bad == 0, "PE %d: %zu of %d words from PE %d through PE %d wrong", me, bad, N, from, (from + 1) % n);
    rshmemx_relay_getmem(back, src, N * sizeof(uint64_t), far, relay);
    bad = 0;
    for (size_t i = 0; i < N; i++) bad += back[i] != word(far, i);
    CHECK(bad == 0, "PE %d: %zu of %d words read from PE %d through PE %d wrong", me, bad, N, far, relay);
    /* Zero bytes move nothing and need no relay path. */
    rshmemx_relay_putmem(dst, mine, 0, far, relay);
    shmem_barrier_all();
    free(mine);
    free(back);
    shmem_free(src);
    shmem_free(dst);
    shmem_finalize();
    return 0;
}

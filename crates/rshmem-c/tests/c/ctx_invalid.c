/* shmem_ctx_quiet and shmem_ctx_fence on SHMEM_CTX_INVALID perform no operation
 * (OpenSHMEM 1.5); so does shmem_ctx_pe_quiet, and so does destroying it. A context
 * that could not be created is SHMEM_CTX_INVALID, so programs meet it in practice. */
#include "check.h"

static long word;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_ctx_t ctx = SHMEM_CTX_INVALID;
    /* Options that are not valid make creation fail and leave the handle invalid. */
    CHECK(shmem_ctx_create(~0L, &ctx) != 0 && ctx == SHMEM_CTX_INVALID, "create with bad options");
    shmem_ctx_quiet(ctx);
    shmem_ctx_fence(ctx);
    int pes[1] = {(me + 1) % npes};
    shmem_ctx_pe_quiet(ctx, pes, 1);
    shmem_ctx_destroy(ctx);
    /* The library still works afterwards. */
    shmem_long_p(&word, me + 1, (me + 1) % npes);
    shmem_barrier_all();
    CHECK(word == (me + npes - 1) % npes + 1, "word %ld", word);
    shmem_finalize();
    return 0;
}

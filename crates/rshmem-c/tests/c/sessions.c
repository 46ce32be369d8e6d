/* Communication sessions (OpenSHMEM 1.6): shmem_ctx_session_start/stop are hints on a
 * context; operations inside a session behave as outside it, a second start combines
 * options, a second stop does nothing, and both do nothing on SHMEM_CTX_INVALID. */
#include "check.h"

static long word[4];

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), next = (me + 1) % npes;
    shmem_ctx_session_config_t config = {.total_ops = 4};
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, SHMEM_CTX_SESSION_BATCH, &config, SHMEM_CTX_SESSION_TOTAL_OPS);
    shmem_ctx_session_start(SHMEM_CTX_DEFAULT, 0, NULL, 0);
    for (int i = 0; i < 4; i++) shmem_ctx_long_p(SHMEM_CTX_DEFAULT, &word[i], me * 10 + i, next);
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_ctx_session_stop(SHMEM_CTX_DEFAULT);
    shmem_ctx_session_start(SHMEM_CTX_INVALID, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    shmem_ctx_session_stop(SHMEM_CTX_INVALID);
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(SHMEM_CTX_PRIVATE, &ctx) == 0, "ctx_create");
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, NULL, 0);
    shmem_ctx_long_atomic_add(ctx, &word[0], 1, next);
    shmem_ctx_session_stop(ctx);
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    shmem_barrier_all();
    int prev = (me + npes - 1) % npes;
    CHECK(word[0] == prev * 10 + 1 && word[3] == prev * 10 + 3, "word %ld %ld", word[0], word[3]);
    shmem_finalize();
    return 0;
}

/* Communication contexts: ctx_create with each option, team_create_ctx (PE numbers
 * relative to the team), RMA/AMO/quiet through created contexts, ctx_get_team, destroy,
 * and the defined results for SHMEM_CTX_INVALID. */
#include "check.h"

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), next = (me + 1) % npes, prev = (me + npes - 1) % npes;
    long *buf = shmem_calloc(8, sizeof(long));
    shmem_ctx_t ctx[3];
    long opts[3] = {0, SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED};
    for (int i = 0; i < 3; i++) {
        CHECK(shmem_ctx_create(opts[i], &ctx[i]) == 0 && ctx[i] != SHMEM_CTX_INVALID, "ctx_create %d", i);
        shmem_team_t t;
        CHECK(shmem_ctx_get_team(ctx[i], &t) == 0 && t == SHMEM_TEAM_WORLD, "ctx_get_team of a world context");
    }
    CHECK(ctx[0] != ctx[1] && ctx[1] != ctx[2], "contexts share a handle");
    shmem_barrier_all();
    for (int i = 0; i < 3; i++) {
        shmem_ctx_long_p(ctx[i], &buf[i], 100 + me, next);
        shmem_ctx_long_atomic_add(ctx[i], &buf[3], 1, next);
        shmem_ctx_quiet(ctx[i]);
    }
    long v = 7;
    shmem_put_nbi(ctx[1], &buf[4], &v, 1, next);
    shmem_ctx_fence(ctx[1]);
    shmem_ctx_quiet(ctx[1]);
    shmem_barrier_all();
    for (int i = 0; i < 3; i++) CHECK(buf[i] == 100 + prev, "put through context %d", i);
    CHECK(buf[3] == 3 && buf[4] == 7, "atomics and nbi through contexts");
    CHECK(shmem_ctx_long_g(ctx[2], &buf[0], next) == 100 + me, "g through a context");

    /* NOSTORE contexts may read. */
    shmem_ctx_t ro;
    CHECK(shmem_ctx_create(SHMEM_CTX_NOSTORE, &ro) == 0, "NOSTORE context");
    CHECK(shmem_ctx_long_atomic_fetch(ro, &buf[3], next) == 3, "fetch through a NOSTORE context");
    shmem_ctx_destroy(ro);

    /* A team context numbers PEs in its team: odd world PEs. */
    shmem_team_t odd;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd);
    if (odd != SHMEM_TEAM_INVALID) {
        shmem_ctx_t tc;
        CHECK(shmem_team_create_ctx(odd, 0, &tc) == 0, "team_create_ctx");
        shmem_team_t back;
        CHECK(shmem_ctx_get_team(tc, &back) == 0 && back == odd, "ctx_get_team of a team context");
        int tn = shmem_team_n_pes(odd), tme = shmem_team_my_pe(odd);
        shmem_ctx_long_p(tc, &buf[5], 1000 + me, (tme + 1) % tn); /* team PE number */
        shmem_ctx_quiet(tc);
        shmem_team_sync(odd);
        int from = shmem_team_translate_pe(odd, (tme + tn - 1) % tn, SHMEM_TEAM_WORLD);
        CHECK(buf[5] == 1000 + from, "put through a team context: %ld", buf[5]);
        shmem_ctx_destroy(tc);
    } else {
        shmem_ctx_t tc = SHMEM_CTX_DEFAULT;
        CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &tc) != 0 && tc == SHMEM_CTX_INVALID, "team_create_ctx on INVALID");
    }
    shmem_team_t none = SHMEM_TEAM_WORLD;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &none) != 0 && none == SHMEM_TEAM_INVALID, "ctx_get_team of INVALID");
    shmem_team_t w;
    CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &w) == 0 && w == SHMEM_TEAM_WORLD, "default context's team");
    shmem_ctx_t badopt = SHMEM_CTX_DEFAULT;
    CHECK(shmem_ctx_create(1L << 20, &badopt) != 0 && badopt == SHMEM_CTX_INVALID, "unknown option bits");
    shmem_ctx_destroy(SHMEM_CTX_INVALID);

    /* Many create/destroy rounds reuse handles safely. */
    for (int r = 0; r < 100; r++) {
        shmem_ctx_t c;
        CHECK(shmem_ctx_create(0, &c) == 0, "round %d", r);
        shmem_ctx_long_atomic_inc(c, &buf[6], me);
        shmem_ctx_destroy(c);
    }
    CHECK(buf[6] == 100, "increments through short-lived contexts: %ld", buf[6]);
    for (int i = 0; i < 3; i++) shmem_ctx_destroy(ctx[i]);
    shmem_barrier_all();
    if (odd != SHMEM_TEAM_INVALID) shmem_team_destroy(odd);
    shmem_free(buf);
    shmem_finalize();
    return 0;
}

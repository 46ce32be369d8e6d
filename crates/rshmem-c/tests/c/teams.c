/* Teams: predefined teams, split_strided, split_2d, translate_pe, get_config, team_sync,
 * team_ptr, destroy, and the defined results for SHMEM_TEAM_INVALID. */
#include "check.h"
#include <string.h>

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me, "world my_pe");
    CHECK(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes, "world n_pes");
    /* SHARED: every PE of this host, or only this PE when RSHMEM_TRANSPORT=ucx maps no peer. */
    const char *transport = getenv("RSHMEM_TRANSPORT");
    int shared = transport && strcmp(transport, "ucx") == 0 ? 1 : npes;
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == shared, "shared team holds every PE this PE maps (%d)", shared);
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1 && shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1, "INVALID queries");
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, SHMEM_TEAM_INVALID) == -1, "translate into INVALID");

    /* Even PEs. */
    shmem_team_config_t cfg = {.num_contexts = 3};
    shmem_team_t even = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, &cfg, SHMEM_TEAM_NUM_CONTEXTS, &even);
    CHECK(rc == 0, "split_strided returned %d", rc);
    if (me % 2 == 0) {
        CHECK(even != SHMEM_TEAM_INVALID, "member got INVALID");
        CHECK(shmem_team_my_pe(even) == me / 2, "even my_pe %d", shmem_team_my_pe(even));
        CHECK(shmem_team_n_pes(even) == (npes + 1) / 2, "even n_pes");
        shmem_team_config_t got = {0};
        CHECK(shmem_team_get_config(even, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 3, "get_config");
        CHECK(shmem_team_translate_pe(even, 1 % shmem_team_n_pes(even), SHMEM_TEAM_WORLD) == 2 % (2 * shmem_team_n_pes(even)),
              "translate even->world");
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, even) == me / 2, "translate world->even");
        CHECK(shmem_team_translate_pe(even, -1, SHMEM_TEAM_WORLD) == -1, "translate of PE -1");
        CHECK(shmem_team_translate_pe(even, npes, SHMEM_TEAM_WORLD) == -1, "translate of a PE past the team");
        /* team_ptr: member 0 of the team is world PE 0 */
        int *x = shmem_ptr(&me, 0);
        CHECK(x == NULL, "shmem_ptr of a stack variable");
        CHECK(shmem_team_sync(even) == 0, "team_sync");
    } else {
        CHECK(even == SHMEM_TEAM_INVALID, "non-member got a team");
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, SHMEM_TEAM_WORLD) == me, "translate world->world");
    }
    long *buf = shmem_calloc(4, sizeof(long));
    if (even != SHMEM_TEAM_INVALID) {
        int tn = shmem_team_n_pes(even), tme = shmem_team_my_pe(even);
        long *peer = shmem_team_ptr(even, buf, (tme + 1) % tn);
        int wpe = shmem_team_translate_pe(even, (tme + 1) % tn, SHMEM_TEAM_WORLD);
        CHECK(peer == shmem_ptr(buf, wpe), "team_ptr and ptr disagree");
        if (shared > 1 || wpe == me) {
            CHECK(peer != NULL, "team_ptr on a mapped peer");
            *peer = 500 + me;
        } else {
            CHECK(peer == NULL, "team_ptr on a peer this PE does not map");
            shmem_long_p(buf, 500 + me, wpe);
            shmem_quiet(); /* team_sync orders no puts by itself */
        }
        shmem_team_sync(even);
        int from = shmem_team_translate_pe(even, (tme + tn - 1) % tn, SHMEM_TEAM_WORLD);
        CHECK(buf[0] == 500 + from, "store through team_ptr: %ld", buf[0]);
    }
    shmem_barrier_all();

    /* Splitting a team: odd members of the even team. */
    if (even != SHMEM_TEAM_INVALID && shmem_team_n_pes(even) >= 2) {
        shmem_team_t sub;
        rc = shmem_team_split_strided(even, 1, 1, shmem_team_n_pes(even) - 1, NULL, 0, &sub);
        CHECK(rc == 0, "nested split %d", rc);
        CHECK((sub != SHMEM_TEAM_INVALID) == (me != 0), "nested membership");
        if (sub != SHMEM_TEAM_INVALID) {
            CHECK(shmem_team_translate_pe(sub, 0, SHMEM_TEAM_WORLD) == 2, "sub member 0 is world PE 2");
            shmem_team_destroy(sub);
        }
    }

    /* A 2-D split with rows of 2. */
    shmem_team_t xt, yt;
    rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, NULL, 0, &xt, NULL, 0, &yt);
    CHECK(rc == 0, "split_2d returned %d", rc);
    CHECK(shmem_team_my_pe(xt) == me % 2 && shmem_team_my_pe(yt) == me / 2, "2d indices %d %d", shmem_team_my_pe(xt),
          shmem_team_my_pe(yt));
    CHECK(shmem_team_n_pes(yt) == (npes - me % 2 + 1) / 2, "column size");
    CHECK(shmem_team_translate_pe(xt, 0, SHMEM_TEAM_WORLD) == me - me % 2, "row start");
    CHECK(shmem_team_sync(xt) == 0 && shmem_team_sync(yt) == 0, "2d syncs");

    /* Failure results: invalid parent, negative sizes; no team is made. */
    shmem_team_t bad = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &bad) != 0 && bad == SHMEM_TEAM_INVALID, "split of INVALID");
    bad = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, -2, NULL, 0, &bad) != 0 && bad == SHMEM_TEAM_INVALID, "negative size");
    bad = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &bad) != 0 && bad == SHMEM_TEAM_INVALID,
          "team larger than its parent");
    CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, 0, NULL) != 0, "get_config of INVALID");
    CHECK(shmem_team_sync(SHMEM_TEAM_INVALID) != 0, "sync of INVALID");
    shmem_team_destroy(SHMEM_TEAM_INVALID);

    /* Teams come and go: many split/destroy rounds reuse the slots. */
    for (int round = 0; round < 50; round++) {
        shmem_team_t t;
        CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t) == 0, "round %d split", round);
        CHECK(shmem_team_my_pe(t) == me, "round %d my_pe", round);
        shmem_team_destroy(t);
    }

    shmem_team_destroy(yt);
    shmem_team_destroy(xt);
    if (even != SHMEM_TEAM_INVALID) shmem_team_destroy(even);
    shmem_free(buf);
    shmem_finalize();
    return 0;
}

/* OpenSHMEM 1.5's team form of shmem_sync, `int shmem_sync(shmem_team_t team)` in C11,
 * beside the deprecated active-set form shmem_sync(PE_start, logPE_stride, PE_size,
 * pSync) and shmem_team_sync. A sync orders the members' arrival: after it, every member
 * has passed the point before it. */
#include "check.h"

static long pSync[SHMEM_BARRIER_SYNC_SIZE];
static int arrived;

int main(void) {
    for (int i = 0; i < SHMEM_BARRIER_SYNC_SIZE; i++) pSync[i] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "shmem_sync(SHMEM_TEAM_WORLD)");
    /* Each PE adds 1 to every PE's counter, then syncs and waits for all the adds (the sync
     * does not complete them; the wait does). */
    for (int pe = 0; pe < npes; pe++) shmem_int_atomic_add(&arrived, 1, pe);
    shmem_quiet();
    CHECK(shmem_sync(SHMEM_TEAM_WORLD) == 0, "second sync");
    shmem_int_wait_until(&arrived, SHMEM_CMP_EQ, npes);
    shmem_team_t evens;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &evens) == 0, "split");
    if (evens != SHMEM_TEAM_INVALID) {
        CHECK(shmem_sync(evens) == 0, "shmem_sync(evens)");
        CHECK(shmem_team_sync(evens) == 0, "shmem_team_sync(evens)");
        shmem_team_destroy(evens);
    }
    CHECK(shmem_sync(SHMEM_TEAM_INVALID) != 0, "shmem_sync(SHMEM_TEAM_INVALID) returns nonzero");
    /* The deprecated active-set form still selects by its four arguments. */
    shmem_sync(0, 0, npes, pSync);
    shmem_sync_all();
    CHECK(me >= 0, "done");
    shmem_finalize();
    return 0;
}

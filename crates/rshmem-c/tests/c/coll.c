/* Team-based collectives (typed, mem and generic forms) on the world and on a split team:
 * broadcast, collect, fcollect, alltoall, alltoalls, the reductions, the 1.6 sum scans;
 * and the deprecated active-set reductions TYPENAME_OP_to_all on the world and a subset. */
#include "check.h"

static int me, npes;

static void members(shmem_team_t team, int *src, int *dst, long *l, long *lr, unsigned int *u, unsigned int *ur, double *d, double *dr);

/* Every PE calls it (the allocations are collective over the world); members of `team`
 * run the collectives. */
static void on_team(shmem_team_t team) {
    int *src = shmem_malloc(64 * sizeof(int));
    int *dst = shmem_malloc(64 * npes * sizeof(int));
    long *l = shmem_malloc(8 * sizeof(long));
    long *lr = shmem_malloc(8 * sizeof(long));
    unsigned int *u = shmem_malloc(4 * sizeof(unsigned int));
    unsigned int *ur = shmem_malloc(4 * sizeof(unsigned int));
    double *d = shmem_malloc(4 * sizeof(double));
    double *dr = shmem_malloc(4 * sizeof(double));
    if (team != SHMEM_TEAM_INVALID) members(team, src, dst, l, lr, u, ur, d, dr);
    shmem_barrier_all();
    shmem_free(dr);
    shmem_free(d);
    shmem_free(ur);
    shmem_free(u);
    shmem_free(lr);
    shmem_free(l);
    shmem_free(dst);
    shmem_free(src);
}

static void members(shmem_team_t team, int *src, int *dst, long *l, long *lr, unsigned int *u, unsigned int *ur, double *d, double *dr) {
    int tn = shmem_team_n_pes(team), tme = shmem_team_my_pe(team);
    for (int i = 0; i < 64; i++) src[i] = tme * 100 + i;
    for (int i = 0; i < 64 * tn; i++) dst[i] = -1;
    shmem_team_sync(team);

    int root = 1 % tn;
    CHECK(shmem_int_broadcast(team, dst, src, 10, root) == 0, "broadcast rc");
    for (int i = 0; i < 10; i++) CHECK(dst[i] == root * 100 + i, "broadcast dst[%d] = %d", i, dst[i]);
    CHECK(dst[10] == -1, "broadcast wrote past nelems");
    CHECK(shmem_broadcastmem(team, dst, src, 3 * sizeof(int), 0) == 0 && dst[2] == 2, "broadcastmem");
    CHECK(shmem_broadcast(team, dst, src, 4, tn - 1) == 0 && dst[3] == (tn - 1) * 100 + 3, "generic broadcast");

    CHECK(shmem_int_fcollect(team, dst, src, 4) == 0, "fcollect rc");
    for (int j = 0; j < tn; j++)
        for (int k = 0; k < 4; k++) CHECK(dst[4 * j + k] == j * 100 + k, "fcollect %d/%d", j, k);
    /* collect: member j gives j+1 elements */
    CHECK(shmem_collect(team, dst, src, (size_t)tme + 1) == 0, "collect rc");
    int at = 0;
    for (int j = 0; j < tn; j++)
        for (int k = 0; k <= j; k++, at++) CHECK(dst[at] == j * 100 + k, "collect %d/%d", j, k);
    CHECK(shmem_fcollectmem(team, dst, src, 2 * sizeof(int)) == 0 && dst[2 * (tn - 1)] == (tn - 1) * 100, "fcollectmem");
    CHECK(shmem_collectmem(team, dst, src, sizeof(int)) == 0 && dst[tn - 1] == (tn - 1) * 100, "collectmem");

    /* alltoall: block j of dst comes from member j's block tme */
    CHECK(shmem_int_alltoall(team, dst, src, 2) == 0, "alltoall rc");
    for (int j = 0; j < tn; j++)
        for (int k = 0; k < 2; k++) CHECK(dst[2 * j + k] == j * 100 + 2 * tme + k, "alltoall %d/%d", j, k);
    CHECK(shmem_alltoallmem(team, dst, src, sizeof(int)) == 0 && dst[tn - 1] == (tn - 1) * 100 + tme, "alltoallmem");
    for (int i = 0; i < 64 * tn; i++) dst[i] = -1;
    shmem_team_sync(team);
    CHECK(shmem_alltoalls(team, dst, src, 2, 3, 2) == 0, "alltoalls rc");
    for (int j = 0; j < tn; j++)
        for (int k = 0; k < 2; k++) CHECK(dst[2 * (2 * j + k)] == j * 100 + 3 * (2 * tme + k), "alltoalls %d/%d", j, k);
    CHECK(shmem_alltoallsmem(team, dst, src, 1, 1, sizeof(int)) == 0, "alltoallsmem");

    /* reductions */
    for (int i = 0; i < 8; i++) l[i] = tme + i + 1;
    for (int i = 0; i < 4; i++) {
        u[i] = 1u << tme | (i == 0 ? 0x100u : 0u);
        d[i] = tme * 0.5 + i;
    }
    shmem_team_sync(team);
    long sum = 0, prod = 1;
    for (int j = 0; j < tn; j++) {
        sum += j + 1;
        prod *= j + 1;
    }
    CHECK(shmem_long_sum_reduce(team, lr, l, 8) == 0 && lr[0] == sum && lr[7] == sum + 7L * tn, "long sum_reduce");
    CHECK(shmem_long_prod_reduce(team, lr, l, 1) == 0 && lr[0] == prod, "long prod_reduce %ld", lr[0]);
    CHECK(shmem_long_max_reduce(team, lr, l, 2) == 0 && lr[1] == tn + 1, "long max_reduce");
    CHECK(shmem_min_reduce(team, lr, l, 2) == 0 && lr[1] == 2, "generic min_reduce");
    CHECK(shmem_uint_or_reduce(team, ur, u, 4) == 0 && ur[0] == (((1u << tn) - 1) | 0x100u), "uint or_reduce");
    CHECK(shmem_uint_and_reduce(team, ur, u, 1) == 0 && ur[0] == (tn == 1 ? (1u | 0x100u) : 0x100u), "uint and_reduce");
    CHECK(shmem_xor_reduce(team, ur, u, 2) == 0 && ur[1] == (1u << tn) - 1, "generic xor_reduce");
    double dsum = 0;
    for (int j = 0; j < tn; j++) dsum += j * 0.5 + 3;
    CHECK(shmem_double_sum_reduce(team, dr, d, 4) == 0 && dr[3] == dsum, "double sum_reduce %f", dr[3]);
    CHECK(shmem_max_reduce(team, dr, d, 4) == 0 && dr[0] == (tn - 1) * 0.5, "generic double max_reduce");
    /* in place */
    CHECK(shmem_sum_reduce(team, l, l, 8) == 0 && l[0] == sum, "in-place sum_reduce");
    /* scans */
    for (int i = 0; i < 8; i++) l[i] = tme + 1;
    shmem_team_sync(team);
    CHECK(shmem_long_sum_inscan(team, lr, l, 8) == 0 && lr[5] == (long)(tme + 1) * (tme + 2) / 2, "sum_inscan %ld", lr[5]);
    CHECK(shmem_sum_exscan(team, lr, l, 8) == 0 && lr[7] == (long)tme * (tme + 1) / 2, "sum_exscan %ld", lr[7]);
    CHECK(shmem_int_sum_reduce(SHMEM_TEAM_INVALID, dst, src, 1) != 0, "reduce on SHMEM_TEAM_INVALID");

    shmem_team_sync(team);
}

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static int iwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static double dwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static long lwrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static int isrc[16], idst[16];
static double dsrc[16], ddst[16];
static long lsrc[16], ldst[16];
/* Large enough for the piecewise path (one piece per member); odd, so pieces differ. */
#define BIG 30001
static long bsrc[BIG], bdst[BIG];
static double fsrc[BIG];

static void to_all(int start, int log, int size) {
    int stride = 1 << log;
    int member = me >= start && (me - start) % stride == 0 && (me - start) / stride < size;
    for (int i = 0; i < 16; i++) {
        isrc[i] = me + i;
        dsrc[i] = me * 1.5;
        lsrc[i] = 1L << me;
    }
    shmem_barrier_all();
    if (member) {
        int isum = 0;
        double dmax = 0;
        long lor = 0;
        for (int j = 0; j < size; j++) {
            int pe = start + j * stride;
            isum += pe;
            dmax = pe * 1.5 > dmax ? pe * 1.5 : dmax;
            lor |= 1L << pe;
        }
        shmem_int_sum_to_all(idst, isrc, 16, start, log, size, iwrk, psync);
        for (int i = 0; i < 16; i++) CHECK(idst[i] == isum + i * size, "int_sum_to_all [%d] = %d", i, idst[i]);
        shmem_double_max_to_all(ddst, dsrc, 16, start, log, size, dwrk, psync);
        CHECK(ddst[15] == dmax, "double_max_to_all");
        shmem_long_or_to_all(ldst, lsrc, 16, start, log, size, lwrk, psync);
        CHECK(ldst[3] == lor, "long_or_to_all");
        shmem_long_xor_to_all(lsrc, lsrc, 16, start, log, size, lwrk, psync); /* in place */
        CHECK(lsrc[0] == lor, "in-place long_xor_to_all");
        shmem_int_min_to_all(idst, isrc, 1, start, log, size, iwrk, psync);
        CHECK(idst[0] == start, "int_min_to_all");
        shmem_short_prod_to_all((short *)(void *)idst, (short *)(void *)isrc, 0, start, log, size, (short *)(void *)iwrk, psync);

        /* large: every element distinct per PE, out of place then in place */
        long bsum0 = 0;
        for (int j = 0; j < size; j++) bsum0 += start + j * stride;
        for (int i = 0; i < BIG; i++) {
            bsrc[i] = (long)me * BIG + i;
            bdst[i] = -1;
            fsrc[i] = me + i * 0.25;
        }
        shmem_long_sum_to_all(bdst, bsrc, BIG, start, log, size, lwrk, psync);
        for (int i = 0; i < BIG; i++) {
            long want = bsum0 * BIG + (long)i * size;
            if (bdst[i] != want) CHECK(0, "large long_sum_to_all [%d] = %ld want %ld (set %d,%d,%d)", i, bdst[i], want, start, log, size);
            if (bsrc[i] != (long)me * BIG + i) CHECK(0, "large long_sum_to_all changed source [%d]", i);
        }
        shmem_double_max_to_all(fsrc, fsrc, BIG, start, log, size, dwrk, psync); /* in place */
        int last = start + (size - 1) * stride;
        for (int i = 0; i < BIG; i++)
            if (fsrc[i] != last + i * 0.25) CHECK(0, "large in-place double_max_to_all [%d] = %g", i, fsrc[i]);
    }
    shmem_barrier_all();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) CHECK(psync[i] == SHMEM_SYNC_VALUE, "pSync[%d] not restored", i);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    on_team(SHMEM_TEAM_WORLD);
    shmem_team_t odd;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 2, npes / 2, NULL, 0, &odd);
    on_team(odd);
    if (odd != SHMEM_TEAM_INVALID) shmem_team_destroy(odd);
    shmem_barrier_all();
    to_all(0, 0, npes);
    to_all(0, 1, (npes + 1) / 2);
    if (npes > 2) to_all(1, 0, npes - 1);
    shmem_finalize();
    return 0;
}

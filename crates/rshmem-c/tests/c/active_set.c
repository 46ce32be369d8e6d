/* The deprecated active-set collectives on the whole world and on a strided subset
 * called only by its members: barrier, sync, broadcast32/64, fcollect32/64,
 * collect32/64, alltoall32/64, alltoalls32/64. pSync arrays start at SHMEM_SYNC_VALUE
 * and hold it again once no call on them is in flight (checked after a world barrier:
 * right after a call, a faster member may already have signalled the next one). */
#include "check.h"

static long psync[SHMEM_SYNC_SIZE];
static long psync2[SHMEM_BCAST_SYNC_SIZE];
static int me, npes;

static void check_psync(const long *p, const char *what) {
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++) CHECK(p[i] == SHMEM_SYNC_VALUE, "%s: pSync[%d] = %ld after the call", what, i, p[i]);
}

/* One round of every routine over the set (start, log, size); only members call. */
static void over_set(int start, int log, int size) {
    int stride = 1 << log;
    int idx = (me - start) / stride;
    int32_t *d32 = shmem_calloc(64, sizeof(int32_t));
    int64_t *d64 = shmem_calloc(64, sizeof(int64_t));
    int64_t *s64 = shmem_calloc(64, sizeof(int64_t));
    int32_t *s32 = shmem_calloc(64, sizeof(int32_t));
    int member = me >= start && (me - start) % stride == 0 && idx < size;
    for (int i = 0; i < 64; i++) {
        s64[i] = me * 1000 + i;
        s32[i] = me * 100 + i;
    }
    shmem_barrier_all();
    if (member) {
        shmem_barrier(start, log, size, psync);
        shmem_sync(start, log, size, psync);

        /* broadcast from set member 1 % size: the root's dest stays untouched */
        int root = 1 % size, root_pe = start + root * stride;
        for (int i = 0; i < 64; i++) d64[i] = -1;
        shmem_broadcast64(d64, s64, 5, root, start, log, size, psync);
        for (int i = 0; i < 5; i++) {
            long want = idx == root ? -1 : root_pe * 1000 + i;
            CHECK(d64[i] == want, "broadcast64 d[%d] = %ld", i, (long)d64[i]);
        }
        CHECK(d64[5] == -1, "broadcast64 wrote past nelems");
        shmem_broadcast32(d32, s32, 7, 0, start, log, size, psync2);
        if (idx != 0)
            for (int i = 0; i < 7; i++) CHECK(d32[i] == start * 100 + i, "broadcast32 d[%d]", i);

        /* fcollect: member j's 3 elements at 3j */
        shmem_fcollect64(d64, s64, 3, start, log, size, psync);
        for (int j = 0; j < size; j++)
            for (int k = 0; k < 3; k++) CHECK(d64[3 * j + k] == (start + j * stride) * 1000 + k, "fcollect64 %d/%d", j, k);
        shmem_fcollect32(d32, s32, 2, start, log, size, psync);
        for (int j = 0; j < size; j++) CHECK(d32[2 * j + 1] == (start + j * stride) * 100 + 1, "fcollect32 %d", j);

        /* collect: member j contributes j+1 elements */
        shmem_collect64(d64, s64, (size_t)idx + 1, start, log, size, psync);
        int at = 0;
        for (int j = 0; j < size; j++)
            for (int k = 0; k <= j; k++, at++) CHECK(d64[at] == (start + j * stride) * 1000 + k, "collect64 %d/%d", j, k);
        shmem_collect32(d32, s32, (size_t)(idx % 2), start, log, size, psync);
        at = 0;
        for (int j = 0; j < size; j++)
            for (int k = 0; k < j % 2; k++, at++) CHECK(d32[at] == (start + j * stride) * 100 + k, "collect32 %d", j);

        /* alltoall: block j of dest is block idx of member j's source */
        shmem_alltoall64(d64, s64, 2, start, log, size, psync);
        for (int j = 0; j < size; j++)
            for (int k = 0; k < 2; k++)
                CHECK(d64[2 * j + k] == (start + j * stride) * 1000 + 2 * idx + k, "alltoall64 %d/%d", j, k);
        shmem_alltoall32(d32, s32, 1, start, log, size, psync);
        for (int j = 0; j < size; j++) CHECK(d32[j] == (start + j * stride) * 100 + idx, "alltoall32 %d", j);
        /* alltoalls: strides 2 (dest) and 3 (source), 2 elements per member */
        for (int i = 0; i < 64; i++) d64[i] = -1;
        shmem_alltoalls64(d64, s64, 2, 3, 2, start, log, size, psync);
        for (int j = 0; j < size; j++)
            for (int k = 0; k < 2; k++)
                CHECK(d64[2 * (2 * j + k)] == (start + j * stride) * 1000 + 3 * (2 * idx + k), "alltoalls64 %d/%d", j, k);
        shmem_alltoalls32(d32, s32, 1, 1, 1, start, log, size, psync);
        for (int j = 0; j < size; j++) CHECK(d32[j] == (start + j * stride) * 100 + idx, "alltoalls32 %d", j);
    }
    shmem_barrier_all();
    check_psync(psync, "every routine");
    check_psync(psync2, "broadcast32");
    shmem_free(s32);
    shmem_free(s64);
    shmem_free(d64);
    shmem_free(d32);
}

int main(void) {
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    for (int i = 0; i < SHMEM_SYNC_SIZE; i++) psync[i] = SHMEM_SYNC_VALUE;
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) psync2[i] = _SHMEM_SYNC_VALUE;
    shmem_barrier_all();
    over_set(0, 0, npes);              /* the world */
    over_set(0, 1, (npes + 1) / 2);    /* even PEs only */
    over_set(npes - 1, 0, 1);          /* the last PE alone */
    if (npes >= 4) over_set(1, 1, 2); /* PEs 1 and 3 */
    /* Back-to-back barriers on one pSync, the next one's signal racing the last round. */
    for (int r = 0; r < 200; r++) shmem_barrier(0, 0, npes, psync);
    shmem_barrier_all();
    check_psync(psync, "200 barriers");
    shmem_finalize();
    return 0;
}

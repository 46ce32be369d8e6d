/* SHMEM_THREAD_MULTIPLE: several threads of every PE issue puts, gets, atomics and waits
 * at once, on the default context and on contexts of their own; each thread owns a slice
 * of the target array, and the result is checked per element and against the atomic
 * totals. */
#include "check.h"
#include <pthread.h>

#define THREADS 4
#define PER_THREAD 2000

static int me, npes, next, prev;
static long *data;
static long *flags;
static long *counter;
#define INCS 500

static void *worker(void *arg) {
    int t = (int)(long)arg;
    long base = (long)t * PER_THREAD;
    for (int i = 0; i < PER_THREAD; i++) {
        shmem_long_p(&data[base + i], me * 1000000L + base + i, next);
        if (i % 100 == 99) shmem_quiet();
    }
    long chunk[64];
    for (int i = 0; i < 64; i++) chunk[i] = -(me * 1000000L + base + i);
    shmem_long_put_nbi(&data[THREADS * PER_THREAD + t * 64], chunk, 64, next);
    shmem_quiet();
    /* Atomics from every thread of every PE on PE 0's counter, half of them through a
     * private context of this thread. */
    shmem_ctx_t mine;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE, &mine) != 0) {
        fprintf(stderr, "PE %d thread %d: ctx_create failed\n", me, t);
        return (void *)1;
    }
    for (int i = 0; i < INCS; i++) {
        if (i % 2) {
            shmem_long_atomic_inc(counter, 0);
        } else {
            shmem_ctx_long_atomic_fetch_add(mine, counter, 1, 0);
        }
    }
    shmem_ctx_quiet(mine);
    shmem_ctx_destroy(mine);
    /* Each thread then signals its own flag on the next PE and waits for its own flag: the
     * previous PE's thread t has then finished its puts to this PE's slice t. */
    shmem_long_p(&flags[t], 1, next);
    shmem_long_wait_until(&flags[t], SHMEM_CMP_EQ, 1);
    long back[16];
    shmem_long_get(back, &data[base], 16, me);
    for (int i = 0; i < 16; i++) {
        long want = prev * 1000000L + base + i;
        if (back[i] != want) {
            fprintf(stderr, "PE %d thread %d: get back[%d] = %ld, want %ld\n", me, t, i, back[i], want);
            return (void *)1;
        }
    }
    return NULL;
}

int main(void) {
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    CHECK(provided == SHMEM_THREAD_MULTIPLE, "provided %d", provided);
    me = shmem_my_pe();
    npes = shmem_n_pes();
    next = (me + 1) % npes;
    prev = (me + npes - 1) % npes;
    data = shmem_calloc(THREADS * PER_THREAD + THREADS * 64, sizeof(long));
    flags = shmem_calloc(THREADS, sizeof(long));
    counter = shmem_calloc(1, sizeof(long));
    pthread_t th[THREADS];
    for (long t = 0; t < THREADS; t++) CHECK(pthread_create(&th[t], NULL, worker, (void *)t) == 0, "pthread_create");
    for (int t = 0; t < THREADS; t++) {
        void *r;
        pthread_join(th[t], &r);
        CHECK(r == NULL, "thread %d failed", t);
    }
    shmem_barrier_all();
    for (int i = 0; i < THREADS * PER_THREAD; i++) CHECK(data[i] == prev * 1000000L + i, "data[%d] = %ld", i, data[i]);
    for (int t = 0; t < THREADS; t++)
        for (int i = 0; i < 64; i++)
            CHECK(data[THREADS * PER_THREAD + t * 64 + i] == -(prev * 1000000L + (long)t * PER_THREAD + i), "chunk %d/%d", t, i);
    if (me == 0) CHECK(*counter == (long)npes * THREADS * INCS, "counter %ld, want %ld", *counter, (long)npes * THREADS * INCS);
    shmem_barrier_all();
    shmem_free(counter);
    shmem_free(flags);
    shmem_free(data);
    shmem_finalize();
    return 0;
}

/* Distributed locks: set_lock/clear_lock serialize a read-modify-write of a counter on
 * PE 0 done with plain get and put (no atomics), so only mutual exclusion makes the total
 * right; test_lock never waits and reports whether it acquired the lock. */
#include "check.h"

#define ROUNDS 50

static long lock;
static long counter;

int main(void) {
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    long *heap_lock = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    for (int r = 0; r < ROUNDS; r++) {
        shmem_set_lock(&lock);
        long v = shmem_long_g(&counter, 0);
        shmem_long_p(&counter, v + 1, 0);
        shmem_clear_lock(&lock);
    }
    /* The second phase updates the same counter under a different lock: no PE may start
     * it while another is still in the first phase. */
    shmem_barrier_all();
    int acquired = 0;
    for (int r = 0; r < ROUNDS; r++) {
        if (shmem_test_lock(heap_lock) == 0) {
            long v = shmem_long_g(&counter, 0);
            shmem_long_p(&counter, v + 1, 0);
            acquired++;
            shmem_clear_lock(heap_lock);
        }
    }
    int *acq = shmem_calloc(1, sizeof(int));
    shmem_int_atomic_add(acq, acquired, 0);
    shmem_barrier_all();
    if (me == 0) {
        CHECK(counter == (long)ROUNDS * npes + *acq, "counter %ld, want %ld", counter, (long)ROUNDS * npes + *acq);
        CHECK(*acq >= 1, "no test_lock ever acquired the lock");
    }
    /* A held lock: test_lock on another PE reports it held. */
    shmem_barrier_all();
    if (me == 0) shmem_set_lock(heap_lock);
    shmem_barrier_all();
    if (me != 0) CHECK(shmem_test_lock(heap_lock) == 1, "test_lock of a held lock returned 0");
    shmem_barrier_all();
    if (me == 0) shmem_clear_lock(heap_lock);
    shmem_barrier_all();
    shmem_free(acq);
    shmem_free(heap_lock);
    shmem_finalize();
    return 0;
}

/* Bad arguments end the job with a message naming the routine and the argument. Run as
 * `bad_args CASE`; the test harness checks the exit status and the message. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static long global;

int main(int argc, char **argv) {
    const char *which = argc > 1 ? argv[1] : "";
    shmem_init();
    long *heap = shmem_malloc(4 * sizeof(long));
    long local[4] = {0};
    int n = shmem_n_pes();
    if (strcmp(which, "pe") == 0) {
        shmem_long_put(heap, local, 4, n); /* PE out of range */
    } else if (strcmp(which, "negative_pe") == 0) {
        shmem_long_p(heap, 1, -1);
    } else if (strcmp(which, "not_symmetric") == 0) {
        shmem_long_put(local, local, 4, 0); /* dest is on the stack */
    } else if (strcmp(which, "past_end") == 0) {
        shmem_long_put(heap, local, 8, 0); /* 8 elements into a 4-element allocation */
    } else if (strcmp(which, "stride") == 0) {
        shmem_long_iput(heap, local, 0, 1, 2, 0);
    } else if (strcmp(which, "cmp") == 0) {
        shmem_long_wait_until(&global, 42, 0);
    } else if (strcmp(which, "null_source") == 0) {
        shmem_long_put(heap, NULL, 4, 0);
    } else if (strcmp(which, "align") == 0) {
        (void)shmem_align(24, 64);
    } else if (strcmp(which, "free") == 0) {
        shmem_free(heap + 1);
    } else if (strcmp(which, "ctx") == 0) {
        shmem_ctx_long_p(SHMEM_CTX_INVALID, heap, 1, 0);
    } else if (strcmp(which, "misaligned") == 0) {
        shmem_int_atomic_add((int *)(void *)((char *)heap + 2), 1, 0);
    } else if (strcmp(which, "sig_op") == 0) {
        shmem_long_put_signal(heap, local, 1, (uint64_t *)(void *)(heap + 3), 1, 7, 0);
    } else if (strcmp(which, "unlock") == 0) {
        shmem_clear_lock(heap); /* not held */
    } else if (strcmp(which, "psync") == 0) {
        shmem_barrier(0, 0, n, NULL);
    } else if (strcmp(which, "active_set") == 0) {
        static long psync[SHMEM_BARRIER_SYNC_SIZE];
        shmem_barrier(0, 0, n + 1, psync); /* more PEs than the job has */
    } else {
        fprintf(stderr, "unknown case `%s`\n", which);
        return 2;
    }
    fprintf(stderr, "case `%s` returned instead of failing\n", which);
    return 3;
}

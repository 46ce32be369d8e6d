/* shmem_global_exit(status) ends every PE of the job, and the job's exit status is
 * `status` (OpenSHMEM 1.5), 0 included: `global_exit STATUS` makes the last PE call it
 * while the others wait for a flag that never comes. */
#include "check.h"

static long never;

int main(int argc, char **argv) {
    shmem_init();
    int status = argc > 1 ? atoi(argv[1]) : 0;
    int me = shmem_my_pe(), npes = shmem_n_pes();
    shmem_barrier_all();
    if (me == npes - 1) shmem_global_exit(status);
    shmem_long_wait_until(&never, SHMEM_CMP_EQ, 1);
    fprintf(stderr, "PE %d: the wait returned, but no PE sets the flag\n", me);
    return 3;
}

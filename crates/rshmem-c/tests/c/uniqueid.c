/* Starting without a launcher: the program makes a unique id (shmemx_get_uniqueid), forks
 * its other PEs itself, and every process joins with shmemx_init_uniqueid. Then the PE
 * numbers are the ranks given, puts around the ring and a reduction work, and finalize
 * ends every PE. Run directly (no oshrun): ./uniqueid NPES, or ./uniqueid CASE for a misuse
 * case (below). */
#define _POSIX_C_SOURCE 200809L
#include "check.h"
#include <shmemx.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int npes = argc > 1 ? atoi(argv[1]) : 3, rank = 0, r, status, failed = 0;
    char id[SHMEMX_UNIQUEID_LEN];
    pid_t kids[64];
    /* Misuse, each of which must end the process with a message naming the call:
     * `bad-id` (text that is no id), `bad-rank` (a rank outside [0, npes)), `not-maker`
     * (rank 0 of an id this process did not make). */
    if (argc > 1 && strcmp(argv[1], "bad-id") == 0) shmemx_init_uniqueid("no id at all", 0, 2);
    if (argc > 1 && strcmp(argv[1], "bad-rank") == 0) shmemx_init_uniqueid("rshmem-tcp1 127.0.0.1:9 k", 2, 2);
    if (argc > 1 && strcmp(argv[1], "not-maker") == 0) shmemx_init_uniqueid("rshmem-tcp1 127.0.0.1:9 k", 0, 2);
    if (argc > 1 && argv[1][0] > '9') return 3;
    if (npes < 1 || npes > 64) return 2;
    memset(id, 0, sizeof id);
    CHECK(shmemx_get_uniqueid(id, sizeof id) == 0, "shmemx_get_uniqueid failed");
    CHECK(strncmp(id, "rshmem-tcp1 ", 12) == 0, "the id is `%s`", id);
    /* The program hands the id around: here by fork, as it could by MPI or a file. */
    for (r = 1; r < npes; r++) {
        kids[r] = fork();
        CHECK(kids[r] >= 0, "fork failed");
        if (kids[r] == 0) {
            rank = r;
            break;
        }
    }
    CHECK(shmemx_init_uniqueid(id, rank, npes) == 0, "shmemx_init_uniqueid failed");
    CHECK(shmem_my_pe() == rank, "my_pe %d, rank %d", shmem_my_pe(), rank);
    CHECK(shmem_n_pes() == npes, "n_pes %d, npes %d", shmem_n_pes(), npes);
    check_ring_and_sum(rank, npes);
    shmem_finalize();
    if (rank != 0) return 0;
    for (r = 1; r < npes; r++) {
        if (waitpid(kids[r], &status, 0) != kids[r] || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "rank %d (pid %d) did not exit cleanly (status %d)\n", r, (int)kids[r], status);
            failed = 1;
        }
    }
    if (!failed) printf("uniqueid: %d PEs met through the id and checked\n", npes);
    return failed;
}

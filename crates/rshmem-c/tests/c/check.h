/* Shared helpers of rshmem's C test programs. Every check failure prints what was wrong,
 * naming the PE, and ends the job with a non-zero status. */
#ifndef RSHMEM_TEST_CHECK_H
#define RSHMEM_TEST_CHECK_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "PE %d: %s:%d: check `%s` failed: ", shmem_my_pe(), __FILE__, \
                    __LINE__, #cond);                                                     \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fprintf(stderr, "\n");                                                        \
            fflush(stderr);                                                               \
            shmem_global_exit(1);                                                         \
        }                                                                                 \
    } while (0)

#endif

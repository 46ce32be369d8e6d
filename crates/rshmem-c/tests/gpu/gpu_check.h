/* Verdict lines of rshmem's nvcc test programs (the format of crates/rshmem/tests/support:
 * RSHMEM-CHECK per check, RSHMEM-SUMMARY at the end), for C and C++, and a CUDA call check
 * that names the call. A failed check prints what was wrong and the program goes on, so that
 * one run shows every failure; the exit status is the number of failed checks (capped). */
#ifndef RSHMEM_GPU_CHECK_H
#define RSHMEM_GPU_CHECK_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int gc_checks, gc_failed;
static const char *gc_program = "gpu_test";

static void gc_verdict(const char *name, int ok, const char *detail) {
    gc_checks++;
    if (!ok) gc_failed++;
    printf("RSHMEM-CHECK pe=%d program=%s name=%s result=%s count=1 detail=\"%s\"\n", shmem_my_pe(), gc_program, name,
           ok ? "pass" : "fail", detail ? detail : "");
    fflush(stdout);
}

static int gc_summary(void) {
    printf("RSHMEM-SUMMARY pe=%d program=%s checks=%d failed=%d result=%s\n", shmem_my_pe(), gc_program, gc_checks, gc_failed,
           gc_failed ? "fail" : "pass");
    fflush(stdout);
    return gc_failed > 100 ? 100 : gc_failed;
}

/* A CUDA runtime call that must succeed: else the job ends with the call's name and error. */
#define CUDA_OK(call)                                                                                   \
    do {                                                                                                \
        cudaError_t e_ = (call);                                                                        \
        if (e_ != cudaSuccess) {                                                                        \
            fprintf(stderr, "PE %d: %s:%d: %s failed: %s\n", shmem_my_pe(), __FILE__, __LINE__, #call,  \
                    cudaGetErrorString(e_));                                                            \
            gc_verdict("cuda_call", 0, #call);                                                          \
            gc_summary();                                                                               \
            shmem_global_exit(2);                                                                       \
        }                                                                                               \
    } while (0)

/* Waits for a stream for at most `seconds`; a stream still busy then fails the job. */
static void gc_stream_wait(cudaStream_t s, double seconds, const char *what) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        cudaError_t e = cudaStreamQuery(s);
        if (e == cudaSuccess) return;
        if (e != cudaErrorNotReady) {
            fprintf(stderr, "PE %d: %s: stream error %s\n", shmem_my_pe(), what, cudaGetErrorString(e));
            gc_verdict("stream_wait", 0, what);
            gc_summary();
            shmem_global_exit(2);
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > seconds) {
            fprintf(stderr, "PE %d: %s: the stream did not finish in %.0f s\n", shmem_my_pe(), what, seconds);
            gc_verdict("stream_timeout", 0, what);
            gc_summary();
            shmem_global_exit(3);
        }
        struct timespec nap = {0, 200000};
        nanosleep(&nap, 0);
    }
}

#endif

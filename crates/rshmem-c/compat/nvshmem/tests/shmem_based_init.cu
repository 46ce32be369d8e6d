// NVSHMEM started on top of OpenSHMEM, as NVSHMEM's examples/shmem-based-init.cu does, on
// rshmem's compatibility layer: shmem_init starts CPU PEs (host-memory heap),
// nvshmemx_init_attr(NVSHMEMX_INIT_WITH_SHMEM) starts GPU PEs over them (the same PEs), and
// each call family acts on its own heap: shmem_malloc returns host memory that shmem_putmem
// moves, nvshmem_malloc GPU memory that a kernel's nvshmem_int_p writes. nvshmem_finalize
// ends only the GPU PEs: shmem_* calls work on after it, until shmem_finalize.
//
// Prints one line per check and PE, `RSHMEM-CHECK pe=P program=shmem_based_init case=NAME
// result=pass|fail`, then PE 0 a summary line starting `shmem_based_init`; exits non-zero
// when a check failed. No wait here is unbounded but for the library's barriers, which the
// launcher's --timeout bounds.
// Build: nvcc -rdc=true -arch=sm_90 -I$HOME/include shmem_based_init.cu -L$HOME/lib
//        -lnvshmem_host -lnvshmem_device  (HOME: scripts/nvshmem-compat-home.sh's folder)
// Run:   rshmemrun -n 2 --timeout 80 ./shmem_based_init
#include <shmem.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdio>

static int failures;

static void check(const char* name, bool ok, const char* detail) {
    printf("RSHMEM-CHECK pe=%d program=shmem_based_init case=%s result=%s detail=\"%s\"\n", shmem_my_pe(), name,
           ok ? "pass" : "fail", detail);
    fflush(stdout);
    if (!ok) failures++;
}

// Every PE puts 1000 + its number into the next PE's word.
__global__ void ring_put(int* dst) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(dst, 1000 + me, (me + 1) % n);
}

// Whether `p` is memory of a CUDA device (not host memory).
static bool is_device_memory(const void* p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeDevice;
}

int main() {
    char detail[256];
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    // As NVSHMEM's example: one GPU per PE of the node, round robin.
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess) ndev = 0;
    if (ndev > 0) cudaSetDevice(shmem_team_my_pe(SHMEM_TEAM_SHARED) % ndev);

    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    int rc = nvshmemx_init_attr(NVSHMEMX_INIT_WITH_SHMEM, &attr);
    snprintf(detail, sizeof detail, "nvshmemx_init_attr returned %d with %d CUDA devices", rc, ndev);
    check("init_with_shmem", rc == 0, detail);
    if (rc != 0) {
        // No GPU PEs: the CPU PEs still run and end cleanly.
        shmem_barrier_all();
        if (me == 0) printf("shmem_based_init: %d PEs, FAIL (NVSHMEMX_INIT_WITH_SHMEM failed)\n", n);
        shmem_finalize();
        return 1;
    }

    int nv_me = nvshmem_my_pe(), nv_n = nvshmem_n_pes();
    int team_me = nvshmem_team_my_pe(NVSHMEM_TEAM_WORLD);
    snprintf(detail, sizeof detail, "shmem PE %d of %d, nvshmem PE %d of %d, team world PE %d", me, n, nv_me, nv_n, team_me);
    check("pe_numbers", nv_me == me && nv_n == n && team_me == me, detail);

    // OpenSHMEM's heap: host memory, written by the host, moved by shmem_putmem.
    const int words = 64;
    int* host = (int*)shmem_malloc(words * sizeof(int));
    int mine[words];
    for (int i = 0; i < words; i++) mine[i] = 100 * me + i;
    bool host_is_host = host && !is_device_memory(host);
    snprintf(detail, sizeof detail, "shmem_malloc returned %p", (void*)host);
    check("shmem_malloc_host_memory", host_is_host, detail);
    if (host) {
        for (int i = 0; i < words; i++) host[i] = -1;
        shmem_barrier_all();
        shmem_putmem(host, mine, sizeof mine, (me + 1) % n);
        shmem_barrier_all();
        int left = (me + n - 1) % n, bad = -1;
        for (int i = 0; i < words && bad < 0; i++)
            if (host[i] != 100 * left + i) bad = i;
        snprintf(detail, sizeof detail, "word %d holds %d, want %d", bad < 0 ? 0 : bad, bad < 0 ? host[0] : host[bad],
                 100 * left + (bad < 0 ? 0 : bad));
        check("shmem_putmem_host_heap", bad < 0, detail);
    }

    // NVSHMEM's heap: GPU memory, written by a kernel's nvshmem_int_p to the next PE.
    int* dev = (int*)nvshmem_malloc(sizeof(int));
    snprintf(detail, sizeof detail, "nvshmem_malloc returned %p", (void*)dev);
    check("nvshmem_malloc_gpu_memory", dev && is_device_memory(dev), detail);
    if (dev) {
        int init = -1, got = 0;
        cudaMemcpy(dev, &init, sizeof init, cudaMemcpyHostToDevice);
        nvshmem_barrier_all();
        ring_put<<<1, 1>>>(dev);
        cudaError_t e = cudaDeviceSynchronize();
        nvshmem_barrier_all();
        cudaMemcpy(&got, dev, sizeof got, cudaMemcpyDeviceToHost);
        int want = 1000 + (me + n - 1) % n;
        snprintf(detail, sizeof detail, "holds %d, want %d (kernel: %s)", got, want, cudaGetErrorString(e));
        check("nvshmem_int_p_gpu_heap", e == cudaSuccess && got == want, detail);
    }
    // The GPU traffic left OpenSHMEM's heap alone.
    if (host) {
        int left = (me + n - 1) % n;
        snprintf(detail, sizeof detail, "host word 0 holds %d, want %d", host[0], 100 * left);
        check("heaps_apart", host[0] == 100 * left, detail);
    }

    nvshmem_free(dev);
    nvshmem_finalize();

    // The CPU PEs run on after nvshmem_finalize.
    if (host) {
        shmem_barrier_all();
        int v = 7000 + me;
        shmem_putmem(host, &v, sizeof v, (me + 1) % n);
        shmem_barrier_all();
        int want = 7000 + (me + n - 1) % n;
        snprintf(detail, sizeof detail, "host word 0 holds %d, want %d", host[0], want);
        check("shmem_after_nvshmem_finalize", host[0] == want, detail);
    }

    // PE 0 learns how many checks failed anywhere.
    int* failed = (int*)shmem_calloc(1, sizeof(int));
    shmem_barrier_all();
    if (failures) shmem_int_atomic_add(failed, failures, 0);
    shmem_barrier_all();
    int total = me == 0 ? *failed : 0;
    if (me == 0) printf("shmem_based_init: %d PEs, %d failed checks, %s\n", n, total, total ? "FAIL" : "PASS");
    fflush(stdout);
    shmem_free(failed);
    shmem_free(host);
    shmem_finalize();
    return failures ? 1 : 0;
}

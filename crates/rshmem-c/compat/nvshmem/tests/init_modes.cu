// The two ways NVSHMEM programs start their PEs from MPI, on rshmem's compatibility layer:
// `uid` (rank 0 makes a unique id, MPI_Bcast hands it around, NVSHMEMX_INIT_WITH_UNIQUEID)
// and `mpi` (NVSHMEMX_INIT_WITH_MPI_COMM with a communicator whose order reverses
// MPI_COMM_WORLD's, so PE numbers must follow the communicator). Then a kernel puts each
// PE's number to the next PE and the host checks what arrived. Every PE uses GPU 0 (one
// GPU is enough). Build: nvcc -rdc=true -arch=sm_90 -I$HOME/include $(mpicc --showme:compile)
// init_modes.cu -L$HOME/lib -lnvshmem_host -lnvshmem_device $(mpicc --showme:link)
// Run: mpirun -np 2 ./init_modes uid|mpi
#include <mpi.h>
#include <nvshmem.h>
#include <nvshmemx.h>
#include <cstdio>
#include <cstring>

__global__ void ring_put(int* dst) {
    int me = nvshmem_my_pe(), n = nvshmem_n_pes();
    nvshmem_int_p(dst, 1000 + me, (me + 1) % n);
}

int main(int argc, char** argv) {
    const char* mode = argc > 1 ? argv[1] : "uid";
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cudaSetDevice(0);
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    MPI_Comm comm = MPI_COMM_WORLD;
    int want_pe = rank;
    if (strcmp(mode, "uid") == 0) {
        nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
        if (rank == 0) nvshmemx_get_uniqueid(&id);
        MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
        nvshmemx_set_attr_uniqueid_args(rank, size, &id, &attr);
        if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr) != 0) { printf("init_modes %s: init failed\n", mode); return 1; }
    } else {
        MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comm);
        MPI_Comm_rank(comm, &want_pe);
        attr.mpi_comm = &comm;
        if (nvshmemx_init_attr(NVSHMEMX_INIT_WITH_MPI_COMM, &attr) != 0) { printf("init_modes %s: init failed\n", mode); return 1; }
    }
    int me = nvshmem_my_pe(), n = nvshmem_n_pes(), bad = 0;
    if (me != want_pe || n != size) {
        printf("init_modes %s: world rank %d is PE %d of %d, want PE %d of %d\n", mode, rank, me, n, want_pe, size);
        bad = 1;
    }
    int* dst = (int*)nvshmem_malloc(sizeof(int));
    int init = -1, got = 0;
    cudaMemcpy(dst, &init, sizeof init, cudaMemcpyHostToDevice);
    nvshmem_barrier_all();
    ring_put<<<1, 1>>>(dst);
    cudaDeviceSynchronize();
    nvshmem_barrier_all();
    cudaMemcpy(&got, dst, sizeof got, cudaMemcpyDeviceToHost);
    int want = 1000 + (me + n - 1) % n;
    if (got != want) {
        printf("init_modes %s: PE %d holds %d, want %d\n", mode, me, got, want);
        bad = 1;
    }
    nvshmem_free(dst);
    nvshmem_finalize();
    int any = 0;
    MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("init_modes %s: %d PEs, %s\n", mode, size, any ? "FAIL" : "PASS");
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    MPI_Finalize();
    return any;
}

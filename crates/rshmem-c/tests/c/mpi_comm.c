/* Starting from an MPI communicator (shmemx_init_mpi_comm): the PEs are the ranks of a
 * communicator whose order is the reverse of MPI_COMM_WORLD's, so PE numbers follow the
 * communicator, not the launcher. Then puts around the ring and a reduction. Built with
 * oshcc and MPI's compile and link flags; run under mpirun. */
#include "check.h"
#include <mpi.h>
#include <shmemx.h>

int main(int argc, char **argv) {
    int world_rank, world_size, rank, npes;
    MPI_Comm reversed;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world_size);
    MPI_Comm_split(MPI_COMM_WORLD, 0, world_size - world_rank, &reversed);
    MPI_Comm_rank(reversed, &rank);
    CHECK(shmemx_init_mpi_comm(&reversed) == 0, "shmemx_init_mpi_comm failed");
    npes = shmem_n_pes();
    CHECK(npes == world_size, "n_pes %d, communicator size %d", npes, world_size);
    CHECK(shmem_my_pe() == rank, "my_pe %d, communicator rank %d (world rank %d)", shmem_my_pe(), rank, world_rank);
    CHECK(rank == world_size - 1 - world_rank, "rank %d of the reversed communicator", rank);
    check_ring_and_sum(rank, npes);
    shmem_finalize();
    if (rank == 0) printf("mpi_comm: %d PEs from a reversed communicator, checked\n", npes);
    MPI_Comm_free(&reversed);
    MPI_Finalize();
    return 0;
}

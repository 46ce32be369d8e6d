// The device library of nvcc -rdc=true programs (librshmem_device.a, built by rshmem-nvcc):
// the program's one definition of the device state `rshmem_state`, which the program's own
// files only declare (rshmem_device.cuh under -rdc). They also register it with libshmem
// (the header's host side), so this file needs nothing else.
#include "rshmem_device_types.cuh"
extern "C" {
__constant__ rshmem_device_state rshmem_state = {0};
}

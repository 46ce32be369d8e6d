// libnvshmem_device.a of rshmem's NVSHMEM compatibility layer: the one definition of the
// device state (rshmem_state) that -rdc=true programs link, as NVSHMEM programs link
// -lnvshmem_device. NVSHMEM is NVIDIA's; rshmem is not affiliated with NVIDIA.
#include <stdio.h>
#define RSHMEM_DEVICE_STATE_LIBRARY
#include "rshmem_device.cuh"

/* nvshmem_host.h: NVSHMEM's public header name, for rshmem's NVSHMEM source-compatibility layer.
 * Everything is in rshmem_nvshmem.h (see README.md in crates/rshmem-c/compat/nvshmem).
 * NVSHMEM is NVIDIA's; rshmem is not affiliated with NVIDIA. */
#ifndef RSHMEM_COMPAT_NVSHMEM_HOST_H
#define RSHMEM_COMPAT_NVSHMEM_HOST_H
#include "rshmem_nvshmem.h"
#endif

#!/usr/bin/env bash
# Lays out rshmem's NVSHMEM compatibility layer as an NVSHMEM_HOME-style folder:
#   DIR/include  nvshmem.h, nvshmemx.h, nvshmem_host.h (ours), rshmem's device headers,
#                shmem.h, shmemx.h, rshmemx_cuda.h
#   DIR/lib      libnvshmem_host.so (+ .so.3: linker scripts for librshmem_nvshmem.so and
#                libshmem.so), libnvshmem_device.a, libnvshmem.a
# Point a build at it as at NVSHMEM: -I$DIR/include -L$DIR/lib -lnvshmem_host -lnvshmem_device
# (nvcc -rdc=true), and LD_LIBRARY_PATH=$DIR/lib at run time. NVSHMEM is NVIDIA's; rshmem is
# not affiliated with NVIDIA.
#
# Usage: scripts/nvshmem-compat-home.sh DIR [--no-build]
#   Builds libshmem (cargo build --release -p rshmem-c --lib) unless --no-build.
#   NVCC (default: nvcc on PATH, else /opt/cuda-pip/nvidia/cu13/bin/nvcc), NVCC_ARCH (sm_90).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
dir=${1:?usage: scripts/nvshmem-compat-home.sh DIR [--no-build]}
build=1
[ "${2:-}" = "--no-build" ] && build=0
nvcc=${NVCC:-$(command -v nvcc || echo /opt/cuda-pip/nvidia/cu13/bin/nvcc)}
arch=${NVCC_ARCH:-sm_90}
compat=crates/rshmem-c/compat/nvshmem
for f in crates/rshmem-c/include/rshmemx_cuda.h crates/rshmem-c/csrc/rshmem_device_state.cu; do
  if [ ! -e "$f" ]; then
    echo "nvshmem-compat-home: $f is missing (rshmem's C host API for GPU PEs and its device library);" >&2
    echo "  the compatibility layer is built on them" >&2
    exit 2
  fi
done
[ $build = 1 ] && cargo build --release -p rshmem-c --lib
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
rm -rf "$dir/include" "$dir/lib" && mkdir -p "$dir/include" "$dir/lib"
cp "$compat"/include/* "$dir/include/"
cp crates/rshmem/device/*.cuh "$dir/include/"
cp crates/rshmem-c/include/*.h "$dir/include/"
cp target/release/libshmem.so "$dir/lib/"
# libnvshmem_host: the host-only calls (librshmem_nvshmem.so, on libshmem). Programs built
# with rshmem_device.cuh also call libshmem directly (the state registration of nvcc-built
# files), so the names NVSHMEM builds link with, libnvshmem_host.so and .so.3, are linker
# scripts that bring in both libraries (as glibc's libc.so does).
gcc -std=c99 -O2 -fPIC -shared -Wall -Wextra -I"$dir/include" "$compat/src/nvshmem_host.c" \
  -Wl,-soname,librshmem_nvshmem.so -L"$dir/lib" -lshmem -Wl,-rpath,'$ORIGIN' -o "$dir/lib/librshmem_nvshmem.so"
for n in libnvshmem_host.so libnvshmem_host.so.3; do
  echo "/* rshmem's NVSHMEM compatibility layer: NVSHMEM's host library name for ours. */
INPUT(-lrshmem_nvshmem -lshmem)" > "$dir/lib/$n"
done
# libnvshmem_device: the one definition of the device state for -rdc=true programs (rshmem's
# own device library source, as librshmem_device.a).
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$nvcc" -arch="$arch" -rdc=true -O2 -Xcompiler -fPIC -I"$dir/include" -c crates/rshmem-c/csrc/rshmem_device_state.cu -o "$tmp/nvshmem_device.o"
ar rcs "$dir/lib/libnvshmem_device.a" "$tmp/nvshmem_device.o"
# libnvshmem.a: NVSHMEM's older single static library name; the same device state.
cp "$dir/lib/libnvshmem_device.a" "$dir/lib/libnvshmem.a"
echo "NVSHMEM_HOME-style folder at $dir (rshmem $(git -C "$root" rev-parse --short HEAD))"

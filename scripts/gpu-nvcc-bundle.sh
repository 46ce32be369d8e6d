#!/usr/bin/env bash
# Builds the bundle of the nvcc-path tests (issue 19: crates/rshmem-c/tests/gpu): rshmemrun,
# libshmem, the headers, rshmem-nvcc, the test programs prebuilt here (nvcc from
# /opt/cuda-pip or $NVCC_DIR) and their sources (run.sh rebuilds them with the GPU host's
# nvcc through rshmem-nvcc and uses those builds when they succeed), and the runtime's
# kernels compiled for sm_90 into a kernel cache. Usage: scripts/gpu-nvcc-bundle.sh OUT
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-nvcc-bundle.sh OUT}
nvcc_dir=${NVCC_DIR:-/opt/cuda-pip/nvidia/cu13}
cargo build --release -p rshmem --bins --example gpu_compile_check
cargo build --release -p rshmem-c --lib --bins
rm -rf "$out" && mkdir -p "$out/bin" "$out/src" "$out/prebuilt"
cp target/release/rshmemrun target/release/libshmem.so target/release/rshmem-nvcc "$out/bin/"
cp -r target/release/include "$out/bin/"
strip "$out"/bin/rshmemrun "$out"/bin/rshmem-nvcc "$out"/bin/libshmem.so 2>/dev/null || true
cp crates/rshmem-c/tests/gpu/*.cu crates/rshmem-c/tests/gpu/*.c crates/rshmem-c/tests/gpu/*.h crates/rshmem-c/tests/gpu/build.sh "$out/src/"
cp crates/rshmem-c/tests/gpu/run.sh "$out/run.sh"
# Prebuilt with this machine's nvcc, through a copy of the wrapper beside the bundle's library.
export PATH=$nvcc_dir/bin:$PATH
W="$out/bin/rshmem-nvcc" S="$out/src" P="$out/prebuilt"
bash crates/rshmem-c/tests/gpu/build.sh "$W" "$S" "$P" "$nvcc_dir/include"
rm -rf "$out/bin/rshmem-device"
nvrtc_lib=${RSHMEM_NVRTC_LIB:-/tmp/nvrtc/nvidia/cu13/lib}
if [ -e "$nvrtc_lib/libnvrtc.so.13" ]; then
  LD_LIBRARY_PATH="$nvrtc_lib" target/release/examples/gpu_compile_check sm_90 "$out/kernel-cache" | grep -v "result=pass" || true
fi
du -sh "$out"

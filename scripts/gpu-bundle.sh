#!/usr/bin/env bash
# Builds the GPU tests and benchmarks with a runner script into one folder, so the GPU
# suite runs on a GPU host without cargo: `bash gpu-bundle/run.sh` there. The GPU test
# programs live in crates/rshmem/tests/gpu and build as examples (target/release/examples).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-bundle}
cargo build --release -p rshmem --bins --examples
cargo build --release -p rshmem-perf
cargo build --release -p rshmem-c --lib --bins
# Everything but the call scripts written beside the bundle (gpu-bundle/*.sh) goes.
mkdir -p "$out" && find "$out" -mindepth 1 -maxdepth 1 ! -name '*.sh' -exec rm -rf {} +
for b in rshmemrun examples/gpu_suite examples/gpu_coll examples/moe examples/gpu_compile_check examples/ring examples/gpu_proxy examples/gpu_engines rshmem-perf; do
  cp "target/release/$b" "$out/"
done
strip "$out"/* 2>/dev/null || true
# rshmem-perf carries its kernels and the anchors' sources inside; these copies are for reading.
mkdir -p "$out/perf-anchors" && cp crates/rshmem-perf/anchors/* "$out/perf-anchors/"
# UCX for the GPU proxy check (the GPU host has none): the libraries, and the module
# folder UCX looks for beside libucs (only CMA: the IB modules need verbs libraries).
mkdir -p "$out/lib/ucx"
for l in libucp.so.0 libuct.so.0 libucs.so.0 libucm.so.0 libnuma.so.1; do cp -L "/usr/lib/x86_64-linux-gnu/$l" "$out/lib/"; done
cp -L /usr/lib/x86_64-linux-gnu/ucx/libuct_cma.so.0 "$out/lib/ucx/"
# The C ABI (libshmem, oshcc, oshrun and the headers, laid out as oshcc expects: beside
# it) and C test programs, to check that plain OpenSHMEM C programs get host memory.
mkdir -p "$out/c" "$out/c-tests"
cp target/release/libshmem.so target/release/oshcc target/release/oshrun "$out/c/"
cp -r target/release/include "$out/c/"
strip "$out"/c/* 2>/dev/null || true
cp crates/rshmem-c/tests/c/*.c crates/rshmem-c/tests/c/check.h "$out/c-tests/"
cp scripts/gpu-run.sh "$out/run.sh"
# Plain-CUDA experiments that gpu-session.sh builds with nvcc there.
mkdir -p "$out/experiments" && cp crates/rshmem-perf/experiments/*.cu "$out/experiments/"
# Kernels compiled here for sm_90 (CUDA 13.0 NVRTC, the GPU host.s version, from its PyPI wheel as CI fetches it)
# into the kernel cache the GPU host starts from: the first run there then loads instead of
# compiling (minutes of device time for the test programs' kernels).
nvrtc_lib=${RSHMEM_NVRTC_LIB:-${HOME:-/root}/.cache/rshmem/nvrtc-13.0/nvidia/cu13/lib}
if [ -e "$nvrtc_lib/libnvrtc.so.13" ]; then
  LD_LIBRARY_PATH="$nvrtc_lib" target/release/examples/gpu_compile_check sm_90 "$out/kernel-cache" | grep -v "result=pass" || true
else
  echo "no NVRTC at $nvrtc_lib: the GPU host compiles the kernels itself"
fi
du -sh "$out"

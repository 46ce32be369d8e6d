#!/usr/bin/env bash
# Builds the GPU tests and benchmarks with a runner script into one folder, so the GPU
# suite runs on a GPU host without cargo: `bash gpu-bundle/run.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-gpu-bundle}
cargo build --release -p rshmem --bins --examples
cargo build --release -p rshmem-perf
rm -rf "$out" && mkdir -p "$out"
for b in rshmemrun examples/gpu_suite examples/gpu_coll examples/moe examples/gpu_compile_check examples/ring examples/gpu_proxy rshmem-perf; do
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
cp scripts/gpu-run.sh "$out/run.sh"
du -sh "$out"

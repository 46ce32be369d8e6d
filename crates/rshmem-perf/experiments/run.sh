#!/usr/bin/env bash
# Micro-experiments behind device-latency choices (results/gpu/main-2026-12-04b.txt, section 5), not tests:
#   load_flavours  dependent loads from a peer's heap by PTX flavour, and store + completion forms
#   amo_flavours   dependent fetch_add by atomic flavour, beside rshmem's g and fetch_add
#   host_cost      host time per stream-ordered call (putmem_on_stream, cudaMemcpyAsync, an empty launch, ...)
# Two more are plain CUDA (no rshmem; results/gpu/main-2026-12-05.txt), built and run by hand:
#   nvcc -O2 -arch=sm_90 launch_threads.cu -lcuda   launches from 1-8 threads into one context
#   nvcc -O2 -arch=sm_90 ce_overlap.cu -lcuda       device-to-device copies beside a compute kernel
# On a GPU host, from the nvcc bundle of scripts/gpu-nvcc-bundle.sh (NVCC_BUNDLE, default gpu-bundle/nvcc):
#   bash crates/rshmem-perf/experiments/run.sh [NAME ...]
# Each builds with the bundle's rshmem-nvcc and runs as 2 PEs (processes) under rshmemrun; PE 0 prints.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
nb=$(cd "${NVCC_BUNDLE:-gpu-bundle/nvcc}" && pwd)
rshmemrun=${RSHMEMRUN:-$(dirname "$nb")/rshmemrun}
out=${OUT:-/tmp}/experiments && mkdir -p "$out"
export LD_LIBRARY_PATH=$nb/bin:${LD_LIBRARY_PATH:-} RSHMEM_NVCC=${RSHMEM_NVCC:-/usr/local/cuda/bin/nvcc}
for name in "${@:-load_flavours amo_flavours host_cost}"; do
  for n in $name; do
    "$nb/bin/rshmem-nvcc" -O2 "$here/$n.cu" -o "$out/$n" -ldl || { echo "$n: build failed"; continue; }
    timeout 120 "$rshmemrun" -n 2 --timeout 100 "$out/$n"
  done
done

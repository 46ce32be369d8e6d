#!/usr/bin/env bash
# Runs the GPU suite and benchmarks from a bundle made by scripts/gpu-bundle.sh. The test
# programs (crates/rshmem/tests/gpu, built as examples) print verdict lines.
# Logs go to $OUT (or ./gpu-results). Usage: bash gpu-bundle/run.sh [suite|bench|perf|proxy|engines|remote|c|all]
# (SKIP_COMPILE_CHECK=1 skips the NVRTC compile of every kernel source first.)
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
# Logs are written to a scratch folder and packed into one archive in the results folder.
RESULTS=${OUT:-$PWD/gpu-results}
OUT=$(mktemp -d /tmp/rshmem-gpu-logs.XXXX)
mkdir -p "$RESULTS"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_CACHE_DIR=/tmp/rshmem-cache
# Start from the kernels the bundle compiled (scripts/gpu-bundle.sh), if it did.
[ -d "$B/kernel-cache" ] && mkdir -p /tmp/rshmem-cache && cp -rn "$B/kernel-cache/." /tmp/rshmem-cache/
# The bundle's UCX (libucp is loaded at run time by the UCX transports).
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
what=${1:-all}
summary=()
note() { summary+=("$1"); echo "== $1"; printf '%s\n' "${summary[@]}" > "$OUT/summary.txt"; tar czf "$RESULTS/gpu-logs.tgz" -C "$OUT" . 2>/dev/null; }
# The verdict lines of a test program's log (RSHMEM-CHECK, crates/rshmem/tests/support):
# "P passed, F failed" checks; failed ones and the per-PE summaries are shown by `failures`.
verdicts() { echo "$(grep -c '^RSHMEM-CHECK .* result=pass' "$1") checks passed, $(grep -c '^RSHMEM-CHECK .* result=fail' "$1") failed"; }
failures() { grep -E '^RSHMEM-CHECK .* result=fail|^RSHMEM-SUMMARY .* result=fail' "$1" | head -${2:-10}; }
nvidia-smi --query-gpu=name,memory.used,memory.total,clocks.sm --format=csv | tee "$OUT/gpu.txt"
if [[ ${SKIP_COMPILE_CHECK:-0} != 1 ]]; then
  "$B/gpu_compile_check" sm_90 > "$OUT/compile.log" 2>&1; rc=$?
  failures "$OUT/compile.log"; note "compile_check rc=$rc: $(verdicts "$OUT/compile.log")"
fi
if [[ $what == suite || $what == all ]]; then
  for n in 2 4; do
    "$B/rshmemrun" -n $n --timeout 240 "$B/gpu_suite" > "$OUT/suite$n.log" 2>&1; rc=$?
    failures "$OUT/suite$n.log" 20
    note "gpu_suite $n PEs rc=$rc: $(verdicts "$OUT/suite$n.log")"
  done
  for n in ${COLL_PES:-2 4}; do
    "$B/rshmemrun" -n $n --timeout 150 "$B/gpu_coll" > "$OUT/coll$n.log" 2>&1; rc=$?
    failures "$OUT/coll$n.log"
    note "gpu_coll $n PEs rc=$rc: $(verdicts "$OUT/coll$n.log")"
  done
  for n in ${MOE_PES:-1 2}; do
    "$B/rshmemrun" -n $n --timeout 120 "$B/moe" > "$OUT/moe$n.log" 2>&1; rc=$?
    failures "$OUT/moe$n.log"
    note "moe $n PEs rc=$rc: $(verdicts "$OUT/moe$n.log")"
  done
  RSHMEM_DEVICE_DEBUG=1 "$B/rshmemrun" -n 1 --timeout 60 "$B/gpu_suite" --bad-pe > "$OUT/badpe.log" 2>&1; rc=$?
  grep -h '^RSHMEM-CHECK' "$OUT/badpe.log"; note "device check (bad PE) rc=$rc: $(verdicts "$OUT/badpe.log")"
fi
if [[ $what == perf || $what == bench || $what == all ]]; then
  # rshmem-perf's GPU suite on 2 PEs sharing the GPU, with NVSHMEM and NCCL beside it in
  # the same invocation (the anchors are compiled with nvcc first; a build error is in
  # perf.log). Table: perf.txt; CSV, JSON, SVG: perf/.
  export NVSHMEM_HOME=${NVSHMEM_HOME:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem}
  export NCCL_HOME=${NCCL_HOME:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl}
  command -v nvcc > /dev/null || export PATH=$PATH:/usr/local/cuda/bin
  PR=/tmp/rshmem-perf-gpu; rm -rf "$PR"
  timeout 600 "$B/rshmem-perf" --gpu --pes 2 --anchors auto ${PERF_ARGS:---reps 3 --warmup 5 --iters 200 --sync-iters 5 --rep-bytes 256M} \
    --timeout 200 --out "$PR" > "$OUT/perf.txt" 2> "$OUT/perf.log"; note "rshmem-perf gpu rc=$?"
  mkdir -p "$OUT/perf" && cp "$PR"/*.csv "$PR"/*.json "$PR"/*.svg "$PR"/plan.txt "$PR"/anchor/*.log "$OUT/perf/" 2>/dev/null
  grep -v "^wrote" "$OUT/perf.txt" | head -150; grep -iE "^rshmem-perf:|error|unavailable|fail" "$OUT/perf.log" | head -20
fi
if [[ $what == proxy || $what == all ]]; then
  # GPU-initiated operations to peers without a mapping: every peer through the host
  # proxy and the staged UCX transport (tcp, then shared memory).
  for tls in tcp sm,self; do
    RSHMEM_TRANSPORT=ucx UCX_TLS=$tls UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n RSHMEM_DEVICE_WAIT_TIMEOUT=30 \
      "$B/rshmemrun" -n 2 --timeout 90 "$B/gpu_proxy" > "$OUT/proxy_${tls%%,*}.log" 2>&1; rc=$?
    failures "$OUT/proxy_${tls%%,*}.log" 20; grep -E "numbers|  put|  g " "$OUT/proxy_${tls%%,*}.log" | head -10
    note "gpu_proxy UCX_TLS=$tls rc=$rc: $(verdicts "$OUT/proxy_${tls%%,*}.log")"
  done
fi
if [[ $what == engines || $what == all ]]; then
  # Engine-explicit device operations (SM, copy engine, remote engine over UCX tcp even to
  # mapped peers), batches, 2-D, prefetch, signal32, with their timings: processes, then
  # thread PEs.
  for ppp in 1 2; do
    RSHMEM_REMOTE_ENGINE=ucx UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n RSHMEM_DEVICE_WAIT_TIMEOUT=30 RSHMEM_SYMMETRIC_SIZE=1G \
      "$B/rshmemrun" -n 2 --pes-per-process $ppp --timeout 120 "$B/gpu_engines" > "$OUT/engines_ppp$ppp.log" 2>&1; rc=$?
    failures "$OUT/engines_ppp$ppp.log" 20; grep -E "^ *(sm|ce|remote) |^anchor|^batch|^cost" "$OUT/engines_ppp$ppp.log" | head -40
    note "gpu_engines pes-per-process=$ppp rc=$rc: $(verdicts "$OUT/engines_ppp$ppp.log")"
  done
fi
if [[ $what == remote || $what == all ]]; then
  # GPU collectives on teams with members behind the proxy (the proxy protocol): every
  # peer through UCX tcp on 2 PEs, then 4 PEs as two simulated hosts of 2 (RSHMEM_HOST):
  # mapped members by copies, the other host's through the proxy; then MoE over UCX.
  ucx_env=(UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n RSHMEM_DEVICE_WAIT_TIMEOUT=60)
  env RSHMEM_TRANSPORT=ucx "${ucx_env[@]}" "$B/rshmemrun" -n 2 --timeout ${REMOTE_TIMEOUT:-200} "$B/gpu_coll" > "$OUT/coll_ucx2.log" 2>&1; rc=$?
  failures "$OUT/coll_ucx2.log"; grep "left out" "$OUT/coll_ucx2.log" | head -1
  note "gpu_coll 2 PEs RSHMEM_TRANSPORT=ucx rc=$rc: $(verdicts "$OUT/coll_ucx2.log")"
  env "${ucx_env[@]}" "$B/rshmemrun" -n 4 --timeout ${REMOTE_TIMEOUT:-200} /bin/sh -c 'RSHMEM_HOST=h$((RSHMEM_PE / 2)) exec "$0" "$@"' "$B/gpu_coll" \
    > "$OUT/coll_hosts4.log" 2>&1; rc=$?
  failures "$OUT/coll_hosts4.log"; grep "left out" "$OUT/coll_hosts4.log" | head -1
  note "gpu_coll 4 PEs on 2 simulated hosts rc=$rc: $(verdicts "$OUT/coll_hosts4.log")"
  # MoE dispatch/combine with every peer behind the proxy.
  env RSHMEM_TRANSPORT=ucx "${ucx_env[@]}" "$B/rshmemrun" -n 2 --timeout ${REMOTE_TIMEOUT:-200} "$B/moe" > "$OUT/moe_ucx2.log" 2>&1; rc=$?
  note "moe 2 PEs RSHMEM_TRANSPORT=ucx rc=$rc: $(verdicts "$OUT/moe_ucx2.log")"
fi
if [[ $what == c || $what == all ]]; then
  # Plain OpenSHMEM C programs on a GPU host: built with oshcc, run with oshrun under the
  # default RSHMEM_DEVICE=auto, they must get host memory (no "GPU PE" in the log).
  for t in host_memory rma amo coll; do
    "$B/c/oshcc" -O2 -o "$OUT/c_$t" "$B/c-tests/$t.c" > "$OUT/c_$t.log" 2>&1 &&
      RSHMEM_LOG=info "$B/c/oshrun" -np 2 --timeout 120 "$OUT/c_$t" >> "$OUT/c_$t.log" 2>&1; rc=$?
    note "C $t 2 PEs rc=$rc, GPU PE lines: $(grep -c 'GPU PE' "$OUT/c_$t.log")"
    [[ $rc == 0 ]] || tail -5 "$OUT/c_$t.log"
  done
fi
if [[ $what == bench || $what == all ]]; then
  for n in ${MOE_BENCH_PES:-1 2}; do
    RSHMEM_SYMMETRIC_SIZE=4G "$B/rshmemrun" -n $n --timeout 120 "$B/moe" --bench > "$OUT/moe_bench$n.txt" 2>&1; note "moe bench $n PEs rc=$?"
    tail -7 "$OUT/moe_bench$n.txt"
  done
fi
printf '%s\n' "${summary[@]}" | tee "$OUT/summary.txt"
tar czf "$RESULTS/gpu-logs.tgz" -C "$OUT" .

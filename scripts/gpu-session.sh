#!/usr/bin/env bash
# One GPU-host session of checks and measurements, from a bundle made by
# scripts/gpu-bundle.sh (and python-wheels/ from scripts/py-wheel.sh for `python`).
# Usage: [SKIP='compile_check coll_proc*'] bash scripts/gpu-session.sh check|perf|engines|launch|moe|copy|proxy|proxy-ab|python|nvcc|compat|compat-init
#   check:  kernels compile; the GPU suite, collectives, MoE and proxy programs with PEs as
#           processes (2) and as threads of one process (2, 4, 8); plain C programs get
#           host memory.
#   perf:   rshmem-perf's GPU suite with PEs as threads (2, 4, 8: the cases issue 20 names),
#           the RMA rows with 2 PEs as processes beside NVSHMEM, and the on-stream
#           collectives of 1 PE beside NCCL (issue 22). PARTS="thr proc one" picks parts;
#           PARTS=anchor-compat runs rshmem-perf's NVSHMEM anchor built against the compat layer.
#   engines: issue 25's engine checks and bench (2 thread PEs: copy engine beside compute),
#           the proxy over UCX tcp, and relays.
#   launch: on-stream kernels with programmatic dependent launch (RSHMEM_GPU_OVERLAP_LAUNCH):
#           collectives/suite/MoE checked, then on-stream rows with it off and on (thread
#           PEs 8/4/2, LAUNCH_PES; 1 PE beside NCCL).
#   moe:    MoE checks (pull and push combine) on 8 and 2 thread PEs and 2 processes, then
#           the bench (dispatch, combine, all-to-all of the same bytes) on 8 thread PEs and 1 PE.
#   copy:   the block copy loop experiment (experiments/copy_unroll.cu, plain CUDA) in
#           put_bw's launch shape against cuMemcpyAsync (issue 22, item 1).
#   compat-init: NVSHMEM's MPI starts (unique id over MPI_Bcast, an MPI communicator) on the
#           compatibility layer, 2 PEs under mpirun (crates/rshmem-c/compat/nvshmem/tests).
#   proxy-ab: the proxy thread's placement (its PE's core, the spare CPUs, unbound) and staging size, side by side.
#   proxy:  the GPU proxy over UCX tcp: checks, then device puts/gets through it beside the
#           same traffic from the host thread (issue 22 item 5).
#   python: the Python package's GPU check.
#   nvcc:   the nvcc-path test programs (the bundle's nvcc/ from scripts/gpu-nvcc-bundle.sh).
#   compat: NVSHMEM's perftests and examples, unchanged, built on this host against rshmem's
#           compatibility layer ($B/compat-home, from scripts/nvshmem-compat-home.sh) and
#           against NVSHMEM, from their sources in $B/nvshmem-src, run side by side
#           (scripts/nvshmem-compat-build.sh, scripts/nvshmem-compat-run.sh).
# Logs go to $OUT (one archive), a summary table is printed last.
set -uo pipefail
B=${BUNDLE:-gpu-bundle}
RESULTS=${OUT:-$PWD/gpu-results}
L=$(mktemp -d /tmp/rshmem-session.XXXX)
mkdir -p "$RESULTS"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_CACHE_DIR=/tmp/rshmem-cache
# Start from the kernels the bundle compiled (scripts/gpu-bundle.sh), if it did.
[ -d "$B/kernel-cache" ] && mkdir -p /tmp/rshmem-cache && cp -rn "$B/kernel-cache/." /tmp/rshmem-cache/
export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}
# Thread PEs of one process each reserve device address space for every PE's heap.
export RSHMEM_MAX_SYMMETRIC_SIZE=${RSHMEM_MAX_SYMMETRIC_SIZE:-16G}
summary=()
pack() { tar czf "$RESULTS/session-$1.tgz" --exclude='./*-build/bin' --exclude='./*-build/obj' -C "$L" . 2>/dev/null; }
verdicts() { echo "$(grep -c '^RSHMEM-CHECK .* result=pass' "$1") pass, $(grep -c '^RSHMEM-CHECK .* result=fail' "$1") fail"; }
step() { # step NAME TIMEOUT CMD...: runs, logs, notes the verdict line
  local name=$1 t=$2; shift 2
  # SKIP: space-separated step names (or prefixes ending in *) left out of this session.
  for s in ${SKIP:-}; do [[ $name == $s ]] && { summary+=("$(printf '%-22s skipped' "$name")"); return; }; done
  local t0=$(date +%s%N)
  timeout "$t" "$@" > "$L/$name.log" 2>&1; local rc=$?
  local dt=$(( ($(date +%s%N) - t0) / 1000000 ))
  summary+=("$(printf '%-22s rc=%-3s %6d ms  %s' "$name" "$rc" "$dt" "$(verdicts "$L/$name.log")")")
  grep -E 'result=fail' "$L/$name.log" | head -5
  [[ $rc == 0 ]] || tail -4 "$L/$name.log"
  pack "$what"
}
what=${1:-check}
nvidia-smi --query-gpu=name,memory.used,memory.total --format=csv,noheader | tee "$L/gpu.txt"
case $what in
check)
  step compile_check 420 "$B/gpu_compile_check" sm_90
  for n in 2; do
    step "suite_proc$n" 240 "$B/rshmemrun" -n $n --timeout 230 "$B/gpu_suite"
    step "coll_proc$n" 240 "$B/rshmemrun" -n $n --timeout 230 "$B/gpu_coll"
    step "moe_proc$n" 120 "$B/rshmemrun" -n $n --timeout 110 "$B/moe"
  done
  for n in 2 4 8; do
    step "suite_thr$n" 120 "$B/rshmemrun" -n $n --pes-per-process $n --timeout 110 "$B/gpu_suite"
    step "coll_thr$n" 180 "$B/rshmemrun" -n $n --pes-per-process $n --timeout 170 "$B/gpu_coll"
    step "moe_thr$n" 120 "$B/rshmemrun" -n $n --pes-per-process $n --timeout 110 "$B/moe"
  done
  step proxy_tcp_proc2 120 env RSHMEM_TRANSPORT=ucx UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n \
    RSHMEM_DEVICE_WAIT_TIMEOUT=30 "$B/rshmemrun" -n 2 --timeout 110 "$B/gpu_proxy"
  # Relays (issue 25): 4 PEs as two simulated hosts of two, the remote engine to every peer;
  # every PE through every relay at each scope, then PE 0 -> 2 through 1 timed.
  ucx_env=(RSHMEM_REMOTE_ENGINE=ucx UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n RSHMEM_DEVICE_WAIT_TIMEOUT=60)
  step relay_hosts4 200 env "${ucx_env[@]}" RSHMEM_SYMMETRIC_SIZE=1G "$B/rshmemrun" -n 4 --timeout 190 \
    /bin/sh -c 'RSHMEM_HOST=h$((RSHMEM_PE / 2)) exec "$0" "$@"' "$B/gpu_engines" relay
  grep -A12 '^relay: PE 0' "$L/relay_hosts4.log"
  step misuse_relay 60 env "${ucx_env[@]}" "$B/rshmemrun" -n 2 --timeout 50 "$B/gpu_engines" misuse-relay
  grep -m2 'device error in rshmemx_relay' "$L/misuse_relay.log"
  for t in host_memory rma; do
    "$B/c/oshcc" -O2 -o "$L/c_$t" "$B/c-tests/$t.c" > "$L/c_$t.build.log" 2>&1
    step "c_$t" 120 env RSHMEM_LOG=info "$B/c/oshrun" -np 2 --timeout 100 "$L/c_$t"
    summary+=("    (GPU PE log lines in c_$t: $(grep -c 'GPU PE' "$L/c_$t.log"))")
  done
  ;;
perf)
  parts=${PARTS:-thr proc one}
  ops=signal_pingpong,barrier,reduce_on_stream,alltoall_on_stream,put_bw,put_lat,g
  common=(--gpu --ops $ops --reps 3 --warmup 3 --iters 100 --sync-iters 20 --rep-bytes 1G --timeout 140)
  for n in 2 4 8; do
    [[ " $parts " == *" thr "* ]] || break
    step "perf_thr$n" 170 "$B/rshmem-perf" "${common[@]}" --pes $n --pes-per-process $n --anchors none --begin 8 --end ${PERF_END:-256M} --factor 32 --out "$L/perf_thr$n"
    grep -E '^(signal|barrier|reduce|alltoall|put|g )' "$L/perf_thr$n.log" | head -40
  done
  # The GPU's own limit in this run: a 1 GiB device-to-device copy (torch), payload GB/s.
  /opt/torch/.venv/bin/python - > "$L/d2d.log" 2>&1 <<'PY'
import torch
x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
ts = []
for _ in range(10):
    s.record(); y.copy_(x); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); print(f"D2D copy 1 GiB: {ts[5]:.3f} ms median, {(1 << 30) / ts[5] / 1e6:.0f} GB/s payload")
PY
  cat "$L/d2d.log"; summary+=("$(cat "$L/d2d.log" | tail -1)")
  export NVSHMEM_HOME=${NVSHMEM_HOME:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem}
  command -v nvcc > /dev/null || export PATH=$PATH:/usr/local/cuda/bin
  # RMA beside NVSHMEM, 2 PEs as processes (the other PE idles on the host, so no time slicing).
  rma=(--gpu --reps 3 --warmup 10 --iters 200 --rep-bytes 1G --timeout 170 --pes 2 --anchors nvshmem)
  if [[ " $parts " == *" proc "* ]]; then
    step perf_proc2_lat 180 "$B/rshmem-perf" "${rma[@]}" --ops put_lat,get_lat,p,g,fetch_add --begin 8 --end 4K --factor 8 --out "$L/perf_proc2_lat"
    grep -E '^(put|get|p |g |fetch)' "$L/perf_proc2_lat.log" | head -30
    step perf_proc2_bw 180 "$B/rshmem-perf" "${rma[@]}" --ops put_bw,get_bw,put_bw_block --begin 64K --end 1G --factor 16 --out "$L/perf_proc2_bw"
    grep -E '^(put|get)' "$L/perf_proc2_bw.log" | head -30
  fi
  # rshmem-perf's own NVSHMEM anchor (anchors/nvshmem_perf.cu) built unchanged against rshmem's
  # NVSHMEM compatibility layer ($B/compat-home, scripts/nvshmem-compat-home.sh): its checks must
  # pass, and its column is then rshmem through NVSHMEM's names (issue 19).
  if [[ " $parts " == *" anchor-compat "* ]]; then
    NVSHMEM_HOME=$B/compat-home LD_LIBRARY_PATH=$B/compat-home/lib:$LD_LIBRARY_PATH step perf_anchor_compat 180 \
      "$B/rshmem-perf" "${rma[@]}" --ops put_lat,get_lat,p,g,fetch_add,put_bw,get_bw --begin 8 --end 64M --factor 64 --out "$L/perf_anchor_compat"
    grep -E "^(anchor|put|get|p |g |fetch)|FAIL|fail" "$L/perf_anchor_compat.log" | head -30
  fi
  # On-stream collectives of 1 PE beside NCCL with one rank.
  if [[ " $parts " == *" one "* ]]; then
    step perf_one 200 "$B/rshmem-perf" --gpu --reps 3 --warmup 10 --iters 100 --rep-bytes 2G --timeout 190 --pes 1 --anchors nccl \
      --ops reduce_on_stream,broadcast_on_stream,alltoall_on_stream,fcollect_on_stream,barrier_on_stream --begin 8 --end 1G --factor 32 --out "$L/perf_one"
    grep -E '_on_stream' "$L/perf_one.log" | head -40
  fi
  ;;
engines)
  # Issue 25's figures: the engines bench (copy engine, SM and remote puts; batching; a
  # compute kernel beside a 16 GiB transfer) with 2 PEs as threads of one process, so the
  # kernels of both PEs run at once instead of time-slicing; then the relays again.
  ucx_env=(RSHMEM_REMOTE_ENGINE=ucx UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n RSHMEM_DEVICE_WAIT_TIMEOUT=60)
  # Every engine's calls checked at each scope (copy-engine puts go through
  # cuMemcpyBatchAsync with the prefer-overlap flag), then the proxy over UCX tcp (the
  # UCX worker gate).
  step engines_check_thr2 150 env "${ucx_env[@]}" RSHMEM_SYMMETRIC_SIZE=2G "$B/rshmemrun" -n 2 --pes-per-process 2 --timeout 140 "$B/gpu_engines" check
  step proxy_tcp_proc2 120 env RSHMEM_TRANSPORT=ucx UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n \
    RSHMEM_DEVICE_WAIT_TIMEOUT=30 "$B/rshmemrun" -n 2 --timeout 110 "$B/gpu_proxy"
  step engines_bench_thr2 300 env "${ucx_env[@]}" RSHMEM_SYMMETRIC_SIZE=4G RSHMEM_WAIT_WARN=120 \
    "$B/rshmemrun" -n 2 --pes-per-process 2 --timeout 290 "$B/gpu_engines" bench
  grep -E '^(bench|anchor|batch|overlap|cost|   *(sm|ce|remote) )' "$L/engines_bench_thr2.log" | head -60
  step relay_hosts4 200 env "${ucx_env[@]}" RSHMEM_SYMMETRIC_SIZE=1G "$B/rshmemrun" -n 4 --timeout 190 \
    /bin/sh -c 'RSHMEM_HOST=h$((RSHMEM_PE / 2)) exec "$0" "$@"' "$B/gpu_engines" relay
  grep -A12 '^relay: PE 0' "$L/relay_hosts4.log"
  ;;
launch)
  # Programmatic dependent launch of the runtime's on-stream kernels
  # (RSHMEM_GPU_OVERLAP_LAUNCH, on by default): the collectives, suite and MoE checked with
  # it on, then the on-stream rows measured with it off and on in this one run: thread PEs
  # (8, 4, 2 on the one GPU) and 1 PE beside NCCL.
  export RSHMEM_GPU_OVERLAP_LAUNCH=1
  step coll_thr8 180 "$B/rshmemrun" -n 8 --pes-per-process 8 --timeout 170 "$B/gpu_coll"
  step coll_proc2 240 "$B/rshmemrun" -n 2 --timeout 230 "$B/gpu_coll"
  step suite_thr2 120 "$B/rshmemrun" -n 2 --pes-per-process 2 --timeout 110 "$B/gpu_suite"
  step moe_thr8 120 "$B/rshmemrun" -n 8 --pes-per-process 8 --timeout 110 "$B/moe"
  ops=reduce_on_stream,barrier_on_stream,alltoall_on_stream,broadcast_on_stream
  for n in ${LAUNCH_PES:-8 4 2}; do
    for o in 0 1; do
      step "launch_thr${n}_o$o" 170 env RSHMEM_GPU_OVERLAP_LAUNCH=$o "$B/rshmem-perf" --gpu --ops $ops --reps 3 --warmup 3 --iters 200 \
        --pes "$n" --pes-per-process "$n" --anchors none --begin 8 --end 8K --factor 32 --timeout 140 --out "$L/launch_thr${n}_o$o"
      grep -E '_on_stream' "$L/launch_thr${n}_o$o.log" | sed "s/^/thr$n overlap=$o  /" | head -12
    done
  done
  for o in 0 1; do
    step "launch_one_o$o" 200 env RSHMEM_GPU_OVERLAP_LAUNCH=$o "$B/rshmem-perf" --gpu --reps 3 --warmup 10 --iters 200 --rep-bytes 1G \
      --timeout 190 --pes 1 --anchors nccl --ops $ops --begin 8 --end 8M --factor 32 --out "$L/launch_one_o$o"
    grep -E '_on_stream' "$L/launch_one_o$o.log" | sed "s/^/one overlap=$o  /" | head -20
  done
  ;;
proxy)
  # The GPU proxy over UCX tcp (issue 22 item 5): its checks, then device-initiated puts and
  # gets through the proxy beside the same traffic from the host thread (GPU/host column).
  # A second binary $B/gpu_proxy_base (an earlier build), when present, runs right after it.
  # Two PEs as threads of one process first: processes sharing one GPU time-slice it, so a
  # kernel of PE 0 spinning on the proxy holds PE 1's copies back for a time slice (~2 ms);
  # thread PEs share one context and run at once, as PEs on GPUs of their own do.
  for p in gpu_proxy gpu_proxy_base; do
    [ -x "$B/$p" ] || continue
    for mode in thr2 proc2; do
      ppp=(); [[ $mode == thr2 ]] && ppp=(--pes-per-process 2)
      step "${p}_$mode" 150 env RSHMEM_TRANSPORT=ucx UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n \
        RSHMEM_DEVICE_WAIT_TIMEOUT=30 "$B/rshmemrun" -n 2 "${ppp[@]}" --timeout 140 "$B/$p"
      sed -n '/^numbers/,$p' "$L/${p}_$mode.log" | grep -v RSHMEM-CHECK | head -20
    done
  done
  ;;
proxy-ab)
  # The GPU proxy's placement and staging (14f1877), 2 thread PEs over UCX tcp, 2 rounds of: old (1 MiB staging, the
  # proxy thread on its PE's core), s4 (4 MiB staging on the PE's core), new (4 MiB, the thread on the CPUs no PE is
  # bound to: RSHMEM_SPARE_CPUS), none (rshmemrun --bind-to none).
  for round in 1 2; do for cf in old s4 new none; do
    st=4M; [[ $cf == old ]] && st=1M
    bind=(); [[ $cf == none ]] && bind=(--bind-to none)
    wrap=(); [[ $cf == old || $cf == s4 ]] && wrap=(/bin/sh -c 'unset RSHMEM_SPARE_CPUS; exec "$0" "$@"')
    step "proxy_${cf}_$round" 150 env RSHMEM_PROXY_STAGING=$st RSHMEM_TRANSPORT=ucx UCX_TLS=tcp UCX_MEM_EVENTS=no UCX_WARN_UNUSED_ENV_VARS=n \
      RSHMEM_DEVICE_WAIT_TIMEOUT=30 RSHMEM_LOG=warn,rshmem::transport::proxy=debug \
      "$B/rshmemrun" -n 2 --pes-per-process 2 "${bind[@]}" --timeout 140 "${wrap[@]}" "$B/gpu_proxy"
    sed -n '/^numbers/,$p' "$L/proxy_${cf}_$round.log" | grep -E "  (put|g |put_nbi)|staged puts|CPUs" | sed "s/^/$cf $round  /" | head -16
  done; done
  ;;
moe)
  # MoE dispatch/combine (issue 22 item 4): the checks (every case with the pull combine and
  # again with the push combine) with PEs as threads (8, 2) and processes (2), then the bench
  # on 8 thread PEs and on 1 PE (bf16 pull and push rows, fp8; the all-to-all of the same
  # bytes beside each).
  for n in 8 2; do step "moe_thr$n" 150 "$B/rshmemrun" -n $n --pes-per-process $n --timeout 140 "$B/moe"; done
  step moe_proc2 150 "$B/rshmemrun" -n 2 --timeout 140 "$B/moe"
  for n in ${MOE_BENCH_PES:-8 1}; do
    step "moe_bench_thr$n" 200 "$B/rshmemrun" -n $n --pes-per-process $n --timeout 190 "$B/moe" --bench --iters ${MOE_ITERS:-20}
    grep -E '^(moe bench|\| [0-9])' "$L/moe_bench_thr$n.log"
  done
  ;;
copy)
  # Block-scope copy loop variants (loads in flight, cache hints, blocks per SM) in
  # put_bw's launch shape against cuMemcpyAsync: crates/rshmem-perf/experiments/copy_unroll.cu.
  command -v nvcc > /dev/null || export PATH=$PATH:/usr/local/cuda/bin
  step copy_unroll_build 120 nvcc -O2 -arch=sm_90 "$B/experiments/copy_unroll.cu" -o "$L/copy_unroll" -lcuda
  step copy_unroll 120 "$L/copy_unroll"
  cat "$L/copy_unroll.log"
  ;;
compat-init)
  # NVSHMEM programs' MPI starts on the compat layer (issue 19): a unique id handed around
  # with MPI_Bcast (NVSHMEMX_INIT_WITH_UNIQUEID) and an MPI communicator in reverse order
  # (NVSHMEMX_INIT_WITH_MPI_COMM); 2 PEs as processes under mpirun, one GPU.
  H=$(cd "$B/compat-home" && pwd)
  command -v nvcc > /dev/null || export PATH=$PATH:/usr/local/cuda/bin
  mpi_c=$(mpicc --showme:compile 2>/dev/null || echo -I/usr/lib/x86_64-linux-gnu/openmpi/include)
  mpi_l=$(mpicc --showme:link 2>/dev/null || echo -L/usr/lib/x86_64-linux-gnu/openmpi/lib -lmpi)
  # shellcheck disable=SC2086
  nvcc -rdc=true -arch=sm_90 -I"$H/include" $mpi_c crates/rshmem-c/compat/nvshmem/tests/init_modes.cu -o "$L/init_modes" \
    -L"$H/lib" -lnvshmem_host -lnvshmem_device $mpi_l -Xlinker -rpath="$H/lib" > "$L/init_modes.build.log" 2>&1 || tail -5 "$L/init_modes.build.log"
  for m in uid mpi; do
    step "init_$m" 90 mpirun --allow-run-as-root --oversubscribe -np 2 -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS "$L/init_modes" $m
    summary+=("    $(grep -m1 '^init_modes' "$L/init_$m.log")")
  done
  # NVSHMEM over OpenSHMEM (NVSHMEMX_INIT_WITH_SHMEM after shmem_init's CPU PEs): GPU PEs as a
  # second runtime over the CPU PEs' bootstrap; 2 PEs under rshmemrun.
  nvcc -rdc=true -arch=sm_90 -I"$H/include" crates/rshmem-c/compat/nvshmem/tests/shmem_based_init.cu -o "$L/shmem_based_init" \
    -L"$H/lib" -lnvshmem_host -lnvshmem_device -Xlinker -rpath="$H/lib" > "$L/shmem_based_init.build.log" 2>&1 || tail -5 "$L/shmem_based_init.build.log"
  step shmem_based_init 90 "$B/rshmemrun" -n 2 --timeout 80 "$L/shmem_based_init"
  summary+=("    $(grep -m1 '^shmem_based_init' "$L/shmem_based_init.log")")
  ;;
python)
  OUT=$L/python bash crates/rshmem-py/tests/gpu_check.sh > "$L/python.log" 2>&1; rc=$?
  summary+=("python gpu_check rc=$rc")
  tail -30 "$L/python.log"
  ;;
nvcc)
  [ -d "$B/nvcc/kernel-cache" ] || cp -r "$B/kernel-cache" "$B/nvcc/kernel-cache"
  OUT=$L bash "$B/nvcc/run.sh" > "$L/nvcc.log" 2>&1
  summary+=("nvcc-path tests: $(grep -c ' pass ' "$L/cgpu/summary.txt") programs pass, $(grep -vc -E ' pass |^build' "$L/cgpu/summary.txt") fail or missing; $(grep '^build' "$L/cgpu/summary.txt")")
  sed -n '/== failed checks/,$p' "$L/nvcc.log"
  ;;
compat)
  export NVSHMEM_HOME=${NVSHMEM_HOME:-/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nvshmem}
  command -v nvcc > /dev/null || export PATH=$PATH:/usr/local/cuda/bin
  cuda_root=$(cd "$(dirname "$(command -v nvcc)")/.." && pwd)
  for side in compat real; do
    home=$B/compat-home; [ $side = real ] && home=$NVSHMEM_HOME
    # NVSHMEM's own headers include <cuda/std/...> (CCCL).
    JOBS=${JOBS:-8} EXTRA_CFLAGS="-I$cuda_root/include/cccl" \
      bash scripts/nvshmem-compat-build.sh "$B/nvshmem-src" "$home" "$L/$side-build" > "$L/$side-build.log" 2>&1 &
  done
  wait
  for side in compat real; do
    summary+=("$side build: $(tail -n 1 "$L/$side-build.log")")
    grep -E ' no:' "$L/$side-build.log" | head -10
  done
  mkdir -p "$RESULTS/compat-run" && cp "$L"/*-build.log "$RESULTS/compat-run/"
  RSHMEMRUN=$B/rshmemrun SRC=$B/nvshmem-src bash scripts/nvshmem-compat-run.sh "$L/compat-build" "$L/real-build" "$RESULTS/compat-run" > "$L/compat-run.log" 2>&1
  cat "$L/compat-run.log"
  ;;
esac
pack "$what"
printf '%s\n' "${summary[@]}"

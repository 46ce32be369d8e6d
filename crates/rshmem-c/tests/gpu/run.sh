#!/usr/bin/env bash
# Runs the nvcc-path tests of issue 19 on a GPU host, from the bundle scripts/gpu-nvcc-bundle.sh
# makes: rebuilds the programs with this host's nvcc through rshmem-nvcc (falls back to the
# prebuilt ones), runs each with 2 PEs (processes) under rshmemrun, and prints a table.
# Logs go to $OUT/cgpu (or ./cgpu-results).
set -uo pipefail
B=$(cd "$(dirname "$0")" && pwd)
LOG=${OUT:-$PWD/cgpu-results}/cgpu
mkdir -p "$LOG"
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_CACHE_DIR=/tmp/rshmem-cgpu-cache RSHMEM_LOG=${RSHMEM_LOG:-info}
mkdir -p "$RSHMEM_CACHE_DIR"
[ -d "$B/kernel-cache" ] && cp -rn "$B/kernel-cache/." "$RSHMEM_CACHE_DIR/"
export LD_LIBRARY_PATH=$B/bin:${LD_LIBRARY_PATH:-}
rows=()
row() { rows+=("$(printf '%-28s %-10s %s' "$1" "$2" "$3")"); }

# 1. Build with the GPU host's nvcc.
export RSHMEM_NVCC=${RSHMEM_NVCC:-/usr/local/cuda/bin/nvcc}
CUDA_INC=$(dirname "$(dirname "$RSHMEM_NVCC")")/include
"$RSHMEM_NVCC" --version > "$LOG/nvcc-version.txt" 2>&1
bash "$B/src/build.sh" "$B/bin/rshmem-nvcc" "$B/src" "$LOG/hostbuild" "$CUDA_INC" > "$LOG/hostbuild.log" 2>&1
build_rc=$?
row "build (host nvcc)" "$([ $build_rc = 0 ] && echo ok || echo FAILED)" "$(grep -c '^built' "$LOG/hostbuild.log") built; log hostbuild.log"
"$B/bin/rshmem-nvcc" --showme x.cu -o x > "$LOG/showme.txt" 2>&1

run() { # name dir program [args]
  local name=$1 dir=$2 prog=$3; shift 3
  if [ ! -x "$dir/$prog" ]; then row "$name" "missing" "$dir/$prog"; return; fi
  local start=$(date +%s)
  timeout 150 "$B/bin/rshmemrun" -n 2 --timeout 120 "$dir/$prog" "$@" > "$LOG/$name.log" 2>&1
  local rc=$? t=$(( $(date +%s) - start ))
  local pass=$(grep -c "^RSHMEM-CHECK.*result=pass" "$LOG/$name.log") fail=$(grep -c "^RSHMEM-CHECK.*result=fail" "$LOG/$name.log")
  local sums=$(grep -c "^RSHMEM-SUMMARY.*result=pass" "$LOG/$name.log")
  local verdict=FAIL
  [ $rc = 0 ] && [ $fail = 0 ] && [ $sums = 2 ] && verdict=pass
  row "$name" "$verdict" "rc=$rc checks pass=$pass fail=$fail summaries_pass=$sums ${t}s"
  grep "result=fail" "$LOG/$name.log" | head -20 | sed 's/^/    /' >> "$LOG/failures.txt"
}

H=$LOG/hostbuild P=$B/prebuilt
run cxx_api_rdc_host "$H" cxx_api "$H/probe.cubin"
run cxx_api_whole_host "$H" cxx_api_whole "$H/probe.cubin"
run c_host_rdc_host "$H" c_host
run cxx_api_rdc_prebuilt "$P" cxx_api "$P/probe.cubin"
run c_host_rdc_prebuilt "$P" c_host

echo
echo "== failed checks (first 20 per program)"; cat "$LOG/failures.txt" 2>/dev/null
if [ $build_rc != 0 ]; then echo; echo "== host build log (last 15 lines)"; tail -n 15 "$LOG/hostbuild.log"; fi
echo
echo "== cgpu summary"
printf '%-28s %-10s %s\n' program verdict detail
printf '%s\n' "${rows[@]}" | tee "$LOG/summary.txt"

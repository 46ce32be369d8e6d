#!/usr/bin/env bash
# Runs NVSHMEM's perftests and examples as scripts/nvshmem-compat-build.sh built them, once
# against rshmem's compatibility layer (under rshmemrun) and once against a real NVSHMEM (under
# mpirun), program by program, and prints one table: whether each ran and passed on each side,
# and for the perftests every figure they print in machine-readable form side by side.
#
# Usage: scripts/nvshmem-compat-run.sh COMPAT_OUT REAL_OUT RESULTS
#   COMPAT_OUT, REAL_OUT  the OUT folders of two nvshmem-compat-build.sh runs (REAL_OUT may be
#                         "-": the compat side only)
#   RESULTS               logs (RESULTS/run/SIDE-NAME.log), figures.tsv and table.txt
# Environment: RSHMEMRUN (rshmemrun), NP (2), DEADLINE (seconds for all runs: 420; the programs
#   left when it passes are listed as not run), PROG_TIMEOUT (seconds per program and side: 25),
#   PT_ARGS / COLL_ARGS (perftest arguments),
#   NVSHMEM_HOME (the real one, for its libraries), SRC (the sources, to find which examples
#   pick their GPU by their node rank: these run with 1 PE on a one-GPU host, on both sides).
set -uo pipefail
compat=$(cd "${1:?usage: nvshmem-compat-run.sh COMPAT_OUT REAL_OUT RESULTS}" && pwd)
real=${2:?usage: nvshmem-compat-run.sh COMPAT_OUT REAL_OUT RESULTS}
[ "$real" != - ] && real=$(cd "$real" && pwd)
res=${3:?usage: nvshmem-compat-run.sh COMPAT_OUT REAL_OUT RESULTS}
mkdir -p "$res/run" && res=$(cd "$res" && pwd)
rshmemrun=${RSHMEMRUN:-rshmemrun}
np=${NP:-2}
deadline=$(($(date +%s) + ${DEADLINE:-420}))
pt_args=${PT_ARGS:--b 8 -e 1M -f 8 -n 200 -w 20}
coll_args=${COLL_ARGS:--b 8 -e 4K -f 512 -n 5 -w 1}
pt=${PROG_TIMEOUT:-25}
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 NVSHMEM_MACHINE_READABLE_OUTPUT=1
ngpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
[ "${ngpus:-0}" -ge 1 ] || ngpus=1

# The arguments and PE count of one program: perftests get short sweeps; examples that call
# cudaSetDevice with their node rank need one GPU per PE.
plan() { # plan NAME -> "NP ARGS..."
  local name=$1 f
  case $name in
    # Its own options (-s/-S sizes, no -e): run with its defaults, as its empty .args file says.
    stream_latency) echo "$np"; return ;;
    *_on_stream|*reduc*|*bcast*|*broadcast*|*fcollect*|*alltoall*|*barrier*|*sync*) echo "$np $coll_args"; return ;;
  esac
  if [ -n "${SRC:-}" ] && f=$(ls "$SRC"/examples/"$name".c* 2>/dev/null | head -1) && [ -n "$f" ]; then
    if [ "$ngpus" -lt "$np" ] && grep -qE 'cudaSetDevice\((mype_node|local_rank|mype)' "$f"; then echo 1; else echo "$np"; fi
    return
  fi
  case $name in
    shmem_*|*latency*|*bw*|stream_latency|malloc) echo "$np $pt_args" ;;
    *) echo "$np" ;;
  esac
}

run_side() { # run_side SIDE BIN NAME NP ARGS... -> prints "rc seconds"
  local side=$1 bin=$2 name=$3 n=$4; shift 4
  local log="$res/run/$side-$name.log" t0 rc
  t0=$(date +%s%N)
  if [ "$side" = compat ]; then
    # The programs find their home's libraries by the rpath the build gave them.
    timeout $((pt + 5)) "$rshmemrun" -n "$n" --timeout "$pt" "$bin" "$@" >"$log" 2>&1
  else
    LD_LIBRARY_PATH="${NVSHMEM_HOME:-}/lib:${LD_LIBRARY_PATH:-}" NVSHMEMTEST_USE_MPI_LAUNCHER=1 NVSHMEM_BOOTSTRAP=MPI \
      timeout "$pt" mpirun --allow-run-as-root --oversubscribe -np "$n" -x LD_LIBRARY_PATH -x NVSHMEM_DISABLE_NVLS \
      -x NVSHMEM_MACHINE_READABLE_OUTPUT -x NVSHMEMTEST_USE_MPI_LAUNCHER -x NVSHMEM_BOOTSTRAP "$bin" "$@" >"$log" 2>&1
  fi
  rc=$?
  echo "$rc $(( ($(date +%s%N) - t0) / 1000000 ))"
}

: >"$res/figures.tsv"
: >"$res/rows.txt"
rows=()
verdict() { # verdict LOG RC -> ok | rc=N first error line
  local log=$1 rc=$2
  if [ "$rc" = 0 ] && ! grep -qiE 'error|failed|mismatch' "$log"; then echo ok; return; fi
  if [ "$rc" = 0 ]; then echo "rc=0 but: $(grep -m1 -iE 'error|failed|mismatch' "$log" | cut -c1-90)"; return; fi
  echo "rc=$rc $(grep -m1 -iE 'error|fail|abort|invalid|refus|not supported' "$log" | sed 's/^[^]]*\] *//' | cut -c1-90)"
}
for st in "$compat"/log/*.status; do
  read -r name status <"$st"
  [ "$status" = ok ] || continue
  read -r n args <<<"$(plan "$name")"
  if [ "$(date +%s)" -ge "$deadline" ]; then
    rows+=("$(printf '%-36s %3s  %-44s %s' "$name" "$n" "not run: out of time" "")"); continue
  fi
  # shellcheck disable=SC2086
  read -r crc cms <<<"$(run_side compat "$compat/bin/$name" "$name" "$n" $args)"
  cv=$(verdict "$res/run/compat-$name.log" "$crc")
  rv="-"
  if [ "$real" != - ]; then
    if [ -x "$real/bin/$name" ]; then
      # shellcheck disable=SC2086
      read -r rrc rms <<<"$(run_side real "$real/bin/$name" "$name" "$n" $args)"
      rv="$(verdict "$res/run/real-$name.log" "$rrc") (${rms} ms)"
    else
      rv="not built"
    fi
  fi
  rows+=("$(printf '%-36s %3s  %-44s %s' "$name" "$n" "$(echo "$cv (${cms} ms)" | cut -c1-44)" "$(echo "$rv" | cut -c1-60)")")
  # As it goes, so that a cut-off run still leaves its rows.
  echo "${rows[-1]}" >>"$res/rows.txt"
  for side in compat real; do
    [ -e "$res/run/$side-$name.log" ] || continue
    # "&&&& PERF NAME VALUE UNIT", where NAME may hold spaces (stream_latency's does): joined by "_".
    grep '^&&&& PERF ' "$res/run/$side-$name.log" |
      awk -v s="$side" '{n = $3; for (i = 4; i <= NF - 2; i++) n = n "_" $i; print s "\t" n "\t" $(NF-1) "\t" $NF}' >>"$res/figures.tsv"
  done
done

{
  printf '%-36s %3s  %-44s %s\n' program PEs "rshmem compat layer (rshmemrun)" "NVSHMEM (mpirun)"
  printf '%s\n' "${rows[@]}"
  echo
  echo "figures (NVSHMEM_MACHINE_READABLE_OUTPUT rows; a unit marked - is lower-is-better, + higher-is-better; ratio >1: rshmem better)"
  awk -F'\t' '
    $1 == "compat" { c[$2] = $3; u[$2] = $4; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
    $1 == "real"   { r[$2] = $3; u[$2] = $4; if (!($2 in seen)) { seen[$2] = 1; order[n++] = $2 } }
    END {
      printf "%-78s %12s %12s %8s %s\n", "case", "rshmem", "nvshmem", "ratio", "unit"
      for (i = 0; i < n; i++) {
        k = order[i]; ratio = "-"
        if ((k in c) && (k in r) && c[k] > 0 && r[k] > 0) {
          if (u[k] ~ /^-/) ratio = sprintf("%.2fx", r[k] / c[k]); else ratio = sprintf("%.2fx", c[k] / r[k])
        }
        printf "%-78s %12s %12s %8s %s\n", substr(k, 1, 78), (k in c) ? c[k] : "-", (k in r) ? r[k] : "-", ratio, u[k]
      }
    }' "$res/figures.tsv"
} | tee "$res/table.txt"

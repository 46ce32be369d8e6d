#!/usr/bin/env bash
# Two hosts on one machine, for the remote path's collectives (issue 21): two network
# namespaces joined by a veth pair, PE 0 in one and PE 1 in the other, so every byte of
# both libraries crosses the same link (neither can fall back to shared memory or the
# loopback). rshmem runs its PEs with rshmemrun and UCX over tcp on the veth; Open MPI's
# OpenSHMEM runs the suite's anchor program (crates/rshmem-perf/anchors/oshmem_perf.c,
# built with its oshcc) under its oshrun, its RMA over UCX tcp and its collectives over
# its MPI layer on btl tcp, on the same veth. Both run the same plan, alternating
# (rshmem, Open MPI, rshmem, ...), and the table shows the median of the rounds' medians.
#
# Usage (root, after `cargo build --release`): bash scripts/netns-perf.sh [ROUNDS]
#   OPS="barrier broadcast reduce fcollect alltoall" SIZES="8 128 2048 8192 32768" ITERS=100 REPS=3
#   PERF=/path/to/rshmem-perf RUN=/path/to/rshmemrun (default: this tree's release build)
# Needs iproute2, UCX (libucx0) and Open MPI's OpenSHMEM (oshcc, oshrun).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-3}
OPS=${OPS:-barrier broadcast reduce fcollect alltoall}
SIZES=${SIZES:-8 128 2048 8192 32768}
ITERS=${ITERS:-100}
REPS=${REPS:-3}
OUT=${OUT:-$ROOT/perf-results/netns}
# PERF and RUN: other builds of rshmem-perf and rshmemrun (an A/B of two commits).
PERF=${PERF:-$ROOT/target/release/rshmem-perf}
RUN=${RUN:-$ROOT/target/release/rshmemrun}
for t in ip oshcc oshrun "$PERF" "$RUN"; do command -v "$t" > /dev/null || { echo "netns-perf: $t is missing" >&2; exit 2; }; done
mkdir -p "$OUT"
ns=(rsp$$a rsp$$b) dev=(rsv$$a rsv$$b)
cleanup() { for n in "${ns[@]}"; do ip netns del "$n" 2> /dev/null || true; done; }
trap cleanup EXIT
for n in "${ns[@]}"; do ip netns add "$n"; done
ip link add "${dev[0]}" type veth peer name "${dev[1]}"
for i in 0 1; do
  ip link set "${dev[$i]}" netns "${ns[$i]}"
  ip -n "${ns[$i]}" addr add "10.78.0.$((i + 1))/24" dev "${dev[$i]}"
  ip -n "${ns[$i]}" link set "${dev[$i]}" up
  ip -n "${ns[$i]}" link set lo up
done
# Each PE enters the namespace of its number's parity (rshmemrun sets RSHMEM_PE, oshrun
# OMPI_COMM_WORLD_RANK); it is its own host for rshmem, and UCX uses only the veth.
cat > "$OUT/pe-wrapper.sh" << EOF
#!/bin/sh
r=\${RSHMEM_PE:-\$OMPI_COMM_WORLD_RANK}
if [ \$((r % 2)) = 0 ]; then n=${ns[0]}; d=${dev[0]}; else n=${ns[1]}; d=${dev[1]}; fi
exec ip netns exec \$n env UCX_NET_DEVICES=\$d RSHMEM_HOST=\$n "\$@"
EOF
chmod +x "$OUT/pe-wrapper.sh"
{
  echo "# rshmem-perf plan v1: case OP BYTES ITERS WARMUP REPS"
  for op in $OPS; do
    if [ "$op" = barrier ]; then echo "case barrier 0 $ITERS $ITERS $REPS"; continue; fi
    for s in $SIZES; do echo "case $op $s $ITERS $ITERS $REPS"; done
  done
} > "$OUT/plan.txt"
cp "$ROOT/crates/rshmem-perf/anchors/oshmem_perf.c" "$OUT/"
oshcc -O2 -o "$OUT/oshmem_perf" "$OUT/oshmem_perf.c"
rx() { ip netns exec "${ns[0]}" cat "/sys/class/net/${dev[0]}/statistics/rx_bytes"; }
rshmem_job() {
  RSHMEM_TRANSPORT=ucx UCX_TLS=tcp RSHMEM_DEVICE=cpu RSHMEM_PERF_ROLE=pe RSHMEM_PERF_PLAN="$OUT/plan.txt" RSHMEM_PERF_NPES=2 \
    RSHMEM_PERF_SUITE=cpu RSHMEM_PERF_PES_PER_PROCESS=1 RSHMEM_PERF_TIMEOUT=600 \
    timeout 600 "$RUN" -n 2 "$OUT/pe-wrapper.sh" "$PERF"
}
# Open MPI's launcher runs in the first namespace; its PMIx server (TCP only in this
# version) must accept the second namespace's rank over the veth.
ompi_job() {
  ip netns exec "${ns[0]}" env PMIX_MCA_ptl_tcp_remote_connections=1 PMIX_MCA_ptl_tcp_if_include="${dev[0]}" \
    timeout 600 oshrun --allow-run-as-root -np 2 --mca osc ^rdma --mca btl tcp,self --mca btl_tcp_if_include 10.78.0.0/24 \
    --mca oob_tcp_if_include "${dev[0]}" -x UCX_TLS=tcp -x PMIX_MCA_ptl_tcp_remote_connections=1 \
    -x SMA_SYMMETRIC_SIZE=256M -x SHMEM_SYMMETRIC_SIZE=256M "$OUT/pe-wrapper.sh" "$OUT/oshmem_perf" "$OUT/plan.txt"
}
: > "$OUT/results.txt"
for r in $(seq "$ROUNDS"); do
  for side in rshmem ompi; do
    before=$(rx)
    "${side}_job" > "$OUT/$side-$r.log" 2>&1 || true
    grep '^RESULT' "$OUT/$side-$r.log" | sed "s/^/$side $r /" >> "$OUT/results.txt"
    echo "round $r $side: $(grep -c '^RESULT' "$OUT/$side-$r.log") cases, $(($(rx) - before)) bytes received over the veth"
  done
done
# The table: per case, the median over rounds of each round's median, and Open MPI / rshmem.
awk '
  { side = $1; op = ""; b = ""; m = "";
    for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == "op") op = kv[2]; if (kv[1] == "bytes") b = kv[2]; if (kv[1] == "median_us") m = kv[2] }
    k = op " " b; if (!(k in seen)) { seen[k] = 1; order[++n] = k }
    v[side, k] = v[side, k] " " m }
  function med(s,   a, c, i, j, t) { c = split(s, a, " "); if (c == 0) return -1
    for (i = 1; i <= c; i++) for (j = i + 1; j <= c; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return (c % 2) ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 }
  END { printf "%-10s %8s %12s %12s %8s\n", "op", "bytes", "rshmem us", "ompi us", "ratio"
    for (i = 1; i <= n; i++) { k = order[i]; split(k, p, " "); a = med(v["rshmem", k]); o = med(v["ompi", k])
      r = (a > 0 && o > 0) ? sprintf("%.2fx", o / a) : "-"; if (a > 0 && o > 0) { g += log(o / a); gn++; if (o >= a) f++ }
      printf "%-10s %8s %12.3f %12.3f %8s\n", p[1], p[2], a, o, r }
    if (gn) printf "rows: %d, rshmem faster on %d, geomean %.2fx (ratio = Open MPI time / rshmem time)\n", gn, f, exp(g / gn) }
' "$OUT/results.txt" | tee "$OUT/table.txt"

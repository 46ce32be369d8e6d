#!/usr/bin/env bash
# Every fault of issue 24 tried once: time to the end of the job, exit status, and the
# launcher's/PEs' key lines. Run from the repo root after cargo build --release -p rshmem --bins --examples.
R=target/release/rshmemrun; E=target/release/examples
row() { # name, cmd...
  local name=$1; shift
  local t0=$(date +%s.%N)
  "$@" > /tmp/fault.out 2> /tmp/fault.err; local rc=$?
  local dt=$(echo "$(date +%s.%N) - $t0" | bc)
  printf '### %s | exit %s | %.2f s\n' "$name" "$rc" "$dt"
  grep -hE "rshmemrun:|error|differs|killed|timed out|Timeout|ignored" /tmp/fault.err /tmp/fault.out | head -${LINES_MAX:-4} | cut -c1-260
}
row "PE 3 of 4 SIGSTOPped, RSHMEM_HANG_TIMEOUT=3" env RSHMEM_HANG_TIMEOUT=3 RSHMEM_TRANSPORT=local $R -n 4 --timeout 60 $E/pe_launch stop
row "PE 3 of 4 SIGSTOPped, no limit, --timeout 4" env RSHMEM_WAIT_WARN=1 RSHMEM_TRANSPORT=local $R -n 4 --timeout 4 $E/pe_launch stop
row "PE 2 of 3 spinning outside rshmem, limit 2" env RSHMEM_HANG_TIMEOUT=2 $R -n 3 --timeout 60 $E/pe_launch spin
row "PE 2 of 4 SIGKILLed in a barrier" $R -n 4 --timeout 120 $E/pe_launch die
row "PE 1 exits 3" $R -n 3 --timeout 120 $E/pe_launch exit3
row "PE 0 leaves without finalize (peers blocked on it)" $R -n 4 --timeout 60 $E/pe_launch leave
row "PE 1 killed mid-line" $R -n 3 --timeout 60 $E/pe_launch partial
row "job hangs, --timeout 2" $R -n 2 --timeout 2 $E/pe_launch hang
for sig in INT TERM HUP KILL; do
  d=$(mktemp -d); t0=$(date +%s.%N)
  RSHMEM_TEST_PID_DIR=$d $R -n 4 --timeout 120 $E/pe_launch pids > /dev/null 2> /tmp/fault.err & L=$!
  for i in $(seq 300); do [ $(ls $d | wc -l) -ge 4 ] && break; sleep 0.05; done; sleep 0.3
  t1=$(date +%s.%N); kill -$sig $L; wait $L; rc=$?
  pids=$(cat $d/pe* | tr '\n' ' '); for i in $(seq 100); do alive=0; for p in $pids; do kill -0 $p 2>/dev/null && alive=1; done; [ $alive = 0 ] && break; sleep 0.05; done
  t2=$(date +%s.%N); left=$(ls -d ${XDG_RUNTIME_DIR:-/tmp}/rshmem-$L-* 2>/dev/null | wc -l)
  printf '### launcher killed with SIG%s (2 PEs in init, 2 not yet) | exit %s | every PE gone %.2f s after the signal, directories left: %s\n' $sig $rc $(echo "$t2 - $t1" | bc) $left
  grep -h "rshmemrun:" /tmp/fault.err | head -2 | cut -c1-200; rm -rf $d
done
row "broadcast root differs (release build)" $R -n 4 --timeout 60 $E/pe_coll_fail cheap

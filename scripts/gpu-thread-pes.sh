#!/usr/bin/env bash
# PEs as threads of one process (2, 4, 8) beside PEs as processes (2) on one GPU, with the
# device-to-device copy bound of the same run: signal ping-pong, device barrier, on-stream
# all-reduce 8 B to 256 MiB. From a bundle (scripts/gpu-bundle.sh); logs and tables in $OUT.
set -uo pipefail
export NVSHMEM_DISABLE_NVLS=1 NCCL_NVLS_ENABLE=0 RSHMEM_CACHE_DIR=/tmp/rshmem-cache
B=gpu-bundle; export LD_LIBRARY_PATH=$B/lib:${LD_LIBRARY_PATH:-}; mkdir -p /tmp/rshmem-cache; cp -r $B/kernel-cache/. /tmp/rshmem-cache/
L=/tmp/rshmem-thread-pes; rm -rf $L; mkdir -p $L
common=(--gpu --ops ${OPS:-signal_pingpong,barrier,reduce_on_stream} --reps 3 --warmup 3 --iters 100 --sync-iters 20 --rep-bytes 1G --anchors none --begin 8 --end 256M --factor 32 --timeout 140)
/opt/torch/.venv/bin/python - > $L/d2d.txt 2>&1 <<'PY'
import torch
x = torch.empty(1 << 30, dtype=torch.uint8, device="cuda"); y = torch.empty_like(x)
for _ in range(3): y.copy_(x)
s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
ts = []
for _ in range(10):
    s.record(); y.copy_(x); e.record(); torch.cuda.synchronize(); ts.append(s.elapsed_time(e))
ts.sort(); print(f"D2D copy 1 GiB: {ts[5]:.3f} ms median, {(1 << 30) / ts[5] / 1e6:.0f} GB/s payload")
PY
cat $L/d2d.txt
for m in thr2 thr4 thr8 proc2; do
  case $m in thr*) ppp=(--pes-per-process ${m#thr}); n=${m#thr};; proc*) ppp=(); n=${m#proc};; esac
  timeout 170 $B/rshmem-perf "${common[@]}" --pes $n "${ppp[@]}" --out $L/$m > $L/$m.txt 2> $L/$m.log; echo "== $m rc=$?"
  grep -E "^(signal|barrier|reduce)" $L/$m.txt
done
tar czf ${OUT:-.}/thread-pes.tgz -C $L .

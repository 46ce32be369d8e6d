#!/usr/bin/env bash
# GPU-host check of the Python package, for a host with PyTorch but no network or cargo
# (the H200 host: Python 3.12 and PyTorch in /opt/torch/.venv). Run from the repository
# root, with python-wheels/ (bash scripts/py-wheel.sh) and gpu-bundle/
# (bash scripts/gpu-bundle.sh) built on the development machine and carried along:
#
#   bash crates/rshmem-py/tests/gpu_check.sh
#
# Steps (logs in $OUT, default gpu-results/python): the wheel unpacked into $OUT/site (no
# pip, no network); gpu_check.py on 2 GPU PEs under rshmemrun (every call on GPU tensors,
# stream-ordered put and all-reduce on a torch.cuda.Stream, the 8 B / 64 MiB all-reduce
# timing) and again under torchrun; both examples on GPU PEs; the CPU call suite
# (pe_suite.py); rshmem-perf's reduce_on_stream at 8 B and 64 MiB (the same call through
# the Rust API, same method); then a table of the Python and Rust times. Exits 1 if any
# step failed.
set -uo pipefail
cd "$(dirname "$0")/../../.."
PY=${PYTHON:-/opt/torch/.venv/bin/python}
OUT=${OUT:-gpu-results/python}
RUN=${RSHMEMRUN:-gpu-bundle/rshmemrun}
PERF=${RSHMEM_PERF:-gpu-bundle/rshmem-perf}
mkdir -p "$OUT"
wheel=$(ls python-wheels/rshmem-*.whl 2>/dev/null | head -n 1)
if [ -z "$wheel" ]; then
  echo "no wheel in python-wheels/: build it on the development machine with bash scripts/py-wheel.sh" >&2
  exit 2
fi
site="$OUT/site"
rm -rf "$site"
"$PY" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$wheel" "$site" || exit 2
site=$(cd "$site" && pwd)  # absolute, whether $OUT is or not
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
echo "python: $("$PY" -c 'import sys, torch; print(sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.device_count(), "GPU(s)")')"
echo "wheel: $wheel"

status=0
step() {
  local name=$1
  shift
  echo "== $name: $*"
  timeout 900 "$@" >"$OUT/$name.log" 2>&1
  local rc=$?
  grep -E "^(CHECK .*FAIL|TIME |PE [0-9]+: |all-reduce|all cases|halo exchange|rshmem|error)" "$OUT/$name.log" | head -n 40
  echo "== $name: exit $rc (log: $OUT/$name.log)"
  [ "$rc" = 0 ] || status=1
}

step gpu_check env RSHMEM_DEVICE=gpu "$RUN" -n 2 --timeout 600 "$PY" crates/rshmem-py/tests/gpu_check.py
step gpu_check_torchrun env RSHMEM_DEVICE=gpu "$PY" -m torch.distributed.run --nproc-per-node 2 --master-addr 127.0.0.1 \
  --master-port 29811 crates/rshmem-py/tests/gpu_check.py --skip-timing
step allreduce_vs_gloo env RSHMEM_DEVICE=gpu "$RUN" -n 2 --timeout 300 "$PY" crates/rshmem-py/examples/allreduce_vs_gloo.py
step halo_exchange env RSHMEM_DEVICE=gpu "$RUN" -n 2 --timeout 300 "$PY" crates/rshmem-py/examples/halo_exchange.py
if "$PY" -c 'import numpy' 2>/dev/null; then
  step cpu_suite env RSHMEM_DEVICE=cpu "$RUN" -n 2 --timeout 300 "$PY" crates/rshmem-py/tests/pe_suite.py 2
else
  echo "== cpu_suite: not run (numpy is not installed in $PY's environment)"
fi
step rust_reduce_on_stream "$PERF" --gpu --pes 2 --ops reduce_on_stream --begin 8 --end 64M --factor 8388608 \
  --iters 20 --sync-iters 20 --warmup 3 --reps 5 --rep-bytes 2G --anchors none --out "$OUT/perf"

"$PY" - "$OUT" <<'PYEOF'
import csv, re, sys
from pathlib import Path
out = Path(sys.argv[1])
py = {}
for line in (out / "gpu_check.log").read_text(errors="replace").splitlines():
    m = re.search(r"TIME reduce_python bytes=(\d+) median_us=([\d.]+) host_us=([\d.]+)", line)
    if m:
        py[int(m.group(1))] = (float(m.group(2)), float(m.group(3)))
rust = {}
try:
    with open(out / "perf" / "results.csv") as f:
        for row in csv.DictReader(f):
            if row["op"] == "reduce_on_stream":
                rust[int(row["bytes"])] = float(row["rshmem_median_us"])
except OSError as e:
    print(f"no rshmem-perf results: {e}")
print()
print("all-reduce of int64 on a stream, 2 GPU PEs: time per call (CUDA events, median of 5 x 20)")
print(f"{'bytes':>10} {'rshmem.reduce (Python)':>24} {'Ctx::reduce_on_stream (Rust)':>30} {'Python - Rust':>14} {'Python host time/call':>22}")
for b in (8, 64 << 20):
    p, r = py.get(b), rust.get(b)
    ps = f"{p[0]:.2f} us" if p else "n/a"
    rs = f"{r:.2f} us" if r is not None else "n/a"
    d = f"{p[0] - r:+.2f} us" if p and r is not None else "n/a"
    h = f"{p[1]:.2f} us" if p else "n/a"
    print(f"{b:>10} {ps:>24} {rs:>30} {d:>14} {h:>22}")
PYEOF
echo "gpu_check.sh: $([ $status = 0 ] && echo 'every step passed' || echo 'some step FAILED')"
exit $status

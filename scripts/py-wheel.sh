#!/usr/bin/env bash
# Builds the Python package's wheel (abi3: CPython 3.9 and newer, 3.12 included; Linux
# x86_64) into python-wheels/, for hosts without cargo or network (the GPU host:
# crates/rshmem-py/tests/gpu_check.sh unpacks it there). maturin comes from PyPI into a
# build-only virtual environment under target/.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/py-build-venv
if [ ! -x "$venv/bin/maturin" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "maturin>=1.5,<2"
fi
rm -rf python-wheels
"$venv/bin/maturin" build --release -m crates/rshmem-py/Cargo.toml --out python-wheels
ls -l python-wheels

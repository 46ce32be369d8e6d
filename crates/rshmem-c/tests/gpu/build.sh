#!/usr/bin/env bash
# Builds the nvcc-path test programs: build.sh WRAPPER SRC_DIR OUT_DIR CUDA_INCLUDE_DIR.
# cxx_api (one .cu, -rdc with the device library), cxx_api_whole (the same without -rdc:
# the header's per-file state), c_host (C host code by cc over c_kernels.cu built with
# -rdc) and probe.cubin (a module for cuModuleLoad). Prints one line per program.
set -uo pipefail
W=$1 S=$2 P=$3 CUDA_INC=$4
mkdir -p "$P"
inc=$(dirname "$W")/include
ok=0
b() { local name=$1; shift; if "$@" > "$P/$name.build.log" 2>&1; then echo "built $name"; else echo "FAILED to build $name (see $name.build.log)"; cat "$P/$name.build.log"; ok=1; fi; }
b cxx_api "$W" -I"$S" "$S/cxx_api.cu" -o "$P/cxx_api" -ldl
b cxx_api_whole "$W" -rdc=false -I"$S" "$S/cxx_api.cu" -o "$P/cxx_api_whole" -ldl
b c_kernels "$W" -c "$S/c_kernels.cu" -o "$P/c_kernels.o"
b c_host.o cc -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -I"$inc" -I"$CUDA_INC" -I"$S" -c "$S/c_host.c" -o "$P/c_host.o"
b c_host "$W" "$P/c_host.o" "$P/c_kernels.o" -o "$P/c_host"
b probe.cubin "$W" -cubin "$S/probe_module.cu" -o "$P/probe.cubin"
rm -f "$P"/*.o
exit $ok

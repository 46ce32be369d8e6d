#!/usr/bin/env bash
# Builds NVSHMEM's public perftests and examples, unchanged, from an NVSHMEM source folder
# against an NVSHMEM_HOME-style folder (rshmem's compatibility layer from
# scripts/nvshmem-compat-home.sh, or a real NVSHMEM install for comparison), with nvcc the
# way their CMake builds do (-rdc=true; .cpp files by the host compiler; the perftests link
# their common/utils.cu helper). Nothing of theirs is copied into this repository: sources
# are read from SRC, objects and programs go to OUT.
#
# Usage: scripts/nvshmem-compat-build.sh SRC HOME OUT
#   SRC   folder with perftest/ and examples/ (NVSHMEM's public repository, or an extract)
#   HOME  folder with include/ and lib/ (nvshmem.h, libnvshmem_host.so, libnvshmem_device.a)
#   OUT   where programs (OUT/bin/NAME), logs (OUT/log/NAME.log) and OUT/built.tsv go
# Environment: NVCC (default nvcc on PATH, else /opt/cuda-pip/nvidia/cu13/bin/nvcc), NVCC_ARCH
# (sm_90), CXX (g++), JOBS (2), MPI_CFLAGS / MPI_LIBS (default: mpicc --showme:compile / :link), ONLY (a regex of
# program names to build), CUDA_DRIVER_LIB (see below), EXTRA_CFLAGS (added to every compile, e.g. -I for nvml.h). Prints a table: program, built, first error.
set -uo pipefail
src=$(cd "${1:?usage: nvshmem-compat-build.sh SRC HOME OUT}" && pwd)
home=$(cd "${2:?usage: nvshmem-compat-build.sh SRC HOME OUT}" && pwd)
out=${3:?usage: nvshmem-compat-build.sh SRC HOME OUT}
mkdir -p "$out/bin" "$out/log" "$out/obj" && out=$(cd "$out" && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /opt/cuda-pip/nvidia/cu13/bin/nvcc)}
cuda_root=$(cd "$(dirname "$nvcc")/.." && pwd)
arch=${NVCC_ARCH:-sm_90}
cxx=${CXX:-g++}
jobs=${JOBS:-2}
mpi_cflags=${MPI_CFLAGS:-$(mpicc --showme:compile 2>/dev/null || true)}
mpi_libs=${MPI_LIBS:-$(mpicc --showme:link 2>/dev/null || true)}
cuda_inc="-I$cuda_root/include"
for d in "$cuda_root"/targets/*/include; do [ -d "$d" ] && cuda_inc="$cuda_inc -I$d"; done
cuda_lib="-L$cuda_root/lib -L$cuda_root/lib64 -L$cuda_root/lib/stubs -L$cuda_root/lib64/stubs"
for d in "$cuda_root"/targets/*/lib "$cuda_root"/targets/*/lib/stubs; do [ -d "$d" ] && cuda_lib="$cuda_lib -L$d"; done
# OMPI_SKIP_MPICXX: mpi.h in C++ files without the MPI C++ bindings (their library is not linked).
defs="-DNVSHMEMTEST_MPI_SUPPORT -DOMPI_SKIP_MPICXX=1 -DMPICH_SKIP_MPICXX=1"
[ -z "$mpi_cflags" ] && defs=""
common_flags="-I$home/include $cuda_inc $mpi_cflags $defs ${EXTRA_CFLAGS:-}"
nvcc_flags="-arch=$arch -rdc=true -std=c++17 -O2 -Xcompiler -fPIC $common_flags"
# The driver library where this machine has one (a GPU host, or the toolkit's stubs).
# CUDA_DRIVER_LIB: a folder with a libcuda.so to link with where the machine has none (a
# stand-in that only names the symbols; the GPU host's libcuda.so.1 is loaded at run time).
libcuda=""
[ -n "${CUDA_DRIVER_LIB:-}" ] && cuda_lib="$cuda_lib -L$CUDA_DRIVER_LIB"
for d in $cuda_lib /usr/lib/x86_64-linux-gnu /usr/lib64; do
  [ -e "${d#-L}/libcuda.so" ] && libcuda="-lcuda" && break
done
# NVSHMEM's Python wheel ships libnvshmem_host.so.3 without the unversioned link.
host_lib=-lnvshmem_host
[ -e "$home/lib/libnvshmem_host.so" ] || host_lib=-l:libnvshmem_host.so.3
link_flags="-arch=$arch -rdc=true -L$home/lib $host_lib -lnvshmem_device $cuda_lib $libcuda -ldl -Xlinker -rpath,$home/lib"
export nvcc cxx nvcc_flags common_flags link_flags mpi_libs out src

# The perftests' helper library, once.
helper="$out/obj/perftest_utils.o"
if [ -d "$src/perftest/common" ] && [ ! -e "$helper" ]; then
  "$nvcc" $nvcc_flags -I"$src/perftest/common" -c "$src/perftest/common/utils.cu" -o "$helper" >"$out/log/perftest_utils.log" 2>&1 ||
    echo "perftest helper (common/utils.cu) failed to build: see $out/log/perftest_utils.log"
fi
export helper

build_one() {
  local kind=$1 file=$2
  local name
  name=$(basename "${file%.*}")
  [ -n "${ONLY:-}" ] && ! [[ $name =~ $ONLY ]] && return 0
  local log="$out/log/$name.log" obj="$out/obj/$name.o" extra="" inc
  inc="-I$(dirname "$file")"
  if [ "$kind" = perftest ]; then
    inc="$inc -I$src/perftest/common"
    extra=$helper
  else
    inc="$inc -I$src/examples"
  fi
  : >"$log"
  if [[ $file == *.cpp ]]; then
    "$cxx" -std=c++17 -O2 -fPIC $common_flags $inc -c "$file" -o "$obj" >>"$log" 2>&1 || { echo "$name compile" >>"$log.status"; return 0; }
  else
    "$nvcc" $nvcc_flags $inc -c "$file" -o "$obj" >>"$log" 2>&1 || { echo "$name compile" >>"$log.status"; return 0; }
  fi
  if [ "$kind" = perftest ] && [ ! -e "$helper" ]; then echo "$name helper" >>"$log.status"; return 0; fi
  "$nvcc" $obj $extra $link_flags $mpi_libs -o "$out/bin/$name" >>"$log" 2>&1 || { echo "$name link" >>"$log.status"; return 0; }
  echo "$name ok" >>"$log.status"
}
export -f build_one

rm -f "$out"/log/*.status
{
  for f in "$src"/perftest/device/pt-to-pt/*.cu "$src"/perftest/device/coll/*.cu \
           "$src"/perftest/host/pt-to-pt/*.c* "$src"/perftest/host/coll/*.cpp "$src"/perftest/host/init/*.cpp; do
    [ -e "$f" ] && echo "perftest $f"
  done
  for f in "$src"/examples/*.cu "$src"/examples/*.cpp; do [ -e "$f" ] && echo "example $f"; done
} | xargs -P "$jobs" -L 1 bash -c 'build_one "$0" "$1"'

printf '%-40s %-8s %s\n' program built "first error"
: >"$out/built.tsv"
n=0; ok=0
for s in "$out"/log/*.status; do
  [ -e "$s" ] || continue
  read -r name status <"$s"
  log=${s%.status}
  n=$((n + 1))
  if [ "$status" = ok ]; then
    ok=$((ok + 1)); err=""
  else
    err=$(grep -m1 -E "error|undefined reference|cannot find" "$log" | sed "s|$src/||; s|$home/||" | cut -c1-150)
    [ -z "$err" ] && err="($status step failed; see log/$name.log)"
  fi
  printf '%-40s %-8s %s\n' "$name" "$([ "$status" = ok ] && echo yes || echo "no:$status")" "$err"
  printf '%s\t%s\t%s\n' "$name" "$status" "$err" >>"$out/built.tsv"
done
echo "built $ok of $n programs (logs in $out/log)"

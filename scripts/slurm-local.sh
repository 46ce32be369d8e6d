#!/usr/bin/env bash
# Sets up and starts a one-node Slurm on this host (as root), for tests/slurm.rs:
# munged, slurmctld and slurmd with a minimal slurm.conf (one node named after this host,
# all its CPUs, one partition "local", no cgroups, state under /tmp/rshmem-slurm), then
# waits until `srun -n 1 true` runs. Idempotent: daemons already running are left alone,
# and a second call only checks. Exits non-zero with the reason when it cannot.
#
#   scripts/slurm-local.sh            set up (installs nothing) and start
#   scripts/slurm-local.sh --install  apt-get install the packages first if missing
#   scripts/slurm-local.sh --stop     stop the daemons it started
#
# Packages (Debian bookworm): slurmctld slurmd slurm-client munge; srun --mpi=pmix needs
# slurm-wlm-basic-plugins (mpi_pmix_v4.so, pulled in by slurmd) and libpmix-dev (the
# plugin dlopens the unversioned libpmix.so).
set -euo pipefail

STATE=/tmp/rshmem-slurm
CONF=/etc/slurm/slurm.conf
MARK="# written by rshmem scripts/slurm-local.sh"

die() {
  echo "slurm-local.sh: $*" >&2
  exit 1
}

[ "$(id -u)" = 0 ] || die "must run as root (it writes $CONF and starts munged, slurmctld and slurmd)"

if [ "${1:-}" = --stop ]; then
  for d in slurmd slurmctld; do
    [ -f "$STATE/$d.pid" ] && kill "$(cat "$STATE/$d.pid")" 2>/dev/null || true
  done
  [ -f /run/munge/munged.pid ] && kill "$(cat /run/munge/munged.pid)" 2>/dev/null || true
  exit 0
fi

if [ "${1:-}" = --install ]; then
  need=()
  for p in slurmctld slurmd slurm-client munge libpmix-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
  done
  if [ ${#need[@]} -gt 0 ]; then
    command -v apt-get >/dev/null || die "missing ${need[*]} and no apt-get"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null ||
      die "apt-get install ${need[*]} failed"
  fi
fi

for b in munged slurmctld slurmd srun sinfo; do
  command -v "$b" >/dev/null || die "$b not found: apt-get install slurmctld slurmd slurm-client munge (or run with --install)"
done
plugdir=$(dirname "$(dpkg -L slurm-wlm-basic-plugins 2>/dev/null | grep '/mpi_pmix.so$' | head -1)")
[ -e "$plugdir/mpi_pmix.so" ] || die "Slurm's PMIx plugin (mpi_pmix.so, package slurm-wlm-basic-plugins) is not installed"
# The plugin dlopens through the loader's cache: refresh it (a package installed without
# its triggers leaves the link out of it).
[ "$(id -u)" = 0 ] && ldconfig
# (grep reads the whole list: `grep -q` stops early and ldconfig's SIGPIPE fails the pipe.)
ldconfig -p | grep -cF 'libpmix.so ' >/dev/null ||
  die "libpmix.so (unversioned, package libpmix-dev) is missing: Slurm's PMIx plugin cannot load libpmix without it"

host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$STATE/spool" "$STATE/ctld" /etc/slurm
if [ -f "$CONF" ] && ! grep -qF "$MARK" "$CONF"; then
  die "$CONF exists and was not written by this script; not touching it"
fi
new=$(
  cat <<EOF
$MARK
ClusterName=rshmem
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
SlurmdSpoolDir=$STATE/spool
StateSaveLocation=$STATE/ctld
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE
EOF
)
if [ "$(cat "$CONF" 2>/dev/null)" != "$new" ]; then
  echo "$new" >"$CONF"
  changed=1
else
  changed=0
fi

running() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# munged runs as the munge user, with its key (made by the munge package).
[ -f /etc/munge/munge.key ] || die "/etc/munge/munge.key is missing (reinstall munge or run mungekey)"
if ! running /run/munge/munged.pid; then
  mkdir -p /run/munge && chown munge:munge /run/munge && chmod 755 /run/munge
  runuser -u munge -- munged || die "munged did not start (see /var/log/munge/munged.log)"
fi
munge -n | unmunge >/dev/null || die "munge cannot encode/decode a credential (munged not working)"

if [ "$changed" = 1 ]; then
  # A new configuration: restart the daemons this script started under the old one.
  for d in slurmd slurmctld; do
    if running "$STATE/$d.pid"; then
      kill "$(cat "$STATE/$d.pid")"
      for _ in $(seq 50); do running "$STATE/$d.pid" || break; sleep 0.1; done
    fi
  done
fi
if ! running "$STATE/slurmctld.pid"; then
  slurmctld -i || die "slurmctld did not start (see $STATE/slurmctld.log)"
fi
if ! running "$STATE/slurmd.pid"; then
  slurmd || die "slurmd did not start (see $STATE/slurmd.log)"
fi

# Wait until a job step runs (the node registers within a few seconds).
for _ in $(seq 60); do
  if timeout 10 srun -N 1 -n 1 --time=1 true >/dev/null 2>&1; then
    echo "slurm-local.sh: one-node Slurm up (node $host, $cpus CPUs, partition local, state in $STATE)"
    exit 0
  fi
  sleep 1
done
sinfo >&2 || true
tail -5 "$STATE/slurmctld.log" "$STATE/slurmd.log" >&2 || true
die "srun -n 1 true still fails after 60 s (logs above)"

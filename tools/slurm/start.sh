#!/usr/bin/env bash
# Start a one-node SLURM cluster on this machine: the scheduler storyflow's integration test
# (tests/test_slurm.py) submits to, and a place to try workflow/profiles/slurm before a real cluster.
#
#   sudo tools/slurm/start.sh        # idempotent: installs, configures and starts what is missing
#   sudo tools/slurm/stop.sh         # stops the daemons this script started
#
# Debian 12 / Ubuntu, root, no systemd needed (daemons are started directly). It installs slurmctld,
# slurmd, slurm-client and munge (plus slurmdbd and mariadb-server for accounting: sacct) with
# apt-get when they are missing, writes /etc/slurm/{slurm,gres,cgroup,slurmdbd}.conf for one node
# `localhost` in partition `debug`, starts munged, mariadbd + slurmdbd, slurmctld and slurmd, adds
# cluster/account/user to the accounting database, and waits until the node is idle. A second run
# changes nothing when everything is up; a changed setting rewrites the config and restarts the
# daemons that read it. Every daemon it launches is listed in $STATE_DIR/started for stop.sh.
#
# The node advertises GPU generic resources (gres/gpu, type $GPU_TYPE) with no device behind
# them, so that the profile's GPU request (sbatch --gpus=<model>:1) is scheduled for real; jobs
# still compute on the CPU.
#
# Settings (environment variables; the defaults match workflow/profiles/slurm/config.yaml):
#   STORYFLOW_SLURM_CLUSTER=ci         cluster name (slurm.conf ClusterName, sacctmgr)
#   STORYFLOW_SLURM_PARTITION=debug    the only partition
#   STORYFLOW_SLURM_ACCOUNT=ciacct     account that root (and $SUDO_USER) may charge
#   STORYFLOW_SLURM_GPU_TYPE=cigpu     GPU model name of the node's gres
#   STORYFLOW_SLURM_GPUS=1             GPUs advertised by the node (0: no gres)
#   STORYFLOW_SLURM_ACCOUNTING=1       0: no slurmdbd/mariadb (then sacct fails; use squeue)
#   STORYFLOW_SLURM_CPUS=$(nproc)      STORYFLOW_SLURM_MEM_MB=85% of RAM
#   STORYFLOW_SLURM_FORCE=0            1: overwrite a slurm.conf this script did not write
set -euo pipefail

CLUSTER=${STORYFLOW_SLURM_CLUSTER:-ci}
PARTITION=${STORYFLOW_SLURM_PARTITION:-debug}
ACCOUNT=${STORYFLOW_SLURM_ACCOUNT:-ciacct}
GPU_TYPE=${STORYFLOW_SLURM_GPU_TYPE:-cigpu}
GPUS=${STORYFLOW_SLURM_GPUS:-1}
ACCOUNTING=${STORYFLOW_SLURM_ACCOUNTING:-1}
CPUS=${STORYFLOW_SLURM_CPUS:-$(nproc)}
MEM_MB=${STORYFLOW_SLURM_MEM_MB:-$(awk '/^MemTotal/ {print int($2 / 1024 * 0.85)}' /proc/meminfo)}
FORCE=${STORYFLOW_SLURM_FORCE:-0}
DB_PASSWORD=${STORYFLOW_SLURM_DB_PASSWORD:-storyflow-slurmdbd}
USERS="root ${SUDO_USER:-}"

STATE_DIR=/run/storyflow-slurm
MARKER="# written by storyflow tools/slurm/start.sh"
ETC=/etc/slurm
LOG_DIR=/var/log/slurm

say() { printf '[slurm start %s] %s\n' "$(date +%T)" "$*"; }
die() { printf '[slurm start] error: %s\n' "$*" >&2; exit 1; }
running() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }
# until SECONDS CMD...: run CMD every 0.5 s until it succeeds; fail after SECONDS
until_ok() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || { echo "timed out waiting for: $*" >&2; return 1; }
    sleep 0.5
  done
}
# launched NAME PIDFILE: remember that this script started NAME (for stop.sh)
launched() {
  mkdir -p "$STATE_DIR"
  grep -qx "$1 $2" "$STATE_DIR/started" 2>/dev/null || echo "$1 $2" >>"$STATE_DIR/started"
}
# halt PIDFILE: stop the daemon (used when its configuration changed)
halt() {
  running "$1" || return 0
  local pid; pid=$(cat "$1")
  kill "$pid"
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  rm -f "$1"
}
# put FILE MODE OWNER CONTENT: write FILE when CONTENT differs; returns 0 when it changed
put() {
  if [[ -f $1 ]] && [[ "$(cat "$1")" == "$4" ]]; then return 1; fi
  printf '%s\n' "$4" >"$1"
  chmod "$2" "$1"; chown "$3" "$1"
  say "wrote $1"
}

[[ $(id -u) -eq 0 ]] || die "run as root (it installs packages and starts system daemons)"
[[ $GPUS =~ ^[0-9]+$ ]] || die "STORYFLOW_SLURM_GPUS must be a number, not '$GPUS'"

# --- 1. packages ------------------------------------------------------------------------------
packages=(slurmctld slurmd slurm-client munge)
((ACCOUNTING)) && packages+=(slurmdbd mariadb-server mariadb-client)
missing=()
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || missing+=("$pkg")
done
if ((${#missing[@]})); then
  command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get to install them"
  say "installing ${missing[*]} (apt-get)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# --- 2. munge (authentication between the daemons and the client commands) ---------------------
if [[ ! -s /etc/munge/munge.key ]]; then
  mungekey --create --keyfile=/etc/munge/munge.key
  chown munge:munge /etc/munge/munge.key
  chmod 400 /etc/munge/munge.key
fi
install -d -o munge -g munge -m 755 /run/munge
if ! running /run/munge/munged.pid; then
  say "starting munged"
  runuser -u munge -- /usr/sbin/munged
  launched munged /run/munge/munged.pid
fi
until_ok 15 sh -c 'munge -n | unmunge'

# --- 3. configuration --------------------------------------------------------------------------
install -d -o slurm -g slurm "$LOG_DIR" /var/lib/slurm/slurmctld /var/lib/slurm/slurmd
if [[ -s $ETC/slurm.conf ]] && ! grep -qxF "$MARKER" "$ETC/slurm.conf" && ((!FORCE)); then
  die "$ETC/slurm.conf was not written by this script; set STORYFLOW_SLURM_FORCE=1 to replace it"
fi
if ((ACCOUNTING)); then
  accounting="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=6819
AccountingStorageEnforce=associations
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/linux"
else
  accounting="AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none"
fi
if ((GPUS)); then
  gres_types="GresTypes=gpu"
  node_gres=" Gres=gpu:$GPU_TYPE:$GPUS"
  # slurmd counts a GPU per device file: character devices like /dev/null stand in for them
  mkdir -p "$STATE_DIR"
  for ((i = 0; i < GPUS; i++)); do
    [[ -c $STATE_DIR/gpu$i ]] || mknod -m 666 "$STATE_DIR/gpu$i" c 1 3
  done
  gres_conf="$MARKER
NodeName=localhost Name=gpu Type=$GPU_TYPE File=$STATE_DIR/gpu[0-$((GPUS - 1))]"
else
  gres_types=""
  node_gres=""
  gres_conf="$MARKER"
fi
changed=0
put $ETC/slurm.conf 644 root:root "$MARKER
ClusterName=$CLUSTER
SlurmctldHost=localhost
AuthType=auth/munge
CredType=cred/munge
SlurmUser=slurm
SlurmdUser=root
StateSaveLocation=/var/lib/slurm/slurmctld
SlurmdSpoolDir=/var/lib/slurm/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$LOG_DIR/slurmctld.log
SlurmdLogFile=$LOG_DIR/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
# finished jobs stay visible to squeue for 5 minutes (the profile's status command)
MinJobAge=300
JobCompType=jobcomp/none
$accounting
$gres_types
NodeName=localhost CPUs=$CPUS RealMemory=$MEM_MB$node_gres State=UNKNOWN
PartitionName=$PARTITION Nodes=localhost Default=YES MaxTime=INFINITE State=UP" && changed=1
put $ETC/gres.conf 644 root:root "$gres_conf" && changed=1
put $ETC/cgroup.conf 644 root:root "$MARKER
CgroupPlugin=autodetect" && changed=1

# --- 4. accounting: mariadb + slurmdbd (sacct, sacctmgr) ----------------------------------------
if ((ACCOUNTING)); then
  [[ -d /var/lib/mysql/mysql ]] || mariadb-install-db --user=mysql --datadir=/var/lib/mysql >/dev/null
  install -d -o mysql -g mysql /run/mysqld
  if ! running /run/mysqld/mysqld.pid; then
    say "starting mariadbd"
    setsid /usr/sbin/mariadbd --user=mysql --skip-networking --pid-file=/run/mysqld/mysqld.pid \
      --socket=/run/mysqld/mysqld.sock </dev/null >>"$LOG_DIR/mariadbd.log" 2>&1 &
    until_ok 60 test -s /run/mysqld/mysqld.pid
    launched mariadbd /run/mysqld/mysqld.pid
  fi
  until_ok 60 mariadb-admin --socket=/run/mysqld/mysqld.sock ping
  mariadb --socket=/run/mysqld/mysqld.sock -e "
    CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
    ALTER USER 'slurm'@'localhost' IDENTIFIED BY '$DB_PASSWORD';
    GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';"
  put $ETC/slurmdbd.conf 600 slurm:slurm "$MARKER
AuthType=auth/munge
DbdHost=localhost
DbdPort=6819
SlurmUser=slurm
PidFile=/run/slurmdbd.pid
LogFile=$LOG_DIR/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=$DB_PASSWORD" && halt /run/slurmdbd.pid
  if ! running /run/slurmdbd.pid; then
    say "starting slurmdbd"
    /usr/sbin/slurmdbd
    launched slurmdbd /run/slurmdbd.pid
  fi
  until_ok 60 sacctmgr --noheader list cluster
  sacctmgr --noheader --parsable2 list cluster format=cluster | grep -qx "$CLUSTER" ||
    sacctmgr --immediate add cluster "$CLUSTER" >/dev/null
  sacctmgr --noheader --parsable2 list account format=account | grep -qx "$ACCOUNT" ||
    sacctmgr --immediate add account "$ACCOUNT" Cluster="$CLUSTER" \
      Description=storyflow Organization=storyflow >/dev/null
  for user in $USERS; do
    sacctmgr --noheader --parsable2 list assoc cluster="$CLUSTER" account="$ACCOUNT" user="$user" \
      format=user | grep -qx "$user" ||
      sacctmgr --immediate add user "$user" Cluster="$CLUSTER" Account="$ACCOUNT" \
        DefaultAccount="$ACCOUNT" >/dev/null
  done
fi

# --- 5. slurmctld + slurmd ---------------------------------------------------------------------
if ((changed)); then
  halt /run/slurmd.pid
  halt /run/slurmctld.pid
fi
if ! running /run/slurmctld.pid; then
  say "starting slurmctld"
  /usr/sbin/slurmctld
  launched slurmctld /run/slurmctld.pid
fi
until_ok 30 scontrol ping
if ! running /run/slurmd.pid; then
  say "starting slurmd"
  /usr/sbin/slurmd -N localhost
  launched slurmd /run/slurmd.pid
fi
# the controller may recover the node as down/invalid from an earlier configuration: resume it
node_up() {
  local state
  state=$(sinfo --noheader --nodes=localhost --format=%T)
  [[ $state =~ ^(idle|mixed|allocated)$ ]] && return 0
  [[ $state =~ ^(down|drained|inval) ]] && scontrol update nodename=localhost state=resume
  return 1
}
until_ok 60 node_up || die "node localhost is not up: $(sinfo --noheader --format='%T %E')"
sinfo
say "ready: cluster $CLUSTER, partition $PARTITION, account $ACCOUNT, gres gpu:$GPU_TYPE:$GPUS"

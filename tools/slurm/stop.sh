#!/usr/bin/env bash
# Stop the SLURM daemons that tools/slurm/start.sh started (the list in /run/storyflow-slurm/started),
# newest first, after cancelling the jobs still queued or running. Daemons it did not start are left
# alone. Idempotent.
#
#   sudo tools/slurm/stop.sh           # stop; configuration, job history and packages stay
#   sudo tools/slurm/stop.sh --purge   # also drop the accounting database and the saved job state
set -uo pipefail

STATE_DIR=/run/storyflow-slurm
PURGE=0
[[ ${1:-} == --purge ]] && PURGE=1

say() { printf '[slurm stop %s] %s\n' "$(date +%T)" "$*"; }
running() { [[ -s $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

[[ $(id -u) -eq 0 ]] || { echo "[slurm stop] error: run as root" >&2; exit 1; }
if [[ ! -s $STATE_DIR/started ]]; then
  say "nothing to stop: start.sh started no daemon"
  exit 0
fi
if running /run/slurmctld.pid; then
  jobs=$(squeue --noheader --format=%i 2>/dev/null | tr '\n' ' ')
  if [[ -n ${jobs// /} ]]; then
    say "cancelling jobs $jobs"
    scancel $jobs
    sleep 2
  fi
fi
if ((PURGE)) && running /run/mysqld/mysqld.pid; then
  say "dropping the accounting database"
  mariadb --socket=/run/mysqld/mysqld.sock -e 'DROP DATABASE IF EXISTS slurm_acct_db' || true
fi
# tac: stop in the reverse order of starting (slurmd before slurmctld before slurmdbd ...)
tac "$STATE_DIR/started" | while read -r name pidfile; do
  running "$pidfile" || { rm -f "$pidfile"; continue; }
  pid=$(cat "$pidfile")
  say "stopping $name (pid $pid)"
  kill "$pid"
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$pid" 2>/dev/null; then
    say "$name did not exit in 30 s: SIGKILL"
    kill -9 "$pid"
  fi
  # a stale PID file would make later package scripts signal a dead PID
  rm -f "$pidfile"
done
rm -f "$STATE_DIR/started"
if ((PURGE)); then
  rm -rf /var/lib/slurm/slurmctld/* /var/lib/slurm/slurmd/*
  say "purged the saved job state"
fi
say "done"
